"""Spec file comment tools: list a file's threads, start a thread on a passage, reply, edit and
delete one's own comments. No tool resolves or reopens a thread: people do, in the web app."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from crewboard.contract.args import Args, IdempotencyKey, Offset, ProjectRef, WorkspaceId
from crewboard.contract.operation import Area, Call, Cli, Rest, keyed
from crewboard.contract.reply import Reply, page_note
from crewboard.contract.specs import present
from crewboard.domain.files import MAX_PATH
from crewboard.domain.identity.access import Scope, Toolset
from crewboard.domain.spec_comments import MAX_AFFIX, MAX_COMMENT, MAX_QUOTE, MAX_THREADS_SHOWN
from crewboard.services.idempotency import KeyedResult
from crewboard.services.specs import comments
from crewboard.services.specs.file_lookup import FileRef

Body = Field(min_length=1, max_length=MAX_COMMENT, description="Markdown.")
Ref = Field(min_length=1, max_length=200)


class _OnFile(Args):
    project_id: ProjectRef
    workspace_id: WorkspaceId = None
    file_id: str | None = Field(default=None, min_length=1, max_length=200)
    path: str | None = Field(
        default=None, min_length=1, max_length=MAX_PATH, description="Or the file's path."
    )

    def ref(self) -> FileRef:
        return FileRef(file_id=self.file_id, path=self.path)


class ListSpecFileComments(_OnFile):
    status: Literal["open", "resolved", "orphaned"] | None = Field(
        default=None, description="orphaned: threads whose passage was edited away."
    )
    limit: int = Field(default=MAX_THREADS_SHOWN, ge=1, le=MAX_THREADS_SHOWN)
    offset: Offset = 0


class CreateSpecFileCommentThread(_OnFile):
    anchor_quote: str = Field(
        min_length=1,
        max_length=MAX_QUOTE,
        description="The passage, copied exactly from the file's current text.",
    )
    anchor_prefix: str | None = Field(
        default=None, max_length=MAX_AFFIX, description="Words right before it, if it repeats."
    )
    anchor_suffix: str | None = Field(
        default=None, max_length=MAX_AFFIX, description="Words right after it, if it repeats."
    )
    body: str = Body
    idempotency_key: IdempotencyKey = None


class ReplySpecFileCommentThread(Args):
    project_id: ProjectRef
    workspace_id: WorkspaceId = None
    thread_id: str = Ref
    body: str = Body
    idempotency_key: IdempotencyKey = None


class UpdateSpecFileComment(Args):
    project_id: ProjectRef
    workspace_id: WorkspaceId = None
    comment_id: str = Ref
    expected_version: str = Field(
        min_length=1, max_length=64, description="The comment's own contentVersion."
    )
    body: str = Body


class DeleteSpecFileComment(Args):
    project_id: ProjectRef
    workspace_id: WorkspaceId = None
    comment_id: str = Ref


def threads_page(call: Call, args: ListSpecFileComments) -> dict[str, Any]:
    """The page of threads whole, as REST gives it (MCP and the CLI fit it to the budget)."""
    return present.list_spec_file_comments(
        call.db, call.actor, project=args.project_id, workspace_id=args.workspace_ref(),
        ref=args.ref(), status=args.status, limit=args.limit, offset=args.offset,
    )  # fmt: skip


def list_spec_file_comments(call: Call, args: ListSpecFileComments) -> Reply:
    found = threads_page(call, args)
    body, text = present.fit_thread_page(found, args.offset)
    notes = [page_note(shown=len(body["threads"]), offset=args.offset, total=found["total"])]
    if any(t.get("commentsTruncated") for t in body["threads"]):
        notes.append(
            "A thread marked commentsTruncated has more comments than one answer holds "
            "(commentCount says how many); narrow the list with status to see fewer threads."
        )
    return Reply(body, " ".join(n for n in notes if n) or None, text)


def create_spec_file_comment_thread(call: Call, args: CreateSpecFileCommentThread) -> KeyedResult:
    return comments.create_spec_file_comment_thread(
        call.db, call.actor, project=args.project_id, workspace_id=args.workspace_ref(),
        ref=args.ref(), anchor_quote=args.anchor_quote, anchor_prefix=args.anchor_prefix,
        anchor_suffix=args.anchor_suffix, body=args.body, idempotency_key=args.idempotency_key,
        answer=present.thread_answer(call.actor),
    )  # fmt: skip


def reply_spec_file_comment_thread(call: Call, args: ReplySpecFileCommentThread) -> KeyedResult:
    return comments.reply_spec_file_comment_thread(
        call.db, call.actor, project=args.project_id, workspace_id=args.workspace_ref(),
        thread_id=args.thread_id, body=args.body, idempotency_key=args.idempotency_key,
        answer=present.comment_answer(call.actor),
    )  # fmt: skip


def update_spec_file_comment(call: Call, args: UpdateSpecFileComment) -> Reply:
    edited = present.update_spec_file_comment(
        call.db, call.actor, project=args.project_id, workspace_id=args.workspace_ref(),
        comment_id=args.comment_id, body=args.body, expected_version=args.expected_version,
    )  # fmt: skip
    return Reply(edited)


_OUTCOMES = {
    "removed": "The reply is gone.",
    "placeholder": "It opened a thread with replies: it shows as deleted, the replies stay.",
    "threadDeleted": "Nothing was left in its thread: the thread is gone too.",
}


def delete_spec_file_comment(call: Call, args: DeleteSpecFileComment) -> Reply:
    done = present.delete_spec_file_comment(
        call.db, call.actor, project=args.project_id, workspace_id=args.workspace_ref(),
        comment_id=args.comment_id,
    )  # fmt: skip
    return Reply(done, _OUTCOMES[done["outcome"]])


_WRITE = (Scope.SPECS_WRITE,)

SPECS = Area(Toolset.SPECS, write_scopes=_WRITE)

OPERATIONS = (
    SPECS.read(
        "list_spec_file_comments",
        "List comments on a spec file",
        "A file's comment threads in file order, each with its passage (anchor.quote), "
        "status and comments (bodies cut to 1,000 characters). status: open, resolved or "
        "orphaned (the passage was edited away).",
        ListSpecFileComments,
        list_spec_file_comments,
        Rest("GET", "/api/v1/projects/{project}/specs/{file}/threads"),
        Cli(("spec-comment", "list")),
    ),
    SPECS.write(
        "create_spec_file_comment_thread",
        "Comment on a passage",
        "Start a thread on a passage: anchorQuote copied exactly from the current text, never "
        "positions. If the passage repeats, add the words right before or after it in "
        "anchorPrefix/anchorSuffix. Not on a file in the trash bin.",
        CreateSpecFileCommentThread,
        keyed(create_spec_file_comment_thread),
        Rest.created("/api/v1/projects/{project}/specs/{file}/threads"),
        Cli(("spec-comment", "start")),
    ),
    SPECS.write(
        "reply_spec_file_comment_thread",
        "Reply to a comment thread",
        "Add a comment at the end of a thread. Not on a file in the trash bin.",
        ReplySpecFileCommentThread,
        keyed(reply_spec_file_comment_thread),
        Rest.created("/api/v1/projects/{project}/threads/{thread}/replies"),
        Cli(("spec-comment", "reply")),
    ),
    SPECS.edit(
        "update_spec_file_comment",
        "Edit your comment",
        "Rewrite one of your own comments from its contentVersion (expectedVersion: the "
        "comment's, not the file's).",
        UpdateSpecFileComment,
        update_spec_file_comment,
        Rest("PATCH", "/api/v1/projects/{project}/comments/{comment}"),
        Cli(("spec-comment", "edit")),
    ),
    SPECS.write(
        "delete_spec_file_comment",
        "Delete your comment",
        "Delete one of your own comments. A reply disappears; a first comment with replies "
        "stays as a 'deleted' placeholder; a first comment alone removes its thread.",
        DeleteSpecFileComment,
        delete_spec_file_comment,
        Rest("DELETE", "/api/v1/projects/{project}/comments/{comment}"),
        Cli(("spec-comment", "delete")),
        destructive=True,
    ),
)
