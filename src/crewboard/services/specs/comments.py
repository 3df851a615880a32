"""Comment threads on spec files: list, start a thread on a passage, reply, edit and delete
one's own comments; people (never a token) resolve and reopen threads.

A thread is started on a passage the caller copies from the file (`anchorQuote`, with
`anchorPrefix`/`anchorSuffix` when it repeats); every save of the file moves it along
(`comment_anchors.py`), or marks it orphaned when the passage is gone. A comment is its
author's: only the same principal (the token it was written through, or the person directly)
edits or deletes it, from its own `contentVersion`. Deleting a reply removes it; deleting a
first comment that has replies leaves a "deleted" placeholder; deleting a first comment alone
removes the thread. On a trashed file comments can be read, edited and deleted, but no thread
is started and no reply written. Comments written through an agent token are AI work.
"""

from __future__ import annotations

from typing import Any

from crewboard.domain.files import FileKind
from crewboard.domain.identity.access import Role, Scope
from crewboard.domain.ids import new_id
from crewboard.domain.models import Actor, ProjectAccess
from crewboard.domain.spec_comments import (
    MAX_AFFIX,
    MAX_COMMENT,
    MAX_QUOTE,
    MAX_THREADS_SHOWN,
    SHOWN_COMMENT,
    THREAD_FILTERS,
    CommentThread,
    SpecComment,
    ThreadStatus,
    place,
)
from crewboard.domain.specs import MAX_READ_BYTES, SpecFile
from crewboard.domain.validation import check_no_nul, check_text
from crewboard.errors import (
    LimitExceeded,
    NotFound,
    PermissionDenied,
    RevisionConflict,
    ValidationFailed,
)
from crewboard.services.idempotency import Ack, KeyedResult, do_keyed_write
from crewboard.services.identity.access import (
    ANY_WORKSPACE,
    WorkspaceRef,
    access_project,
    require_signed_in_person,
)
from crewboard.services.paging import check_page, next_offset
from crewboard.services.specs.file_lookup import FileRef, files_of, find_file
from crewboard.services.views import iso, stamp_of
from crewboard.storage.database import Database
from crewboard.storage.specs.comments import SpecCommentRepository
from crewboard.storage.uow import UnitOfWork


def comments_of(uow: UnitOfWork) -> SpecCommentRepository:
    return SpecCommentRepository(uow.conn)


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


def thread_view(
    thread: CommentThread, comments: list[SpecComment], actor: Actor, *, cut: bool = False
) -> dict[str, Any]:
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
        "commentCount": len(comments),
        "comments": [comment_view(c, actor, cut=cut) for c in comments],
    }


# --- finding threads and comments ----------------------------------------------------------------


def _thread_not_found(thread_id: str) -> NotFound:
    return NotFound(
        f"No comment thread {thread_id!r} in this project; list_spec_file_comments shows a "
        "file's threads.",
        {"resource": "specCommentThread", "ref": thread_id},
    )


def _find_thread(
    uow: UnitOfWork, access: ProjectAccess, thread_id: str
) -> tuple[CommentThread, SpecFile]:
    found = comments_of(uow).get_thread(thread_id) if "\x00" not in thread_id else None
    if found is None or found.project_id != access.project.id:
        raise _thread_not_found(thread_id)
    file = files_of(uow).get(found.file_id)
    assert file is not None  # noqa: S101 - a thread goes with its file (foreign key)
    return found, file


def _find_comment(
    uow: UnitOfWork, access: ProjectAccess, comment_id: str
) -> tuple[SpecComment, CommentThread, SpecFile]:
    found = comments_of(uow).get_comment(comment_id) if "\x00" not in comment_id else None
    if found is None or found.project_id != access.project.id or found.deleted:
        raise NotFound(
            f"No comment {comment_id!r} in this project"
            f"{' (it was deleted)' if found is not None and found.deleted else ''}; "
            "list_spec_file_comments shows a file's threads and comments.",
            {"resource": "specComment", "ref": comment_id},
        )
    thread, file = _find_thread(uow, access, found.thread_id)
    return found, thread, file


def _one_at_a_time(uow: UnitOfWork, thread_id: str) -> None:
    """Replies and deletions of one thread run one by one: a deletion that empties a thread
    must not take a reply written meanwhile with it."""
    uow.serialize(f"spec_comment_thread:{thread_id}")


def _writable(
    uow: UnitOfWork, actor: Actor, project: str, workspace_id: WorkspaceRef
) -> ProjectAccess:
    return access_project(
        uow, actor, project, scope=Scope.SPECS_WRITE, role=Role.WRITE, workspace_id=workspace_id
    )


def _refuse_trashed(file: SpecFile, doing: str, field: str) -> None:
    """Raises: ValidationFailed when the file is in the trash bin."""
    if file.trashed_at is not None:
        raise ValidationFailed(
            f"{file.path} is in the trash bin: its comments can be read, edited and deleted, but "
            f"you cannot {doing} there. Ask a person whether to restore it "
            "(restore_spec_file_from_trash) first.",
            {"field": field, "fileId": file.id, "trashed": True},
        )


def _require_own(actor: Actor, comment: SpecComment, doing: str) -> None:
    """Raises: PermissionDenied when the comment was written by another principal."""
    if comment.principal != actor.principal:
        by = comment.author
        who = by.get("tokenName") or by.get("displayName") or "someone else"
        raise PermissionDenied(
            f"You can {doing} only your own comments; this one is by {who}. Reply to the thread "
            "instead.",
            {"field": "commentId", "commentId": comment.id, "author": by},
        )


# --- checks --------------------------------------------------------------------------------------


def check_body(body: str) -> str:
    """Raises: ValidationFailed (empty, NUL), LimitExceeded (over 10,000 characters)."""
    return check_text("body", body, max_length=MAX_COMMENT, required=True)


def _check_anchor(quote: str, prefix: str | None, suffix: str | None) -> tuple[str, str, str]:
    """The quote and its context as given (never stripped: they are copied from the file)."""
    checked = []
    for field, value, limit in (
        ("anchorQuote", quote, MAX_QUOTE),
        ("anchorPrefix", prefix or "", MAX_AFFIX),
        ("anchorSuffix", suffix or "", MAX_AFFIX),
    ):
        check_no_nul(field, value)
        if len(value) > limit:
            raise LimitExceeded(
                f"{field}: {len(value)} characters is over the limit of {limit}; a short, "
                "distinctive passage anchors best.",
                {"field": field, "limit": limit, "actual": len(value)},
            )
        checked.append(value)
    return checked[0], checked[1], checked[2]


def _current_text(uow: UnitOfWork, file: SpecFile) -> str:
    """The text of the file's newest revision, to place a passage in.

    Raises:
        ValidationFailed: a binary file. LimitExceeded: a file over 8 MiB.
    """
    if file.kind is not FileKind.TEXT:
        raise ValidationFailed(
            f"{file.path} is a binary file: it has no text passage to comment on.",
            {"field": "fileId", "kind": file.kind.value},
        )
    if file.size > MAX_READ_BYTES:
        raise LimitExceeded(
            f"{file.path} is {file.size} bytes, over the {MAX_READ_BYTES} bytes a comment thread "
            "can be started on; comment on it in the web app.",
            {"field": "fileId", "limit": MAX_READ_BYTES, "actual": file.size},
        )
    return uow.blobs.read(file.digest).decode("utf-8")


def _new_comment(
    uow: UnitOfWork, actor: Actor, *, thread_id: str, project_id: str, body: str
) -> SpecComment:
    return SpecComment(
        id=new_id("scm"),
        thread_id=thread_id,
        project_id=project_id,
        seq=uow.sequences.take_next(project_id, "spec_comment"),
        author=stamp_of(uow, actor),
        body=body,
        content_version=new_id("scv"),
        deleted=False,
        ai_work=actor.is_agent,
        created_at=uow.now,
        updated_at=uow.now,
    )


def _event(
    uow: UnitOfWork,
    actor: Actor,
    kind: str,
    *,
    file: SpecFile,
    thread_id: str,
    workspace_id: str | None,
    **more: Any,
) -> None:
    uow.record_event(
        f"spec_comment.{kind}",
        actor=actor.as_payload(),
        payload={"fileId": file.id, "path": file.path, "threadId": thread_id, **more},
        project_id=file.project_id,
        workspace_id=workspace_id,
    )


# --- reading -------------------------------------------------------------------------------------


def list_spec_file_comments(
    db: Database,
    actor: Actor,
    *,
    project: str,
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
    ref: FileRef,
    status: str | None = None,
    limit: int = MAX_THREADS_SHOWN,
    offset: int = 0,
) -> dict[str, Any]:
    """A file's threads (in the trash bin too) in the order of their passages, orphaned ones
    last, each with its comments; bodies cut to 1,000 characters. `status`: `open` or
    `resolved` (passage still there), or `orphaned`.

    Raises:
        ValidationFailed: an unknown status, limit outside 1..100, a negative offset. NotFound.
    """
    ref = ref.check()
    if status is not None and status not in THREAD_FILTERS:
        raise ValidationFailed.field("status", f"unknown value {status!r}.", list(THREAD_FILTERS))
    check_page(limit, offset, MAX_THREADS_SHOWN)

    def work(uow: UnitOfWork) -> dict[str, Any]:
        file, _access = find_file(
            uow, actor, project=project, ref=ref, include_trashed=True, workspace_id=workspace_id
        )
        repo = comments_of(uow)
        threads, total = repo.threads_of_file(file.id, status=status, limit=limit, offset=offset)
        comments = repo.comments_of([t.id for t in threads])
        return {
            "file": {
                "id": file.id,
                "path": file.path,
                "revision": file.revision_count,
                "trashed": file.trashed_at is not None,
            },
            "threads": [thread_view(t, comments[t.id], actor, cut=True) for t in threads],
            "total": total,
            "nextOffset": next_offset(offset, len(threads), total),
        }

    return db.read(work)


# --- writing -------------------------------------------------------------------------------------


def create_spec_file_comment_thread(
    db: Database,
    actor: Actor,
    *,
    project: str,
    workspace_id: WorkspaceRef,
    ref: FileRef,
    anchor_quote: str,
    anchor_prefix: str | None,
    anchor_suffix: str | None,
    body: str,
    idempotency_key: str | None,
) -> KeyedResult:
    """A new open thread on the passage `anchor_quote` of the file's current text, with its
    first comment (keyed).

    Raises:
        ValidationFailed: the quote missing from the file or ambiguous (the message says what
            to add), a trashed or binary file, an empty body. LimitExceeded, NotFound,
            PermissionDenied, IdempotencyConflict.
    """
    ref = ref.check()
    text = check_body(body)
    quote, prefix, suffix = _check_anchor(anchor_quote, anchor_prefix, anchor_suffix)

    def work(uow: UnitOfWork) -> KeyedResult:
        file, access = find_file(
            uow, actor, project=project, ref=ref, scope=Scope.SPECS_WRITE, role=Role.WRITE,
            workspace_id=workspace_id, include_trashed=True,
        )  # fmt: skip

        def perform() -> Ack:
            _refuse_trashed(file, "start a thread", "fileId")
            anchor = place(_current_text(uow, file), quote, prefix, suffix)
            thread = CommentThread(
                id=new_id("sct"),
                project_id=file.project_id,
                file_id=file.id,
                status=ThreadStatus.OPEN,
                orphaned=False,
                anchor=anchor,
                anchor_revision=file.revision_count,
                created_by=stamp_of(uow, actor),
                created_at=uow.now,
                updated_at=uow.now,
            )
            first = _new_comment(
                uow, actor, thread_id=thread.id, project_id=file.project_id, body=text
            )
            repo = comments_of(uow)
            repo.add_thread(thread)
            repo.add_comment(first)
            _event(
                uow, actor, "thread_opened", file=file, thread_id=thread.id,
                workspace_id=access.project.workspace_id, commentId=first.id,
                aiWork=first.ai_work,
            )  # fmt: skip
            return Ack(
                {"thread": thread_view(thread, [first], actor)},
                resource_type="spec_comment_thread",
                resource_id=thread.id,
                project_id=file.project_id,
            )

        return do_keyed_write(
            uow, actor, key=idempotency_key, operation="create_spec_file_comment_thread",
            arguments={"file": file.id, "quote": quote, "prefix": prefix, "suffix": suffix,
                       "body": text},
            perform=perform,
        )  # fmt: skip

    return db.write(work)


def reply_spec_file_comment_thread(
    db: Database,
    actor: Actor,
    *,
    project: str,
    workspace_id: WorkspaceRef,
    thread_id: str,
    body: str,
    idempotency_key: str | None,
) -> KeyedResult:
    """A reply at the end of a thread (keyed).

    Raises:
        ValidationFailed: the file is in the trash bin; an empty body. LimitExceeded,
        NotFound, PermissionDenied, IdempotencyConflict.
    """
    text = check_body(body)

    def work(uow: UnitOfWork) -> KeyedResult:
        access = _writable(uow, actor, project, workspace_id)
        _one_at_a_time(uow, thread_id)
        thread, file = _find_thread(uow, access, thread_id)

        def perform() -> Ack:
            _refuse_trashed(file, "reply", "threadId")
            reply = _new_comment(
                uow, actor, thread_id=thread.id, project_id=thread.project_id, body=text
            )
            repo = comments_of(uow)
            repo.add_comment(reply)
            repo.touch_thread(thread.id, uow.now)
            _event(
                uow, actor, "replied", file=file, thread_id=thread.id,
                workspace_id=access.project.workspace_id, commentId=reply.id,
                aiWork=reply.ai_work,
            )  # fmt: skip
            return Ack(
                {"comment": comment_view(reply, actor)},
                resource_type="spec_comment",
                resource_id=reply.id,
                project_id=thread.project_id,
            )

        return do_keyed_write(
            uow, actor, key=idempotency_key, operation="reply_spec_file_comment_thread",
            arguments={"thread": thread.id, "body": text}, perform=perform,
        )  # fmt: skip

    return db.write(work)


def update_spec_file_comment(
    db: Database,
    actor: Actor,
    *,
    project: str,
    workspace_id: WorkspaceRef,
    comment_id: str,
    body: str,
    expected_version: str,
) -> dict[str, Any]:
    """A new body for one of the caller's comments, still at `expected_version` (the
    comment's own contentVersion).

    Raises:
        RevisionConflict: the comment was edited since; details say who edited it and when.
        PermissionDenied: another principal's comment. NotFound, ValidationFailed,
        LimitExceeded.
    """
    text = check_body(body)
    expected = expected_version.strip()
    if not expected:
        raise ValidationFailed.field(
            "expectedVersion",
            "is required: pass the comment's contentVersion from list_spec_file_comments.",
        )

    def work(uow: UnitOfWork) -> dict[str, Any]:
        access = _writable(uow, actor, project, workspace_id)
        comment, thread, file = _find_comment(uow, access, comment_id)
        _require_own(actor, comment, "edit")
        repo = comments_of(uow)
        version = new_id("scv")
        if comment.content_version != expected or not repo.rewrite(
            comment.id, body=text, version=version, expected=expected, at=uow.now
        ):
            raise _conflict(repo.get_comment(comment.id) or comment, expected)
        _event(
            uow, actor, "updated", file=file, thread_id=thread.id,
            workspace_id=access.project.workspace_id, commentId=comment.id,
        )  # fmt: skip
        now = repo.get_comment(comment.id)
        assert now is not None  # noqa: S101 - just written in this transaction
        return {"comment": comment_view(now, actor)}

    return db.write(work)


def _conflict(comment: SpecComment, expected: str) -> RevisionConflict:
    by = comment.author
    who = by.get("tokenName") or by.get("displayName") or "its author"
    return RevisionConflict(
        f"The comment changed since you read it: {who} edited it at {iso(comment.updated_at)}. "
        "Your text was not saved. Read the thread again with list_spec_file_comments and edit "
        "from the new contentVersion.",
        {
            "field": "expectedVersion",
            "expectedVersion": expected,
            "currentVersion": comment.content_version,
            "updatedBy": by,
            "updatedAt": iso(comment.updated_at),
        },
    )


def delete_spec_file_comment(
    db: Database, actor: Actor, *, project: str, workspace_id: WorkspaceRef, comment_id: str
) -> dict[str, Any]:
    """Delete one of the caller's comments. `outcome`: `removed` (a reply), `placeholder` (a
    first comment with replies, kept as "deleted" so they still make sense) or `threadDeleted`
    (a first comment alone, or the last reply under a placeholder: nothing is left to read).

    Raises:
        PermissionDenied: another principal's comment. NotFound.
    """

    def work(uow: UnitOfWork) -> dict[str, Any]:
        access = _writable(uow, actor, project, workspace_id)
        comment, thread, file = _find_comment(uow, access, comment_id)
        _one_at_a_time(uow, thread.id)
        comment, thread, file = _find_comment(uow, access, comment_id)  # as it is now
        _require_own(actor, comment, "delete")
        repo = comments_of(uow)
        comments = repo.comments_of([thread.id])[thread.id]
        first = comments[0]
        others = [c for c in comments if c.id != comment.id]
        if comment.id == first.id and others:
            outcome = "placeholder"
            repo.make_placeholder(comment.id, version=new_id("scv"), at=uow.now)
        elif not others or (len(others) == 1 and others[0].deleted):
            outcome = "threadDeleted"
            repo.delete_thread(thread.id)
        else:
            outcome = "removed"
            repo.delete_comment(comment.id)
        if outcome != "threadDeleted":
            repo.touch_thread(thread.id, uow.now)
        _event(
            uow, actor, "deleted", file=file, thread_id=thread.id,
            workspace_id=access.project.workspace_id, commentId=comment.id, outcome=outcome,
        )  # fmt: skip
        return {"outcome": outcome, "commentId": comment.id, "threadId": thread.id}

    return db.write(work)


# --- people's decisions --------------------------------------------------------------------------


def resolve_thread(
    db: Database, actor: Actor, *, project: str, workspace_id: WorkspaceRef, thread_id: str
) -> dict[str, Any]:
    """Mark a thread resolved (a person signed in, never a token). A resolved thread stays.

    Raises:
        PermissionDenied: a token, or no write role. NotFound.
    """
    require_signed_in_person(actor, "Resolving a comment thread")
    return _set_status(
        db, actor, project=project, workspace_id=workspace_id, thread_id=thread_id,
        status=ThreadStatus.RESOLVED,
    )  # fmt: skip


def reopen_thread(
    db: Database, actor: Actor, *, project: str, workspace_id: WorkspaceRef, thread_id: str
) -> dict[str, Any]:
    """Open a resolved thread again (a person signed in, never a token).

    Raises:
        PermissionDenied: a token, or no write role. NotFound.
    """
    require_signed_in_person(actor, "Reopening a comment thread")
    return _set_status(
        db, actor, project=project, workspace_id=workspace_id, thread_id=thread_id,
        status=ThreadStatus.OPEN,
    )  # fmt: skip


def _set_status(
    db: Database,
    actor: Actor,
    *,
    project: str,
    workspace_id: WorkspaceRef,
    thread_id: str,
    status: ThreadStatus,
) -> dict[str, Any]:
    def work(uow: UnitOfWork) -> dict[str, Any]:
        access = _writable(uow, actor, project, workspace_id)
        thread, file = _find_thread(uow, access, thread_id)
        repo = comments_of(uow)
        changed = thread.status is not status
        if changed:
            by = stamp_of(uow, actor) if status is ThreadStatus.RESOLVED else None
            repo.set_status(thread.id, status, by=by, at=uow.now)
            kind = "resolved" if status is ThreadStatus.RESOLVED else "reopened"
            _event(
                uow, actor, kind, file=file, thread_id=thread.id,
                workspace_id=access.project.workspace_id,
            )  # fmt: skip
        now = repo.get_thread(thread.id)
        assert now is not None  # noqa: S101 - read in this transaction
        comments = repo.comments_of([thread.id])[thread.id]
        return {"thread": thread_view(now, comments, actor), "changed": changed}

    return db.write(work)
