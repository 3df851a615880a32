"""A task's history in words: "Priority: medium → high", "Assignee: Unassigned → Coder".

The rows come from services/screens/task_history.py (each change with its fields from → to,
and the lifecycle facts those fields do not say); this module only words them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from crewboard.web.render import hour
from crewboard.web.wording import label

# Labels that read better than the field's de-camelled name.
FIELD_LABELS = {
    "assigneeId": "Assignee",
    "assigneeType": "Kind of assignee",
    "humanOwnerId": "Owner",
    "dueDate": "Due date",
    "startDate": "Start date",
    "parentTaskId": "Parent task",
    "blockedByTaskIds": "Blocked by",
    "storyPoints": "Story points",
    "contextRefs": "Context",
    "contextItemIds": "Context records",
    "externalReferenceIds": "External references",
    "outputDestination": "Output destination",
    "boardOrder": "Place on the board",
    "relationships": "Relationships",
}
NOBODY = "Unassigned"
NONE = "none"


def field_label(field: str) -> str:
    return FIELD_LABELS.get(field) or label(field)


def history_rows(
    view: Mapping[str, Any], statuses: Mapping[str, str], types: Mapping[str, str]
) -> list[dict[str, Any]]:
    """The task page's history rows, newest first: {at, actor, lines}."""
    words = _Words(view.get("names") or {}, statuses, types)
    rows = []
    for row in view.get("history") or []:
        lines = [words.field(item) for item in row["fields"] if _shown(item, row["fields"])]
        lines += [line for event in row["lifecycle"] if (line := words.lifecycle(event))]
        if row.get("claim"):
            lines.append(claim_line(row["claim"]))
        if lines:
            rows.append({"at": row["at"], "actor": row["actor"], "lines": lines})
    return rows


def claim_line(claim: Mapping[str, Any]) -> str:
    """A claim event as the history says it."""
    holder = claim.get("holder") or "its holder"
    kind = claim.get("event")
    if kind == "task.claimed":
        return f"Claimed until {hour(claim.get('until'))} (claim {claim.get('fence')})"
    if kind == "task.claim_released":
        return f"Let go of claim {claim.get('fence')}"
    if kind == "task.claim_lapsed":
        return f"Claim of {holder} lapsed: it was not renewed in time"
    if kind == "task.claim_broken":
        return f"Broke the claim of {holder}; the task is free again"
    return "Claim changed"


def _shown(item: Mapping[str, Any], fields: list[Mapping[str, Any]]) -> bool:
    """The kind of assignee follows the assignee: said once, by the assignee line."""
    if item["field"] == "assigneeType":
        return not any(other["field"] == "assigneeId" for other in fields)
    return True


class _Words:
    def __init__(
        self, names: Mapping[str, str], statuses: Mapping[str, str], types: Mapping[str, str]
    ) -> None:
        self.names = names
        self.statuses = statuses
        self.types = types

    def field(self, item: Mapping[str, Any]) -> str:
        name = str(item["field"])
        if not item["valued"]:
            return f"Changed {field_label(name).lower()}"
        return f"{field_label(name)}: {self.value(name, item['from'])} → {self.value(name, item['to'])}"

    def value(self, field: str, value: Any) -> str:
        if field in ("assigneeId", "humanOwnerId"):
            return self.who(value, NOBODY if field == "assigneeId" else "nobody")
        if value is None or value in ("", []):
            return NONE
        named = {
            "status": self.statuses,
            "type": self.types,
            "assigneeType": {"ai": "AI", "human": "human"},
        }.get(field)
        if named is not None:
            return named.get(str(value), str(value))
        if field == "title":
            return f"“{value}”"
        return ", ".join(str(item) for item in value) if isinstance(value, list) else str(value)

    def who(self, value: Any, empty: str) -> str:
        if not value:
            return empty
        return self.names.get(str(value), "someone no longer on the team")

    def lifecycle(self, event: Mapping[str, Any]) -> str | None:
        data = event.get("data") or {}
        kind = event.get("type")
        if kind == "status_changed":
            to = self.statuses.get(str(data.get("to")), str(data.get("to")))
            if not data.get("from"):
                return f"Created in {to}"
            return f"Status: {self.statuses.get(str(data['from']), str(data['from']))} → {to}"
        if kind == "assignment_changed":
            return self._assignment(data)
        if kind == "blocker_changed":
            return f"Open blockers: {data.get('from')} → {data.get('to')}"
        return str(kind or "change").replace("_", " ").capitalize()

    def _assignment(self, data: Mapping[str, Any]) -> str | None:
        lines = []
        if data.get("fromAssigneeId") != data.get("toAssigneeId"):
            lines.append(
                f"Assignee: {self.who(data.get('fromAssigneeId'), NOBODY)} → "
                f"{self.who(data.get('toAssigneeId'), NOBODY)}"
            )
        if data.get("fromHumanOwnerId") != data.get("toHumanOwnerId"):
            lines.append(
                f"Owner: {self.who(data.get('fromHumanOwnerId'), 'nobody')} → "
                f"{self.who(data.get('toHumanOwnerId'), 'nobody')}"
            )
        return "; ".join(lines) or None
