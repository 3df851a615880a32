"""Operator commands for project memory: list and read records, edit them, save documents.

Edits here are a person's own (`--as EMAIL`, default the owner): tokens never edit memory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from crewboard.cli.common import (
    PAGE_LIMIT,
    WHOLE,
    Shown,
    State,
    acting_person,
    as_option,
    as_person,
    emit,
    guarded,
    json_option,
    pass_state,
)
from crewboard.contract import memory_present as memory
from crewboard.domain.identity.records import Actor
from crewboard.domain.memory import MemoryStatus, ProjectDocument
from crewboard.storage.database import Database

DOCUMENTS = click.Choice([d.value for d in ProjectDocument])
STATUSES = click.Choice([s.value for s in MemoryStatus])


def _text(value: str | None, path: Path | None, options: str) -> str | None:
    """The text given inline or in a file (UTF-8), not both."""
    if value is not None and path is not None:
        raise click.UsageError(f"pass {options}, not both")
    if path is not None:
        return path.read_text(encoding="utf-8")
    return value


def _record_line(record: dict[str, Any]) -> str:
    where = "/".join(x for x in (record["document"], record["collection"]) if x) or "-"
    return f"{record['id']}  v{record['version']}  {record['status']}  {where}  {record['title']}"


@click.group("memory")
def memory_group() -> None:
    """A project's accepted memory: records and the five project documents."""


@memory_group.command("list")
@click.argument("project")
@click.option("--collection", default=None, help="Only records in this collection.")
@click.option("--document", type=DOCUMENTS, default=None, help="Only this document's records.")
@click.option("--limit", type=PAGE_LIMIT, default=50, show_default=True)
@click.option("--offset", type=WHOLE, default=0, show_default=True)
@as_person
def memory_list(
    db: Database,
    actor: Actor,
    project: str,
    collection: str | None,
    document: str | None,
    limit: int,
    offset: int,
) -> Shown:
    """List a project's records (newest changed first) and written documents."""
    found = memory.get_project_memory(
        db,
        actor,
        project=project,
        collection=collection,
        document=document,
        include_content=False,
        limit=limit,
        offset=offset,
    )
    return found, lambda: _list_text(found)


def _list_text(found: dict[str, Any]) -> str:
    lines = [
        f"document {d['name']}  v{d['version']}  {d['length']} chars" for d in found["documents"]
    ]
    lines += [_record_line(r) for r in found["records"]]
    if found["nextOffset"] is not None:
        lines.append(f"... {found['total']} records; next page: --offset {found['nextOffset']}")
    return "\n".join(lines) or "no memory yet"


@memory_group.command("show")
@click.argument("record_id")
@as_person
def memory_show(db: Database, actor: Actor, record_id: str) -> Shown:
    """Print one record in full."""
    record = memory.get_record(db, actor, record_id)
    return record, lambda: f"{_record_line(record)}\n\n{record['content']}"


@memory_group.command("edit")
@click.argument("record_id")
@click.option("--expected-version", type=WHOLE, required=True, help="The version you read.")
@click.option("--title", default=None)
@click.option("--summary", default=None)
@click.option("--content", default=None, help="The new text.")
@click.option(
    "--content-file", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None
)
@click.option("--status", type=STATUSES, default=None)
@click.option("--collection", default=None, help='A collection of the project ("" clears it).')
@click.option("--document", default=None, help='A project document ("" clears it).')
@as_option
@json_option
@pass_state
def memory_edit(
    state_: State,
    record_id: str,
    expected_version: int,
    title: str | None,
    summary: str | None,
    content: str | None,
    content_file: Path | None,
    status: str | None,
    collection: str | None,
    document: str | None,
    as_email: str | None,
    as_json: bool,
) -> None:
    """Change a record; the change becomes its next version (a person's edit, never a token's)."""
    text = _text(content, content_file, "--content or --content-file")

    def act(db: Database) -> None:
        record = memory.update_record(
            db,
            acting_person(db, as_email),
            record_id,
            expected_version=expected_version,
            title=title,
            summary=summary,
            content=text,
            collection=collection,
            document=document,
            status=status,
        )
        emit(as_json, record, lambda: f"saved {record['id']} as version {record['version']}")

    guarded(state_, as_json, act)


@memory_group.group("document")
def document_group() -> None:
    """The project documents: overview, context, decisions, notes, legal (asset rights)."""


@document_group.command("show")
@click.argument("project")
@click.argument("name", type=DOCUMENTS)
@as_person
def document_show(db: Database, actor: Actor, project: str, name: str) -> Shown:
    """Print a document's accepted text (version 0 when never written)."""
    doc = memory.get_document(db, actor, project, name)
    return doc, lambda: f"{doc['title']}  v{doc['version']}\n\n{doc['content']}"


@document_group.command("set")
@click.argument("project")
@click.argument("name", type=DOCUMENTS)
@click.option("--expected-version", type=WHOLE, required=True, help="The version you read.")
@click.option("--text", "text", default=None, help="The whole new text.")
@click.option("--file", "path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@as_option
@json_option
@pass_state
def document_set(
    state_: State,
    project: str,
    name: str,
    expected_version: int,
    text: str | None,
    path: Path | None,
    as_email: str | None,
    as_json: bool,
) -> None:
    """Save a document's whole text as its next version."""
    content = _text(text, path, "--text or --file")
    if content is None:
        raise click.UsageError("pass --text TEXT or --file PATH")

    def act(db: Database) -> None:
        doc = memory.set_document(
            db,
            acting_person(db, as_email),
            project,
            name,
            content,
            expected_version=expected_version,
        )
        emit(as_json, doc, lambda: f"saved {doc['name']} as version {doc['version']}")

    guarded(state_, as_json, act)


def register(cli: click.Group) -> None:
    """Add this module's command groups to the CLI."""
    cli.add_command(memory_group)
