"""Specs in words: the one place that turns the typed results of `services/specs` (files,
attachments, comment threads) into the camelCase answers every door gives (MCP, REST, the
CLI's JSON and the web pages).

The functions named after a use case run it and word its result, with the same arguments as
the service; the doors call those, so a use case answers alike on every door. Keyed writes
hand the service their wording, which the idempotency ledger keeps for a retry.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from crewboard.contract.reply import ROWS_BUDGET, compact, fitted_answer, window_view
from crewboard.domain.files import MAX_WINDOW_BYTES, MAX_WINDOW_LINES, FileKind
from crewboard.domain.identity.records import Actor
from crewboard.domain.spec_comments import (
    MAX_THREADS_SHOWN,
    SHOWN_COMMENT,
    CommentThread,
    SpecComment,
)
from crewboard.domain.specs import (
    Attachment,
    AttachmentKind,
    AttachmentUpload,
    SpecFile,
    SpecRevision,
    SpecSave,
    ThreadRead,
    TrashChange,
)
from crewboard.services.identity.access import ANY_WORKSPACE, WorkspaceRef
from crewboard.services.paging import next_offset
from crewboard.services.specs import attachments, comments, files
from crewboard.services.specs.file_lookup import FileRef
from crewboard.services.specs.files import DEFAULT_PAGE as DEFAULT_PAGE  # noqa: PLC0414 - the doors' page sizes
from crewboard.services.specs.files import MAX_PAGE as MAX_PAGE  # noqa: PLC0414 - as DEFAULT_PAGE
from crewboard.services.views import iso
from crewboard.storage.database import Database

# --- views ---------------------------------------------------------------------------------


def file_view(file: SpecFile) -> dict[str, Any]:
    return {
        "id": file.id,
        "projectId": file.project_id,
        "path": file.path,
        "kind": file.kind.value,
        "size": file.size,
        "totalLines": file.total_lines if file.kind is FileKind.TEXT else None,
        "revisionCount": file.revision_count,
        "contentVersion": file.content_version,
        "createdBy": file.created_by,
        "createdAt": iso(file.created_at),
        "updatedBy": file.updated_by,
        "updatedAt": iso(file.updated_at),
        "trashed": file.trashed_at is not None,
        "trashedAt": iso(file.trashed_at),
        "trashedBy": file.trashed_by,
    }


def revision_view(revision: SpecRevision) -> dict[str, Any]:
    return {
        "revision": revision.revision,
        "contentVersion": revision.content_version,
        "kind": revision.kind.value,
        "size": revision.size,
        "totalLines": revision.lines.total_lines if revision.kind is FileKind.TEXT else None,
        "savedBy": revision.author,
        "savedAt": iso(revision.created_at),
    }


def attachment_view(item: Attachment) -> dict[str, Any]:
    return {
        "id": item.id,
        "projectId": item.project_id,
        "name": item.name,
        "kind": item.kind.value,
        "mediaType": item.media_type,
        "size": item.size,
        "totalLines": item.lines.total_lines if item.kind is AttachmentKind.TEXT else None,
        "createdBy": item.created_by,
        "createdAt": iso(item.created_at),
        "updatedBy": item.updated_by,
        "updatedAt": iso(item.updated_at),
    }


def comment_view(comment: SpecComment, actor: Actor, *, cut: bool = False) -> dict[str, Any]:
    """A comment on the wire; `cut` shortens its body to SHOWN_COMMENT characters (lists)."""
    shortened = cut and len(comment.body) > SHOWN_COMMENT
    return {
        "id": comment.id,
        "threadId": comment.thread_id,
        "author": comment.author,
        "aiWork": comment.ai_work,
        "body": comment.body[:SHOWN_COMMENT] if shortened else comment.body,
        "bodyLength": len(comment.body),
        "bodyTruncated": shortened,
        "deleted": comment.deleted,
        "contentVersion": comment.content_version,
        "yours": comment.principal == actor.principal,
        "createdAt": iso(comment.created_at),
        "updatedAt": iso(comment.updated_at),
    }


def thread_view(read: ThreadRead, actor: Actor, *, cut: bool = False) -> dict[str, Any]:
    thread: CommentThread = read.thread
    anchor = thread.anchor
    return {
        "id": thread.id,
        "fileId": thread.file_id,
        "status": thread.status.value,
        "orphaned": thread.orphaned,
        "anchor": {
            "quote": anchor.quote,
            "prefix": anchor.prefix,
            "suffix": anchor.suffix,
            "start": anchor.start,
            "end": anchor.end,
            "revision": thread.anchor_revision,
        },
        "createdBy": thread.created_by,
        "createdAt": iso(thread.created_at),
        "updatedAt": iso(thread.updated_at),
        "resolvedBy": thread.resolved_by,
        "resolvedAt": iso(thread.resolved_at),
        "commentCount": len(read.comments),
        "comments": [comment_view(c, actor, cut=cut) for c in read.comments],
    }


# --- spec files ----------------------------------------------------------------------------


def list_spec_files(
    db: Database, actor: Actor, *, project: str, workspace_id: WorkspaceRef = ANY_WORKSPACE,
    path: str | None = None, trashed: bool = False, limit: int = files.DEFAULT_PAGE,
    offset: int = 0,
) -> dict[str, Any]:  # fmt: skip
    page = files.list_spec_files(
        db, actor, project=project, workspace_id=workspace_id, path=path, trashed=trashed,
        limit=limit, offset=offset,
    )  # fmt: skip
    return {
        "files": [file_view(f) for f in page.files],
        "total": page.total,
        "nextOffset": next_offset(page.offset, len(page.files), page.total),
    }


def get_spec_file(
    db: Database, actor: Actor, *, project: str, workspace_id: WorkspaceRef = ANY_WORKSPACE,
    ref: FileRef, include_trashed: bool = False, revisions_limit: int = 0,
    include_tasks: bool = False,
) -> dict[str, Any]:  # fmt: skip
    """`files.get_spec_file`: `file`, and `tasks` and `revisions` when there are any to show."""
    details = files.get_spec_file(
        db, actor, project=project, workspace_id=workspace_id, ref=ref,
        include_trashed=include_trashed, revisions_limit=revisions_limit,
        include_tasks=include_tasks,
    )  # fmt: skip
    answer: dict[str, Any] = {"file": file_view(details.file)}
    if details.tasks is not None:
        answer["tasks"] = [
            {"id": t.id, "key": t.key, "title": t.title, "status": t.status, "line": t.line}
            for t in details.tasks
        ]
    if details.revisions is not None:
        answer["revisions"] = [revision_view(r) for r in details.revisions]
    return answer


def read_spec_file(
    db: Database, actor: Actor, *, project: str, workspace_id: WorkspaceRef = ANY_WORKSPACE,
    ref: FileRef, offset: int = 1, limit: int = MAX_WINDOW_LINES, revision: int | None = None,
    room: int = MAX_WINDOW_BYTES, include_trashed: bool = False,
) -> dict[str, Any]:  # fmt: skip
    read = files.read_spec_file(
        db, actor, project=project, workspace_id=workspace_id, ref=ref, offset=offset,
        limit=limit, revision=revision, room=room, include_trashed=include_trashed,
    )  # fmt: skip
    return {
        "file": file_view(read.file),
        "revision": read.revision.revision,
        "contentVersion": read.revision.content_version,
        **window_view(read.window),
    }


def read_file_bytes(
    db: Database, actor: Actor, *, project: str, workspace_id: WorkspaceRef = ANY_WORKSPACE,
    ref: FileRef, revision: int | None = None, include_trashed: bool = False,
) -> tuple[dict[str, Any], bytes]:  # fmt: skip
    """`files.read_file_bytes`, with a view holding the facts of the revision read, not of the
    newest one: an older revision may differ in kind, size, lines and (always) contentVersion."""
    read = files.read_file_bytes(
        db, actor, project=project, workspace_id=workspace_id, ref=ref, revision=revision,
        include_trashed=include_trashed,
    )  # fmt: skip
    return {**file_view(read.file), **revision_view(read.revision)}, read.data


def new_file_view(file: SpecFile) -> dict[str, Any]:
    """The answer to a file uploaded (kept in the idempotency ledger): `file`, `created`."""
    return {"file": file_view(file), "created": True}


def saved_view(save: SpecSave) -> dict[str, Any]:
    """The answer to a file saved: `file` and the `revision` made."""
    return {"file": file_view(save.file), "revision": revision_view(save.revision)}


def trash_view(done: TrashChange) -> dict[str, Any]:
    """The answer to a file moved to the trash bin or out of it: `file`, and whether that
    `changed` anything."""
    return {"file": file_view(done.file), "changed": done.changed}


# --- attachments ---------------------------------------------------------------------------


def list_attachments(
    db: Database, actor: Actor, *, project: str, workspace_id: WorkspaceRef = ANY_WORKSPACE,
    limit: int = attachments.DEFAULT_PAGE, offset: int = 0,
) -> dict[str, Any]:  # fmt: skip
    page = attachments.list_attachments(
        db, actor, project=project, workspace_id=workspace_id, limit=limit, offset=offset
    )
    return {
        "attachments": [attachment_view(i) for i in page.attachments],
        "total": page.total,
        "nextOffset": next_offset(page.offset, len(page.attachments), page.total),
    }


def get_attachment(
    db: Database, actor: Actor, *, project: str, workspace_id: WorkspaceRef = ANY_WORKSPACE,
    attachment_id: str,
) -> dict[str, Any]:  # fmt: skip
    item = attachments.get_attachment(
        db, actor, project=project, workspace_id=workspace_id, attachment_id=attachment_id
    )
    return {"attachment": attachment_view(item)}


def read_attachment(
    db: Database, actor: Actor, *, project: str, workspace_id: WorkspaceRef = ANY_WORKSPACE,
    attachment_id: str, offset: int = 1, limit: int = MAX_WINDOW_LINES,
    room: int = MAX_WINDOW_BYTES,
) -> dict[str, Any]:  # fmt: skip
    """`attachments.read_attachment`: with the window's fields for text, or `image` (the
    bytes, for the door to send as an image, never as JSON)."""
    read = attachments.read_attachment(
        db, actor, project=project, workspace_id=workspace_id, attachment_id=attachment_id,
        offset=offset, limit=limit, room=room,
    )  # fmt: skip
    view = attachment_view(read.attachment)
    if read.window is None:
        return {"attachment": view, "image": read.image}
    return {"attachment": view, **window_view(read.window)}


def read_attachment_bytes(
    db: Database, actor: Actor, *, project: str, workspace_id: WorkspaceRef = ANY_WORKSPACE,
    attachment_id: str,
) -> tuple[dict[str, Any], bytes]:  # fmt: skip
    item, data = attachments.read_attachment_bytes(
        db, actor, project=project, workspace_id=workspace_id, attachment_id=attachment_id
    )
    return attachment_view(item), data


def uploaded_view(made: AttachmentUpload) -> dict[str, Any]:
    """The answer to an attachment uploaded: `attachment`, and whether it `replaced` one."""
    return {"attachment": attachment_view(made.attachment), "replaced": made.replaced}


# --- comment threads -----------------------------------------------------------------------


def list_spec_file_comments(
    db: Database, actor: Actor, *, project: str, workspace_id: WorkspaceRef = ANY_WORKSPACE,
    ref: FileRef, status: str | None = None, limit: int = MAX_THREADS_SHOWN, offset: int = 0,
) -> dict[str, Any]:  # fmt: skip
    """`comments.list_spec_file_comments`, bodies cut to SHOWN_COMMENT characters."""
    listing = comments.list_spec_file_comments(
        db, actor, project=project, workspace_id=workspace_id, ref=ref, status=status,
        limit=limit, offset=offset,
    )  # fmt: skip
    file = listing.file
    return {
        "file": {
            "id": file.id,
            "path": file.path,
            "revision": file.revision_count,
            "trashed": file.trashed_at is not None,
        },
        "threads": [thread_view(t, actor, cut=True) for t in listing.threads],
        "total": listing.total,
        "nextOffset": next_offset(listing.offset, len(listing.threads), listing.total),
    }


def fit_thread_page(found: dict[str, Any], offset: int) -> tuple[dict[str, Any], str]:
    """A page of `list_spec_file_comments` within an answer's budget, and its JSON: the threads
    that fit, `nextOffset` after them; a thread too long alone keeps the comments that fit."""
    total = found["total"]

    def answer(rows: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "file": found["file"],
            "threads": rows,
            "total": total,
            "nextOffset": next_offset(offset, len(rows), total),
        }

    return fitted_answer([_fitting(thread) for thread in found["threads"]], answer)


def _fitting(thread: dict[str, Any]) -> dict[str, Any]:
    """A thread whose comments alone would overflow an answer keeps its first comments that fit
    (each is already cut to 1,000 characters), flagged."""
    if len(compact(thread).encode()) <= ROWS_BUDGET:
        return thread
    kept: list[dict[str, Any]] = []
    shell = {**thread, "comments": kept, "commentsTruncated": True}
    used = len(compact(shell).encode())
    for comment in thread["comments"]:
        size = len(compact(comment).encode()) + 1
        if used + size > ROWS_BUDGET:
            break
        kept.append(comment)
        used += size
    return shell


def thread_answer(actor: Actor) -> Callable[[ThreadRead], dict[str, Any]]:
    """The answer to a thread started, as `actor` sees it: `thread`."""
    return lambda read: {"thread": thread_view(read, actor)}


def comment_answer(actor: Actor) -> Callable[[SpecComment], dict[str, Any]]:
    """The answer to a reply, as `actor` sees it: `comment`."""
    return lambda reply: {"comment": comment_view(reply, actor)}


def update_spec_file_comment(
    db: Database, actor: Actor, *, project: str, workspace_id: WorkspaceRef, comment_id: str,
    body: str, expected_version: str,
) -> dict[str, Any]:  # fmt: skip
    now = comments.update_spec_file_comment(
        db, actor, project=project, workspace_id=workspace_id, comment_id=comment_id, body=body,
        expected_version=expected_version,
    )  # fmt: skip
    return {"comment": comment_view(now, actor)}


def delete_spec_file_comment(
    db: Database, actor: Actor, *, project: str, workspace_id: WorkspaceRef, comment_id: str
) -> dict[str, Any]:
    done = comments.delete_spec_file_comment(
        db, actor, project=project, workspace_id=workspace_id, comment_id=comment_id
    )
    return {"outcome": done.outcome, "commentId": done.comment_id, "threadId": done.thread_id}


def resolve_thread(
    db: Database, actor: Actor, *, project: str, workspace_id: WorkspaceRef, thread_id: str
) -> dict[str, Any]:
    done = comments.resolve_thread(
        db, actor, project=project, workspace_id=workspace_id, thread_id=thread_id
    )
    return {"thread": thread_view(done.read, actor), "changed": done.changed}


def reopen_thread(
    db: Database, actor: Actor, *, project: str, workspace_id: WorkspaceRef, thread_id: str
) -> dict[str, Any]:
    done = comments.reopen_thread(
        db, actor, project=project, workspace_id=workspace_id, thread_id=thread_id
    )
    return {"thread": thread_view(done.read, actor), "changed": done.changed}
