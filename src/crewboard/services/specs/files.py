"""Spec files: list, read by line windows, upload, save from the version the writer read, the
trash bin.

A file is named by its id (`spf_…`) or its path in the project. Its bytes are a blob; each
save adds an immutable revision with a new opaque `contentVersion`. A save names the version
it was made from (`expectedVersion`): when someone saved in between, it is refused with who
saved and when, and nothing is written. A trashed file leaves lists and reads (unless asked
for) and keeps its path until it is restored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from crewboard.domain.files import (
    MAX_WINDOW_BYTES,
    MAX_WINDOW_LINES,
    FileKind,
    check_window,
    digest_of,
    folder_prefix,
    normalise_path,
)
from crewboard.domain.identity.access import Role, Scope
from crewboard.domain.ids import new_id
from crewboard.domain.models import Actor, ProjectAccess
from crewboard.domain.specs import MAX_FILE_BYTES, MAX_READ_BYTES, SpecFile, SpecRevision
from crewboard.domain.tasks_md import is_tasks_file
from crewboard.domain.validation import INT32_MAX
from crewboard.errors import (
    AlreadyExists,
    LimitExceeded,
    NotFound,
    RevisionConflict,
    ValidationFailed,
)
from crewboard.services.idempotency import Ack, KeyedResult, do_keyed_write
from crewboard.services.identity.access import ANY_WORKSPACE, WorkspaceRef, access_project
from crewboard.services.paging import check_page, next_offset
from crewboard.services.specs.comment_anchors import do_reanchor_threads
from crewboard.services.specs.revisions import new_revision, record_save
from crewboard.services.specs.tasks_md import do_restore_boxes, do_sync_tasks
from crewboard.services.views import iso, stamp_of, who_of
from crewboard.services.windows import TextBlob, read_window
from crewboard.storage.database import Database
from crewboard.storage.specs.files import SpecFileRepository
from crewboard.storage.uow import UnitOfWork

MAX_PAGE = 200
DEFAULT_PAGE = 50


def files_of(uow: UnitOfWork) -> SpecFileRepository:
    return SpecFileRepository(uow.conn)


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


# --- finding a file ------------------------------------------------------------------------------


@dataclass(frozen=True)
class FileRef:
    """How a caller names a file: by id, or by path in the project."""

    file_id: str | None = None
    path: str | None = None

    def check(self) -> FileRef:
        if (self.file_id is None) == (self.path is None):
            raise ValidationFailed.field(
                "fileId", "name the file by fileId or by path (one of the two)."
            )
        if self.path is not None:
            return FileRef(path=normalise_path(self.path))
        return self

    @property
    def shown(self) -> str:
        return self.file_id or self.path or ""


def file_not_found(ref: FileRef) -> NotFound:
    return NotFound(
        f"No spec file {ref.shown!r} in this project; list_spec_files shows its files.",
        {"resource": "specFile", "ref": ref.shown},
    )


def _trashed(file: SpecFile) -> NotFound:
    return NotFound(
        f"{file.path} is in the trash bin. Restore it with restore_spec_file_from_trash, or pass "
        "includeTrashed: true to read it there.",
        {"resource": "specFile", "ref": file.id, "trashed": True},
    )


def find_file(
    uow: UnitOfWork,
    actor: Actor,
    *,
    project: str,
    ref: FileRef,
    scope: Scope = Scope.READ,
    role: Role = Role.READ,
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
    include_trashed: bool = False,
) -> tuple[SpecFile, ProjectAccess]:
    """The file of the project the actor may act on this way.

    Raises:
        NotFound: no such project or file open to the actor, or the file is trashed and
            `include_trashed` is off. PermissionDenied, ValidationFailed.
    """
    access = access_project(uow, actor, project, scope=scope, role=role, workspace_id=workspace_id)
    repo = files_of(uow)
    if ref.file_id is not None:
        found = repo.get(ref.file_id) if "\x00" not in ref.file_id else None
        if found is not None and found.project_id != access.project.id:
            found = None
    else:
        assert ref.path is not None  # noqa: S101 - FileRef.check leaves exactly one
        found = repo.get_by_path(access.project.id, ref.path)
    if found is None:
        raise file_not_found(ref)
    if found.trashed_at is not None and not include_trashed:
        raise _trashed(found)
    return found, access


# --- lists and metadata --------------------------------------------------------------------------


def list_spec_files(
    db: Database,
    actor: Actor,
    *,
    project: str,
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
    path: str | None = None,
    trashed: bool = False,
    limit: int = DEFAULT_PAGE,
    offset: int = 0,
) -> dict[str, Any]:
    """The project's files (or, with `trashed`, its trash bin) in path order, under the
    folder `path` when given.

    Raises:
        ValidationFailed: a bad folder, limit outside 1..200, negative offset. NotFound.
    """
    check_page(limit, offset, MAX_PAGE)
    prefix = folder_prefix(path) if path is not None else None

    def work(uow: UnitOfWork) -> dict[str, Any]:
        access = access_project(uow, actor, project, workspace_id=workspace_id)
        files, total = files_of(uow).page(
            access.project.id, prefix=prefix, trashed=trashed, limit=limit, offset=offset
        )
        return {
            "files": [file_view(f) for f in files],
            "total": total,
            "nextOffset": next_offset(offset, len(files), total),
        }

    return db.read(work)


def get_spec_file(
    db: Database,
    actor: Actor,
    *,
    project: str,
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
    ref: FileRef,
    include_trashed: bool = False,
    revisions_limit: int = 0,
    include_tasks: bool = False,
) -> dict[str, Any]:
    """A file's metadata with the `contentVersion` a save needs, and its newest revisions
    when asked; with `include_tasks`, a `tasks.md` file's tasks on the board (key, title,
    status, line), in line order.

    Raises:
        NotFound, ValidationFailed.
    """
    ref = ref.check()
    if not 0 <= revisions_limit <= MAX_PAGE:  # a negative LIMIT fails on PostgreSQL
        raise ValidationFailed.field(
            "revisions", f"must be from 0 to {MAX_PAGE}; got {revisions_limit}."
        )

    def work(uow: UnitOfWork) -> dict[str, Any]:
        file, access = find_file(
            uow,
            actor,
            project=project,
            ref=ref,
            include_trashed=include_trashed,
            workspace_id=workspace_id,
        )
        answer: dict[str, Any] = {"file": file_view(file)}
        if include_tasks and is_tasks_file(file.path):
            answer["tasks"] = [
                {
                    "id": task.id,
                    "key": f"{access.project.key}-{task.number}",
                    "title": task.title,
                    "status": task.status.value,
                    "line": task.source_line,
                }
                for task in uow.tasks.of_source_files([file.id])
            ]
        if revisions_limit:
            revisions, _total = files_of(uow).revisions(file.id, limit=revisions_limit, offset=0)
            answer["revisions"] = [revision_view(r) for r in revisions]
        return answer

    return db.read(work)


# --- reading -------------------------------------------------------------------------------------


def read_spec_file(
    db: Database,
    actor: Actor,
    *,
    project: str,
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
    ref: FileRef,
    offset: int = 1,
    limit: int = MAX_WINDOW_LINES,
    revision: int | None = None,
    room: int = MAX_WINDOW_BYTES,
    include_trashed: bool = False,
) -> dict[str, Any]:
    """A window of a text file's lines: from line `offset` (1 = the first), at most `limit`
    lines and `room` bytes of text. Reads only the bytes of the window (and of at most 255
    lines before it), however large the file.

    Raises:
        ValidationFailed: a binary file, a window outside the file, bad offset or limit.
        LimitExceeded: a file over 8 MiB. NotFound: no such file or revision.
    """
    ref = ref.check()
    check_window(offset, limit)
    if revision is not None and not 1 <= revision <= INT32_MAX:
        raise ValidationFailed.field("revision", f"counts from 1; got {revision}.")

    def work(uow: UnitOfWork) -> dict[str, Any]:
        file, _access = find_file(
            uow,
            actor,
            project=project,
            ref=ref,
            include_trashed=include_trashed,
            workspace_id=workspace_id,
        )
        wanted = revision or file.revision_count
        saved = files_of(uow).revision(file.id, wanted)
        if saved is None:
            raise NotFound(
                f"{file.path} has no revision {wanted}; it has {file.revision_count}.",
                {"resource": "specFileRevision", "ref": file.id, "revision": wanted},
            )
        _check_readable(file, saved)
        window = read_window(
            uow.blobs,
            TextBlob(saved.digest, saved.size, saved.lines, f"revision {saved.revision}"),
            offset=offset,
            limit=limit,
            room=min(room, MAX_WINDOW_BYTES),
        )
        return {
            "file": file_view(file),
            "revision": saved.revision,
            "contentVersion": saved.content_version,
            "offset": offset,
            "lines": window.lines,
            "totalLines": saved.lines.total_lines,
            "text": window.text,
            "truncated": window.truncated,
            "nextOffset": window.next_offset,
        }

    return db.read(work)


def _check_readable(file: SpecFile, saved: SpecRevision) -> None:
    if saved.kind is FileKind.BINARY:
        raise ValidationFailed(
            f"{file.path} is a binary file ({saved.size} bytes) and has no lines to read. Save it "
            "to disk with download_spec_file (stdio server), or open it in the web app.",
            {"field": "fileId", "kind": "binary", "size": saved.size},
        )
    if saved.size > MAX_READ_BYTES:
        raise LimitExceeded(
            f"{file.path} is {saved.size} bytes, over the {MAX_READ_BYTES} bytes read_spec_file "
            "reads. Save it to disk with download_spec_file (stdio server), or open it in the "
            "web app.",
            {"field": "fileId", "limit": MAX_READ_BYTES, "actual": saved.size},
        )


def read_file_bytes(
    db: Database,
    actor: Actor,
    *,
    project: str,
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
    ref: FileRef,
    revision: int | None = None,
    include_trashed: bool = False,
) -> tuple[dict[str, Any], bytes]:
    """A whole revision's bytes (for a download), with the file's view.

    Raises:
        NotFound, ValidationFailed.
    """
    ref = ref.check()

    def work(uow: UnitOfWork) -> tuple[dict[str, Any], bytes]:
        file, _access = find_file(
            uow,
            actor,
            project=project,
            ref=ref,
            include_trashed=include_trashed,
            workspace_id=workspace_id,
        )
        wanted = revision or file.revision_count
        saved = files_of(uow).revision(file.id, wanted)
        if saved is None:
            raise NotFound(
                f"{file.path} has no revision {wanted}; it has {file.revision_count}.",
                {"resource": "specFileRevision", "ref": file.id, "revision": wanted},
            )
        # The facts of the revision read, not of the newest one: an older revision may differ
        # in kind, size, lines and (always) contentVersion.
        view = {**file_view(file), **revision_view(saved)}
        return view, uow.blobs.read(saved.digest)

    return db.read(work)


# --- writing -------------------------------------------------------------------------------------


def check_content(content: bytes, field: str = "content") -> bytes:
    """Raises: LimitExceeded over MAX_FILE_BYTES."""
    if len(content) > MAX_FILE_BYTES:
        raise LimitExceeded(
            f"{field}: {len(content)} bytes is over the limit of {MAX_FILE_BYTES} bytes a spec "
            "file may hold.",
            {"field": field, "limit": MAX_FILE_BYTES, "actual": len(content)},
        )
    return content


def upload_spec_file(
    db: Database,
    actor: Actor,
    *,
    project: str,
    workspace_id: WorkspaceRef,
    path: str,
    content: bytes,
    idempotency_key: str | None,
) -> KeyedResult:
    """A new file at a path that has none (keyed).

    Raises:
        AlreadyExists: a file has that path (in the trash too). ValidationFailed,
        LimitExceeded, NotFound, PermissionDenied, IdempotencyConflict.
    """
    stored_path = normalise_path(path)
    body = check_content(content)

    def work(uow: UnitOfWork) -> KeyedResult:
        access = access_project(
            uow, actor, project, scope=Scope.SPECS_WRITE, role=Role.WRITE,
            workspace_id=workspace_id,
        )  # fmt: skip

        def perform() -> Ack:
            file = do_create_file(uow, actor, access=access, path=stored_path, content=body)
            return Ack(
                {"file": file_view(file), "created": True},
                resource_type="spec_file",
                resource_id=file.id,
                project_id=access.project.id,
            )

        return do_keyed_write(
            uow, actor, key=idempotency_key, operation="upload_spec_file",
            arguments={"project": access.project.id, "path": stored_path,
                       "digest": digest_of(body)},
            perform=perform,
        )  # fmt: skip

    return db.write(work)


def update_spec_file(
    db: Database,
    actor: Actor,
    *,
    project: str,
    workspace_id: WorkspaceRef,
    ref: FileRef,
    content: bytes,
    expected_version: str,
    idempotency_key: str | None,
) -> KeyedResult:
    """A new revision of a file still at `expected_version` (keyed).

    Raises:
        RevisionConflict: someone saved meanwhile; details name the current version, who
        saved it and when. NotFound (a trashed file too), ValidationFailed, LimitExceeded,
        PermissionDenied, IdempotencyConflict.
    """
    ref = ref.check()
    body = check_content(content)
    expected = expected_version.strip()
    if not expected:
        raise ValidationFailed.field(
            "expectedVersion",
            "is required: pass the contentVersion get_spec_file or read_spec_file gave you.",
        )

    def work(uow: UnitOfWork) -> KeyedResult:
        file, access = find_file(
            uow, actor, project=project, ref=ref, scope=Scope.SPECS_WRITE, role=Role.WRITE,
            workspace_id=workspace_id,
        )  # fmt: skip

        def perform() -> Ack:
            updated, saved = do_update_file(
                uow, actor, file=file, access=access, content=body, expected=expected
            )
            return Ack(
                {"file": file_view(updated), "revision": revision_view(saved)},
                resource_type="spec_file",
                resource_id=file.id,
                project_id=file.project_id,
            )

        return do_keyed_write(
            uow, actor, key=idempotency_key, operation="update_spec_file",
            arguments={"file": file.id, "expected": expected, "digest": digest_of(body)},
            perform=perform,
        )  # fmt: skip

    return db.write(work)


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
) -> tuple[SpecFile, SpecRevision]:
    """Write a file's next revision if it is still at `expected`; the file after, and the
    revision.

    Raises:
        RevisionConflict: someone saved meanwhile.
    """
    repo = files_of(uow)
    if file.content_version != expected:
        raise _conflict(file, expected)
    saved = new_revision(
        uow, actor, file_id=file.id, project_id=file.project_id,
        number=file.revision_count + 1, content=content, via=via,
    )  # fmt: skip
    if not repo.advance(saved, expected_version=expected):
        now = repo.get(file.id)
        raise _conflict(now or file, expected)
    repo.add_revision(saved)
    updated = repo.get(file.id)
    assert updated is not None  # noqa: S101 - just written in this transaction
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
    do_sync_tasks(uow, actor, project=access.project, file=updated, content=content)
    return updated, saved


def _conflict(file: SpecFile, expected: str) -> RevisionConflict:
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


def move_spec_file_to_trash(
    db: Database,
    actor: Actor,
    *,
    project: str,
    workspace_id: WorkspaceRef,
    ref: FileRef,
) -> dict[str, Any]:
    """Put a file in the trash bin (restorable). A file already there stays; the answer says so.

    Raises:
        NotFound, PermissionDenied, ValidationFailed.
    """
    return _set_trash(db, actor, project, workspace_id, ref.check(), trash=True)


def restore_spec_file_from_trash(
    db: Database,
    actor: Actor,
    *,
    project: str,
    workspace_id: WorkspaceRef,
    ref: FileRef,
) -> dict[str, Any]:
    """Take a file out of the trash bin, back at its path. A file not in the trash stays.

    Raises:
        NotFound, PermissionDenied, ValidationFailed.
    """
    return _set_trash(db, actor, project, workspace_id, ref.check(), trash=False)


def _set_trash(
    db: Database,
    actor: Actor,
    project: str,
    workspace_id: WorkspaceRef,
    ref: FileRef,
    *,
    trash: bool,
) -> dict[str, Any]:
    def work(uow: UnitOfWork) -> dict[str, Any]:
        file, access = find_file(
            uow, actor, project=project, ref=ref, scope=Scope.SPECS_WRITE, role=Role.WRITE,
            workspace_id=workspace_id, include_trashed=True,
        )  # fmt: skip
        if (file.trashed_at is not None) == trash:
            return {"file": file_view(file), "changed": False}
        repo = files_of(uow)
        stamp = stamp_of(uow, actor) if trash else None
        repo.set_trashed(file.id, at=uow.now if trash else None, by=stamp)
        now = repo.get(file.id)
        assert now is not None  # noqa: S101 - just written in this transaction
        uow.record_event(
            "spec_file.trashed" if trash else "spec_file.restored",
            actor=actor.as_payload(),
            payload={"fileId": file.id, "path": file.path},
            project_id=file.project_id,
            workspace_id=access.project.workspace_id,
        )
        if not trash:
            do_restore_boxes(uow, actor, access.project, now)
            now = repo.get(file.id) or now
        return {"file": file_view(now), "changed": True}

    return db.write(work)
