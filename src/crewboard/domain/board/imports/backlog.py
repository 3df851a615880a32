"""Backlog.md task files: Markdown with a YAML front matter (`backlog/tasks/*.md`).

Only the YAML Backlog.md writes is read (scalars, quoted strings, `[]` and flow lists, block
lists): anything else in a front matter is refused naming the file and line. The description
section becomes the body; the acceptance criteria (`- [x] #1 …`) become the checklist; other
sections (plan, notes, summary, definition of done) follow as written.

Statuses: "To Do" and "Draft" are backlog, "In Progress" in progress, "Done" done. A status of
the team's own (config.yml `statuses`) is read by its words first (review, blocked, progress,
done, to do…); failing that by its place in the configured order: the first column backlog,
the last done, any between in progress. A status neither way explains is refused, naming it
and the statuses the file's configuration lists.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from crewboard.domain.board.imports.model import (
    Criterion,
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

KNOWN_STATUSES = {
    "to do": TaskStatus.BACKLOG,
    "todo": TaskStatus.BACKLOG,
    "draft": TaskStatus.BACKLOG,
    "backlog": TaskStatus.BACKLOG,
    "in progress": TaskStatus.IN_PROGRESS,
    "done": TaskStatus.DONE,
}
# Words of a custom status, in the order they are tried.
_STATUS_WORDS = (
    ("review", TaskStatus.REVIEW),
    ("qa", TaskStatus.REVIEW),
    ("block", TaskStatus.BLOCKED),
    ("wait", TaskStatus.BLOCKED),
    ("progress", TaskStatus.IN_PROGRESS),
    ("doing", TaskStatus.IN_PROGRESS),
    ("wip", TaskStatus.IN_PROGRESS),
    ("done", TaskStatus.DONE),
    ("complete", TaskStatus.DONE),
    ("closed", TaskStatus.DONE),
    ("shipped", TaskStatus.DONE),
    ("released", TaskStatus.DONE),
    ("ready", TaskStatus.BACKLOG),
    ("todo", TaskStatus.BACKLOG),
    ("to do", TaskStatus.BACKLOG),
    ("backlog", TaskStatus.BACKLOG),
    ("new", TaskStatus.BACKLOG),
)
PRIORITIES = {"high": Priority.HIGH, "medium": Priority.MEDIUM, "low": Priority.LOW}


@dataclass(frozen=True)
class BacklogFile:
    """One file of a Backlog.md folder: its path for messages, and its text."""

    name: str
    text: str


def status_of(name: str, configured: list[str]) -> TaskStatus | None:
    """A Backlog.md status in Crewboard's terms (see the module's docstring); None when unknown."""
    key = " ".join(name.lower().split())
    if key in KNOWN_STATUSES:
        return KNOWN_STATUSES[key]
    for word, status in _STATUS_WORDS:
        if word in key:
            return status
    order = [" ".join(s.lower().split()) for s in configured]
    if key in order and len(order) >= 2:
        place = order.index(key)
        if place == 0:
            return TaskStatus.BACKLOG
        return TaskStatus.DONE if place == len(order) - 1 else TaskStatus.IN_PROGRESS
    return None


def parse_backlog(
    tasks: list[BacklogFile],
    *,
    config: BacklogFile | None = None,
    milestones: list[BacklogFile] | None = None,
) -> list[ImportedTask]:
    """The tasks of a Backlog.md folder; milestones (`m-0`) become cycles by their titles.

    Raises:
        ValidationFailed: a file without front matter, a front matter line this reader does
            not take, a missing id or title, or a status or priority it cannot map (naming
            the file and line, and the accepted values).
    """
    configured: list[str] = []
    if config is not None:
        settings = read_yaml(config.name, config.text.splitlines(), 0)
        statuses = settings.get("statuses")
        configured = [str(s) for s in statuses] if isinstance(statuses, list) else []
    titles: dict[str, str] = {}
    for milestone in milestones or []:
        head, _ = front_matter(milestone)
        if head.get("id") and head.get("title"):
            titles[str(head["id"]).lower()] = str(head["title"])
    return [_task(file, configured, titles) for file in tasks]


def front_matter(file: BacklogFile) -> tuple[dict[str, Any], str]:
    """The front matter (as read by `read_yaml`) and the Markdown after it.

    Raises:
        ValidationFailed: no front matter, or one `read_yaml` refuses.
    """
    lines = file.text.splitlines()
    if not lines or lines[0].strip() != "---":
        raise malformed(file.name, "line 1", "must start a front matter with ---.")
    for end in range(1, len(lines)):
        if lines[end].strip() == "---":
            return read_yaml(file.name, lines[1:end], 1), "\n".join(lines[end + 1 :])
    raise malformed(
        file.name, f"line {len(lines)}", "the front matter never ends (no closing ---)."
    )


def _task(file: BacklogFile, configured: list[str], milestones: dict[str, str]) -> ImportedTask:
    head, body = front_matter(file)
    task_id = head.get("id")
    if not isinstance(task_id, str) or not task_id.strip():
        raise malformed(file.name, _line_of(file, "id"), "id: every task names its id (task-12).")
    title = head.get("title")
    if not isinstance(title, str) or not title.strip():
        raise malformed(file.name, _line_of(file, "title"), "title: must not be empty.")
    raw_status = str(head.get("status") or "To Do")
    status = status_of(raw_status, configured)
    if status is None:
        raise malformed(
            file.name,
            _line_of(file, "status"),
            f"status: {raw_status!r} is neither a Backlog.md status nor one of the "
            "configuration's (config.yml statuses).",
            configured or ["To Do", "In Progress", "Done"],
        )
    priority = Priority.MEDIUM
    if head.get("priority") not in (None, ""):
        raw = str(head["priority"]).strip().lower()
        if raw not in PRIORITIES:
            raise malformed(
                file.name,
                _line_of(file, "priority"),
                f"priority: {head['priority']!r} is not a Backlog.md priority.",
                list(PRIORITIES),
            )
        priority = PRIORITIES[raw]
    milestone = head.get("milestone")
    cycle = milestones.get(str(milestone).lower(), str(milestone)) if milestone else None
    parent = head.get("parent_task_id") or head.get("parent")
    text, criteria = _sections(body)
    key = task_id.strip().lower()
    return ImportedTask(
        source="backlog",
        external_id=f"backlog:{key}",
        title=clip_title(title),
        status=status,
        source_status=raw_status,
        priority=priority,
        body=text,
        labels=clip_labels([str(label) for label in _as_list(head.get("labels"))]),
        parent=f"backlog:{str(parent).strip().lower()}" if parent else None,
        blocked_by=tuple(
            f"backlog:{str(dep).strip().lower()}" for dep in _as_list(head.get("dependencies"))
        ),
        people=tuple(
            person_handle(str(p)) for p in _as_list(head.get("assignee")) if str(p).strip()
        ),
        cycle=clip_cycle(cycle),
        due_date=parse_day(head.get("due_date")),
        created_at=parse_time(head.get("created_date")),
        updated_at=parse_time(head.get("updated_date")),
        criteria=criteria,
        origin=f"Backlog.md {task_id.strip().upper()} ({file.name})",
    )


def _as_list(value: Any) -> list[Any]:
    if value is None or value == "":
        return []
    return value if isinstance(value, list) else [value]


_MARKER = re.compile(r"^\s*<!--\s*[A-Z:_ -]+\s*-->\s*$")
_CRITERION = re.compile(r"^\s*- \[( |x|X)\]\s+(?:#\d+\s+)?(.*\S)\s*$")


def _sections(body: str) -> tuple[str, tuple[Criterion, ...]]:
    """The Markdown without Backlog.md's section markers and with its acceptance criteria
    taken out as a checklist."""
    kept: list[str] = []
    criteria: list[Criterion] = []
    in_criteria = False
    for line in body.splitlines():
        heading = line.strip().lower()
        if heading.startswith("## "):
            in_criteria = heading == "## acceptance criteria"
            if in_criteria or heading == "## description":
                continue
        if _MARKER.match(line):
            continue
        found = _CRITERION.match(line) if in_criteria else None
        if found:
            criteria.append(Criterion(found.group(2), found.group(1) != " "))
        elif not in_criteria or line.strip():
            kept.append(line)
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip()
    return text, tuple(criteria)


def _line_of(file: BacklogFile, key: str) -> str:
    for number, line in enumerate(file.text.splitlines(), start=1):
        if line.startswith(f"{key}:"):
            return f"line {number}"
        if number > 1 and line.strip() == "---":
            break
    return "front matter"


# --- the YAML Backlog.md writes ---------------------------------------------------------------

_KEY = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*):(?:\s+(.*))?$")


def read_yaml(file: str, lines: list[str], first: int) -> dict[str, Any]:
    """Top-level `key: value` pairs, block lists (`  - item`) and block scalars (`|`, `>`).

    `first` is the index of `lines[0]` in the file, for the line numbers of refusals.

    Raises:
        ValidationFailed: a line of another shape, naming its number.
    """
    values: dict[str, Any] = {}
    index = 0
    while index < len(lines):
        line = lines[index]
        number = first + index + 1
        index += 1
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        found = _KEY.match(line)
        if found is None:
            raise malformed(file, f"line {number}", f"is not a `key: value` line: {line[:60]!r}.")
        key, raw = found.group(1), (found.group(2) or "").strip()
        if raw in ("|", ">", "|-", ">-", "|+", ">+"):
            block: list[str] = []
            while index < len(lines) and (not lines[index].strip() or lines[index].startswith(" ")):
                block.append(lines[index].strip())
                index += 1
            values[key] = ("\n" if raw.startswith("|") else " ").join(block).strip()
        elif raw:
            values[key] = _scalar(file, number, raw)
        else:
            items: list[Any] = []
            while index < len(lines) and lines[index].lstrip().startswith("- "):
                items.append(_scalar(file, first + index + 1, lines[index].lstrip()[2:].strip()))
                index += 1
            values[key] = items if items else None
    return values


def _scalar(file: str, number: int, raw: str) -> Any:
    if raw.startswith("[") and raw.endswith("]"):
        inner = raw[1:-1].strip()
        return [_scalar(file, number, part.strip()) for part in _split_flow(inner)] if inner else []
    if raw.startswith("'"):
        if not raw.endswith("'") or len(raw) < 2:
            raise malformed(file, f"line {number}", "a quoted value is not closed.")
        return raw[1:-1].replace("''", "'")
    if raw.startswith('"'):
        if not raw.endswith('"') or len(raw) < 2:
            raise malformed(file, f"line {number}", "a quoted value is not closed.")
        return raw[1:-1].replace('\\"', '"').replace("\\\\", "\\")
    if raw in ("null", "~"):
        return None
    if raw in ("true", "false"):
        return raw == "true"
    return int(raw) if re.fullmatch(r"-?\d+", raw) else raw


def _split_flow(inner: str) -> list[str]:
    """The items of a flow list, commas inside quotes kept."""
    parts: list[str] = []
    current = ""
    quote: str | None = None
    for char in inner:
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == ",":
            parts.append(current)
            current = ""
            continue
        current += char
    parts.append(current)
    return parts
