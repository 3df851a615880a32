"""Saving a spec file inside a caller's transaction: a new file, or a new revision from the contentVersion the caller read. The upload and update tools, and a session's accepted proposals, save through here."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from crewboard.domain.files import FileKind, kind_of
from crewboard.domain.identity.records import Actor
from crewboard.domain.ids import new_id
from crewboard.domain.projects import ProjectAccess
from crewboard.domain.specs import MAX_FILE_BYTES, SpecFile, SpecRevision
from crewboard.errors import (
    AlreadyExists,
    LimitExceeded,
    RevisionConflict,
)
from crewboard.services.specs.comment_anchors import do_reanchor_threads
from crewboard.services.specs.file_lookup import files_of
from crewboard.services.specs.revisions import new_revision, record_save
from crewboard.services.specs.tasks_md import check_leaving_choices, do_sync_tasks
from crewboard.services.views import iso, who_of
from crewboard.storage.search_texts import put_text
from crewboard.storage.uow import UnitOfWork


def check_content(content: bytes, field: str = "content") -> bytes:
    """Raises: LimitExceeded over MAX_FILE_BYTES."""
    if len(content) > MAX_FILE_BYTES:
        raise LimitExceeded(
            f"{field}: {len(content)} bytes is over the limit of {MAX_FILE_BYTES} bytes a spec "
            "file may hold.",
            {"field": field, "limit": MAX_FILE_BYTES, "actual": len(content)},
        )
    return content


def do_create_file(
    uow: UnitOfWork,
    actor: Actor,
    *,
    access: ProjectAccess,
    path: str,
    content: bytes,
    via: dict[str, Any] | None = None,
) -> SpecFile:
    """Write a new file at a normalised `path` (and its `tasks.md` tasks); `via` notes what
    wrote it for the person (a spec session) in the author stamp.

    Raises:
        AlreadyExists: a file has that path (in the trash too).
    """
    repo = files_of(uow)
    existing = repo.get_by_path(access.project.id, path)
    if existing is not None:
        where = " (in the trash bin)" if existing.trashed_at is not None else ""
        raise AlreadyExists(
            f"{path} already exists{where}. Change it with update_spec_file "
            "from its contentVersion, or choose another path.",
            {"field": "path", "fileId": existing.id, "path": path},
        )
    file_id = new_id("spf")
    saved = new_revision(
        uow, actor, file_id=file_id, project_id=access.project.id, number=1, content=content,
        via=via,
    )  # fmt: skip
    file = SpecFile(
        id=file_id,
        project_id=access.project.id,
        path=path,
        kind=saved.kind,
        size=saved.size,
        total_lines=saved.lines.total_lines,
        revision_count=1,
        content_version=saved.content_version,
        digest=saved.digest,
        created_by=saved.author,
        created_at=uow.now,
        updated_by=saved.author,
        updated_at=uow.now,
    )
    repo.add(file, saved)
    index_text(uow, file, content)
    record_save(
        uow, actor, workspace_id=access.project.workspace_id, kind="spec_file.created",
        file=file, saved=saved,
    )  # fmt: skip
    # A tasks.md puts its checkbox lines on the board.
    do_sync_tasks(uow, actor, project=access.project, file=file, content=content)
    return file


def do_update_file(
    uow: UnitOfWork,
    actor: Actor,
    *,
    file: SpecFile,
    access: ProjectAccess,
    content: bytes,
    expected: str,
    via: dict[str, Any] | None = None,
    leaving: Mapping[str, str] | None = None,
) -> tuple[SpecFile, SpecRevision]:
    """Write a file's next revision if it is still at `expected`; the file after, and the
    revision. With `leaving` (task id → `done` or `keep`), a `tasks.md` save that removes a
    task's line is made only when that task has a choice; without it, such a task is closed.

    Raises:
        RevisionConflict: someone saved meanwhile. ValidationFailed: a removed line's task
            has no choice in `leaving` (see check_leaving_choices).
    """
    repo = files_of(uow)
    if file.content_version != expected:
        raise conflict_of(file, expected)
    keep: frozenset[str] = frozenset()
    if leaving is not None:
        keep = check_leaving_choices(uow, access.project, file, content, leaving)
    saved = new_revision(
        uow, actor, file_id=file.id, project_id=file.project_id,
        number=file.revision_count + 1, content=content, via=via,
    )  # fmt: skip
    if not repo.advance(saved, expected_version=expected):
        now = repo.get(file.id)
        raise conflict_of(now or file, expected)
    repo.add_revision(saved)
    updated = repo.get(file.id)
    assert updated is not None  # noqa: S101 - just written in this transaction
    index_text(uow, updated, content)
    record_save(
        uow, actor, workspace_id=access.project.workspace_id, kind="spec_file.updated",
        file=updated, saved=saved,
    )  # fmt: skip
    # Comment threads follow their passages into the new text (or are orphaned).
    do_reanchor_threads(
        uow, actor, file=file, saved=saved, content=content,
        workspace_id=access.project.workspace_id,
    )  # fmt: skip
    # A tasks.md's checkbox lines create, update and close their tasks.
    do_sync_tasks(uow, actor, project=access.project, file=updated, content=content, keep=keep)
    return updated, saved


def index_text(uow: UnitOfWork, file: SpecFile, content: bytes) -> None:
    """Keep what search finds of a file: its path, and its words when it is text."""
    words = content.decode("utf-8", "replace") if kind_of(content) is FileKind.TEXT else ""
    put_text(
        uow.conn, kind="spec_file", id=file.id, project_id=file.project_id, title=file.path,
        content=words, at=uow.now,
    )  # fmt: skip


def conflict_of(file: SpecFile, expected: str) -> RevisionConflict:
    """The refusal of a save made from `expected` when the file is at another version."""
    by = file.updated_by
    who = who_of(by)
    return RevisionConflict(
        f"{file.path} changed since you read it: {who} saved revision {file.revision_count} at "
        f"{iso(file.updated_at)}. Your text was not saved and theirs is kept. Read the file "
        "again, merge your change into it, and save with the new contentVersion.",
        {
            "field": "expectedVersion",
            "expectedVersion": expected,
            "currentVersion": file.content_version,
            "currentRevision": file.revision_count,
            "updatedBy": by,
            "updatedAt": iso(file.updated_at),
        },
    )
