"""REST routes of comment threads on spec files: list, start, reply, and edit or delete
one's own comment (an edit names the comment's contentVersion, in `If-Match` or
`expectedVersion`). No route resolves or reopens a thread: people do that in the web app,
never a token.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from crewboard.api.common import (
    IDEMPOTENCY_KEY,
    IF_MATCH_VERSION,
    OPTIONAL_WORKSPACE,
    Created,
    Endpoint,
    created,
    guard_precondition,
    keyed_body,
    model_without,
    parse_args,
    read_body,
    reads_headers,
    run_service,
    workspace_of,
)
from crewboard.api.operations import endpoint_for, read_endpoint, run_made
from crewboard.api.specs.common import (
    NOT_IN_BODY,
    body_of,
    expected_version,
    if_match_version,
)
from crewboard.contract.specs import comments as contract
from crewboard.contract.specs import present
from crewboard.contract.specs.comments import (
    CreateSpecFileCommentThread,
    DeleteSpecFileComment,
    ListSpecFileComments,
    ReplySpecFileCommentThread,
    UpdateSpecFileComment,
)
from crewboard.errors import ValidationFailed

# --- comment threads -------------------------------------------------------------------------


def _on(request: Request, data: dict[str, Any], **named: str) -> dict[str, Any]:
    """The body with the project and the ids the path names."""
    return {**data, "projectId": request.path_params["project"], **named}


@reads_headers(IDEMPOTENCY_KEY)
async def start_thread(request: Request) -> Created:
    data = body_of(await keyed_body(request), NOT_IN_BODY)
    args = parse_args(
        CreateSpecFileCommentThread, _on(request, data, fileId=request.path_params["file"])
    )
    return created(await run_made(request, contract.create_spec_file_comment_thread, args))


@reads_headers(IDEMPOTENCY_KEY)
async def reply_to_thread(request: Request) -> Created:
    data = body_of(await keyed_body(request), ("projectId", "threadId"))
    args = parse_args(
        ReplySpecFileCommentThread, _on(request, data, threadId=request.path_params["thread"])
    )
    result = await run_made(request, contract.reply_spec_file_comment_thread, args)
    return created(result)


@reads_headers(IF_MATCH_VERSION)
async def update_comment(request: Request) -> dict[str, Any]:
    data = body_of(await read_body(request), ("projectId", "commentId"))
    from_header = if_match_version(request, "GET …/specs/{fileId}/threads (the comment's)")
    if from_header is None and "expectedVersion" not in data:
        raise ValidationFailed.field(
            "expectedVersion",
            'required: the comment\'s contentVersion (or send it as If-Match: "<contentVersion>").',
        )
    workspace = workspace_of(data)
    filled = _on(request, data, commentId=request.path_params["comment"])
    if from_header is not None:
        filled["expectedVersion"] = from_header
    args = parse_args(UpdateSpecFileComment, filled)
    return await guard_precondition(
        lambda: run_service(
            request,
            lambda db, actor: present.update_spec_file_comment(
                db,
                actor,
                project=args.project_id,
                workspace_id=workspace,
                comment_id=args.comment_id,
                body=args.body,
                expected_version=args.expected_version,
            ),
        ),
        from_header is not None,
    )


async def delete_comment(request: Request) -> dict[str, Any]:
    data = body_of(await read_body(request), ("projectId", "commentId"))
    workspace = workspace_of(data)
    args = parse_args(
        DeleteSpecFileComment, _on(request, data, commentId=request.path_params["comment"])
    )
    return await run_service(
        request,
        lambda db, actor: present.delete_spec_file_comment(
            db, actor, project=args.project_id, workspace_id=workspace, comment_id=args.comment_id
        ),
    )


_NAMED = ("project_id", "file_id", "path")
ThreadsQuery = model_without("SpecFileThreadsQuery", ListSpecFileComments, drop=_NAMED)
ThreadBody = model_without(
    "SpecFileThreadBody",
    CreateSpecFileCommentThread,
    drop=_NAMED,
    workspace_id=OPTIONAL_WORKSPACE,
)
ReplyBody = model_without(
    "SpecFileReplyBody",
    ReplySpecFileCommentThread,
    drop=("project_id", "thread_id"),
    workspace_id=OPTIONAL_WORKSPACE,
)
CommentEditBody = model_without(
    "SpecFileCommentEditBody",
    UpdateSpecFileComment,
    drop=("project_id", "comment_id"),
    workspace_id=OPTIONAL_WORKSPACE,
    expected_version=expected_version(
        'The comment\'s contentVersion; or send If-Match: "<contentVersion>".'
    ),
)
CommentDeleteBody = model_without(
    "SpecFileCommentDeleteBody",
    DeleteSpecFileComment,
    drop=("project_id", "comment_id"),
    workspace_id=OPTIONAL_WORKSPACE,
)

P = "/api/v1/projects/{project}"
F = f"{P}/specs/{{file}}"
ENDPOINTS: tuple[Endpoint, ...] = (
    read_endpoint(
        "list_spec_file_comments",
        contract.threads_page,
        "A file's comment threads in file order (status: open, resolved or orphaned), paged",
        query=ThreadsQuery,
    ),
    endpoint_for(
        "create_spec_file_comment_thread",
        start_thread,
        "Start a comment thread on a passage (anchorQuote copied exactly; anchorPrefix, "
        "anchorSuffix when it repeats; Idempotency-Key header)",
        ThreadBody,
    ),
    endpoint_for(
        "reply_spec_file_comment_thread",
        reply_to_thread,
        "Reply at the end of a comment thread (Idempotency-Key header)",
        ReplyBody,
    ),
    endpoint_for(
        "update_spec_file_comment",
        update_comment,
        "Edit your own comment from its contentVersion (If-Match or expectedVersion)",
        CommentEditBody,
    ),
    endpoint_for(
        "delete_spec_file_comment",
        delete_comment,
        "Delete your own comment (a reply goes; a first comment with replies stays as a "
        "placeholder; a lone first comment takes its thread)",
        CommentDeleteBody,
    ),
)
