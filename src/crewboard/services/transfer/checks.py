"""What an import checks of every row before it is written: the same rules the other doors
apply, and that the row belongs to the archive's own project.

Three layers, each naming the document, the line and the column it refuses:

- the column's type (storage/transfer.value_problem): text, numbers within what the column
  holds, moments with their offset, no NUL;
- the rules the API applies to that column (`RULES`: the same validators the services use,
  column → checker), and the size limit of the files a row names (`BLOB_LIMITS`);
- ownership (`Ownership`): a row's project is the project it lands as, every foreign key to a
  carried table names a row of the same archive project, every person a row names is one of
  the archive's people (people.json), and an id a row names outside its keys (a record's
  source hand-in, a task's context items, an event's payload) that is no row of the archive
  is no row of another project here either (one look-up per table at the project's end).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from crewboard.domain import artifacts as artifact_rules
from crewboard.domain import specs as spec_rules
from crewboard.domain.board.tasks import (
    MAX_LONG_TEXT,
    MAX_TITLE,
    AssigneeType,
    Priority,
    TaskStatus,
    TaskType,
)
from crewboard.domain.handoffs import MAX_BODY as MAX_HANDOFF_BODY
from crewboard.domain.handoffs import MAX_ITEM_TEXT
from crewboard.domain.identity.access import Role, parse_enum
from crewboard.domain.projects import (
    MAX_DESCRIPTION,
    MAX_GOAL,
    MAX_NAME,
    MAX_PHASE,
    ProjectStatus,
    ProjectType,
    SeatKind,
    check_collections,
    check_project_key,
)
from crewboard.domain.spec_comments import MAX_COMMENT
from crewboard.domain.validation import INT32_MAX, check_text
from crewboard.errors import CrewboardError, LimitExceeded, ValidationFailed
from crewboard.services.board.task_checks import CHECKS as TASK_CHECKS
from crewboard.storage import transfer as rows

Checker = Callable[[Any], object]


def _text(limit: int, *, required: bool = False) -> Checker:
    return lambda value: check_text("value", value, max_length=limit, required=required)


def _whole(minimum: int, maximum: int) -> Checker:
    def check(value: int) -> None:
        if not minimum <= value <= maximum:
            raise ValidationFailed.field("value", f"must be from {minimum} to {maximum}.")

    return check


def _key(value: str) -> None:
    """A project key as the API makes it: the upper-case form `check_project_key` returns
    (a key in another form could never be opened)."""
    if check_project_key(value) != value:
        raise ValidationFailed.field("key", f"{value!r} is not written as a project key.")


def _enum(kind: Any) -> Checker:
    """The API's enum check (`parse_enum`), asked only of a value that is not one of them."""
    values = frozenset(member.value for member in kind)
    return lambda value: value if value in values else parse_enum(value, kind, "value")


def _size(limit: int) -> Checker:
    def check(value: int) -> None:
        if not 0 <= value <= limit:
            raise LimitExceeded(
                f"size: {value} bytes is over the limit of {limit}.",
                {"field": "size", "limit": limit, "actual": value},
            )

    return check


# Column → the API's check of it (raising a CrewboardError). Tasks use the board's own table.
RULES: dict[tuple[str, str], Checker] = {
    ("projects", "key"): _key,
    ("projects", "name"): _text(MAX_NAME, required=True),
    ("projects", "goal"): _text(MAX_GOAL),
    ("projects", "phase"): _text(MAX_PHASE),
    ("projects", "description"): _text(MAX_DESCRIPTION),
    ("projects", "status"): _enum(ProjectStatus),
    ("projects", "type"): _enum(ProjectType),
    ("projects", "collections"): lambda value: check_collections(list(value)),
    ("project_members", "role"): _enum(Role),
    ("team_roles", "kind"): _enum(SeatKind),
    ("tasks", "number"): _whole(1, INT32_MAX),
    ("tasks", "revision"): _whole(1, INT32_MAX),
    ("task_comments", "content"): _text(MAX_LONG_TEXT, required=True),
    ("task_outputs", "content"): _text(MAX_LONG_TEXT),
    ("memory_records", "title"): _text(MAX_TITLE, required=True),
    ("memory_records", "content"): _text(MAX_LONG_TEXT),
    ("attachments", "name"): spec_rules.check_attachment_name,
    ("attachments", "size"): _size(spec_rules.MAX_ATTACHMENT_BYTES),
    ("spec_files", "size"): _size(spec_rules.MAX_FILE_BYTES),
    ("spec_file_revisions", "size"): _size(spec_rules.MAX_FILE_BYTES),
    ("artifact_files", "size"): _size(artifact_rules.MAX_FILE_BYTES),
    ("spec_comments", "body"): _text(MAX_COMMENT, required=True),
    ("handoff_action_items", "text"): _text(MAX_ITEM_TEXT, required=True),
    **{("handoffs", name): _text(MAX_HANDOFF_BODY) for name in ("completed", "in_progress")},
}
# Every other column of the tasks table the board checks on a write (its enums as above: the
# same check, quicker for the many values that pass).
RULES.update(
    {
        ("tasks", "type"): _enum(TaskType),
        ("tasks", "status"): _enum(TaskStatus),
        ("tasks", "priority"): _enum(Priority),
        ("tasks", "assignee_type"): _enum(AssigneeType),
    }
)
RULES.update(
    {
        ("tasks", name): check
        for name, check in TASK_CHECKS.items()
        if name in rows.BY_NAME["tasks"].table.c and ("tasks", name) not in RULES
    }
)
# Rules naming a column no carried table has would check nothing: keep the table true.
RULES = {
    (table, column): check
    for (table, column), check in RULES.items()
    if table in rows.BY_NAME and column in rows.BY_NAME[table].table.c
}

# The most bytes a file named by each blob column may hold (the API's upload limits).
BLOB_LIMITS: dict[tuple[str, str], int] = {
    ("attachments", "digest"): spec_rules.MAX_ATTACHMENT_BYTES,
    ("spec_files", "digest"): spec_rules.MAX_FILE_BYTES,
    ("spec_file_revisions", "digest"): spec_rules.MAX_FILE_BYTES,
    ("artifact_files", "digest"): artifact_rules.MAX_FILE_BYTES,
}


def refusal(
    where: str, line: int, column: str, problem: str, kind: type[CrewboardError]
) -> CrewboardError:
    """The error naming the document, the line and the column."""
    field = f"{where} line {line} {column}"
    return kind(
        f"{field}: {problem}", {"field": field, "document": where, "line": line, "column": column}
    )


def _plan(carried: rows.Carried) -> list[tuple[str, rows.Problem, Checker | None, bool]]:
    """Each column of a carried table: its name, its type's check, the API's rule for it (or
    None) and whether a value is required."""
    return [
        (
            c.name,
            carried.checkers[c.name],
            RULES.get((carried.name, c.name)),
            c.name in carried.required,
        )
        for c in carried.columns
    ]


_PLANS = {c.name: _plan(c) for c in rows.CARRIED}


def check_values(carried: rows.Carried, row: dict[str, Any], where: str, line: int) -> None:
    """Every value of a row as the archive holds it: its column's type, then the API's rule.

    Raises:
        ValidationFailed, LimitExceeded: naming the document, line and column.
    """
    for name, check, rule, required in _PLANS[carried.name]:
        if name not in row:
            if required:
                raise refusal(where, line, name, "is missing.", ValidationFailed)
            continue
        value = row[name]
        problem = check(value)
        if problem is not None:
            raise refusal(where, line, name, problem, ValidationFailed)
        if rule is None or value is None:
            continue
        try:
            rule(value)
        except CrewboardError as error:
            problem = error.message.split(": ", 1)[-1]
            raise refusal(where, line, name, problem, type(error)) from None
        except (TypeError, ValueError, AttributeError):
            problem = "is not of the shape this column holds."
            raise refusal(where, line, name, problem, ValidationFailed) from None


class Ownership:
    """The rows of one archive project, checked to belong to it as they are landed (ids as
    the server will hold them): a refusal names the document, the line and the column."""

    def __init__(self, project_id: str, key: str, people: set[str]) -> None:
        self.project_id = project_id
        self.key = key
        self.people = people
        # The values of every column a foreign key names, per table, as written so far.
        self.written: dict[tuple[str, tuple[str, ...]], set[tuple[Any, ...]]] = {}
        wanted = {(r.table, r.names) for c in rows.CARRIED for r in c.references}
        # Per table, the columns of its rows that other rows name (ids, mostly).
        self.named: dict[str, list[tuple[str, ...]]] = {}
        for table, names in sorted(wanted):
            self.named.setdefault(table, []).append(names)
        self.later: list[tuple[rows.Reference, tuple[Any, ...], str, int]] = []
        # Every row id the project's documents hold, and the ids rows name outside a foreign
        # key (a record's source hand-in, a task's context items, an event's payload) that are
        # none of them: where each was first named. `settle` looks those up on the server.
        self.ids: set[str] = set()
        self.unresolved: dict[str, tuple[str, int, str]] = {}

    def check(
        self,
        carried: rows.Carried,
        original: dict[str, Any],
        landed: dict[str, Any],
        where: str,
        line: int,
    ) -> None:
        """Raises ValidationFailed when the row names another project, a row outside the
        archive or a person the archive does not carry."""
        row = _Row(carried, original, landed, where, line)
        self._check_project(row)
        self._check_references(row)
        self._check_named(row)
        if type(landed.get("id")) is str:
            self.ids.add(landed["id"])
        for names in self.named.get(carried.name, ()):
            key = tuple(landed.get(n) for n in names)
            self.written.setdefault((carried.name, names), set()).add(key)

    def _check_references(self, row: _Row) -> None:
        for reference in row.carried.references:
            values = tuple(row.landed.get(c) for c in reference.columns)
            if any(v is None for v in values):
                continue
            if reference.table == row.carried.name:  # a task's parent: any task of the archive
                self.later.append((reference, values, row.where, row.line))
            elif values not in self.written.get((reference.table, reference.names), set()):
                row.refuse(",".join(reference.columns), _not_held(reference))

    def _check_named(self, row: _Row) -> None:
        """The people a row names, and the ids it names outside its keys."""
        landed = row.landed
        for column in row.carried.people:
            if landed.get(column) is not None and landed[column] not in self.people:
                row.refuse(column, "names a person not in people.json.")
        keyed = row.carried.keyed
        for column, value in landed.items():
            for found in _ids_in(value):
                if found.startswith("usr_"):
                    if found not in self.people:
                        row.refuse(column, "names a person not in people.json.")
                elif column not in keyed and found not in self.ids:
                    self.unresolved.setdefault(found, (row.where, row.line, column))

    def settle(self, conn: Any) -> None:
        """Refuse an id a row names (outside its foreign keys) that is no row of the archive's
        project and is a row of another project on this server."""
        outside = sorted(v for v in self.unresolved if v not in self.ids)
        if not outside:
            return
        for table, found in rows.existing_ids(conn, outside):
            where, line, column = self.unresolved[found]
            raise refusal(
                where,
                line,
                column,
                f"{found!r} names a {table} row of another project.",
                ValidationFailed,
            )

    def _check_project(self, row: _Row) -> None:
        landed = row.landed
        if row.carried.name == "projects":
            if landed.get("id") != self.project_id:
                row.refuse("id", "is not the id the manifest names.")
            if landed.get("key") != self.key:
                row.refuse("key", "is not the key the manifest names.")
        elif "project_id" in row.carried.table.c and landed.get("project_id") != self.project_id:
            row.refuse("project_id", "names another project.")

    def finish(self) -> None:
        """Check the references to rows of the same table (they may come in any order)."""
        for reference, values, where, line in self.later:
            if values not in self.written.get((reference.table, reference.names), set()):
                column = ",".join(reference.columns)
                raise refusal(where, line, column, _not_held(reference), ValidationFailed)
        self.later.clear()


@dataclass(frozen=True)
class _Row:
    """One row under the ownership checks: as the archive has it and as it would land."""

    carried: rows.Carried
    original: dict[str, Any]
    landed: dict[str, Any]
    where: str
    line: int

    def refuse(self, column: str, why: str) -> None:
        shown = ", ".join(repr(self.original.get(c)) for c in column.split(","))
        raise refusal(self.where, self.line, column, f"{shown} {why}", ValidationFailed)


def _not_held(reference: rows.Reference) -> str:
    return f"names a {reference.table} row this archive's project does not hold."


_ID = re.compile(r"^[a-z]{2,8}_[0-9a-z]{22}$")  # crewboard.domain.ids: prefix_22 characters


def _ids_in(value: Any) -> list[str]:
    """The ids a value is or holds as whole strings (inside a JSON value too): the shape export
    gathers people.json by, and `new_ids` remaps."""
    if type(value) is str:
        return [value] if 25 <= len(value) <= 31 and _ID.match(value) else []
    if not isinstance(value, list | dict):
        return []
    found: list[str] = []
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if type(item) is str:
            if 25 <= len(item) <= 31 and _ID.match(item):
                found.append(item)
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
    return found
