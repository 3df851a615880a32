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
moment of each project. Import runs in one transaction: it lands whole or not at all. People
are matched by email (case-insensitive) to accounts already on the server; one not there gets
an account with no usable password (the owner sets one with `crewboard user set-password`).
Ids are kept by default, so export → import → export gives the same documents; `new_ids`
gives every row a new id instead (a copy beside the original), and `key` lands the project
under another key, rewriting its task keys and page links.
"""

from __future__ import annotations

import io
import json
import os
import re
import secrets
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from crewboard import __version__
from crewboard.domain.files import digest_of
from crewboard.domain.identity.passwords import hash_password
from crewboard.domain.ids import new_id
from crewboard.domain.models import User
from crewboard.domain.projects import check_project_key
from crewboard.domain.validation import check_email
from crewboard.errors import AlreadyExists, NotFound, ValidationFailed
from crewboard.storage import migrate
from crewboard.storage import transfer as rows
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork

FORMAT = "crewboard-export"
VERSION = 1
MAX_LINE = 64 * 1024 * 1024  # one row's document: far above any row the limits allow
MAX_BLOB = 1024 * 1024 * 1024
DIGEST = re.compile(r"^[0-9a-f]{64}$")
ANY_ID = re.compile(r"\b[a-z]{2,8}_[0-9a-km-z]{22}\b")  # crewboard.domain.ids: prefix_22 chars

Advance = Callable[[str, int], None]


def _nothing(step: str, count: int) -> None:
    """No progress shown."""


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


# Export -------------------------------------------------------------------------------------


def export_projects(
    db: Database, refs: Sequence[str], to: Path, *, advance: Advance = _nothing
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
                for row in _counted(rows.read_rows(conn, carried, project["id"]), advance):
                    buffer.write(_dumps(row) + "\n")
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


# Import -------------------------------------------------------------------------------------


@dataclass
class _Plan:
    manifest: dict[str, Any]
    people: list[dict[str, Any]]
    new_ids: bool
    key: str | None
    workspace_id: str | None
    ids: dict[str, str] = field(default_factory=dict)
    # The password hash of every account the import makes: a secret nobody holds. Hashed once
    # and before the write (argon2 is slow on purpose; the write lock is not held for it).
    locked_password: str = ""
    key_rules: tuple[str, str] | None = None  # (old key, new key)


def read_manifest(path: Path) -> dict[str, Any]:
    """The archive's manifest, checked. Raises ValidationFailed naming what is wrong."""
    with _open_archive(path) as archive:
        return _manifest(archive)


def import_archive(
    db: Database,
    path: Path,
    *,
    new_ids: bool = False,
    key: str | None = None,
    workspace_id: str | None = None,
    dry_run: bool = False,
    advance: Advance = _nothing,
) -> dict[str, Any]:
    """Import every project of the archive in one transaction; the report of what it did (or,
    with `dry_run`, what it would do: the same work, rolled back).

    Raises ValidationFailed (a damaged or foreign archive, naming the document and line),
    AlreadyExists (a project or key already on this server), NotFound (the workspace)."""
    started = time.perf_counter()
    with _open_archive(path) as archive:
        manifest = _manifest(archive)
        people = _people(archive)
        if key is not None:
            key = check_project_key(key)
            if len(manifest["projects"]) != 1:
                raise ValidationFailed.field(
                    "key",
                    f"renames one project, and this archive holds {len(manifest['projects'])}.",
                )
        plan = _Plan(manifest, people, new_ids, key, workspace_id)
        plan.locked_password = hash_password(secrets.token_urlsafe(32))
        if new_ids:
            plan.ids = _new_ids(archive, manifest)
        run = db.rehearse if dry_run else db.write
        report = run(lambda uow: _import(uow, archive, plan, dry_run, advance))
    report["seconds"] = round(time.perf_counter() - started, 3)
    return report


def _open_archive(path: Path) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as error:
        raise ValidationFailed.field(
            "file", f"{path} is not a Crewboard export archive (a zip file): {error}."
        ) from None


def _manifest(archive: zipfile.ZipFile) -> dict[str, Any]:
    manifest = _json_entry(archive, "manifest.json")
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ValidationFailed.field(
            "manifest.json format", f"this is not a {FORMAT} archive.", [FORMAT]
        )
    if manifest.get("version") != VERSION:
        raise ValidationFailed.field(
            "manifest.json version",
            f"archive format version {manifest.get('version')!r} is not one this Crewboard reads.",
            [str(VERSION)],
        )
    head = migrate.head_revision()
    if manifest.get("schemaRevision") != head:
        raise ValidationFailed.field(
            "manifest.json schemaRevision",
            f"the archive was written at database schema {manifest.get('schemaRevision')!r} "
            f"and this server is at {head!r}: export again from a server running the same "
            f"Crewboard version as this one (upgrade the older of the two first).",
            [str(head)],
        )
    projects = manifest.get("projects")
    if not isinstance(projects, list) or not projects:
        raise ValidationFailed.field("manifest.json projects", "the archive names no project.")
    for index, project in enumerate(projects):
        if not isinstance(project, dict) or not all(
            isinstance(project.get(k), str) for k in ("id", "key", "name")
        ):
            raise ValidationFailed.field(
                f"manifest.json projects[{index}]", "needs an id, a key and a name."
            )
        documents = project.get("documents", {})
        if not isinstance(documents, dict) or set(documents) - set(rows.BY_NAME):
            unknown = (
                sorted(set(documents) - set(rows.BY_NAME)) if isinstance(documents, dict) else []
            )
            raise ValidationFailed.field(
                f"manifest.json projects[{index}].documents",
                f"names documents this Crewboard does not know: {', '.join(unknown)}.",
            )
    return manifest


def _json_entry(archive: zipfile.ZipFile, name: str) -> Any:
    try:
        with archive.open(name) as entry:
            data = entry.read(MAX_LINE + 1)
    except KeyError:
        raise ValidationFailed.field(name, "missing from the archive.") from None
    if len(data) > MAX_LINE:
        raise ValidationFailed.field(name, "is larger than any archive writes.")
    try:
        return json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ValidationFailed.field(name, f"is not valid JSON: {error}.") from None


def _people(archive: zipfile.ZipFile) -> list[dict[str, Any]]:
    people = _json_entry(archive, "people.json")
    if not isinstance(people, list):
        raise ValidationFailed.field("people.json", "must be a list of accounts.")
    for index, person in enumerate(people):
        if not isinstance(person, dict) or not all(
            isinstance(person.get(k), str) for k in ("id", "email", "display_name")
        ):
            raise ValidationFailed.field(
                f"people.json[{index}]", "needs an id, an email and a display_name."
            )
    return people


def _documents(
    archive: zipfile.ZipFile, project: dict[str, Any], carried: rows.Carried
) -> Iterator[dict[str, Any]]:
    """The rows of one document, each checked to be a JSON object; the count checked against
    the manifest's."""
    name = f"projects/{project['id']}/{carried.name}.jsonl"
    expected = int(project.get("documents", {}).get(carried.name, 0))
    try:
        entry: IO[bytes] = archive.open(name)
    except KeyError:
        if expected:
            raise ValidationFailed.field(name, "missing from the archive.") from None
        return
    seen = 0
    with entry:
        while line := entry.readline(MAX_LINE + 1):
            seen += 1
            if len(line) > MAX_LINE:
                raise ValidationFailed.field(f"{name} line {seen}", "is too long.")
            try:
                row = json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError) as error:
                raise ValidationFailed.field(
                    f"{name} line {seen}", f"is not valid JSON: {error}."
                ) from None
            if not isinstance(row, dict):
                raise ValidationFailed.field(f"{name} line {seen}", "must be a JSON object.")
            unknown = set(row) - {c.name for c in carried.columns}
            if unknown:
                raise ValidationFailed.field(
                    f"{name} line {seen}",
                    f"has columns this Crewboard does not know: {', '.join(sorted(unknown))}.",
                )
            yield row
    if seen != expected:
        raise ValidationFailed.field(
            name, f"holds {seen} rows where the manifest says {expected}: the archive is damaged."
        )


def _new_ids(archive: zipfile.ZipFile, manifest: dict[str, Any]) -> dict[str, str]:
    """A new id for every row id of the archive (same prefix), and for each project."""
    ids: dict[str, str] = {}
    for project in manifest["projects"]:
        ids[project["id"]] = new_id(project["id"].split("_", 1)[0])
        for carried in rows.CARRIED:
            if "id" not in carried.table.c or carried.name == "projects":
                continue
            if [c.name for c in carried.table.primary_key.columns] != ["id"]:
                continue
            for row in _documents(archive, project, carried):
                old = row.get("id")
                if isinstance(old, str) and "_" in old:
                    ids[old] = new_id(old.split("_", 1)[0])
    return ids


def _import(
    uow: UnitOfWork, archive: zipfile.ZipFile, plan: _Plan, dry_run: bool, advance: Advance
) -> dict[str, Any]:
    uow.long_transaction()  # a big archive is one long transaction
    conn = uow.conn
    if plan.workspace_id is not None and uow.workspaces.get(plan.workspace_id) is None:
        raise NotFound(
            f"workspace: no workspace {plan.workspace_id!r} on this server.",
            {"resource": "workspace", "ref": plan.workspace_id},
        )
    people = _land_people(uow, plan)
    report: dict[str, Any] = {
        "dryRun": dry_run,
        "newIds": plan.new_ids,
        "people": people,
        "projects": [],
    }
    digests: set[str] = set()
    mapping = {**plan.ids, **people["mapped"]}
    for project in plan.manifest["projects"]:
        target_key = plan.key or project["key"]
        target_id = plan.ids.get(project["id"], project["id"])
        if uow.projects.get(target_id) is not None:
            raise AlreadyExists(
                f"project {project['key']} ({project['id']}) is already on this server: to "
                f"import a second copy, use new ids and another key (--new-ids --key NEWKEY).",
                {"resource": "project", "ref": project["id"]},
            )
        if uow.projects.get_by_key(target_key) is not None:
            raise AlreadyExists(
                f"key: a project with key {target_key} is already on this server; import "
                f"under another key (--key NEWKEY).",
                {"field": "key", "resource": "project", "ref": target_key},
            )
        plan.key_rules = (project["key"], target_key) if target_key != project["key"] else None
        counts: dict[str, int] = {}
        for carried in rows.CARRIED:
            documents = _documents(archive, project, carried)
            landed = (
                _landed(row, carried, mapping=mapping, plan=plan, digests=digests)
                for row in documents
            )
            where = f"projects/{project['id']}/{carried.name}.jsonl"
            count = rows.write_rows(conn, carried, _counted(landed, advance), where=where)
            if count:
                counts[carried.name] = count
        report["projects"].append(
            {"id": target_id, "key": target_key, "name": project["name"], "documents": counts}
        )
    stored = 0
    for digest in sorted(digests):
        data = _blob(archive, digest)
        if uow.blobs.put(data) != digest:  # pragma: no cover - _blob checked the digest
            raise ValidationFailed.field(f"blobs/{digest}", "does not match its name.")
        stored += len(data)
        advance("files", 1)
    report["blobs"] = {"count": len(digests), "bytes": stored}
    return report


def _counted(items: Iterator[dict[str, Any]], advance: Advance) -> Iterator[dict[str, Any]]:
    """The items, `advance("rows", …)` every 500 of them and for the rest at the end."""
    done = 0
    for row in items:
        yield row
        done += 1
        if done % 500 == 0:
            advance("rows", 500)
    advance("rows", done % 500)


def _landed(
    row: dict[str, Any],
    carried: rows.Carried,
    *,
    mapping: dict[str, str],
    plan: _Plan,
    digests: set[str],
) -> dict[str, Any]:
    for column in rows.BLOB_COLUMNS[carried.name]:
        digest = row.get(column)
        if not isinstance(digest, str) or not DIGEST.match(digest):
            raise ValidationFailed.field(
                f"{carried.name}.{column}", f"{digest!r} is not a sha256 digest."
            )
        digests.add(digest)
    landed = {name: _remap(value, mapping, plan.key_rules) for name, value in row.items()}
    if carried.name == "projects" and plan.key_rules is not None:
        landed["key"] = plan.key_rules[1]
    if carried.name in ("events", "projects"):
        landed["workspace_id"] = plan.workspace_id
    return landed


def _remap(value: Any, mapping: dict[str, str], keys: tuple[str, str] | None) -> Any:
    if isinstance(value, str):
        if mapping and "_" in value:  # an id, or ids inside a text (`handoff:hof_…`, links)
            value = ANY_ID.sub(lambda m: mapping.get(m.group(0), m.group(0)), value)
        if keys is not None:
            old, new = keys
            if value.startswith(f"{old}-") and value[len(old) + 1 :].isdigit():
                return f"{new}-{value[len(old) + 1 :]}"
            value = value.replace(f"/p/{old}/", f"/p/{new}/")
        return value
    if isinstance(value, list):
        return [_remap(v, mapping, keys) for v in value]
    if isinstance(value, dict):
        return {k: _remap(v, mapping, keys) for k, v in value.items()}
    return value


def _blob(archive: zipfile.ZipFile, digest: str) -> bytes:
    name = f"blobs/{digest}"
    try:
        info = archive.getinfo(name)
    except KeyError:
        raise ValidationFailed.field(name, "missing from the archive.") from None
    if info.file_size > MAX_BLOB:
        raise ValidationFailed.field(name, "is larger than any file Crewboard stores.")
    with archive.open(info) as entry:
        data = entry.read(MAX_BLOB + 1)
    if digest_of(data) != digest:
        raise ValidationFailed.field(name, "does not match its name: the archive is damaged.")
    return data


def _land_people(uow: UnitOfWork, plan: _Plan) -> dict[str, Any]:
    """Match each person by email, or give them an account without a usable password."""
    mapped: dict[str, str] = {}
    matched: list[str] = []
    created: list[str] = []
    for index, person in enumerate(plan.people):
        try:
            email = check_email(person["email"])
        except ValidationFailed:
            raise ValidationFailed.field(
                f"people.json[{index}].email", f"{person['email']!r} is not an email address."
            ) from None
        found = uow.users.get_by_email(email)
        if found is not None:
            mapped[person["id"]] = found.id
            matched.append(email)
            continue
        user_id = person["id"]
        if not rows.USER_ID.match(user_id) or uow.users.get(user_id) is not None or plan.new_ids:
            user_id = new_id("usr")
        mapped[person["id"]] = user_id
        uow.users.add(
            User(user_id, email, person["display_name"][:200], _created_at(person, uow.now)),
            plan.locked_password,
        )
        created.append(email)
    return {
        "matched": matched,
        "created": created,
        "mapped": {old: new for old, new in mapped.items() if old != new},
    }


def _created_at(person: dict[str, Any], now: datetime) -> datetime:
    """When the account was made on the server it comes from; now, when the archive says not."""
    try:
        return datetime.fromisoformat(person["created_at"]) if person.get("created_at") else now
    except (TypeError, ValueError):
        return now
