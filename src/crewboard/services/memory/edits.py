"""Person edits of project memory: records and the five project documents, every version kept.

Only a person signed in (web app, operator CLI) edits memory; any token is refused, whatever
its scopes, because an AI may hold it. Each use case returns the records of `domain/memory`;
`contract/memory_present` words them for the doors.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from crewboard.domain.identity.access import Role
from crewboard.domain.identity.naming import name_of
from crewboard.domain.identity.records import Actor
from crewboard.domain.memory import Document, DocumentVersion, MemoryRecord, RecordVersion
from crewboard.domain.projects import Project
from crewboard.errors import RevisionConflict
from crewboard.services.events import record_project_event
from crewboard.services.identity.access import access_project, require_signed_in_person
from crewboard.services.memory.records import (
    access_record,
    check_content,
    check_document,
    check_status,
    check_summary,
    check_title,
    document_payload,
    memory_of,
    record_event,
    resolve_collection,
)
from crewboard.services.views import actor_stamp, iso
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork


def record_versions(db: Database, actor: Actor, record_id: str) -> list[RecordVersion]:
    """Every version of a record, the newest first.

    Raises:
        NotFound: as `access_record`.
    """

    def work(uow: UnitOfWork) -> list[RecordVersion]:
        record, _ = access_record(uow, actor, record_id)
        return list(memory_of(uow).record_versions(record.id))

    return db.read(work)


# --- edits by a person -----------------------------------------------------------------------


def update_record(
    db: Database,
    actor: Actor,
    record_id: str,
    *,
    expected_version: int,
    title: str | None = None,
    summary: str | None = None,
    content: str | None = None,
    collection: str | None = None,
    document: str | None = None,
    status: str | None = None,
) -> MemoryRecord:
    """A person edits a record at `expected_version`; the change is kept as a new version.

    `collection` or `document` given as "" clears it.

    Raises:
        PermissionDenied: through any token, or below the write role.
        NotFound: as `access_record`.
        ValidationFailed, LimitExceeded: a bad field.
        RevisionConflict: the record is no longer at `expected_version`.
    """
    require_signed_in_person(actor, "Editing project memory")

    def work(uow: UnitOfWork) -> MemoryRecord:
        record, project = access_record(uow, actor, record_id, role=Role.WRITE)
        if record.version != expected_version:
            raise _record_conflict(record, expected_version)
        changed = _edited(
            record,
            project,
            {
                "title": title,
                "summary": summary,
                "content": content,
                "collection": collection,
                "document": document,
                "status": status,
            },
        )
        if changed == record:
            return record
        saved = replace(
            changed, version=record.version + 1, updated_by=actor_stamp(actor), updated_at=uow.now
        )
        if not memory_of(uow).replace_record(saved, expected_version=expected_version):
            raise _record_conflict(record, expected_version)
        record_event(uow, actor, "memory.record_updated", project, saved)
        return saved

    return db.write(work)


def _edited(record: MemoryRecord, project: Project, fields: dict[str, str | None]) -> MemoryRecord:
    """The record with the given fields changed (checked); "" clears collection or document."""
    checks: dict[str, Callable[[str], str | None]] = {
        "title": check_title,
        "summary": check_summary,
        "content": check_content,
        "collection": lambda value: resolve_collection(project, value or None),
        "document": lambda value: check_document(value or None),
        "status": check_status,
    }
    changes: dict[str, Any] = {
        name: checks[name](value) for name, value in fields.items() if value is not None
    }
    return replace(record, **changes)


def _record_conflict(record: MemoryRecord, expected: int) -> RevisionConflict:
    who = name_of(record.updated_by)
    return RevisionConflict(
        f"The record is at version {record.version}, not {expected}: {who} changed it at "
        f"{iso(record.updated_at)}. Read it again, then retry with that version.",
        {
            "recordId": record.id,
            "currentVersion": record.version,
            "expectedVersion": expected,
            "updatedBy": record.updated_by,
            "updatedAt": iso(record.updated_at),
        },
    )


# --- project documents -----------------------------------------------------------------------


def get_document(db: Database, actor: Actor, project: str, name: str) -> Document:
    """A project document's accepted text (version 0 and no text when never written).

    Raises:
        ValidationFailed: not a document name. NotFound: the project is not open to the actor.
    """
    checked = check_document(name, "name")
    assert checked is not None  # noqa: S101 - a name was given

    def work(uow: UnitOfWork) -> Document:
        found = access_project(uow, actor, project).project
        return memory_of(uow).document(found.id, checked)

    return db.read(work)


def set_document(
    db: Database,
    actor: Actor,
    project: str,
    name: str,
    content: str,
    *,
    expected_version: int,
) -> Document:
    """A person saves a project document's text at `expected_version` (0: never written).

    Raises:
        PermissionDenied: through any token, or below the write role.
        NotFound: the project is not open to the actor.
        ValidationFailed, LimitExceeded: a bad name, or text over 200,000 characters.
        RevisionConflict: the document is no longer at `expected_version`.
    """
    require_signed_in_person(actor, "Editing project documents")
    checked = check_document(name, "name")
    assert checked is not None  # noqa: S101 - a name was given
    text = check_content(content)

    def work(uow: UnitOfWork) -> Document:
        found = access_project(uow, actor, project, role=Role.WRITE).project
        return do_save_document(
            uow, actor, found, name=checked, content=text, expected_version=expected_version
        )

    return db.write(work)


def do_save_document(
    uow: UnitOfWork,
    actor: Actor,
    project: Project,
    *,
    name: str,
    content: str,
    expected_version: int,
    source_draft_id: str | None = None,
) -> Document:
    """Save a document's next version and record `memory.document_saved` (no permission check).

    Raises:
        RevisionConflict: the document is no longer at `expected_version`.
    """
    repo = memory_of(uow)
    saved = repo.save_document(
        project.id,
        name,
        content=content,
        author=actor_stamp(actor),
        at=uow.now,
        expected_version=expected_version,
        source_draft_id=source_draft_id,
    )
    if saved is None:
        raise _document_conflict(repo.document(project.id, name), expected_version)
    record_project_event(
        uow, actor, "memory.document_saved", project, {"document": document_payload(saved)}
    )
    return saved


def document_versions(db: Database, actor: Actor, project: str, name: str) -> list[DocumentVersion]:
    """Every saved version of a project document, the newest first.

    Raises:
        ValidationFailed: not a document name. NotFound: the project is not open to the actor.
    """
    checked = check_document(name, "name")
    assert checked is not None  # noqa: S101 - a name was given

    def work(uow: UnitOfWork) -> list[DocumentVersion]:
        found = access_project(uow, actor, project).project
        return list(memory_of(uow).document_versions(found.id, checked))

    return db.read(work)


def _document_conflict(current: Document, expected: int) -> RevisionConflict:
    who = name_of(current.updated_by)
    return RevisionConflict(
        f"The {current.name} document is at version {current.version}, not {expected}"
        + (f": {who} saved it at {iso(current.updated_at)}" if current.version else "")
        + ". Read it again, then retry with that version.",
        {
            "document": current.name,
            "currentVersion": current.version,
            "expectedVersion": expected,
            "updatedBy": current.updated_by,
            "updatedAt": iso(current.updated_at),
        },
    )
