"""Export archives: one or more projects, whole, in a zip another server imports.

The archive (format `crewboard-export`, version 1):

- `manifest.json`: the format and its version, the Crewboard version and database schema
  revision that wrote it, when, and each project's id, key, name and row count per document.
- `people.json`: the accounts the projects name (id, email, display name; never a password).
- `projects/<project id>/<table>.jsonl`: the project's rows of each carried table, one JSON
  document a line, in primary-key order (storage/transfer.py says what is carried and what
  stays behind, and why).
- `blobs/<sha256>`: the bytes of every file, attachment and artifact file the rows name.

Export reads every project in one snapshot, so an archive taken while people work is one
moment of each project. Import runs in one transaction: it lands whole or not at all, and is a
write like any other: every value passes its column's type and the API's rules for it, and
every row must belong to the project it lands as (its project, the rows its foreign keys
name, the people it names: services/transfer/checks.py). People are matched by email
(case-insensitive) to accounts already on the server only when the operator says so
(`match_people`; without it such an archive is refused, naming the accounts); one not there
gets an account with no usable password (the owner sets one with `crewboard user
set-password`).
Ids are kept by default, so export → import → export gives the same documents; `new_ids`
gives every row a new id instead (a copy beside the original), and `key` lands the project
under another key, rewriting its task keys and page links.
"""

from __future__ import annotations

import io
import json
import os
import tempfile
import time
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from crewboard import __version__
from crewboard.errors import NotFound
from crewboard.services.transfer.format import (
    FORMAT,
    VERSION,
    Advance,
    counted,
    dumps,
    no_progress,
)
from crewboard.services.transfer.importing import import_archive, read_manifest
from crewboard.storage import migrate
from crewboard.storage import transfer as rows
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork

__all__ = ["export_projects", "export_totals", "import_archive", "read_manifest"]


def export_projects(
    db: Database, refs: Sequence[str], to: Path, *, advance: Advance = no_progress
) -> dict[str, Any]:
    """Write the projects named by key or id to the archive `to` (replaced whole, never left
    half-written). Raises NotFound naming the projects this server has."""
    started = time.perf_counter()
    to = to.resolve()
    to.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=".crewboard-export-", dir=to.parent)
    os.close(handle)
    try:
        with zipfile.ZipFile(temporary, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            manifest = db.snapshot(lambda uow: _export(uow, refs, archive, advance))
            archive.writestr("manifest.json", json.dumps(manifest, indent=2, ensure_ascii=False))
        Path(temporary).replace(to)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return {
        "path": str(to),
        "bytes": to.stat().st_size,
        "seconds": round(time.perf_counter() - started, 3),
        **manifest,
    }


def _export(
    uow: UnitOfWork, refs: Sequence[str], archive: zipfile.ZipFile, advance: Advance
) -> dict[str, Any]:
    conn = uow.conn
    projects = _projects(uow, refs)
    counts = {
        p["id"]: {c.name: rows.count_rows(conn, c, p["id"]) for c in rows.CARRIED} for p in projects
    }
    people: set[str] = set()
    digests: set[str] = set()
    for project in projects:
        for carried in rows.CARRIED:
            if not counts[project["id"]][carried.name]:
                continue  # no document for a table the project has no rows in
            blob_columns = rows.BLOB_COLUMNS[carried.name]
            name = f"projects/{project['id']}/{carried.name}.jsonl"
            with archive.open(name, "w") as out:
                buffer = io.TextIOWrapper(out, encoding="utf-8", newline="\n")
                for row in counted(rows.read_rows(conn, carried, project["id"]), advance):
                    buffer.write(dumps(row) + "\n")
                    _user_ids(row, people)
                    digests.update(row[n] for n in blob_columns)
                buffer.flush()
                buffer.detach()
    accounts = rows.read_people(conn, sorted(people))
    archive.writestr("people.json", json.dumps(accounts, indent=2, ensure_ascii=False))
    total = 0
    for digest in sorted(digests):
        data = uow.blobs.read(digest)
        total += len(data)
        archive.writestr(f"blobs/{digest}", data)
        advance("files", 1)
    return {
        "format": FORMAT,
        "version": VERSION,
        "crewboardVersion": __version__,
        "schemaRevision": migrate.revision_of(conn),
        "exportedAt": uow.now.isoformat(),
        "projects": [
            {**p, "documents": {n: c for n, c in counts[p["id"]].items() if c}} for p in projects
        ],
        "people": len(accounts),
        "blobs": {"count": len(digests), "bytes": total},
    }


def export_totals(db: Database, refs: Sequence[str]) -> dict[str, int]:
    """How many rows and files an export of these projects writes (for a progress bar)."""

    def work(uow: UnitOfWork) -> dict[str, int]:
        projects = _projects(uow, refs)
        total = sum(rows.count_rows(uow.conn, c, p["id"]) for p in projects for c in rows.CARRIED)
        return {"rows": total}

    return db.read(work)


def _projects(uow: UnitOfWork, refs: Sequence[str]) -> list[dict[str, str]]:
    """The projects named, each once, in the order first named."""
    found: dict[str, dict[str, str]] = {}
    for ref in refs:
        project = _project(uow, ref)
        found.setdefault(project["id"], project)
    return list(found.values())


def _project(uow: UnitOfWork, ref: str) -> dict[str, str]:
    found = uow.projects.get_by_key(ref.upper()) or uow.projects.get(ref)
    if found is None:
        keys = rows.project_keys(uow.conn)
        raise NotFound(
            f"project: no project {ref!r} on this server. Projects here: "
            f"{', '.join(keys) or 'none'}.",
            {"resource": "project", "ref": ref, "accepted": keys},
        )
    return {"id": found.id, "key": found.key, "name": found.name}


def _user_ids(value: Any, into: set[str]) -> None:
    if isinstance(value, str):
        if rows.USER_ID.match(value):
            into.add(value)
    elif isinstance(value, dict):
        for item in value.values():
            _user_ids(item, into)
    elif isinstance(value, list):
        for item in value:
            _user_ids(item, into)
