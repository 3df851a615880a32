"""A task's history as its page shows it: each change with its fields from → to.

Two records meet here. A task.updated event names the fields a change touched and, since
issue 14, keeps their old and new values (`changes`); the lifecycle events (status,
assignment, open blockers) are written with every change, also for imported tasks and older
changes whose events keep no values. Both of one change carry the same time (one transaction),
so a row is one change: its fields, and the lifecycle facts those fields do not already say.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from crewboard.domain.identity.records import Actor
from crewboard.domain.review import EventRow
from crewboard.services.board.task_lookup import access_task
from crewboard.services.views import iso
from crewboard.storage.database import Database
from crewboard.storage.review.activity import ActivityRepository, EventQuery
from crewboard.storage.uow import UnitOfWork

HISTORY_CHANGES = 100  # the newest task.updated and claim events read for one task page
TASK_FIELDS = ("parentTaskId", "blockedByTaskIds")  # fields whose values are task ids


def task_history(
    db: Database, actor: Actor, task: str, lifecycle: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The task's changes, newest first, merged with its `lifecycle` events (as
    list_task_events gives them): rows of {at, actor, fields, lifecycle}. Each field is
    {field, from, to, valued}; task ids in parentTaskId and blockedByTaskIds are task keys.

    Raises:
        NotFound: the task is not open to the actor.
    """

    def work(uow: UnitOfWork) -> list[dict[str, Any]]:
        found, project = access_task(uow, actor, task)
        events = ActivityRepository(uow.conn).events(
            EventQuery(
                project_ids=[project.id],
                limit=HISTORY_CHANGES,
                task_id=found.id,
                only_prefixes=("task.updated", "task.claim"),
            )
        )
        rows = [_change_row(event) for event in events]
        keys = _task_keys(uow, project.key, rows)
        for row in rows:
            for item in row["fields"]:
                if item["field"] in TASK_FIELDS and item["valued"]:
                    item["from"] = _as_keys(item["from"], keys)
                    item["to"] = _as_keys(item["to"], keys)
        return merge_lifecycle(rows, lifecycle)

    result: list[dict[str, Any]] = db.read(work)
    return result


def _change_row(event: EventRow) -> dict[str, Any]:
    payload = event.payload
    if event.type.startswith("task.claim"):
        return _claim_row(event)
    changes = payload.get("changes")
    values: dict[str, Any] = changes if isinstance(changes, dict) else {}
    named = payload.get("changed")
    fields = []
    for name in named if isinstance(named, list) else []:
        value = values.get(name)
        pair: dict[str, Any] = value if isinstance(value, dict) else {}
        fields.append(
            {
                "field": name,
                "from": pair.get("from"),
                "to": pair.get("to"),
                "valued": isinstance(value, dict),
            }
        )
    by = payload.get("by") if isinstance(payload.get("by"), dict) else event.actor
    return {"at": event.created_at.astimezone(UTC), "actor": by, "fields": fields, "lifecycle": []}


def _claim_row(event: EventRow) -> dict[str, Any]:
    """A claim taken, let go, lapsed or broken: who did it (the system for a lapse), and the
    claim's holder, end of lease and fence (`claim`, which the page words)."""
    payload = event.payload
    claim = _dict(payload.get("claim"))
    holder = _dict(claim.get("holder"))
    by = payload.get("by") if isinstance(payload.get("by"), dict) else event.actor
    return {
        "at": event.created_at.astimezone(UTC),
        "actor": by,
        "fields": [],
        "lifecycle": [],
        "claim": {
            "event": event.type,
            "holder": holder.get("by"),
            "until": claim.get("expiresAt"),
            "fence": claim.get("fence"),
        },
    }


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _task_keys(uow: UnitOfWork, project_key: str, rows: list[dict[str, Any]]) -> dict[str, str]:
    ids: set[str] = set()
    for row in rows:
        for item in row["fields"]:
            if item["field"] in TASK_FIELDS and item["valued"]:
                for value in (item["from"], item["to"]):
                    ids.update(value if isinstance(value, list) else [value] if value else [])
    return {
        task_id: f"{project_key}-{number}"
        for task_id, number in uow.tasks.numbers_of(str(i) for i in ids).items()
    }


def _as_keys(value: Any, keys: dict[str, str]) -> Any:
    if isinstance(value, list):  # a set of tasks: shown in key order, however it was stored
        named = [keys.get(str(item), "a deleted task") for item in value]
        return sorted(named, key=lambda key: (len(key), key))
    return keys.get(str(value), "a deleted task") if value else None


def merge_lifecycle(
    rows: list[dict[str, Any]], lifecycle: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Change rows (newest first) with each lifecycle event dropped where a change row of its
    time already says it, else put on that row; the events of a creation, or of no change row,
    get a row of their own."""
    by_time: dict[datetime, list[dict[str, Any]]] = {}
    for row in rows:
        by_time.setdefault(row["at"], []).append(row)
    merged = list(rows)
    own: dict[datetime, dict[str, Any]] = {}
    created = {_time(event) for event in lifecycle if _is_creation(event)}
    for event in lifecycle:
        at = _time(event)
        same_time = by_time.get(at, [])
        if any(_says(row, event) for row in same_time):
            continue
        if same_time and at not in created:
            same_time[0]["lifecycle"].append(event)
            continue
        if at not in own:
            own[at] = {"at": at, "actor": event.get("actor"), "fields": [], "lifecycle": []}
            merged.append(own[at])
        own[at]["lifecycle"].append(event)
    merged.sort(key=lambda row: row["at"], reverse=True)
    return [{**row, "at": iso(row["at"])} for row in merged]


def _time(event: dict[str, Any]) -> datetime:
    return datetime.fromisoformat(event["occurredAt"]).astimezone(UTC)


def _is_creation(event: dict[str, Any]) -> bool:
    return event.get("type") == "status_changed" and not (event.get("data") or {}).get("from")


def _says(row: dict[str, Any], event: dict[str, Any]) -> bool:
    """Whether a change row's fields already say what a lifecycle event records."""
    data = event.get("data") or {}
    said = {item["field"]: item for item in row["fields"] if item["valued"]}
    kind = event.get("type")
    if kind == "status_changed":
        status = said.get("status")
        return status is not None and (status["from"], status["to"]) == (
            data.get("from"),
            data.get("to"),
        )
    if kind == "assignment_changed":
        pairs = (("assigneeId", "AssigneeId"), ("humanOwnerId", "HumanOwnerId"))
        moved = [
            (field, data.get(f"from{suffix}"), data.get(f"to{suffix}"))
            for field, suffix in pairs
            if data.get(f"from{suffix}") != data.get(f"to{suffix}")
        ]
        return bool(moved) and all(
            field in said and (said[field]["from"], said[field]["to"]) == (old, new)
            for field, old, new in moved
        )
    return kind == "blocker_changed" and "blockedByTaskIds" in said
