"""Crafted archives: an import is a write like any other. A row naming another project, a row
of another project as its parent, a person of another project, or a value the API would refuse
is refused naming the document, the line and the column, and nothing is written. The walk
takes every carried table from storage/transfer's rules, so a new table is covered with no new
code (a table the world furnishes no row of gets one made from its columns' types)."""

from __future__ import annotations

import hashlib
import json
import re
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Column, Integer, String, text
from sqlalchemy.engine import URL

from crewboard.errors import CrewboardError, LimitExceeded, ValidationFailed
from crewboard.services.identity import users
from crewboard.services.transfer import archive
from crewboard.storage import transfer
from crewboard.storage.database import Database
from crewboard.storage.schema import metadata
from crewboard.storage.types import UTCDateTime
from tests.conftest import BACKENDS
from tests.support.databases import PostgresDatabases, SqliteDatabases
from tests.support.factories import make_user
from tests.support.transfer_world import furnish_everything


@dataclass
class Setting:
    """An archive of project MOVE, and a server holding another project, VICT, whose rows and
    people the crafted rows name. MOVE's people have accounts there too (matched by email,
    as the operator confirms), so their ids are mapped to others as the rows land."""

    path: Path
    project_id: str
    people: dict[str, str]  # email → the archive's account id
    target: Database
    victim: dict[str, dict[str, Any]]  # table → one of VICT's rows (as its archive holds it)
    victim_owner: str
    work: Path

    def document(self, table: str) -> str:
        return f"projects/{self.project_id}/{table}.jsonl"


def _new_db(request: pytest.FixtureRequest, backend: str) -> Database:
    if backend == "sqlite":
        sqlite: SqliteDatabases = request.getfixturevalue("sqlite_databases")
        url: URL = sqlite.new_migrated()
    else:
        pg: PostgresDatabases = request.getfixturevalue("postgres_databases")
        url = pg.new_migrated()
    return Database(url)


def _read(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as zipped:
        return {name: zipped.read(name) for name in zipped.namelist()}


def _write(entries: dict[str, bytes], out: Path) -> Path:
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as zipped:
        for name, data in entries.items():
            zipped.writestr(name, data)
    return out


@pytest.fixture(scope="module", params=BACKENDS)
def setting(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Setting]:
    backend = str(request.param)
    work = tmp_path_factory.mktemp(f"crafted-{backend}")
    source, target = _new_db(request, backend), _new_db(request, backend)
    try:
        world = furnish_everything(source, key="MOVE")
        path = work / "move.zip"
        archive.export_projects(source, [world.key], path)
        victim_world = furnish_everything(target, key="VICT")
        for email in (world.owner_email, world.member_email):
            make_user(target, email)
        victim_path = work / "vict.zip"
        archive.export_projects(target, [victim_world.key], victim_path)
        victim: dict[str, dict[str, Any]] = {}
        for name, data in _read(victim_path).items():
            if name.endswith(".jsonl"):
                table = name.rsplit("/", 1)[1].removesuffix(".jsonl")
                victim[table] = json.loads(data.splitlines()[0])
        people = {p["email"]: p["id"] for p in json.loads(_read(path)["people.json"])}
        owner = users.get_user_by_email(target, victim_world.owner_email)
        yield Setting(path, world.project_id, people, target, victim, owner.id, work)
    finally:
        source.dispose()
        target.dispose()


def _counts(db: Database) -> dict[str, int]:
    with db.engine.connect() as conn:
        return {
            name: int(conn.execute(text(f"SELECT count(*) FROM {name}")).scalar_one())
            for name in sorted(metadata.tables)
        }


def _first_row(setting: Setting, entries: dict[str, bytes], table: str) -> dict[str, Any]:
    """The archive's first row of a table; one made from its columns' types when the world
    furnishes none (its foreign keys naming the archive's own rows)."""
    data = entries.get(setting.document(table))
    if data:
        row: dict[str, Any] = json.loads(data.splitlines()[0])
        return row
    carried = transfer.BY_NAME[table]
    made = {c.name: _plain_value(c) for c in carried.columns}
    if "project_id" in made:
        made["project_id"] = setting.project_id
    for column in carried.people:
        made[column] = next(iter(setting.people.values()))
    for reference in carried.references:
        parent = _first_row(setting, entries, reference.table)
        for mine, theirs in zip(reference.columns, reference.names, strict=True):
            made[mine] = parent[theirs]
    return made


def _plain_value(column: Column[Any]) -> Any:
    by_name = {
        "UTCDateTime": "2026-01-01T00:00:00+00:00",
        "Date": "2026-01-01",
        "Boolean": False,
        "Float": 1.0,
        "JSON": {},
    }
    kind = type(column.type).__name__
    if kind in by_name:
        return by_name[kind]
    if isinstance(column.type, Integer):
        return 1
    return f"{column.table.name[:3]}_aaaaaaaaaaaaaaaaaaaaaa" if column.name == "id" else "x"


def _crafted(setting: Setting, table: str, change: dict[str, Any], name: str) -> tuple[Path, int]:
    """The archive with the first row of `table` changed (or one row added, where the world
    has none); the path and the line of the changed row."""
    entries = _read(setting.path)
    row = {**_first_row(setting, entries, table), **change}
    document = setting.document(table)
    lines = entries.get(document, b"").splitlines(keepends=True)
    entries[document] = (json.dumps(row) + "\n").encode() + b"".join(lines[1:])
    if not lines:
        manifest = json.loads(entries["manifest.json"])
        manifest["projects"][0]["documents"][table] = 1
        entries["manifest.json"] = json.dumps(manifest).encode()
    return _write(entries, setting.work / f"{name}.zip"), 1


def _refused(setting: Setting, path: Path) -> CrewboardError:
    with pytest.raises(CrewboardError) as refused:
        archive.import_archive(setting.target, path, match_people=True)
    return refused.value


def _out_of_range(column: Column[Any]) -> Any:
    """A value of the wrong type or over what the column holds."""
    kind = column.type
    if isinstance(kind, UTCDateTime):
        return "not a date"
    if isinstance(kind, Integer):
        return 2**70
    if isinstance(kind, String):
        return "x" * (kind.length + 1) if kind.length else "a\x00b"
    if type(kind).__name__ == "JSON":
        return ["a\x00b"]
    return "not of this type"


def test_the_untouched_archive_lands_on_the_other_server(setting: Setting) -> None:
    """The baseline every crafted case departs from: it is the change that is refused."""
    report = archive.import_archive(setting.target, setting.path, dry_run=True, match_people=True)
    assert report["projects"][0]["key"] == "MOVE"
    assert len(report["people"]["matched"]) == 2


def _cases(setting: Setting, carried: transfer.Carried) -> list[tuple[str, dict[str, Any], str]]:
    """The crafted changes of a table's first row: (kind, change, the column to be named)."""
    table = carried.name
    victim_project = setting.victim["projects"]["id"]
    row = _first_row(setting, _read(setting.path), table)
    cases: list[tuple[str, dict[str, Any], str]] = []
    if table == "projects":
        cases.append(("project", {"id": victim_project}, "id"))
    elif "project_id" in carried.table.c:
        cases.append(("project", {"project_id": victim_project}, "project_id"))
    for reference in carried.references:
        parent = setting.victim[reference.table]
        change = {c: parent[n] for c, n in zip(reference.columns, reference.names, strict=True)}
        if "project_id" in reference.columns:
            continue  # the project case above
        cases.append((f"parent {reference.table}", change, ",".join(reference.columns)))
    for column in carried.people:
        cases.append(("person", {column: setting.victim_owner}, column))
    if not carried.people:
        for column, value in row.items():
            shown = json.dumps(value)
            if any(person in shown for person in setting.people.values()):
                swapped = json.loads(
                    shown.replace(next(p for p in setting.people.values() if p in shown),
                                  setting.victim_owner)
                )  # fmt: skip
                cases.append(("person", {column: swapped}, column))
                break
    for column, value in row.items():
        if column in carried.keyed:
            continue
        shown = json.dumps(value)
        named = re.search(r'"([a-z]{2,8}_[0-9a-z]{22})"', shown)
        if named and not named.group(1).startswith("usr_"):
            swapped = json.loads(shown.replace(named.group(1), setting.victim["tasks"]["id"]))
            cases.append(("outside its keys", {column: swapped}, column))
            break
    keys = {c for r in carried.references for c in r.columns} | set(carried.people)
    plain = [
        c
        for c in carried.columns
        if c.name not in keys | {"id", "project_id"} | set(transfer.BLOB_COLUMNS[table])
    ]
    if plain:
        cases.append(("value", {plain[0].name: _out_of_range(plain[0])}, plain[0].name))
    return cases


def test_every_carried_table_refuses_a_row_of_another_project(setting: Setting) -> None:
    """For each carried table: a row whose project is VICT, whose parent is a VICT row, which
    names a VICT person or (outside its keys: a payload, a record's source) a VICT row, or
    holds a value out of its column's range: refused, naming the document, line 1 and the
    column; the server's rows unchanged."""
    before = _counts(setting.target)
    covered: dict[str, list[str]] = {}
    for carried in transfer.CARRIED:
        table = carried.name
        cases = _cases(setting, carried)
        for number, (kind, change, column) in enumerate(cases):
            path, line = _crafted(setting, table, change, f"{table}-{number}")
            error = _refused(setting, path)
            assert isinstance(error, ValidationFailed | LimitExceeded), (table, kind, error)
            assert error.details.get("document") == setting.document(table), (table, kind, error)
            assert error.details.get("line") == line, (table, kind)
            assert error.details.get("column") == column, (table, kind, error)
            covered.setdefault(kind.split()[0], []).append(table)
    assert _counts(setting.target) == before
    only_keys = {"handoff_recipients"}  # a handoff and a person: no other column
    assert set(covered["value"]) == {c.name for c in transfer.CARRIED} - only_keys
    with_project = {c.name for c in transfer.CARRIED if "project_id" in c.table.c}
    assert set(covered["project"]) == with_project | {"projects"}
    assert {"project_members", "tasks", "handoffs", "team_roles"} <= set(covered["person"])
    assert {"events", "task_events", "memory_records"} <= set(covered["outside"])
    children = {c.name for c in transfer.CARRIED if c.parent is not None}
    assert children <= set(covered["parent"])


def test_a_membership_in_another_project_gives_no_role_there(setting: Setting) -> None:
    """The report's attack: one added project_members line naming VICT."""
    entries = _read(setting.path)
    document = setting.document("project_members")
    member = json.loads(entries[document].splitlines()[0])
    added = {**member, "project_id": setting.victim["projects"]["id"], "role": "admin"}
    entries[document] += (json.dumps(added) + "\n").encode()
    manifest = json.loads(entries["manifest.json"])
    manifest["projects"][0]["documents"]["project_members"] += 1
    entries["manifest.json"] = json.dumps(manifest).encode()
    error = _refused(setting, _write(entries, setting.work / "member.zip"))
    assert error.details["column"] == "project_id"
    assert error.details["line"] == len(entries[document].splitlines())


def _attachment(setting: Setting, *, size: int, row_size: int | None) -> Path:
    entries = _read(setting.path)
    document = setting.document("attachments")
    row = json.loads(entries[document].splitlines()[0])
    data = b"\x89PNG\r\n\x1a\n" + bytes(size - 8)
    digest = hashlib.sha256(data).hexdigest()
    entries[f"blobs/{digest}"] = data
    row.update(digest=digest, size=row_size if row_size is not None else row["size"])
    entries[document] = (json.dumps(row) + "\n").encode()
    return _write(entries, setting.work / f"attachment-{size}-{row_size}.zip")


@pytest.mark.parametrize("row_says", ["its own size", "a small size"])
def test_an_attachment_over_the_upload_limit_is_refused(setting: Setting, row_says: str) -> None:
    size = 30 * 1024 * 1024
    path = _attachment(setting, size=size, row_size=size if row_says == "its own size" else None)
    error = _refused(setting, path)
    assert isinstance(error, LimitExceeded)
    assert error.details["document"] == setting.document("attachments")
    assert error.details["column"] == ("size" if row_says == "its own size" else "digest")


def _with_task(setting: Setting, change: dict[str, Any], name: str) -> Path:
    return _crafted(setting, "tasks", change, name)[0]


@pytest.mark.parametrize(
    ("column", "value", "code"),
    [
        ("title", "A title with a NUL \x00 inside", "VALIDATION"),
        ("title", "x" * 301, "VALIDATION"),
        ("title", "   ", "VALIDATION"),
        ("number", "x", "VALIDATION"),
        ("number", 0, "VALIDATION"),
        ("status", "finished", "VALIDATION"),
        ("revision", 2**70, "VALIDATION"),
        ("created_at", "not a date", "VALIDATION"),
        ("created_at", 12, "VALIDATION"),
        ("created_at", "2026-01-01T00:00:00", "VALIDATION"),
        ("due_date", "2026-02-30", "VALIDATION"),
        ("board_order", "1e400", "VALIDATION"),
        ("tags", ["x" * 49], "LIMIT_EXCEEDED"),
        ("description", "x" * 200_001, "LIMIT_EXCEEDED"),
    ],
)
def test_a_task_value_the_api_refuses_is_refused(
    setting: Setting, column: str, value: Any, code: str
) -> None:
    error = _refused(setting, _with_task(setting, {column: value}, f"task-{column}"))
    assert str(error.code) == code, error
    assert error.details["document"] == setting.document("tasks")
    assert error.details["line"] == 1
    assert error.details["column"] == column


@pytest.mark.parametrize("key", ["q", "a b", "move", "<b>a</b><i>b</i><u>c</u>1234"])
def test_a_project_key_the_api_refuses_is_refused(setting: Setting, key: str) -> None:
    """In the manifest and the project's row alike (the project could not be opened by key),
    and in the row alone."""
    entries = _read(setting.path)
    document = setting.document("projects")
    row = json.loads(entries[document])
    entries[document] = (json.dumps({**row, "key": key}) + "\n").encode()
    alone = _write(entries, setting.work / "key-row.zip")
    manifest = json.loads(entries["manifest.json"])
    manifest["projects"][0]["key"] = key
    entries["manifest.json"] = json.dumps(manifest).encode()
    both = _write(entries, setting.work / "key-both.zip")
    error = _refused(setting, both)
    assert isinstance(error, ValidationFailed)
    assert error.details["field"] == "manifest.json projects[0].key"
    error = _refused(setting, alone)
    assert isinstance(error, ValidationFailed)
    assert (error.details["document"], error.details["column"]) == (document, "key")
