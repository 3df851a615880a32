"""A project's rows as JSON documents, and back: what `crewboard export` and `import` move.

Every table of the schema is either carried with a project or left behind for a stated reason
(`LEFT_BEHIND`); `test_every_table_is_carried_or_left_behind_with_a_reason` fails when a new
table is neither, so a
table added later cannot be dropped from exports unnoticed. A carried table is one with a
`project_id` column, or a child of one (its foreign key names a carried table's id).

Rows are read in primary-key order and written as JSON values by column type (times as ISO
8601 with their offset, dates as ISO dates, JSON columns as they are), so the same rows make
the same documents on SQLite and on PostgreSQL. Two tables number their rows from a global
counter (`events`, `task_events`): their ids say only the order, so they are left out of the
document and the rows are written back in order, taking new numbers. Values derived by the
database itself (the task counter that triggers keep) are left out and rebuilt by it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    Connection,
    Date,
    Float,
    Integer,
    String,
    Table,
    and_,
    bindparam,
    func,
    insert,
    select,
    update,
)
from sqlalchemy.exc import DBAPIError, StatementError

from crewboard.errors import ValidationFailed
from crewboard.jsonbody import MAX_DEPTH
from crewboard.storage import tables as _all_tables  # noqa: F401 - every table on metadata
from crewboard.storage.identity import tables as identity_tables
from crewboard.storage.projects import tables as project_tables
from crewboard.storage.schema import metadata
from crewboard.storage.sequences import TASK_COUNT
from crewboard.storage.types import UTCDateTime

LEFT_BEHIND: dict[str, str] = {
    "blobs": "blob bytes travel as files named by their digest",
    "blob_chunks": "blob bytes travel as files named by their digest",
    "users": "the people a project names travel in people.json, without passwords",
    "workspaces": "a project lands in the workspace the import names",
    "workspace_members": "a workspace belongs to its server",
    "api_tokens": "secrets stay on the server that issued them",
    "stream_tokens": "secrets stay on the server that issued them",
    "stream_token_projects": "the projects of stream tokens, which stay behind",
    "web_sessions": "sign-ins stay on their server",
    "oauth_clients": "OAuth clients register with each server",
    "oauth_requests": "an OAuth request in flight belongs to its server",
    "oauth_grants": "an OAuth grant is a secret of the server that issued it",
    "oauth_secrets": "secrets stay on the server that issued them",
    "idempotency_keys": "retry keys expire within a day and name their server's tokens",
    "task_claims": "claims are short leases held by the tokens of the server that issued them",
    "artifact_previews": "preview links are short-lived secrets",
    "email_outbox": "mail is sent by the server that queued it",
    "notification_settings": "a person's settings belong to their account on each server",
    "board_views": "a person's saved board views belong to their account on each server",
    "session_providers": "model providers are the server owner's configuration",
    "session_models": "models are the server owner's configuration",
    "code_bridges": "a code bridge is a live connection to the server it registered with",
    "code_calls": "code calls are a turn's transient working data, kept on the server that "
    "ran the turn",
    "webhooks": "a webhook holds a signing secret and its place in its server's event log, "
    "which an import numbers anew",
    "webhook_deliveries": "the delivery log belongs to the server that sent them",
}

# Columns a carried table leaves out: the server it lands on decides them (a project's
# workspace), or a global counter numbers them (events' and task events' ids: the order kept).
DROPPED: dict[str, frozenset[str]] = {
    "projects": frozenset({"workspace_id"}),
    "events": frozenset({"id", "workspace_id"}),
    "task_events": frozenset({"id"}),
}

USER_ID = re.compile(r"^usr_[0-9a-z]{22}$")

# A column's check of a value read back from a document: what is wrong with it, or None.
Problem = Callable[[Any], "str | None"]


# Values read back ---------------------------------------------------------------------------


INT32 = 2**31 - 1
INT64 = 2**63 - 1


def value_checker(column: Column[Any]) -> Problem:
    """What is wrong with a JSON value read back for this column (its type, its length, the
    range of numbers the column holds, text the databases cannot store); None when it fits.
    Checked before anything is written, so both databases refuse the same values alike."""
    check = _type_checker(column)
    nullable = bool(column.nullable)

    def problem(value: Any) -> str | None:
        if value is None:
            return None if nullable else "must have a value."
        return check(value)

    return problem


def _type_checker(column: Column[Any]) -> Problem:
    kind = column.type
    if isinstance(kind, String):  # Text too
        return _text_checker(kind.length)
    if isinstance(kind, Integer):
        return _whole_checker(INT64 if isinstance(kind, BigInteger) else INT32)
    by_type: list[tuple[type[Any], Problem]] = [
        (UTCDateTime, moment_problem),
        (Date, _date_problem),
        (Boolean, _bool_problem),
        (Float, _number_problem),
        (JSON, json_problem),
    ]
    return next(check for base, check in by_type if isinstance(kind, base))


def _bool_problem(value: Any) -> str | None:
    return None if isinstance(value, bool) else "must be true or false."


def _date_problem(value: Any) -> str | None:
    if not isinstance(value, str):
        return "must be a date (ISO 8601 text)."
    try:
        date.fromisoformat(value)
    except ValueError:
        return f"{value[:40]!r} is not a date (ISO 8601, e.g. 2026-12-24)."
    return None


def _whole_checker(top: int) -> Problem:
    def problem(value: Any) -> str | None:
        if not isinstance(value, int) or isinstance(value, bool):
            return "must be a whole number."
        return None if -top - 1 <= value <= top else f"must be a whole number within ±{top}."

    return problem


def _number_problem(value: Any) -> str | None:
    if not isinstance(value, int | float) or isinstance(value, bool):
        return "must be a number."
    return None if math.isfinite(value) else "must be a finite number."


def _text_checker(limit: int | None) -> Problem:
    def problem(value: Any) -> str | None:
        if not isinstance(value, str):
            return "must be text."
        if (found := text_problem(value)) is not None:
            return found
        if limit is not None and len(value) > limit:
            return f"{len(value)} characters is over the limit of {limit}."
        return None

    return problem


def moment_problem(value: Any) -> str | None:
    if not isinstance(value, str):
        return "must be a moment (ISO 8601 text with its offset)."
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return f"{value[:40]!r} is not a moment (ISO 8601, e.g. 2026-12-24T10:00:00+00:00)."
    return None if moment.tzinfo is not None else "must name its offset from UTC."


def text_problem(value: str) -> str | None:
    """Text either database refuses: a NUL (PostgreSQL), a lone surrogate (not UTF-8)."""
    if "\x00" in value:
        return "contains a NUL character (\\u0000), which cannot be stored."
    if value.isascii():
        return None
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "holds a lone surrogate (\\ud800-\\udfff), which is not text."
    return None


def json_problem(value: Any) -> str | None:
    """What in a JSON column's value cannot be stored alike on both databases."""
    if value is None or type(value) is bool or type(value) is int:
        return None
    if type(value) is str:
        return text_problem(value)
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if type(item) is str:
            if (problem := text_problem(item)) is not None:
                return problem
        elif type(item) is float:
            if not math.isfinite(item):
                return "holds a number that is not finite."
        elif isinstance(item, list | dict):
            if depth > MAX_DEPTH:
                return f"nests arrays and objects more than {MAX_DEPTH} deep."
            children = [*item.keys(), *item.values()] if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return None


@dataclass(frozen=True)
class Reference:
    """A foreign key of a carried table: its columns, and the table and columns they name."""

    columns: tuple[str, ...]
    table: str
    names: tuple[str, ...]


@dataclass(frozen=True)
class Carried:
    """A table carried with a project: how its rows are found."""

    table: Table
    # The column naming the project, or (a child table) the column naming its parent's id.
    via: Column[Any]
    # A child table's parent: a carried table with a project column.
    parent: Table | None
    columns: tuple[Column[Any], ...]
    # Foreign keys to carried tables (a row must name a row of its own archive), and the
    # columns naming a person (a person of the archive's people.json).
    references: tuple[Reference, ...] = ()
    people: tuple[str, ...] = ()
    # The columns a value must hold (not nullable and no default).
    required: tuple[str, ...] = ()
    # Each column's check of a value read back (`value_checker`).
    checkers: dict[str, Problem] = field(default_factory=dict)

    @property
    def keyed(self) -> frozenset[str]:
        """The columns checked as keys: the row's own id, its project, its foreign keys."""
        return _KEYED[self.name]

    @property
    def name(self) -> str:
        return self.table.name

    def select_rows(self, project_id: str) -> Any:
        if self.parent is None:
            where = self.via == project_id
        else:
            parent_ids = select(self.parent.c.id).where(self.parent.c.project_id == project_id)
            where = self.via.in_(parent_ids)
        if self.name == "project_sequences":
            where = and_(where, self.table.c.name != TASK_COUNT)
        order = list(self.table.primary_key.columns)
        return select(*self.columns).where(where).order_by(*order)


def _carried_tables() -> list[Carried]:
    found: dict[str, Carried] = {}
    for table in metadata.sorted_tables:  # parents before children
        if table.name in LEFT_BEHIND:
            continue
        dropped = DROPPED.get(table.name, frozenset())
        columns = tuple(c for c in table.columns if c.name not in dropped)
        if table.name == "projects":
            found[table.name] = Carried(table, table.c.id, None, columns)
        elif "project_id" in table.c:
            found[table.name] = Carried(table, table.c.project_id, None, columns)
        elif (parent := _parent(table, found)) is not None:
            found[table.name] = Carried(table, parent[0], parent[1], columns)
    for name, carried in found.items():
        kept = {c.name for c in carried.columns}
        references: list[Reference] = []
        people: list[str] = []
        constraints = sorted(
            carried.table.foreign_key_constraints, key=lambda c: ",".join(c.column_keys)
        )
        for constraint in constraints:
            local = tuple(str(k) for k in constraint.column_keys)
            target = constraint.referred_table.name
            if not set(local) <= kept:
                continue  # a column the server decides (a project's workspace)
            if target == identity_tables.users.name:
                people.extend(local)
            elif target in found:
                names = tuple(e.column.name for e in constraint.elements)
                references.append(Reference(local, target, names))
        required = tuple(
            c.name
            for c in carried.columns
            if not c.nullable
            and c.default is None
            and c.server_default is None
            and not (c.primary_key and c.autoincrement is True)
        )
        found[name] = Carried(
            carried.table,
            carried.via,
            carried.parent,
            carried.columns,
            tuple(references),
            tuple(people),
            required,
            {c.name: value_checker(c) for c in carried.columns},
        )
    return list(found.values())


def _parent(table: Table, found: dict[str, Carried]) -> tuple[Column[Any], Table] | None:
    """The column of a table without a project column that leads, through foreign keys, to
    the id of a carried table that has one; and that table."""
    for fk in sorted(table.foreign_keys, key=lambda f: f.parent.name):
        target = fk.column
        while target.name != "id" and target.foreign_keys:  # artifact_files → revisions → artifacts
            target = next(iter(target.foreign_keys)).column
        owner = target.table
        if target.name == "id" and owner.name in found and "project_id" in owner.c:
            return fk.parent, owner
    return None


CARRIED: list[Carried] = _carried_tables()
BY_NAME = {c.name: c for c in CARRIED}
_KEYED: dict[str, frozenset[str]] = {
    c.name: frozenset(
        {"id", "project_id", *c.people, *(k for r in c.references for k in r.columns)}
    )
    for c in CARRIED
}
# The carried tables whose rows are named by one id column (where `existing_ids` looks).
_BY_ID = [
    c.table
    for c in CARRIED
    if [k.name for k in c.table.primary_key.columns] == ["id"]
    and isinstance(c.table.c.id.type, String)
]
# Each carried table's columns naming a blob by digest (none for most).
BLOB_COLUMNS: dict[str, tuple[str, ...]] = {
    c.name: tuple(col.name for col in c.columns if col.info.get("blob_ref")) for c in CARRIED
}


def unclassified_tables() -> list[str]:
    """Tables neither carried nor left behind with a reason (must be none)."""
    return sorted(set(metadata.tables) - set(BY_NAME) - set(LEFT_BEHIND))


# Values -------------------------------------------------------------------------------------


def _encoder(column: Column[Any]) -> Callable[[Any], Any]:
    if isinstance(column.type, UTCDateTime | Date):
        return lambda v: None if v is None else v.isoformat()
    return lambda v: v


def _decoder(column: Column[Any]) -> Callable[[Any], Any]:
    kind = column.type
    if isinstance(kind, UTCDateTime):
        return lambda v: None if v is None else datetime.fromisoformat(v)
    if isinstance(kind, Date):
        return lambda v: None if v is None else date.fromisoformat(v)
    return lambda v: v


def read_rows(conn: Connection, carried: Carried, project_id: str) -> Iterator[dict[str, Any]]:
    """The project's rows of one table as JSON-ready dicts, in primary-key order."""
    encoders = [(c.name, _encoder(c)) for c in carried.columns]
    result = conn.execution_options(yield_per=2000).execute(carried.select_rows(project_id))
    for row in result:
        yield {name: enc(value) for (name, enc), value in zip(encoders, row, strict=True)}


def count_rows(conn: Connection, carried: Carried, project_id: str) -> int:
    query = carried.select_rows(project_id).order_by(None).subquery()
    return int(conn.execute(select(func.count()).select_from(query)).scalar_one())


def write_rows(
    conn: Connection, carried: Carried, rows: Iterable[dict[str, Any]], *, where: str
) -> int:
    """Insert rows read back from documents, in batches; how many. A column naming another
    row of the same table (a task's parent) is filled in after every row is there, since a
    child may come before its parent in id order."""
    decoders = {c.name: _decoder(c) for c in carried.table.columns}
    later = [
        fk.parent.name for fk in carried.table.foreign_keys if fk.column.table is carried.table
    ]
    # With RETURNING, SQLAlchemy sends a batch as INSERTs of many rows each ("insertmanyvalues")
    # rather than one statement a row: the database's statement-level work (the task
    # counter's trigger on PostgreSQL) runs once per page of rows. What it returns is unused.
    size = 1000
    statement = insert(carried.table).returning(*carried.table.primary_key.columns)
    pending: list[dict[str, Any]] = []
    batch: list[dict[str, Any]] = []
    total = 0
    for row in rows:
        values = {name: decoders[name](value) for name, value in row.items()}
        for name in later:
            if values.get(name) is not None:
                pending.append({"row_id": values["id"], "value": values[name]})
                values[name] = None
        batch.append(values)
        if len(batch) >= size:
            _insert(conn, statement, batch, where)
            total += len(batch)
            batch = []
    if batch:
        _insert(conn, statement, batch, where)
        total += len(batch)
    for name in later:
        column = carried.table.c[name]
        fill = (
            update(carried.table)
            .where(carried.table.c.id == bindparam("row_id"))
            .values({column: bindparam("value")})
        )
        for start in range(0, len(pending), 1000):
            conn.execute(fill, pending[start : start + 1000])
    return total


def _insert(conn: Connection, statement: Any, batch: list[dict[str, Any]], where: str) -> None:
    """Insert a batch; a row the database refuses names its document."""
    try:
        conn.execute(statement, batch).close()
    except (DBAPIError, StatementError) as error:
        problem = str(getattr(error, "orig", None) or error).splitlines()[0]
        raise ValidationFailed.field(where, f"a row could not be written: {problem}.") from None


def read_people(conn: Connection, user_ids: Sequence[str]) -> list[dict[str, Any]]:
    """The accounts behind these ids (those that exist): id, email, display name, created."""
    users = identity_tables.users
    found: list[dict[str, Any]] = []
    for start in range(0, len(user_ids), 500):
        chunk = user_ids[start : start + 500]
        query = (
            select(users.c.id, users.c.email, users.c.display_name, users.c.created_at)
            .where(users.c.id.in_(chunk))
            .order_by(users.c.id)
        )
        found.extend(
            {
                "id": row.id,
                "email": row.email,
                "display_name": row.display_name,
                "created_at": row.created_at.isoformat(),
            }
            for row in conn.execute(query)
        )
    return sorted(found, key=lambda person: person["id"])


def existing_ids(conn: Connection, ids: Sequence[str]) -> list[tuple[str, str]]:
    """Which of these ids are rows of a carried table on this server: (table, id) pairs."""
    found: list[tuple[str, str]] = []
    for table in _BY_ID:
        for start in range(0, len(ids), 500):
            query = select(table.c.id).where(table.c.id.in_(ids[start : start + 500]))
            found.extend((table.name, str(v)) for v in conn.execute(query).scalars())
    return found


def project_keys(conn: Connection) -> list[str]:
    projects = project_tables.projects
    return sorted(conn.execute(select(projects.c.key)).scalars())
