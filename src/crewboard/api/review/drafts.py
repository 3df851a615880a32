"""REST routes for hand-ins: submit a result, land a draft, read drafts.

There are no decision routes: a token may be held by an AI, so approving, rejecting and
requesting revisions happen in the web app's inbox or at the operator CLI. Bodies are checked
by the MCP tools' field types; the idempotency key may come in the `Idempotency-Key` header
instead of the body.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field
from starlette.requests import Request

from crewboard.api.common import (
    IDEMPOTENCY_KEY,
    Created,
    Endpoint,
    created,
    keyed_body,
    parse_args,
    reads_headers,
    run_service,
)
from crewboard.api.operations import endpoint_for
from crewboard.contract.args import Args, Offset
from crewboard.contract.review.drafts import DraftFields, ResultFields
from crewboard.contract.review.present import draft_page_view, draft_read_view, hand_in_view
from crewboard.services.identity.access import ANY_WORKSPACE
from crewboard.services.paging import MAX_PAGE
from crewboard.services.review import drafts


class ResultBody(ResultFields):
    project_id: str | None = Field(
        default=None, max_length=200, description="Optional: the task's project."
    )


class DraftsQuery(Args):
    status: str | None = Field(
        default=None, max_length=200, description="Comma-separated draft statuses."
    )
    limit: int = Field(default=50, ge=1, le=MAX_PAGE)
    offset: Offset = 0


@reads_headers(IDEMPOTENCY_KEY)
async def submit_result(request: Request) -> Created:
    body = parse_args(ResultBody, await keyed_body(request))
    task = request.path_params["task"]
    result = await run_service(
        request,
        lambda db, actor: drafts.submit_result(
            db,
            actor,
            project=body.project_id,
            workspace_id=body.workspace_ref(),
            task=task,
            idempotency_key=body.idempotency_key,
            expected_revision=body.expected_revision,
            context_receipt_id=body.context_receipt_id,
            title=body.title,
            summary=body.summary,
            content=body.content,
            collection=body.collection,
            document=body.document,
            references=[r.model_dump(exclude_none=True) for r in body.references or []],
            via="rest",
            answer=hand_in_view,
            claim_fence=body.claim_fence,
        ),
    )
    return created(result)


@reads_headers(IDEMPOTENCY_KEY)
async def create_draft(request: Request) -> Created:
    data = await keyed_body(request)
    body = parse_args(DraftFields, data)
    task = request.path_params["task"]
    workspace = body.workspace_id if "workspaceId" in data else ANY_WORKSPACE
    result = await run_service(
        request,
        lambda db, actor: drafts.create_draft(
            db,
            actor,
            task=task,
            project=body.project_id,
            workspace_id=workspace,
            idempotency_key=body.idempotency_key,
            context_receipt_id=body.context_receipt_id,
            title=body.title,
            summary=body.summary,
            content=body.content,
            collection=body.collection,
            document=body.document,
            via="rest",
            answer=hand_in_view,
        ),
    )
    return created(result)


async def get_draft(request: Request) -> dict[str, Any]:
    draft_id = request.path_params["draft"]
    return await run_service(
        request, lambda db, actor: draft_read_view(drafts.get_draft(db, actor, draft_id))
    )


async def list_drafts(request: Request) -> dict[str, Any]:
    query = parse_args(DraftsQuery, dict(request.query_params), strict=False)
    project = request.path_params["project"]
    statuses = [s.strip() for s in (query.status or "").split(",") if s.strip()] or None
    return await run_service(
        request,
        lambda db, actor: draft_page_view(
            drafts.list_drafts(
                db,
                actor,
                project=project,
                statuses=statuses,
                limit=query.limit,
                offset=query.offset,
            )
        ),
    )


ENDPOINTS: tuple[Endpoint, ...] = (
    endpoint_for(
        "submit_result",
        submit_result,
        "Hand in a finished task: a draft for review, the task to review, git references "
        "(Idempotency-Key header or idempotencyKey)",
        ResultBody,
    ),
    endpoint_for(
        "create_draft",
        create_draft,
        "Propose a draft for a task; the task stays as it is (optional Idempotency-Key)",
        DraftFields,
    ),
    Endpoint("/api/v1/drafts/{draft}", "GET", get_draft, "One draft in full, with its chain"),
    Endpoint(
        "/api/v1/projects/{project}/drafts",
        "GET",
        list_drafts,
        "A project's drafts, newest first (status=pending,returned_to_review; limit, offset)",
        query=DraftsQuery,
    ),
)
