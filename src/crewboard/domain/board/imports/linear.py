"""Linear's CSV export (Settings → Import/Export → Export CSV): one row per issue, columns
matched by header name, since Linear has added columns over time (the 30- and 34-column shapes
are both read; `Blocked by` is in the wider one).

Statuses are a team's own workflow states: the usual names map directly (Backlog, Todo and
Triage backlog; In Progress in progress; In Review review; Done done; Canceled and Duplicate
done, labelled so). Another name is read by its words (review, block, progress…) and else by
the export's own dates: a `Canceled` date means canceled, `Completed` done, `Started` in
progress, none backlog. Priorities: Urgent and High high, Medium medium, Low low, No priority
medium. The cycle is its name (or "Cycle N"); the project milestone is kept as a label.
"""

from __future__ import annotations

import csv
import io
from typing import Any

from crewboard.domain.board.imports.model import (
    ImportedTask,
    clip_cycle,
    clip_labels,
    clip_title,
    malformed,
    parse_day,
    parse_time,
    person_handle,
)
from crewboard.domain.board.tasks import Priority, TaskStatus

REQUIRED = ("ID", "Title", "Status")
SIGNATURE = ("ID", "Team", "Title", "Status", "Priority")
STATUSES: dict[str, tuple[TaskStatus, str | None]] = {
    "backlog": (TaskStatus.BACKLOG, None),
    "triage": (TaskStatus.BACKLOG, None),
    "todo": (TaskStatus.BACKLOG, None),
    "to do": (TaskStatus.BACKLOG, None),
    "in progress": (TaskStatus.IN_PROGRESS, None),
    "in review": (TaskStatus.REVIEW, None),
    "done": (TaskStatus.DONE, None),
    "canceled": (TaskStatus.DONE, "canceled"),
    "cancelled": (TaskStatus.DONE, "canceled"),
    "duplicate": (TaskStatus.DONE, "duplicate"),
}
_WORDS = (
    ("review", TaskStatus.REVIEW),
    ("block", TaskStatus.BLOCKED),
    ("progress", TaskStatus.IN_PROGRESS),
)
PRIORITIES = {
    "urgent": Priority.HIGH,
    "high": Priority.HIGH,
    "medium": Priority.MEDIUM,
    "low": Priority.LOW,
    "no priority": Priority.MEDIUM,
    "": Priority.MEDIUM,
}


def looks_like_linear(text: str) -> bool:
    """The first line is a header naming Linear's ID, Team, Title, Status and Priority columns."""
    first = text.lstrip("\ufeff").split("\n", 1)[0]
    try:
        header = next(csv.reader([first]))
    except (csv.Error, StopIteration):
        return False
    return all(name in header for name in SIGNATURE)


def parse_linear(text: str, file: str = "export.csv") -> list[ImportedTask]:
    """Every row of the export.

    Raises:
        ValidationFailed: not CSV, a missing column, or a row whose fields cannot be read
            (naming the line, and for a priority the accepted ones).
    """
    reader = csv.reader(io.StringIO(text.lstrip("\ufeff"), newline=""))
    try:
        header = next(reader, None)
        if header is None or any(name not in header for name in REQUIRED):
            missing = [n for n in REQUIRED if header is None or n not in header]
            raise malformed(
                file, "line 1", f"is not a Linear export header: missing {', '.join(missing)}."
            )
        column = {name: index for index, name in enumerate(header)}
        found: list[ImportedTask] = []
        line = reader.line_num
        for row in reader:
            if any(cell.strip() for cell in row):
                if len(row) > len(header):
                    raise malformed(
                        file,
                        f"line {line + 1}",
                        f"has {len(row)} fields; the header names {len(header)}.",
                    )
                values = {name: row[i] if i < len(row) else "" for name, i in column.items()}
                found.append(_issue(file, line + 1, values))
            line = reader.line_num
    except csv.Error as error:
        raise malformed(file, f"line {reader.line_num}", f"is not CSV: {error}.") from None
    return found


def _issue(file: str, line: int, row: dict[str, str]) -> ImportedTask:
    key = row["ID"].strip()
    if not key:
        raise malformed(file, f"line {line}", "ID: every issue names its identifier (ENG-123).")
    title = row["Title"].strip()
    if not title:
        raise malformed(file, f"line {line}", "Title: must not be empty.")
    status, extra = _status(row)
    raw_priority = row.get("Priority", "").strip()
    if raw_priority.lower() not in PRIORITIES:
        raise malformed(
            file,
            f"line {line}",
            f"Priority: {raw_priority!r} is not a Linear priority.",
            ["Urgent", "High", "Medium", "Low", "No priority"],
        )
    labels = [part.strip() for part in row.get("Labels", "").split(",") if part.strip()]
    if extra:
        labels.append(extra)
    milestone = row.get("Project Milestone", "").strip()
    if milestone:
        labels.append(f"milestone:{milestone}")
    cycle = row.get("Cycle Name", "").strip() or (
        f"Cycle {row['Cycle Number'].strip()}" if row.get("Cycle Number", "").strip() else None
    )
    parent = _identifier(row.get("Parent issue", ""))
    blockers = [_identifier(part) for part in row.get("Blocked by", "").split(",")]
    assignee = row.get("Assignee", "").strip()
    return ImportedTask(
        source="linear",
        external_id=f"linear:{key.upper()}",
        title=clip_title(title),
        status=status,
        source_status=row["Status"].strip(),
        priority=PRIORITIES[raw_priority.lower()],
        body=_plain(row.get("Description", "")),
        labels=clip_labels(labels),
        parent=f"linear:{parent}" if parent else None,
        blocked_by=tuple(f"linear:{b}" for b in blockers if b),
        people=(person_handle(assignee),) if assignee else (),
        cycle=clip_cycle(cycle),
        due_date=parse_day(row.get("Due Date")),
        created_at=parse_time(row.get("Created")),
        updated_at=parse_time(row.get("Updated")),
        origin=f"Linear {key.upper()}"
        + (f" (team {row['Team'].strip()})" if row.get("Team", "").strip() else ""),
    )


def _status(row: dict[str, str]) -> tuple[TaskStatus, str | None]:
    name = " ".join(row["Status"].lower().split())
    if name in STATUSES:
        return STATUSES[name]
    for word, status in _WORDS:
        if word in name:
            return status, None
    if row.get("Canceled", "").strip():
        return TaskStatus.DONE, "canceled"
    if row.get("Completed", "").strip():
        return TaskStatus.DONE, None
    if row.get("Started", "").strip():
        return TaskStatus.IN_PROGRESS, None
    return TaskStatus.BACKLOG, None


def _identifier(value: str) -> str | None:
    """An issue named by its identifier (ENG-12), alone or before its title ("ENG-12 Fix…")."""
    text = value.strip()
    return text.split()[0].upper() if text else None


def _plain(value: Any) -> str:
    """Linear puts a ' before text a spreadsheet could take for a formula; it is not content."""
    text = str(value or "")
    return text[1:] if text[:2] in ("'=", "'+", "'-", "'@") else text
