"""What every comment tool stands on: finding a thread or a comment, and the checks (the caller may write, the file is not trashed, the comment is the caller's own, the passage is in the file)."""

from __future__ import annotations

from typing import Any

from crewboard.domain.files import FileKind
from crewboard.domain.identity.access import Role, Scope
from crewboard.domain.identity.naming import name_of
from crewboard.domain.identity.records import Actor
from crewboard.domain.ids import new_id
from crewboard.domain.projects import ProjectAccess
from crewboard.domain.spec_comments import (
    MAX_AFFIX,
    MAX_COMMENT,
    MAX_QUOTE,
    CommentThread,
    SpecComment,
)
from crewboard.domain.specs import MAX_READ_BYTES, SpecFile
from crewboard.domain.validation import check_no_nul, check_text
from crewboard.errors import (
    LimitExceeded,
    NotFound,
    PermissionDenied,
    ValidationFailed,
)
from crewboard.services.identity.access import (
    WorkspaceRef,
    access_project,
)
from crewboard.services.specs.file_lookup import files_of
from crewboard.services.views import stamp_of
from crewboard.storage.specs.comments import SpecCommentRepository
from crewboard.storage.uow import UnitOfWork


def comments_of(uow: UnitOfWork) -> SpecCommentRepository:
    return SpecCommentRepository(uow.conn)


def thread_not_found(thread_id: str) -> NotFound:
    return NotFound(
        f"No comment thread {thread_id!r} in this project; list_spec_file_comments shows a "
        "file's threads.",
        {"resource": "specCommentThread", "ref": thread_id},
    )


def find_thread(
    uow: UnitOfWork, access: ProjectAccess, thread_id: str
) -> tuple[CommentThread, SpecFile]:
    found = comments_of(uow).get_thread(thread_id) if "\x00" not in thread_id else None
    if found is None or found.project_id != access.project.id:
        raise thread_not_found(thread_id)
    file = files_of(uow).get(found.file_id)
    assert file is not None  # noqa: S101 - a thread goes with its file (foreign key)
    return found, file


def find_comment(
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
    thread, file = find_thread(uow, access, found.thread_id)
    return found, thread, file


def one_at_a_time(uow: UnitOfWork, thread_id: str) -> None:
    """Replies and deletions of one thread run one by one: a deletion that empties a thread
    must not take a reply written meanwhile with it."""
    uow.serialize(f"spec_comment_thread:{thread_id}")


def writable_project(
    uow: UnitOfWork, actor: Actor, project: str, workspace_id: WorkspaceRef
) -> ProjectAccess:
    return access_project(
        uow, actor, project, scope=Scope.SPECS_WRITE, role=Role.WRITE, workspace_id=workspace_id
    )


def refuse_trashed(file: SpecFile, doing: str, field: str) -> None:
    """Raises: ValidationFailed when the file is in the trash bin."""
    if file.trashed_at is not None:
        raise ValidationFailed(
            f"{file.path} is in the trash bin: its comments can be read, edited and deleted, but "
            f"you cannot {doing} there. Ask a person whether to restore it "
            "(restore_spec_file_from_trash) first.",
            {"field": field, "fileId": file.id, "trashed": True},
        )


def require_own(actor: Actor, comment: SpecComment, doing: str) -> None:
    """Raises: PermissionDenied when the comment was written by another principal."""
    if comment.principal != actor.principal:
        by = comment.author
        who = name_of(by)
        raise PermissionDenied(
            f"You can {doing} only your own comments; this one is by {who}. Reply to the thread "
            "instead.",
            {"field": "commentId", "commentId": comment.id, "author": by},
        )


def check_body(body: str) -> str:
    """Raises: ValidationFailed (empty, NUL), LimitExceeded (over 10,000 characters)."""
    return check_text("body", body, max_length=MAX_COMMENT, required=True)


def check_anchor(quote: str, prefix: str | None, suffix: str | None) -> tuple[str, str, str]:
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


def current_text(uow: UnitOfWork, file: SpecFile) -> str:
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


def new_comment(
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


def record_comment_event(
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
