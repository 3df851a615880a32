"""Finding a spec file: by id or path, with the access check."""

from __future__ import annotations

from dataclasses import dataclass

from crewboard.domain.files import normalise_path
from crewboard.domain.identity.access import Role, Scope
from crewboard.domain.identity.records import Actor
from crewboard.domain.projects import ProjectAccess
from crewboard.domain.specs import SpecFile
from crewboard.errors import (
    NotFound,
    ValidationFailed,
)
from crewboard.services.identity.access import ANY_WORKSPACE, WorkspaceRef, access_project
from crewboard.storage.specs.files import SpecFileRepository
from crewboard.storage.uow import UnitOfWork


def files_of(uow: UnitOfWork) -> SpecFileRepository:
    return SpecFileRepository(uow.conn)


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
