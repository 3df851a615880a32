"""Spec files: list, read by line windows, upload, save from the version the writer read, the
trash bin.

A file is named by its id (`spf_…`) or its path in the project. Its bytes are a blob; each
save adds an immutable revision with a new opaque `contentVersion`. A save names the version
it was made from (`expectedVersion`): when someone saved in between, it is refused with who
saved and when, and nothing is written. A trashed file leaves lists and reads (unless asked
for) and keeps its path until it is restored.

These are the use cases the doors call; finding a file is in file_lookup, and the saves they
make inside a transaction in file_saves.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
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
from crewboard.domain.identity.records import Actor
from crewboard.domain.specs import (
    MAX_READ_BYTES,
    SourceTask,
    SpecFile,
    SpecFileBytes,
    SpecFileDetails,
    SpecFilePage,
    SpecFileWindow,
    SpecRevision,
    SpecSave,
    TextWindow,
    TrashChange,
)
from crewboard.domain.tasks_md import is_tasks_file
from crewboard.domain.validation import INT32_MAX
from crewboard.errors import (
    LimitExceeded,
    NotFound,
    ValidationFailed,
)
from crewboard.services.idempotency import Ack, KeyedResult, do_keyed_write
from crewboard.services.identity.access import ANY_WORKSPACE, WorkspaceRef, access_project
from crewboard.services.paging import check_page
from crewboard.services.specs.file_lookup import FileRef, files_of, find_file
from crewboard.services.specs.file_saves import check_content, do_create_file, do_update_file
from crewboard.services.specs.tasks_md import do_restore_boxes
from crewboard.services.views import stamp_of
from crewboard.services.windows import TextBlob, read_window
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork

MAX_PAGE = 200
DEFAULT_PAGE = 50


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
) -> SpecFilePage:
    """The project's files (or, with `trashed`, its trash bin) in path order, under the
    folder `path` when given.

    Raises:
        ValidationFailed: a bad folder, limit outside 1..200, negative offset. NotFound.
    """
    check_page(limit, offset, MAX_PAGE)
    prefix = folder_prefix(path) if path is not None else None

    def work(uow: UnitOfWork) -> SpecFilePage:
        access = access_project(uow, actor, project, workspace_id=workspace_id)
        files, total = files_of(uow).page(
            access.project.id, prefix=prefix, trashed=trashed, limit=limit, offset=offset
        )
        return SpecFilePage(tuple(files), total, offset)

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
) -> SpecFileDetails:
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

    def work(uow: UnitOfWork) -> SpecFileDetails:
        file, access = find_file(
            uow,
            actor,
            project=project,
            ref=ref,
            include_trashed=include_trashed,
            workspace_id=workspace_id,
        )
        tasks = None
        if include_tasks and is_tasks_file(file.path):
            tasks = tuple(
                SourceTask(
                    id=task.id,
                    key=f"{access.project.key}-{task.number}",
                    title=task.title,
                    status=task.status.value,
                    line=task.source_line,
                )
                for task in uow.tasks.of_source_files([file.id])
            )
        revisions = None
        if revisions_limit:
            found, _total = files_of(uow).revisions(file.id, limit=revisions_limit, offset=0)
            revisions = tuple(found)
        return SpecFileDetails(file, tasks, revisions)

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
) -> SpecFileWindow:
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

    def work(uow: UnitOfWork) -> SpecFileWindow:
        file, saved = _saved_revision(
            uow, actor, (project, workspace_id), ref, revision, include_trashed=include_trashed
        )
        _check_readable(file, saved)
        window = read_window(
            uow.blobs,
            TextBlob(saved.digest, saved.size, saved.lines, f"revision {saved.revision}"),
            offset=offset,
            limit=limit,
            room=min(room, MAX_WINDOW_BYTES),
        )
        return SpecFileWindow(
            file,
            saved,
            TextWindow(
                offset=offset,
                lines=window.lines,
                total_lines=saved.lines.total_lines,
                text=window.text,
                truncated=window.truncated,
                next_offset=window.next_offset,
            ),
        )

    return db.read(work)


def _saved_revision(
    uow: UnitOfWork,
    actor: Actor,
    where: tuple[str, WorkspaceRef],
    ref: FileRef,
    revision: int | None,
    *,
    include_trashed: bool,
) -> tuple[SpecFile, SpecRevision]:
    """A file of the project `where` names and one of its revisions (None: the newest).

    Raises:
        NotFound: no such file, or no such revision of it.
    """
    project, workspace_id = where
    file, _access = find_file(
        uow, actor, project=project, ref=ref, include_trashed=include_trashed,
        workspace_id=workspace_id,
    )  # fmt: skip
    wanted = revision or file.revision_count
    saved = files_of(uow).revision(file.id, wanted)
    if saved is None:
        raise NotFound(
            f"{file.path} has no revision {wanted}; it has {file.revision_count}.",
            {"resource": "specFileRevision", "ref": file.id, "revision": wanted},
        )
    return file, saved


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
) -> SpecFileBytes:
    """A whole revision's bytes (for a download), with the file and the revision.

    Raises:
        NotFound, ValidationFailed.
    """
    ref = ref.check()

    def work(uow: UnitOfWork) -> SpecFileBytes:
        file, saved = _saved_revision(
            uow, actor, (project, workspace_id), ref, revision, include_trashed=include_trashed
        )
        return SpecFileBytes(file, saved, uow.blobs.read(saved.digest))

    return db.read(work)


# --- writing -------------------------------------------------------------------------------------


def upload_spec_file(
    db: Database,
    actor: Actor,
    *,
    project: str,
    workspace_id: WorkspaceRef,
    path: str,
    content: bytes,
    idempotency_key: str | None,
    answer: Callable[[SpecFile], dict[str, Any]],
) -> KeyedResult:
    """A new file at a path that has none (keyed); `answer` words it for the door and the
    ledger.

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
                answer(file),
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
    answer: Callable[[SpecSave], dict[str, Any]],
    removed_tasks: Mapping[str, str] | None = None,
) -> KeyedResult:
    """A new revision of a file still at `expected_version` (keyed); `answer` words it for
    the door and the ledger. With `removed_tasks` (the web's edit page), a `tasks.md` save
    that removes task lines needs a choice for each of their tasks (`done` or `keep`).

    Raises:
        RevisionConflict: someone saved meanwhile; details name the current version, who
        saved it and when. ValidationFailed (field `removedTasks`: a removed line's task has
        no choice; details list them), NotFound (a trashed file too), LimitExceeded,
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
                uow, actor, file=file, access=access, content=body, expected=expected,
                leaving=removed_tasks,
            )  # fmt: skip
            return Ack(
                answer(SpecSave(updated, saved)),
                resource_type="spec_file",
                resource_id=file.id,
                project_id=file.project_id,
            )

        return do_keyed_write(
            uow, actor, key=idempotency_key, operation="update_spec_file",
            arguments={
                "file": file.id, "expected": expected, "digest": digest_of(body),
                **({"removedTasks": dict(removed_tasks)} if removed_tasks is not None else {}),
            },
            perform=perform,
        )  # fmt: skip

    return db.write(work)


def move_spec_file_to_trash(
    db: Database,
    actor: Actor,
    *,
    project: str,
    workspace_id: WorkspaceRef,
    ref: FileRef,
) -> TrashChange:
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
) -> TrashChange:
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
) -> TrashChange:
    def work(uow: UnitOfWork) -> TrashChange:
        file, access = find_file(
            uow, actor, project=project, ref=ref, scope=Scope.SPECS_WRITE, role=Role.WRITE,
            workspace_id=workspace_id, include_trashed=True,
        )  # fmt: skip
        if (file.trashed_at is not None) == trash:
            return TrashChange(file, changed=False)
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
        return TrashChange(now, changed=True)

    return db.write(work)
