"""Project memory in words: the one place that turns the typed results of `services/memory`
(records of `domain/memory`) into the camelCase answers every door gives (MCP, REST, the CLI's
JSON, the web pages and the MCP resources), and fits a page of memory or a window of one text
to an answer budget.

The functions named after a use case run it and word its result, so a use case answers alike
on every door.
"""

from __future__ import annotations

from typing import Any

from crewboard.domain.identity.records import Actor
from crewboard.domain.memory import (
    Document,
    DocumentVersion,
    MemoryPage,
    MemoryRecord,
    MemoryText,
    RecordVersion,
)
from crewboard.services.identity.access import ANY_WORKSPACE, WorkspaceRef
from crewboard.services.memory import edits, records
from crewboard.services.memory.records import DOCUMENT_TITLES
from crewboard.services.text_windows import ANSWER_BUDGET, cut_text, json_size, window
from crewboard.services.views import iso
from crewboard.storage.database import Database

# get_project_memory's answer stays under the 48 KiB every tool reply fits in.
MEMORY_BUDGET = ANSWER_BUDGET - 2 * 1024
ENVELOPE_BYTES = 256  # the keys, total and nextOffset around the lists


# --- views ---------------------------------------------------------------------------------


def record_view(record: MemoryRecord, *, include_content: bool = True) -> dict[str, Any]:
    """A record on the wire; without its content it names the content's length instead."""
    view: dict[str, Any] = {
        "id": record.id,
        "projectId": record.project_id,
        "title": record.title,
        "summary": record.summary,
    }
    if include_content:
        view["content"] = record.content
    else:
        view["contentLength"] = record.length
    view.update(
        {
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
    )
    return view


def document_view(document: Document, *, include_content: bool = True) -> dict[str, Any]:
    """A project document; without its text it names the text's length."""
    view: dict[str, Any] = {
        "projectId": document.project_id,
        "name": document.name,
        "title": DOCUMENT_TITLES[document.name],
    }
    if include_content:
        view["content"] = document.content
    view.update(
        {
            "length": len(document.content),
            "version": document.version,
            "updatedAt": iso(document.updated_at),
            "updatedBy": document.updated_by,
        }
    )
    return view


def record_version_view(version: RecordVersion) -> dict[str, Any]:
    return {
        "recordId": version.record_id,
        "version": version.version,
        "title": version.title,
        "summary": version.summary,
        "content": version.content,
        "collection": version.collection,
        "document": version.document,
        "status": version.status,
        "author": version.author,
        "createdAt": iso(version.created_at),
    }


def document_version_view(version: DocumentVersion) -> dict[str, Any]:
    return {
        "projectId": version.project_id,
        "name": version.name,
        "version": version.version,
        "content": version.content,
        "author": version.author,
        "sourceDraftId": version.source_draft_id,
        "createdAt": iso(version.created_at),
    }


def memory_view(found: MemoryPage | MemoryText, budget: int = MEMORY_BUDGET) -> dict[str, Any]:
    """A page of memory, or one window of one text, within `budget` bytes of JSON."""
    if isinstance(found, MemoryText):
        return window_view(found, budget)
    return page_view(found, budget)


def window_view(text: MemoryText, budget: int = MEMORY_BUDGET) -> dict[str, Any]:
    """One window of a record's content ({recordId, projectId, version, ...}) or of a project
    document's text ({projectId, document, version, ...}): offset, text, length, nextOffset.

    Raises:
        ValidationFailed: (contentOffset) the offset is past the end of the text.
    """
    head: dict[str, Any] = (
        {"recordId": text.record_id, "projectId": text.project_id}
        if text.record_id is not None
        else {"projectId": text.project_id, "document": text.document}
    )
    return window(
        {**head, "version": text.version},
        text.text,
        offset=text.offset,
        limit=text.limit,
        budget=budget,
        offset_field="contentOffset",
    )


def page_view(page: MemoryPage, budget: int = MEMORY_BUDGET) -> dict[str, Any]:
    """Keep what fits in `budget` bytes of JSON: documents first (at most three quarters of the
    room while records wait), then records, always at least one so paging moves on. A text too
    long for the room is cut: a prefix marked `contentTruncated` with `contentLength`."""
    documents = [document_view(d, include_content=page.include_content) for d in page.documents]
    rows = [record_view(r, include_content=page.include_content) for r in page.records]
    room = budget - ENVELOPE_BYTES
    doc_room = room if not rows else room * 3 // 4
    kept_docs = []
    for done, doc in enumerate(documents):
        share = max(doc_room, 0) // (len(documents) - done)  # the room left, shared evenly
        cut = _cut(doc, "content", share)
        doc_room -= _size(cut)
        room -= _size(cut)
        kept_docs.append(cut)
    kept: list[dict[str, Any]] = []
    for record in rows:
        fitted = record
        if _size(record) > room:
            if kept:
                break
            fitted = _cut(record, "content", max(room, 0))
        room -= _size(fitted)
        kept.append(fitted)
    following = page.offset + len(kept)
    return {
        "documents": kept_docs,
        "records": kept,
        "total": page.total,
        "nextOffset": following if following < page.total else None,
    }


def _size(value: Any) -> int:
    return json_size(value) + 1  # with the comma that follows it in a list


def _cut(view: dict[str, Any], key: str, room: int) -> dict[str, Any]:
    """The view with its text cut so that it takes at most `room` bytes, comma included."""
    return cut_text(view, key, room - 1)


# --- the use cases, worded -----------------------------------------------------------------


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
    budget: int = MEMORY_BUDGET,
    content_offset: int | None = None,
    content_limit: int | None = None,
) -> dict[str, Any]:
    """`records.get_project_memory`, fitted to `budget` bytes (`nextOffset` goes on)."""
    found = records.get_project_memory(
        db, actor, project=project, workspace_id=workspace_id, document=document,
        collection=collection, ids=ids, include_content=include_content, limit=limit,
        offset=offset, content_offset=content_offset, content_limit=content_limit,
    )  # fmt: skip
    return memory_view(found, budget)


def get_record(db: Database, actor: Actor, record_id: str) -> dict[str, Any]:
    return record_view(records.get_record(db, actor, record_id))


def record_versions(db: Database, actor: Actor, record_id: str) -> list[dict[str, Any]]:
    return [record_version_view(v) for v in edits.record_versions(db, actor, record_id)]


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
) -> dict[str, Any]:
    saved = edits.update_record(
        db, actor, record_id, expected_version=expected_version, title=title, summary=summary,
        content=content, collection=collection, document=document, status=status,
    )  # fmt: skip
    return record_view(saved)


def get_document(db: Database, actor: Actor, project: str, name: str) -> dict[str, Any]:
    return document_view(edits.get_document(db, actor, project, name))


def set_document(
    db: Database, actor: Actor, project: str, name: str, content: str, *, expected_version: int
) -> dict[str, Any]:
    saved = edits.set_document(db, actor, project, name, content, expected_version=expected_version)
    return document_view(saved)


def document_versions(db: Database, actor: Actor, project: str, name: str) -> list[dict[str, Any]]:
    return [document_version_view(v) for v in edits.document_versions(db, actor, project, name)]
