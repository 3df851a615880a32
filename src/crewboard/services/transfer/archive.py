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
import re
import secrets
import tempfile
import time
import zipfile
import zlib
from collections.abc import Callable, Generator, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import IO, Annotated, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr
from pydantic import ValidationError as ModelError

from crewboard import __version__
from crewboard.domain.files import digest_of
from crewboard.domain.identity.passwords import hash_password
from crewboard.domain.identity.records import User
from crewboard.domain.ids import new_id
from crewboard.domain.projects import check_project_key
from crewboard.domain.validation import check_email, check_text
from crewboard.errors import (
    AlreadyExists,
    CrewboardError,
    LimitExceeded,
    NotFound,
    ValidationFailed,
)
from crewboard.jsonbody import BadJson, first_problem, parse_json
from crewboard.services.identity.users import check_display_name
from crewboard.services.transfer import checks
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
AN_ID = r"^[a-z]{2,8}_[0-9a-km-z]{22}$"  # one id, whole

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
    # and before the write (argon2 is slow on purpose; the write lock is not held for it), when
    # someone of the archive has no account here yet.
    locked_password: str = ""
    key_rules: tuple[str, str] | None = None  # (old key, new key)
    match_people: bool = False


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
    match_people: bool = False,
    advance: Advance = _nothing,
) -> dict[str, Any]:
    """Import every project of the archive in one transaction; the report of what it did (or,
    with `dry_run`, what it would do: the same work, rolled back). `match_people` lets the
    archive's people be matched by email to accounts already here.

    Raises ValidationFailed (a damaged or foreign archive, a value the API would refuse, a row
    of another project: naming the document, line and column; people who would be matched
    without `match_people`), LimitExceeded (a value or file over the API's limits),
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
        plan = _Plan(manifest, people, new_ids, key, workspace_id, match_people=match_people)
        if db.read(lambda uow: any(uow.users.get_by_email(p["email"]) is None for p in people)):
            plan.locked_password = _locked_password()
        if new_ids:
            plan.ids = _new_ids(archive, manifest)
        run = db.rehearse if dry_run else db.write
        report = run(lambda uow: _import(uow, archive, plan, dry_run, advance))
    report["seconds"] = round(time.perf_counter() - started, 3)
    return report


# What zipfile raises for an entry it cannot read: a checksum that differs, a compression or
# encryption it does not know, a stream cut short.
_UNREADABLE = (zipfile.BadZipFile, zlib.error, NotImplementedError, EOFError, RuntimeError)


@contextmanager
def _reading(name: str) -> Iterator[None]:
    """Turn zipfile's failures to read the entry `name` into a refusal naming it."""
    try:
        yield
    except _UNREADABLE as error:
        raise ValidationFailed.field(name, f"cannot be read from the archive: {error}.") from None


def _open_archive(path: Path) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(path)
    except (*_UNREADABLE, OSError, ValueError) as error:
        raise ValidationFailed.field(
            "file", f"{path} is not a Crewboard export archive (a zip file): {error}."
        ) from None


Count = Annotated[StrictInt, Field(ge=0, le=2**53)]


class _ManifestProject(BaseModel):
    """One project as the manifest names it."""

    model_config = ConfigDict(extra="ignore")

    id: Annotated[StrictStr, Field(pattern=AN_ID)]
    key: StrictStr
    name: StrictStr
    documents: dict[StrictStr, Count] = Field(default_factory=dict)


class _Manifest(BaseModel):
    """The manifest's parts an import reads, typed: a value of another type is refused naming
    where it is, before anything is read by it."""

    model_config = ConfigDict(extra="ignore")

    format: StrictStr
    version: StrictInt
    schemaRevision: StrictStr  # noqa: N815 - the manifest's own name
    projects: Annotated[list[_ManifestProject], Field(min_length=1)]


class _Person(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: StrictStr
    email: StrictStr
    display_name: StrictStr
    created_at: StrictStr | None = None


M = TypeVar("M", bound=BaseModel)


def _typed(model: type[M], value: Any, document: str) -> M:
    """`value` read as `model`; the first problem named by its place in the document."""
    try:
        return model.model_validate(value)
    except ModelError as error:
        place, problem = first_problem(error)
        separator = "." if document.endswith("]") else " "
        where = f"{document}{separator}{place}" if place else document
        raise ValidationFailed.field(where, problem) from None


def _manifest(archive: zipfile.ZipFile) -> dict[str, Any]:
    manifest = _json_entry(archive, "manifest.json")
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ValidationFailed.field(
            "manifest.json format", f"this is not a {FORMAT} archive.", [FORMAT]
        )
    if manifest.get("version") != VERSION or isinstance(manifest.get("version"), bool):
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
    if not isinstance(manifest.get("projects"), list) or not manifest["projects"]:
        raise ValidationFailed.field("manifest.json projects", "the archive names no project.")
    typed = _typed(_Manifest, manifest, "manifest.json")
    seen: set[str] = set()
    for index, project in enumerate(typed.projects):
        where = f"manifest.json projects[{index}]"
        unknown = sorted(set(project.documents) - set(rows.BY_NAME))
        if unknown:
            raise ValidationFailed.field(
                f"{where}.documents",
                f"names documents this Crewboard does not know: {', '.join(unknown)}.",
            )
        try:
            if check_project_key(project.key) != project.key:
                raise ValidationFailed.field("key", "is not written as a project key.")
            check_text("name", project.name, max_length=200, required=True)
        except CrewboardError as error:
            field = f"{where}.{error.details.get('field')}"
            raise ValidationFailed.field(field, error.message.split(": ", 1)[-1]) from None
        if project.id in seen:
            raise ValidationFailed.field(f"{where}.id", "names a project twice.")
        seen.add(project.id)
    return {**manifest, "projects": [p.model_dump() for p in typed.projects]}


def _loads(data: bytes | str, where: str, *, nesting: bool = True) -> Any:
    """One JSON document of the archive: no NaN, no nesting deeper than a request may hold
    (a row's values are walked for it by their columns' checks: `nesting` False)."""
    try:
        return parse_json(data, nesting=nesting)
    except BadJson as error:
        raise ValidationFailed.field(where, f"is not valid JSON: {error.message}") from None
    except UnicodeDecodeError as error:
        raise ValidationFailed.field(where, f"is not valid JSON: {error}.") from None


def _json_entry(archive: zipfile.ZipFile, name: str) -> Any:
    try:
        with _reading(name), archive.open(name) as entry:
            data = entry.read(MAX_LINE + 1)
    except KeyError:
        raise ValidationFailed.field(name, "missing from the archive.") from None
    if len(data) > MAX_LINE:
        raise ValidationFailed.field(name, "is larger than any archive writes.")
    return _loads(data, name)


def _people(archive: zipfile.ZipFile) -> list[dict[str, Any]]:
    people = _json_entry(archive, "people.json")
    if not isinstance(people, list):
        raise ValidationFailed.field("people.json", "must be a list of accounts.")
    checked: list[dict[str, Any]] = []
    for index, raw in enumerate(people):
        where = f"people.json[{index}]"
        if not isinstance(raw, dict) or not all(
            isinstance(raw.get(k), str) for k in ("id", "email", "display_name")
        ):
            raise ValidationFailed.field(where, "needs an id, an email and a display_name.")
        person = _typed(_Person, raw, where)
        try:
            email = check_email(person.email)
        except ValidationFailed:
            raise ValidationFailed.field(
                f"{where}.email", f"{person.email!r} is not an email address."
            ) from None
        try:
            name = check_display_name(person.display_name)
        except CrewboardError as error:
            field = f"{where}.display_name"
            problem = error.message.split(": ", 1)[-1]
            raise type(error)(f"{field}: {problem}", {"field": field}) from None
        if person.created_at is not None and (moment := rows.moment_problem(person.created_at)):
            raise ValidationFailed.field(f"{where}.created_at", moment)
        checked.append({**person.model_dump(), "email": email, "display_name": name})
    return checked


def _documents(
    archive: zipfile.ZipFile, project: dict[str, Any], carried: rows.Carried
) -> Generator[tuple[int, dict[str, Any]], None, None]:
    """The rows of one document with their line numbers, each a JSON object whose every value
    passes its column's type and the API's rule for it; the count checked against the
    manifest's."""
    name = f"projects/{project['id']}/{carried.name}.jsonl"
    expected = int(project.get("documents", {}).get(carried.name, 0))
    try:
        with _reading(name):
            entry: IO[bytes] = archive.open(name)
    except KeyError:
        if expected:
            raise ValidationFailed.field(name, "missing from the archive.") from None
        return
    seen = 0
    known = {c.name for c in carried.columns}
    with entry:
        while True:
            with _reading(name):
                line = entry.readline(MAX_LINE + 1)
            if not line:
                break
            seen += 1
            if len(line) > MAX_LINE:
                raise ValidationFailed.field(f"{name} line {seen}", "is too long.")
            row = _loads(line, f"{name} line {seen}", nesting=False)
            if not isinstance(row, dict):
                raise ValidationFailed.field(f"{name} line {seen}", "must be a JSON object.")
            unknown = set(row) - known
            if unknown:
                raise ValidationFailed.field(
                    f"{name} line {seen}",
                    f"has columns this Crewboard does not know: {', '.join(sorted(unknown))}.",
                )
            checks.check_values(carried, row, name, seen)
            yield seen, row
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
            for _line, row in _documents(archive, project, carried):
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
    for project in plan.manifest["projects"]:
        _check_clash(uow, plan, project)
    people = _land_people(uow, plan)
    report: dict[str, Any] = {
        "dryRun": dry_run,
        "newIds": plan.new_ids,
        "people": {k: v for k, v in people.items() if k != "ids"},
        "projects": [],
    }
    digests: set[str] = set()
    mapping = {**plan.ids, **people["mapped"]}
    for project in plan.manifest["projects"]:
        target_key = plan.key or project["key"]
        target_id = plan.ids.get(project["id"], project["id"])
        plan.key_rules = (project["key"], target_key) if target_key != project["key"] else None
        owned = checks.Ownership(target_id, target_key, people["ids"])
        counts: dict[str, int] = {}
        for carried in rows.CARRIED:
            where = f"projects/{project['id']}/{carried.name}.jsonl"
            documents = _documents(archive, project, carried)
            landed = (
                _landed(
                    row,
                    carried,
                    mapping=mapping,
                    plan=plan,
                    digests=digests,
                    archive=archive,
                    owned=owned,
                    where=where,
                    line=line,
                )
                for line, row in documents
            )
            try:
                count = rows.write_rows(conn, carried, _counted(landed, advance), where=where)
            finally:
                documents.close()  # a refused row leaves its document open otherwise
            owned.finish()
            if count:
                counts[carried.name] = count
        owned.settle(conn)
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


def _check_clash(uow: UnitOfWork, plan: _Plan, project: dict[str, Any]) -> None:
    """Refuse a project whose id or key is already on this server."""
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
    archive: zipfile.ZipFile,
    owned: checks.Ownership,
    where: str,
    line: int,
) -> dict[str, Any]:
    for column in rows.BLOB_COLUMNS[carried.name]:
        digest = row.get(column)
        if not isinstance(digest, str) or not DIGEST.match(digest):
            raise checks.refusal(
                where, line, column, f"{digest!r} is not a sha256 digest.", ValidationFailed
            )
        limit = checks.BLOB_LIMITS.get((carried.name, column))
        size = _blob_size(archive, digest)
        if limit is not None and size is not None and size > limit:
            raise checks.refusal(
                where,
                line,
                column,
                f"names a file of {size} bytes, over the limit of {limit}.",
                LimitExceeded,
            )
        digests.add(digest)
    landed = {name: _remap(value, mapping, plan.key_rules) for name, value in row.items()}
    if carried.name == "projects" and plan.key_rules is not None:
        landed["key"] = plan.key_rules[1]
    owned.check(carried, row, landed, where, line)
    if carried.name in ("events", "projects"):
        landed["workspace_id"] = plan.workspace_id
    return landed


def _blob_size(archive: zipfile.ZipFile, digest: str) -> int | None:
    try:
        return archive.getinfo(f"blobs/{digest}").file_size
    except KeyError:
        return None  # refused as missing when the files are stored


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
    with _reading(name), archive.open(info) as entry:
        data = entry.read(MAX_BLOB + 1)
    if digest_of(data) != digest:
        raise ValidationFailed.field(name, "does not match its name: the archive is damaged.")
    return data


def _land_people(uow: UnitOfWork, plan: _Plan) -> dict[str, Any]:
    """Give each person an account without a usable password, or (with `match_people`) match
    them by email to the account already here. Without it, an archive naming people who have
    an account here is refused listing them: the operator decides whether the archive's rows
    may stand in those accounts' names."""
    found = {p["email"]: uow.users.get_by_email(p["email"]) for p in plan.people}
    existing = sorted(email for email, user in found.items() if user is not None)
    if existing and not plan.match_people:
        raise ValidationFailed(
            f"people.json: {len(existing)} of the archive's people already have an account "
            f"here ({', '.join(existing)}): their rows would be written in those accounts' "
            "names. If these are the same people, import with --match-people.",
            {"field": "people.json", "wouldMatch": existing},
        )
    mapped: dict[str, str] = {}
    matched: list[str] = []
    created: list[str] = []
    for person in plan.people:
        email = person["email"]
        user = found[email] or uow.users.get_by_email(email)  # twice in people.json
        if user is not None:
            mapped[person["id"]] = user.id
            if email not in matched and email not in created:
                matched.append(email)
            continue
        if not plan.locked_password:  # made here since the check before the write
            plan.locked_password = _locked_password()
        user_id = person["id"]
        if not rows.USER_ID.match(user_id) or uow.users.get(user_id) is not None or plan.new_ids:
            user_id = new_id("usr")
        mapped[person["id"]] = user_id
        uow.users.add(
            User(user_id, email, person["display_name"], _created_at(person, uow.now)),
            plan.locked_password,
        )
        created.append(email)
    return {
        "matched": matched,
        "created": created,
        "mapped": {old: new for old, new in mapped.items() if old != new},
        "ids": set(mapped.values()),
    }


def _locked_password() -> str:
    """The password hash of an account the import makes: of a secret nobody holds."""
    return hash_password(secrets.token_urlsafe(32))


def _created_at(person: dict[str, Any], now: datetime) -> datetime:
    """When the account was made on the server it comes from (people.json was checked); now,
    when the archive does not say."""
    return datetime.fromisoformat(person["created_at"]) if person.get("created_at") else now
