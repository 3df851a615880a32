"""Project memory: accepted records and the five project documents.

Only what a person accepted lives here: a record is filed by the review inbox when a hand-in
is approved (or taken by an acceptance rule). Person edits of records and documents live in
services/memory/edits.py; no token ever edits memory. Every change keeps a version.
"""

from __future__ import annotations

from typing import Any

from crewboard.domain.identity.access import Role, parse_enum
from crewboard.domain.identity.records import Actor
from crewboard.domain.ids import new_id
from crewboard.domain.memory import (
    Document,
    MemoryPage,
    MemoryRecord,
    MemoryStatus,
    MemoryText,
    ProjectDocument,
)
from crewboard.domain.projects import Project
from crewboard.domain.validation import check_text
from crewboard.errors import LimitExceeded, ValidationFailed
from crewboard.services.events import record_project_event
from crewboard.services.identity.access import (
    ANY_WORKSPACE,
    WorkspaceRef,
    access_owned,
    not_open,
    open_projects,
)
from crewboard.services.paging import check_page
from crewboard.services.text_windows import WINDOW_LIMIT, check_window
from crewboard.services.views import actor_stamp, iso
from crewboard.storage.database import Database
from crewboard.storage.memory.records import MemoryRepository, RecordFilter
from crewboard.storage.uow import UnitOfWork

MAX_TITLE = 300
MAX_SUMMARY = 2000
MAX_CONTENT = 200_000  # a record's content or a document's text
MAX_COLLECTION = 200
MAX_IDS = 50
MAX_PAGE = 200

DOCUMENT_TITLES: dict[str, str] = {
    ProjectDocument.OVERVIEW: "Overview",
    ProjectDocument.CONTEXT: "Context",
    ProjectDocument.DECISIONS: "Decisions",
    ProjectDocument.NOTES: "Notes",
    ProjectDocument.LEGAL: "Asset rights",
}


def memory_of(uow: UnitOfWork) -> MemoryRepository:
    return MemoryRepository(uow.conn)


# --- checks ----------------------------------------------------------------------------------


def resolve_collection(
    project: Project, value: str | None, field: str = "collection"
) -> str | None:
    """The project's own spelling of a collection named in any case (None stays None).

    Raises:
        ValidationFailed: the project has no such collection; names the ones it has.
    """
    if value is None:
        return None
    wanted = value.strip().casefold()
    for name in project.collections:
        if name.casefold() == wanted:
            return name
    where = f"project {project.key} has no collection {value!r}."
    if not project.collections:
        where += " It has no collections yet: leave the field out."
    raise ValidationFailed.field(field, where, list(project.collections))


def check_document(value: str | None, field: str = "document") -> str | None:
    """A project document's name (None stays None).

    Raises:
        ValidationFailed: not one of the five documents; names them.
    """
    if value is None:
        return None
    return parse_enum(value, ProjectDocument, field).value


def check_status(value: str, field: str = "status") -> MemoryStatus:
    """Raises: ValidationFailed naming approved and canon."""
    return parse_enum(value, MemoryStatus, field)


def check_title(value: str) -> str:
    """Raises: ValidationFailed when empty, LimitExceeded over 300 characters."""
    return check_text("title", value, max_length=MAX_TITLE, required=True)


def check_summary(value: str) -> str:
    """Raises: LimitExceeded over 2000 characters."""
    return check_text("summary", value, max_length=MAX_SUMMARY)


def check_content(value: str, field: str = "content") -> str:
    """Raises: LimitExceeded over 200,000 characters."""
    return check_text(field, value, max_length=MAX_CONTENT)


# --- the form events keep ---------------------------------------------------------------------


def record_payload(record: MemoryRecord) -> dict[str, Any]:
    """A record as its events carry it: every fact but the text, whose length stands in.

    The event log keeps this form whatever the doors answer, so it is built here and not by
    `contract/memory_present`."""
    return {
        "id": record.id,
        "projectId": record.project_id,
        "title": record.title,
        "summary": record.summary,
        "contentLength": record.length,
        "collection": record.collection,
        "document": record.document,
        "status": record.status,
        "version": record.version,
        "sourceDraftId": record.source_draft_id,
        "createdAt": iso(record.created_at),
        "updatedAt": iso(record.updated_at),
        "createdBy": record.created_by,
        "updatedBy": record.updated_by,
    }


def document_payload(document: Document) -> dict[str, Any]:
    """A saved document as its event carries it: without the text, with its length."""
    return {
        "projectId": document.project_id,
        "name": document.name,
        "title": DOCUMENT_TITLES[document.name],
        "length": len(document.content),
        "version": document.version,
        "updatedAt": iso(document.updated_at),
        "updatedBy": document.updated_by,
    }


# --- filing and removing (the review inbox decides; no permission check here) ----------------


def file_record(
    uow: UnitOfWork,
    actor: Actor,
    project: Project,
    *,
    title: str,
    summary: str,
    content: str,
    collection: str | None,
    document: str | None,
    source_draft_id: str | None,
    status: str = MemoryStatus.APPROVED,
) -> MemoryRecord:
    """File an accepted record (version 1) and record `memory.record_added`.

    The caller has checked that the actor may accept it.

    Raises:
        ValidationFailed, LimitExceeded: a field is empty, too long or unknown.
    """
    stamp = actor_stamp(actor)
    record = MemoryRecord(
        id=new_id("mem"),
        project_id=project.id,
        title=check_title(title),
        summary=check_summary(summary),
        content=check_content(content),
        collection=resolve_collection(project, collection),
        document=check_document(document),
        status=check_status(status),
        source_draft_id=source_draft_id,
        version=1,
        created_by=stamp,
        updated_by=stamp,
        created_at=uow.now,
        updated_at=uow.now,
    )
    memory_of(uow).add_record(record)
    record_event(uow, actor, "memory.record_added", project, record)
    return record


def remove_record(uow: UnitOfWork, actor: Actor, project: Project, record_id: str) -> None:
    """Delete a record of `project` with its versions and record `memory.record_removed`.

    Raises:
        NotFound: the project has no such record.
    """
    repo = memory_of(uow)
    record = repo.record(record_id)
    if record is None or record.project_id != project.id:
        raise record_not_found(record_id)
    repo.delete_record(record_id)
    record_event(uow, actor, "memory.record_removed", project, record)


def record_event(
    uow: UnitOfWork, actor: Actor, kind: str, project: Project, record: MemoryRecord
) -> None:
    record_project_event(uow, actor, kind, project, {"record": record_payload(record)})


record_not_found = not_open(
    "memory_record", "get_project_memory lists the records.", noun="memory record"
)


# --- reading one record ----------------------------------------------------------------------


def access_record(
    uow: UnitOfWork, actor: Actor, record_id: str, *, role: Role = Role.READ
) -> tuple[MemoryRecord, Project]:
    """A record and its project, when the actor may open the project with `role`.

    Raises:
        NotFound: no such record, or its project is not open to the actor (the same answer).
        PermissionDenied: the role is too low.
    """
    return access_owned(uow, actor, record_id, memory_of(uow).record, record_not_found, role=role)


def get_record(db: Database, actor: Actor, record_id: str) -> MemoryRecord:
    """One record in full.

    Raises:
        NotFound: as `access_record`.
    """
    return db.read(lambda uow: access_record(uow, actor, record_id)[0])


# --- reading memory --------------------------------------------------------------------------


def get_project_memory(
    db: Database,
    actor: Actor,
    *,
    project: str | None = None,
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
    document: str | None = None,
    collection: str | None = None,
    ids: list[str] | None = None,
    include_content: bool = True,
    limit: int = 50,
    offset: int = 0,
    content_offset: int | None = None,
    content_limit: int | None = None,
) -> MemoryPage | MemoryText:
    """Accepted records (approved or canon) and document texts the actor may read.

    Records come newest changed first, `limit` from `offset`. Documents come on the first page
    only: those ever written, or the one named by `document` even when empty; `ids` leaves
    them out. The doors fit the page to their answer budget (`contract/memory_present`).

    `content_offset` or `content_limit` asks for one text to read in windows instead: the
    record named by `ids` (exactly one), or else the `document` of the one project read.

    Raises:
        ValidationFailed, LimitExceeded: a bad limit, offset, document, collection or ids; a
            window asked of several records, of no text, or of a document in several projects.
        NotFound: `project` is not open to the actor; the one record of a window is not.
    """
    wanted_ids = _check_reading(ids, collection, limit, offset)
    named = check_document(document)
    if content_offset is not None or content_limit is not None:
        return _memory_window(
            db,
            actor,
            project=project,
            workspace_id=workspace_id,
            document=named,
            collection=collection,
            ids=wanted_ids,
            offset=0 if content_offset is None else content_offset,
            limit=WINDOW_LIMIT if content_limit is None else content_limit,
        )

    def work(uow: UnitOfWork) -> MemoryPage:
        projects = open_projects(uow, actor, project, workspace_id)
        collections = _collections(projects, collection)
        repo = memory_of(uow)
        found, total = repo.search(
            RecordFilter(tuple(projects), named, collections, wanted_ids),
            include_content=include_content,
            limit=limit,
            offset=offset,
        )
        documents: list[Document] = []
        if wanted_ids is None and offset == 0 and (collection is None or named is not None):
            documents = (
                [repo.document(p, named) for p in projects]
                if named is not None
                else repo.documents(tuple(projects))
            )
        return MemoryPage(tuple(documents), tuple(found), total, offset, include_content)

    return db.read(work)


def _memory_window(
    db: Database,
    actor: Actor,
    *,
    project: str | None,
    workspace_id: WorkspaceRef,
    document: str | None,
    collection: str | None,
    ids: tuple[str, ...] | None,
    offset: int,
    limit: int,
) -> MemoryText:
    """A record's content or a project document's text, to be read in the window asked for."""
    check_window(offset, limit, offset_field="contentOffset", limit_field="contentLimit")
    if ids is not None and len(ids) != 1:
        raise ValidationFailed.field(
            "ids", "a window reads one record: pass exactly one id with contentOffset."
        )
    if ids is not None and document is not None:
        raise ValidationFailed.field(
            "document", "a window reads one record (ids) or one document, not both."
        )
    if ids is None and document is None:
        raise ValidationFailed.field(
            "contentOffset", "name the text to read: one record in ids, or a document."
        )

    def work(uow: UnitOfWork) -> MemoryText:
        projects = open_projects(uow, actor, project, workspace_id)
        repo = memory_of(uow)
        if ids is not None:
            found, _ = repo.search(
                RecordFilter(tuple(projects), None, _collections(projects, collection), ids),
                include_content=True,
                limit=1,
                offset=0,
            )
            if not found:
                raise record_not_found(ids[0])
            record = found[0]
            return MemoryText(
                record.project_id, record.id, None, record.version, record.content, offset, limit
            )
        if len(projects) != 1:
            raise ValidationFailed.field(
                "projectId", "a document window reads one project's document: name it."
            )
        assert document is not None  # noqa: S101 - checked above
        doc = repo.document(next(iter(projects)), document)
        return MemoryText(doc.project_id, None, doc.name, doc.version, doc.content, offset, limit)

    return db.read(work)


def _check_reading(
    ids: list[str] | None, collection: str | None, limit: int, offset: int
) -> tuple[str, ...] | None:
    check_page(limit, offset, MAX_PAGE)
    if collection is not None:
        check_text("collection", collection, max_length=MAX_COLLECTION)
    if ids is None:
        return None
    if len(ids) > MAX_IDS:
        raise LimitExceeded(
            f"ids: {len(ids)} ids is over the limit of {MAX_IDS}; ask in several calls.",
            {"field": "ids", "limit": MAX_IDS, "actual": len(ids)},
        )
    return tuple(dict.fromkeys(i for i in ids if "\x00" not in i))


def _collections(projects: dict[str, Project], collection: str | None) -> dict[str, str] | None:
    """Per project, its spelling of the collection asked for (None: no collection filter).

    Raises:
        ValidationFailed: no open project has that collection; names the ones there are.
    """
    if collection is None or not projects:
        return None
    if len(projects) == 1:
        (only,) = projects.values()
        name = resolve_collection(only, collection)
        assert name is not None  # noqa: S101 - a collection was given
        return {only.id: name}
    wanted = collection.strip().casefold()
    found = {
        p.id: name for p in projects.values() for name in p.collections if name.casefold() == wanted
    }
    if not found:
        known = sorted({name for p in projects.values() for name in p.collections})
        raise ValidationFailed.field(
            "collection", f"no project open to you has a collection {collection!r}.", known
        )
    return found
