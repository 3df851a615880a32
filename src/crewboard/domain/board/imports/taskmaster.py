"""task-master's `tasks.json` (the tagged format: one entry per tag, each with its `tasks`).

Every tag is imported. A task's external id is `taskmaster:<tag>#<id>` (a subtask's
`taskmaster:<tag>#<parent>.<id>`), so ids repeat freely across tags, and each task carries its
tag as a label. `details` and `testStrategy` follow the description under headings of their own.
"""

from __future__ import annotations

from typing import Any

from crewboard.domain.board.imports.model import (
    ImportedTask,
    clip_labels,
    clip_title,
    json_list,
    malformed,
    parse_json,
    parse_time,
)
from crewboard.domain.board.tasks import Priority, TaskStatus

STATUSES: dict[str, tuple[TaskStatus, str | None]] = {
    "pending": (TaskStatus.BACKLOG, None),
    "in-progress": (TaskStatus.IN_PROGRESS, None),
    "review": (TaskStatus.REVIEW, None),
    "done": (TaskStatus.DONE, None),
    "deferred": (TaskStatus.BACKLOG, "deferred"),
    "cancelled": (TaskStatus.DONE, "cancelled"),
    "blocked": (TaskStatus.BLOCKED, None),
}
"""task-master status → Crewboard status, and a label that keeps what the status alone loses."""

PRIORITIES = {
    "critical": Priority.HIGH,
    "high": Priority.HIGH,
    "medium": Priority.MEDIUM,
    "low": Priority.LOW,
}


def looks_like_taskmaster(data: object) -> bool:
    """The tagged shape: an object whose values are objects holding a `tasks` list."""
    return (
        isinstance(data, dict)
        and bool(data)
        and all(isinstance(v, dict) and isinstance(v.get("tasks"), list) for v in data.values())
    )


def parse_taskmaster(text: str, file: str = "tasks.json") -> list[ImportedTask]:
    """Every task and subtask of every tag.

    Raises:
        ValidationFailed: not JSON (naming line and column), not the tagged shape, or a field
            of the wrong kind or value (naming its path, e.g. `master.tasks[3].status`).
    """
    data = parse_json(file, text)
    if not looks_like_taskmaster(data):
        raise malformed(
            file,
            "(top level)",
            'is not task-master\'s tagged format: expected {"<tag>": {"tasks": [...]}, ...} '
            "(task-master 0.16 and later).",
        )
    found: list[ImportedTask] = []
    for tag, entry in data.items():
        for index, raw in enumerate(entry["tasks"]):
            found.extend(_task(file, tag, f"{tag}.tasks[{index}]", raw))
    return found


def _task(file: str, tag: str, path: str, raw: Any) -> list[ImportedTask]:
    item = _object(file, path, raw)
    number = _id(file, f"{path}.id", item.get("id"))
    external = f"taskmaster:{tag}#{number}"
    deps = [
        f"taskmaster:{tag}#{_ref(file, f'{path}.dependencies[{i}]', dep)}"
        for i, dep in enumerate(json_list(file, f"{path}.dependencies", item.get("dependencies")))
    ]
    task = _imported(file, tag, path, item, external=external, deps=deps, parent=None)
    subtasks = json_list(file, f"{path}.subtasks", item.get("subtasks"))
    siblings = {str(s.get("id")) for s in subtasks if isinstance(s, dict)}
    found = [task]
    for index, raw_sub in enumerate(subtasks):
        sub_path = f"{path}.subtasks[{index}]"
        sub = _object(file, sub_path, raw_sub)
        sub_number = _id(file, f"{sub_path}.id", sub.get("id"))
        sub_deps = []
        for i, dep in enumerate(
            json_list(file, f"{sub_path}.dependencies", sub.get("dependencies"))
        ):
            ref = _ref(file, f"{sub_path}.dependencies[{i}]", dep)
            # A bare number in a subtask's dependencies names a sibling when one has that id
            # (task-master writes "2.1" in full, older files wrote 1).
            if isinstance(dep, int) and ref in siblings:
                ref = f"{number}.{ref}"
            sub_deps.append(f"taskmaster:{tag}#{ref}")
        found.append(
            _imported(
                file,
                tag,
                sub_path,
                sub,
                external=f"taskmaster:{tag}#{number}.{sub_number}",
                deps=sub_deps,
                parent=external,
                default_priority=task.priority,
            )
        )
    return found


def _imported(
    file: str,
    tag: str,
    path: str,
    item: dict[str, Any],
    *,
    external: str,
    deps: list[str],
    parent: str | None,
    default_priority: Priority = Priority.MEDIUM,
) -> ImportedTask:
    title = item.get("title")
    if not isinstance(title, str) or not title.strip():
        raise malformed(file, f"{path}.title", "must be a text that is not empty.")
    raw_status = item.get("status", "pending")
    if not isinstance(raw_status, str) or raw_status.strip().lower() not in STATUSES:
        raise malformed(
            file, f"{path}.status", f"{raw_status!r} is not a task-master status.", list(STATUSES)
        )
    status, status_label = STATUSES[raw_status.strip().lower()]
    raw_priority = item.get("priority")
    if raw_priority is None or raw_priority == "":
        priority = default_priority
    elif isinstance(raw_priority, str) and raw_priority.strip().lower() in PRIORITIES:
        priority = PRIORITIES[raw_priority.strip().lower()]
    else:
        raise malformed(
            file,
            f"{path}.priority",
            f"{raw_priority!r} is not a task-master priority.",
            list(PRIORITIES),
        )
    number = external.partition("#")[2]
    return ImportedTask(
        source="taskmaster",
        external_id=external,
        title=clip_title(title),
        status=status,
        source_status=raw_status,
        priority=priority,
        body=_body(file, path, item),
        labels=clip_labels([tag] + ([status_label] if status_label else [])),
        parent=parent,
        blocked_by=tuple(dict.fromkeys(d for d in deps if d != external)),
        created_at=parse_time(item.get("createdAt")),
        updated_at=parse_time(item.get("updatedAt")),
        origin=f"task-master (tag {tag}, task {number})",
    )


def _body(file: str, path: str, item: dict[str, Any]) -> str:
    parts = []
    for key, heading in (
        ("description", None),
        ("details", "Details"),
        ("testStrategy", "Test strategy"),
    ):
        value = item.get(key)
        if value is None:
            continue
        if not isinstance(value, str):
            raise malformed(file, f"{path}.{key}", "must be a text.")
        if value.strip():
            parts.append(f"## {heading}\n\n{value.strip()}" if heading else value.strip())
    return "\n\n".join(parts)


def _object(file: str, path: str, raw: Any) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise malformed(file, path, "must be an object (a task).")
    return raw


def _id(file: str, path: str, raw: Any) -> str:
    if isinstance(raw, bool) or not isinstance(raw, int | str) or not str(raw).strip():
        raise malformed(file, path, "must be a task id (a whole number).")
    return str(raw).strip()


def _ref(file: str, path: str, raw: Any) -> str:
    """A dependency: a task id (3, "3") or a subtask's ("3.1")."""
    text = str(raw).strip() if isinstance(raw, int | str) and not isinstance(raw, bool) else ""
    if not text or not all(part.isdigit() for part in text.split(".")) or text.count(".") > 1:
        raise malformed(file, path, f"{raw!r} is not a task id (3) or a subtask id (3.1).")
    return text
