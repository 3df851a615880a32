"""Web pages: project memory (accepted records) and the five project documents.

People read what was accepted and edit it here; every save keeps a version, and a save from an
older version is refused with the current one shown beside the person's unsaved text.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from starlette.responses import Response
from starlette.routing import BaseRoute

from crewboard.contract import memory_present as memory
from crewboard.domain.validation import parse_whole
from crewboard.errors import NotFound
from crewboard.services.memory.records import DOCUMENT_TITLES, record_not_found
from crewboard.web.context import Page, project_routes
from crewboard.web.forms import number_field, saved_or_form

PAGE_SIZE = 25
STATUSES = ("approved", "canon")


# --- reading the page ----------------------------------------------------------------------


def offset_param(page: Page) -> int:
    """The `offset` query parameter (0 when absent).

    Raises:
        ValidationFailed: not a whole number in range.
    """
    raw = page.param("offset")
    return parse_whole("offset", raw) if raw.strip() else 0


# --- the memory list -------------------------------------------------------------------------


def memory_list(page: Page) -> Response:
    """Records of the project, filtered by collection or document, newest changed first."""
    collection = page.param("collection") or None
    document = page.param("document") or None
    offset = offset_param(page)
    found = memory.get_project_memory(
        page.db,
        page.actor,
        project=page.project_key,
        collection=collection,
        document=document,
        include_content=False,
        limit=PAGE_SIZE,
        offset=offset,
    )
    return page.render(
        "memory.html",
        title="Memory",
        found=found,
        collection=collection,
        document=document,
        documents=DOCUMENT_TITLES,
        previous=max(offset - PAGE_SIZE, 0) if offset else None,
        offset=offset,
    )


# --- one record ------------------------------------------------------------------------------


def _record_here(page: Page) -> dict[str, Any]:
    """The record named in the path, when it belongs to this page's project.

    Raises:
        NotFound: no such record here.
    """
    record_id = page.request.path_params["record_id"]
    record = memory.get_record(page.db, page.actor, record_id)
    assert page.project is not None  # noqa: S101 - a project route
    if record["projectId"] != page.project["id"]:
        raise record_not_found(record_id)
    return record


RECORD_FIELDS = {
    "title": "Title",
    "summary": "Summary",
    "content": "Content",
    "collection": "Collection",
    "document": "Document",
    "status": "Status",
}


def _record_page(
    page: Page,
    *,
    edit: dict[str, Any] | None = None,
    status_code: int = 200,
    conflict: bool = False,
) -> Response:
    """The record page; after a refused save, with the person's `edit` in the form, and on a
    conflict the fields where the record now differs from it, beside the form."""
    record = _record_here(page)
    versions = memory.record_versions(page.db, page.actor, record["id"])
    theirs = [
        (label, record.get(name) or "")
        for name, label in RECORD_FIELDS.items()
        if conflict and edit is not None and (record.get(name) or "") != edit.get(name, "")
    ]
    return page.render(
        "record.html",
        status_code=status_code,
        title=record["title"],
        record=record,
        versions=versions,
        edit=edit or record,
        theirs=theirs,
        statuses=STATUSES,
        documents=DOCUMENT_TITLES,
    )


def record_page(page: Page) -> Response:
    """A record in full: rendered content, where it came from, its versions, an edit form."""
    return _record_page(page)


def record_save(page: Page) -> Response:
    """Save a person's edit of a record at the version they read."""
    record = _record_here(page)
    edit = {name: page.field(name) for name in RECORD_FIELDS}
    saved = saved_or_form(
        page,
        lambda: memory.update_record(
            page.db,
            page.actor,
            record["id"],
            expected_version=number_field(page, "expected_version"),
            **edit,
        ),
        "this record",
        partial(_record_page, page, edit=edit),
    )
    if isinstance(saved, Response):
        return saved
    unchanged = saved["version"] == record["version"]
    return page.redirect(
        page.path(f"memory/records/{saved['id']}"),
        notice="Nothing to save: no field changed."
        if unchanged
        else f"Saved as version {saved['version']}.",
    )


# --- the five project documents --------------------------------------------------------------

FILED_SHOWN = 20  # records filed in a document, listed on its page (the memory list has all)


def _document_page(
    page: Page, *, draft: str | None = None, status_code: int = 200, conflict: bool = False
) -> Response:
    """The document page; after a refused save, with the person's `draft` in the form (and on
    a conflict the text saved meanwhile beside it)."""
    name = page.request.path_params["name"]
    if name not in DOCUMENT_TITLES:
        raise NotFound(f"There is no project document {name!r}.", {"resource": "document"})
    document = memory.get_document(page.db, page.actor, page.project_key, name)
    versions = memory.document_versions(page.db, page.actor, page.project_key, name)
    filed = memory.get_project_memory(
        page.db,
        page.actor,
        project=page.project_key,
        document=name,
        include_content=False,
        limit=FILED_SHOWN,
    )
    return page.render(
        "document.html",
        status_code=status_code,
        title=document["title"],
        document=document,
        versions=versions,
        filed=filed,
        draft=document["content"] if draft is None else draft,
        conflict=conflict,
        documents=DOCUMENT_TITLES,
    )


def document_page(page: Page) -> Response:
    """A project document's accepted text, its versions and an edit form."""
    return _document_page(page)


def document_save(page: Page) -> Response:
    """Save a document's text at the version the person read."""
    name = page.request.path_params["name"]
    content = page.field("content")
    saved = saved_or_form(
        page,
        lambda: memory.set_document(
            page.db,
            page.actor,
            page.project_key,
            name,
            content,
            expected_version=number_field(page, "expected_version"),
        ),
        "this document",
        partial(_document_page, page, draft=content),
    )
    if isinstance(saved, Response):
        return saved
    return page.redirect(
        page.path(f"memory/documents/{saved['name']}"),
        notice=f"Saved as version {saved['version']}.",
    )


ROUTES: list[BaseRoute] = [
    *project_routes("memory", get=memory_list),
    *project_routes("memory/records/{record_id}", get=record_page, post=record_save),
    *project_routes("memory/documents/{name}", get=document_page, post=document_save),
]
