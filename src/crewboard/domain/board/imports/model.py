"""What every importer makes of another tool's item: one `ImportedTask`, already in Crewboard's
terms (status, priority, labels), still naming other items by their external ids.

The parsers are pure: they read the text handed to them and refuse a malformed file with a
`ValidationFailed` that names the file and the line, or the field path, and for an
enumeration the values it accepts (`malformed`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from email.utils import parsedate_to_datetime
from typing import Any

from crewboard.domain.board.tasks import (
    MAX_CYCLE,
    MAX_TAG,
    MAX_TAGS,
    MAX_TITLE,
    Priority,
    TaskStatus,
)
from crewboard.errors import ValidationFailed

SOURCES = ("taskmaster", "backlog", "github", "linear")
SOURCE_NAMES = {
    "taskmaster": "task-master",
    "backlog": "Backlog.md",
    "github": "GitHub",
    "linear": "Linear",
}


@dataclass(frozen=True)
class Criterion:
    """One acceptance criterion and whether it was ticked off."""

    text: str
    done: bool = False


@dataclass(frozen=True)
class ImportedTask:
    """One item of another tool, mapped. `external_id` names it for good (`taskmaster:master#3.1`,
    `backlog:task-12`, `github:owner/repo#42`, `linear:ENG-123`); `parent` and `blocked_by`
    name other items the same way."""

    source: str
    external_id: str
    title: str
    status: TaskStatus
    source_status: str
    priority: Priority = Priority.MEDIUM
    body: str = ""
    labels: tuple[str, ...] = ()
    parent: str | None = None
    blocked_by: tuple[str, ...] = ()
    people: tuple[str, ...] = ()  # assignees as the source names them (login, email or name)
    cycle: str | None = None
    due_date: date | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    criteria: tuple[Criterion, ...] = ()
    url: str | None = None
    origin: str = ""  # a reader's name for where it came from: "GitHub owner/repo#42"
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def description(self) -> str:
        """The body, the acceptance criteria as a checklist, and where the task came from."""
        parts = [self.body.strip()] if self.body.strip() else []
        if self.criteria:
            boxes = "\n".join(f"- [{'x' if c.done else ' '}] {c.text}" for c in self.criteria)
            parts.append(f"## Acceptance criteria\n\n{boxes}")
        where = f"Imported from {self.origin or self.external_id}"
        parts.append(f"{where}: {self.url}" if self.url else f"{where}.")
        return "\n\n".join(parts)


@dataclass(frozen=True)
class Skipped:
    """An item of the file that is not imported, and why."""

    ref: str
    reason: str


@dataclass(frozen=True)
class Parsed:
    """What a parser read: the tasks, and the items it left out."""

    tasks: list[ImportedTask]
    skipped: list[Skipped] = field(default_factory=list)


def json_list(file: str, path: str, value: Any) -> list[Any]:
    """A JSON field that must be a list when present; missing or null is an empty list."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise malformed(file, path, "must be a list.")
    return value


def malformed(
    file: str, where: str, problem: str, accepted: list[str] | None = None
) -> ValidationFailed:
    """The refusal of a malformed file: `where` is a line ("line 12") or a field path
    (`master.tasks[3].dependencies[0]`)."""
    error = ValidationFailed.field(f"{file}: {where}", problem, accepted)
    error.details.update(file=file, where=where)
    return error


def parse_json(file: str, text: str) -> Any:
    """The file's JSON value.

    Raises:
        ValidationFailed: not JSON, naming the line and column.
    """
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise malformed(
            file, f"line {error.lineno}, column {error.colno}", f"is not JSON: {error.msg}."
        ) from None


def clip_title(title: str) -> str:
    text = " ".join(title.split())
    return text if len(text) <= MAX_TITLE else text[: MAX_TITLE - 1] + "…"


def clip_labels(values: list[str]) -> tuple[str, ...]:
    """Labels as Crewboard keeps them: trimmed, at most 48 characters, 20 at most, no repeats
    (compared without case)."""
    seen: dict[str, str] = {}
    for value in values:
        label = " ".join(value.split())[:MAX_TAG].strip()
        if label:
            seen.setdefault(label.lower(), label)
    return tuple(seen.values())[:MAX_TAGS]


def clip_cycle(value: str | None) -> str | None:
    text = " ".join((value or "").split())
    return text[:MAX_CYCLE] or None


_OFFSET_ONLY = re.compile(r"^(\d{4}-\d{2}-\d{2})[ T](\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?)$")
_JS_DATE = re.compile(r"^\w{3} (\w{3} \d{1,2} \d{4} \d{2}:\d{2}:\d{2}) GMT([+-]\d{4})")


def parse_time(value: object) -> datetime | None:
    """A time as the tools write it: ISO 8601 (with Z, an offset, or none: UTC), a date alone,
    "2026-03-02 10:15" (Backlog.md), or JavaScript's `Date.toString()` (older Linear exports).
    None when it is none of these."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    found = _JS_DATE.match(text)
    if found:
        try:
            parsed = datetime.strptime(f"{found.group(1)} {found.group(2)}", "%b %d %Y %H:%M:%S %z")
        except ValueError:
            return None
        return parsed.astimezone(UTC)
    loose = _OFFSET_ONLY.match(text)
    if loose:
        text = f"{loose.group(1)}T{loose.group(2)}"
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        try:
            parsed = parsedate_to_datetime(text)
        except (TypeError, ValueError):
            return None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def parse_day(value: object) -> date | None:
    """A due date: the day of any time `parse_time` reads."""
    if isinstance(value, str) and re.match(r"^\d{4}-\d{2}-\d{2}$", value.strip()):
        try:
            return date.fromisoformat(value.strip())
        except ValueError:
            return None
    moment = parse_time(value)
    return moment.date() if moment else None


def person_handle(value: str) -> str:
    """An assignee as written (`@alice`, `alice`, `Ada Lovelace`, `ada@example.com`) without the @."""
    text = " ".join(value.split())
    return text[1:] if text.startswith("@") else text


def assignee_label(handle: str) -> str:
    return f"assignee:{handle}"
