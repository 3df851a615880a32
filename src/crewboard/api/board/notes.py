"""REST routes for what is said on a task: its comments and its outputs.

Bodies and queries are checked by the same field types as the MCP tools, so a bad value is
refused with the same code and field. Writes may name `workspaceId` (null for a private
project; left out, the task's own is taken) and take their idempotency key in the
`Idempotency-Key` header (or `idempotencyKey` in the body); an exact retry answers 201 again
with `replayed: true`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field
from starlette.requests import Request

from crewboard.api.common import (
    IDEMPOTENCY_KEY_NEEDED,
    Endpoint,
    keyed_route,
    parse_args,
    run_service,
)
from crewboard.api.operations import endpoint_for
from crewboard.contract.args import Args, Offset, WorkspaceId
from crewboard.contract.board.notes import NoteText, OutputContent, OutputName
from crewboard.contract.board.present_notes import (
    comment_answer,
    comment_page_view,
    output_answer,
    output_page_view,
    output_read_view,
)
from crewboard.domain.validation import INT32_MAX
from crewboard.services.board import notes as task_notes
from crewboard.services.paging import MAX_PAGE


class CommentBody(Args):
    workspace_id: WorkspaceId = None
    content: NoteText
    idempotency_key: str | None = Field(
        default=None, description="Or send it in the Idempotency-Key header."
    )


class OutputBody(Args):
    workspace_id: WorkspaceId = None
    name: OutputName
    content: OutputContent
    idempotency_key: str | None = Field(
        default=None, description="Or send it in the Idempotency-Key header."
    )


class Page(Args):
    limit: int = Field(default=50, ge=1, le=MAX_PAGE)
    offset: Offset = 0


class CommentsQuery(Page):
    kind: Literal["comment", "agent_update", "all"] = "comment"


class OutputsQuery(Page):
    name: str | None = Field(
        default=None, min_length=1, max_length=task_notes.MAX_OUTPUT_NAME, description="One output."
    )
    version: int | None = Field(
        default=None, ge=1, le=INT32_MAX, description="With name: that version."
    )


async def list_comments(request: Request) -> dict[str, Any]:
    query = parse_args(CommentsQuery, dict(request.query_params), strict=False)
    task = request.path_params["task"]
    return await run_service(
        request,
        lambda db, actor: comment_page_view(
            task_notes.list_comments(
                db, actor, task=task, kind=query.kind, limit=query.limit, offset=query.offset
            )
        ),
    )


# The key is needed: the notes service refuses a write without one.
post_comment = keyed_route(
    CommentBody, task_notes.post_comment, comment_answer, key=IDEMPOTENCY_KEY_NEEDED
)
save_output = keyed_route(
    OutputBody, task_notes.save_output, output_answer, key=IDEMPOTENCY_KEY_NEEDED
)


async def list_outputs(request: Request) -> dict[str, Any]:
    query = parse_args(OutputsQuery, dict(request.query_params), strict=False)
    task = request.path_params["task"]
    if (name := query.name) is not None:
        return await run_service(
            request,
            lambda db, actor: output_read_view(
                task_notes.get_output(db, actor, task=task, name=name, version=query.version)
            ),
        )
    return await run_service(
        request,
        lambda db, actor: output_page_view(
            task_notes.list_outputs(db, actor, task=task, limit=query.limit, offset=query.offset)
        ),
    )


T = "/api/v1/tasks/{task}"
ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint(
        f"{T}/comments",
        "GET",
        list_comments,
        "A task's comments, newest first (kind: comment, agent_update or all; limit, offset)",
        query=CommentsQuery,
    ),
    endpoint_for(
        "post_comment", post_comment, "Comment on a task (Idempotency-Key header)", CommentBody
    ),
    Endpoint(
        f"{T}/outputs",
        "GET",
        list_outputs,
        "A task's outputs, newest version of each name; ?name= (and version=) reads one whole",
        query=OutputsQuery,
    ),
    endpoint_for(
        "save_output",
        save_output,
        "Save a named output; the same name again adds a version (Idempotency-Key header)",
        OutputBody,
    ),
)
