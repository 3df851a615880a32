"""REST routes for a project's inbox messages and proposal cards (its activity stream is
served from its declaration, by api/operations.py).

Bodies and queries use the MCP tools' argument types, so a bad value gets the same code and
field. Writes take their key in the `Idempotency-Key` header (or `idempotencyKey` in the
body). Deciding a card is a person's act in the web app or the CLI: there is no route for it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import Field
from starlette.requests import Request

from crewboard.api.common import (
    IDEMPOTENCY_KEY,
    BodyChoice,
    Created,
    Endpoint,
    created,
    keyed_body,
    parse_args,
    query_params,
    reads_headers,
    run_service,
    use_case_keywords,
)
from crewboard.api.operations import endpoint_for
from crewboard.contract.args import Args, Offset
from crewboard.contract.review import activity as activity_tools
from crewboard.contract.review import proposals as proposal_tools
from crewboard.contract.review.present_inbox import posted_view, thread_view
from crewboard.contract.review.present_proposals import proposal_page_view, proposed_view
from crewboard.services.idempotency import KeyedResult
from crewboard.services.review import messages, proposals


class MessagesQuery(Args):
    participant_id: str = Field(
        min_length=1, max_length=200, description="Whose inbox thread: a user or role id."
    )
    limit: int = Field(default=50, ge=1, le=messages.MAX_PAGE)
    offset: Offset = 0


class ProposalsQuery(Args):
    status: Literal["pending", "accepted", "dismissed"] | None = None
    limit: int = Field(default=50, ge=1, le=proposals.MAX_PAGE)
    offset: Offset = 0


@reads_headers(IDEMPOTENCY_KEY)
async def post_message(request: Request) -> Created:
    data = await keyed_body(request)
    body = parse_args(
        activity_tools.PostMessage, {**data, "projectId": request.path_params["project"]}
    )
    result = await run_service(
        request,
        lambda db, actor: messages.post_message(
            db, actor, **use_case_keywords(body), answer=posted_view
        ),
    )
    return created(result)


async def list_messages(request: Request) -> dict[str, Any]:
    query = parse_args(MessagesQuery, query_params(request, MessagesQuery), strict=False)
    project = request.path_params["project"]
    return await run_service(
        request,
        lambda db, actor: thread_view(
            messages.list_thread(
                db, actor, project, query.participant_id, limit=query.limit, offset=query.offset
            )
        ),
    )


async def list_proposals(request: Request) -> dict[str, Any]:
    query = parse_args(ProposalsQuery, dict(request.query_params), strict=False)
    project = request.path_params["project"]
    return await run_service(
        request,
        lambda db, actor: proposal_page_view(
            proposals.list_proposals(
                db,
                actor,
                project=project,
                status=query.status,
                limit=query.limit,
                offset=query.offset,
            )
        ),
    )


# A proposal's body: the MCP tool's arguments for its kind, with `kind` naming which.
PROPOSAL = BodyChoice(
    "kind",
    {
        "task": proposal_tools.ProposeTask,
        "task_update": proposal_tools.ProposeTaskUpdate,
        "task_delete": proposal_tools.ProposeTaskDelete,
        "role": proposal_tools.ProposeRole,
        "composition": proposal_tools.ProposeComposition,
    },
)


# Each card kind's use case: the card's arguments are its keywords (`use_case_keywords`).
_PROPOSE: dict[str, Callable[..., KeyedResult]] = {
    "task": proposals.propose_task,
    "task_update": proposals.propose_task_update,
    "task_delete": proposals.propose_task_delete,
    "role": proposals.propose_role,
    "composition": proposals.propose_composition,
}


@reads_headers(IDEMPOTENCY_KEY)
async def post_proposal(request: Request) -> Created:
    data = await keyed_body(request)
    model = PROPOSAL.model_for(data)
    kind = data.pop("kind")
    project = request.path_params["project"]
    if "project_id" in model.model_fields:  # a card about the project: the path names it
        data["projectId"] = project
    given = {**use_case_keywords(parse_args(model, data)), "project": project}
    return created(
        await run_service(
            request, lambda db, actor: _PROPOSE[kind](db, actor, **given, answer=proposed_view)
        )
    )


P = "/api/v1/projects/{project}"
ENDPOINTS: tuple[Endpoint, ...] = (
    endpoint_for(
        "post_message",
        post_message,
        "Post into a participant's inbox thread (Idempotency-Key header; required when shared)",
        activity_tools.PostMessage,
    ),
    Endpoint(
        f"{P}/messages",
        "GET",
        list_messages,
        "A participant's inbox thread, newest first (participantId; limit, offset)",
        query=MessagesQuery,
    ),
    Endpoint(
        f"{P}/proposals",
        "GET",
        list_proposals,
        "The project's proposal cards, newest first (?status=pending|accepted|dismissed)",
        query=ProposalsQuery,
    ),
    Endpoint(
        f"{P}/proposals",
        "POST",
        post_proposal,
        "Leave a proposal card (kind: task, task_update, task_delete, role, composition)",
        PROPOSAL,
        201,
    ),
)
