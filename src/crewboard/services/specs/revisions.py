"""Writing a spec file's new revision and its event: shared by the file service and the
`tasks.md` sync (which saves a box change for the board), below both."""

from __future__ import annotations

from typing import Any

from crewboard.domain.files import FileKind, index_lines, kind_of
from crewboard.domain.identity.records import Actor
from crewboard.domain.specs import SpecFile, SpecRevision, content_version
from crewboard.services.views import stamp_of
from crewboard.storage.uow import UnitOfWork


def new_revision(
    uow: UnitOfWork,
    actor: Actor,
    *,
    file_id: str,
    project_id: str,
    number: int,
    content: bytes,
    via: dict[str, Any] | None = None,
) -> SpecRevision:
    """Revision `number` of a file holding `content` (its bytes stored), not yet written;
    `via` joins the author stamp (e.g. the spec session whose proposal a person accepted)."""
    digest = uow.blobs.put(content)
    kind = kind_of(content)
    return SpecRevision(
        file_id=file_id,
        revision=number,
        project_id=project_id,
        kind=kind,
        size=len(content),
        digest=digest,
        content_version=content_version(file_id, number, digest),
        lines=index_lines(content if kind is FileKind.TEXT else b""),
        author=stamp_of(uow, actor) | ({"via": via} if via else {}),
        created_at=uow.now,
    )


def record_save(
    uow: UnitOfWork,
    actor: Actor,
    *,
    workspace_id: str | None,
    kind: str,
    file: SpecFile,
    saved: SpecRevision,
) -> None:
    """The event of a save (`spec_file.created` or `spec_file.updated`)."""
    uow.record_event(
        kind,
        actor=actor.as_payload(),
        payload={
            "fileId": file.id,
            "path": file.path,
            "revision": saved.revision,
            "contentVersion": saved.content_version,
            "size": saved.size,
            "kind": saved.kind.value,
        },
        project_id=file.project_id,
        workspace_id=workspace_id,
    )
