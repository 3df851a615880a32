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

from collections.abc import Callable
from typing import Any

from crewboard.domain.identity.access import Role, Scope
from crewboard.domain.identity.naming import name_of
from crewboard.domain.identity.records import Actor
from crewboard.domain.ids import new_id
from crewboard.domain.projects import Project
from crewboard.domain.spec_comments import (
    MAX_THREADS_SHOWN,
    THREAD_FILTERS,
    CommentThread,
    SpecComment,
    ThreadStatus,
    place,
    place_at,
)
from crewboard.domain.specs import (
    CommentRemoval,
    SpecFile,
    ThreadChange,
    ThreadListing,
    ThreadRead,
)
from crewboard.errors import (
    RevisionConflict,
    ValidationFailed,
)
from crewboard.services.idempotency import Ack, KeyedResult, do_keyed_write
from crewboard.services.identity.access import (
    ANY_WORKSPACE,
    WorkspaceRef,
    require_signed_in_person,
)
from crewboard.services.notifications.mentions import tell_mentioned_people
from crewboard.services.paging import check_page
from crewboard.services.specs.comment_threads import (
    check_anchor,
    check_body,
    comments_of,
    current_text,
    find_comment,
    find_thread,
    new_comment,
    one_at_a_time,
    record_comment_event,
    refuse_trashed,
    require_own,
    writable_project,
)
from crewboard.services.specs.file_lookup import FileRef, find_file
from crewboard.services.views import iso, stamp_of
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork

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
) -> ThreadListing:
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

    def work(uow: UnitOfWork) -> ThreadListing:
        file, _access = find_file(
            uow, actor, project=project, ref=ref, include_trashed=True, workspace_id=workspace_id
        )
        repo = comments_of(uow)
        threads, total = repo.threads_of_file(file.id, status=status, limit=limit, offset=offset)
        comments = repo.comments_of([t.id for t in threads])
        reads = tuple(ThreadRead(t, tuple(comments[t.id])) for t in threads)
        return ThreadListing(file, reads, total, offset)

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
    answer: Callable[[ThreadRead], dict[str, Any]],
    anchor_start: int | None = None,
) -> KeyedResult:
    """A new open thread on the passage `anchor_quote` of the file's current text, with its
    first comment (keyed); `answer` words it for the door and the ledger. `anchor_start`
    (the web page's selection, mapped to the source) says where the quote is; without it the
    quote is looked for, singled out by its prefix and suffix.

    Raises:
        ValidationFailed: the quote missing from the file or ambiguous (the message says what
            to add), a trashed or binary file, an empty body. LimitExceeded, NotFound,
            PermissionDenied, IdempotencyConflict.
    """
    ref = ref.check()
    text = check_body(body)
    quote, prefix, suffix = check_anchor(anchor_quote, anchor_prefix, anchor_suffix)

    def work(uow: UnitOfWork) -> KeyedResult:
        file, access = find_file(
            uow, actor, project=project, ref=ref, scope=Scope.SPECS_WRITE, role=Role.WRITE,
            workspace_id=workspace_id, include_trashed=True,
        )  # fmt: skip

        def perform() -> Ack:
            refuse_trashed(file, "start a thread", "fileId")
            words = current_text(uow, file)
            if anchor_start is None:
                anchor = place(words, quote, prefix, suffix)
            else:
                anchor = place_at(words, quote, anchor_start)
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
            first = new_comment(
                uow, actor, thread_id=thread.id, project_id=file.project_id, body=text
            )
            repo = comments_of(uow)
            repo.add_thread(thread)
            repo.add_comment(first)
            record_comment_event(
                uow, actor, "thread_opened", file=file, thread_id=thread.id,
                workspace_id=access.project.workspace_id, commentId=first.id,
                aiWork=first.ai_work,
            )  # fmt: skip
            _tell_mentioned(uow, actor, access.project, file, comment_id=first.id, text=text)
            return Ack(
                answer(ThreadRead(thread, (first,))),
                resource_type="spec_comment_thread",
                resource_id=thread.id,
                project_id=file.project_id,
            )

        return do_keyed_write(
            uow, actor, key=idempotency_key, operation="create_spec_file_comment_thread",
            arguments={"file": file.id, "quote": quote, "prefix": prefix, "suffix": suffix,
                       "body": text, **({} if anchor_start is None else {"at": anchor_start})},
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
    answer: Callable[[SpecComment], dict[str, Any]],
) -> KeyedResult:
    """A reply at the end of a thread (keyed); `answer` words it for the door and the ledger.

    Raises:
        ValidationFailed: the file is in the trash bin; an empty body. LimitExceeded,
        NotFound, PermissionDenied, IdempotencyConflict.
    """
    text = check_body(body)

    def work(uow: UnitOfWork) -> KeyedResult:
        access = writable_project(uow, actor, project, workspace_id)
        one_at_a_time(uow, thread_id)
        thread, file = find_thread(uow, access, thread_id)

        def perform() -> Ack:
            refuse_trashed(file, "reply", "threadId")
            reply = new_comment(
                uow, actor, thread_id=thread.id, project_id=thread.project_id, body=text
            )
            repo = comments_of(uow)
            repo.add_comment(reply)
            repo.touch_thread(thread.id, uow.now)
            record_comment_event(
                uow, actor, "replied", file=file, thread_id=thread.id,
                workspace_id=access.project.workspace_id, commentId=reply.id,
                aiWork=reply.ai_work,
            )  # fmt: skip
            _tell_mentioned(uow, actor, access.project, file, comment_id=reply.id, text=text)
            return Ack(
                answer(reply),
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
) -> SpecComment:
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

    def work(uow: UnitOfWork) -> SpecComment:
        access = writable_project(uow, actor, project, workspace_id)
        comment, thread, file = find_comment(uow, access, comment_id)
        require_own(actor, comment, "edit")
        repo = comments_of(uow)
        version = new_id("scv")
        if comment.content_version != expected or not repo.rewrite(
            comment.id, body=text, version=version, expected=expected, at=uow.now
        ):
            raise _conflict(repo.get_comment(comment.id) or comment, expected)
        record_comment_event(
            uow, actor, "updated", file=file, thread_id=thread.id,
            workspace_id=access.project.workspace_id, commentId=comment.id,
        )  # fmt: skip
        # Someone the edit newly mentions hears of it; those told already are not told again.
        _tell_mentioned(uow, actor, access.project, file, comment_id=comment.id, text=text)
        now = repo.get_comment(comment.id)
        assert now is not None  # noqa: S101 - just written in this transaction
        return now

    return db.write(work)


def _tell_mentioned(
    uow: UnitOfWork, actor: Actor, project: Project, file: SpecFile, *, comment_id: str, text: str
) -> None:
    """The people a spec comment `@mentions` (not its writer) hear of it, once per comment."""
    tell_mentioned_people(
        uow, actor, project_id=project.id, text=text, kind="spec_comment.mentioned",
        where=file.path, link=f"/p/{project.key}/specs/files/{file.id}#threads",
        source=f"spec_comment:{comment_id}",
    )  # fmt: skip


def _conflict(comment: SpecComment, expected: str) -> RevisionConflict:
    by = comment.author
    who = name_of(by)
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
) -> CommentRemoval:
    """Delete one of the caller's comments. `outcome`: `removed` (a reply), `placeholder` (a
    first comment with replies, kept as "deleted" so they still make sense) or `threadDeleted`
    (a first comment alone, or the last reply under a placeholder: nothing is left to read).

    Raises:
        PermissionDenied: another principal's comment. NotFound.
    """

    def work(uow: UnitOfWork) -> CommentRemoval:
        access = writable_project(uow, actor, project, workspace_id)
        comment, thread, file = find_comment(uow, access, comment_id)
        one_at_a_time(uow, thread.id)
        comment, thread, file = find_comment(uow, access, comment_id)  # as it is now
        require_own(actor, comment, "delete")
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
        record_comment_event(
            uow, actor, "deleted", file=file, thread_id=thread.id,
            workspace_id=access.project.workspace_id, commentId=comment.id, outcome=outcome,
        )  # fmt: skip
        return CommentRemoval(outcome, comment.id, thread.id)

    return db.write(work)


# --- people's decisions --------------------------------------------------------------------------


def resolve_thread(
    db: Database, actor: Actor, *, project: str, workspace_id: WorkspaceRef, thread_id: str
) -> ThreadChange:
    """Mark a thread resolved (a person signed in, never a token); a resolved thread stays.
    Raises: PermissionDenied (a token, or no write role), NotFound."""
    return _set_status(db, actor, (project, workspace_id, thread_id), ThreadStatus.RESOLVED)


def reopen_thread(
    db: Database, actor: Actor, *, project: str, workspace_id: WorkspaceRef, thread_id: str
) -> ThreadChange:
    """Open a resolved thread again (a person signed in, never a token).
    Raises: PermissionDenied (a token, or no write role), NotFound."""
    return _set_status(db, actor, (project, workspace_id, thread_id), ThreadStatus.OPEN)


# What a person is doing when setting each status, as a refusal to a token names it.
_DOING = {
    ThreadStatus.RESOLVED: "Resolving a comment thread",
    ThreadStatus.OPEN: "Reopening a comment thread",
}


def _set_status(
    db: Database, actor: Actor, where: tuple[str, WorkspaceRef, str], status: ThreadStatus
) -> ThreadChange:
    require_signed_in_person(actor, _DOING[status])
    project, workspace_id, thread_id = where

    def work(uow: UnitOfWork) -> ThreadChange:
        access = writable_project(uow, actor, project, workspace_id)
        thread, file = find_thread(uow, access, thread_id)
        repo = comments_of(uow)
        changed = thread.status is not status
        if changed:
            by = stamp_of(uow, actor) if status is ThreadStatus.RESOLVED else None
            repo.set_status(thread.id, status, by=by, at=uow.now)
            kind = "resolved" if status is ThreadStatus.RESOLVED else "reopened"
            record_comment_event(
                uow, actor, kind, file=file, thread_id=thread.id,
                workspace_id=access.project.workspace_id,
            )  # fmt: skip
        now = repo.get_thread(thread.id)
        assert now is not None  # noqa: S101 - read in this transaction
        comments = repo.comments_of([thread.id])[thread.id]
        return ThreadChange(ThreadRead(now, tuple(comments)), changed)

    return db.write(work)
