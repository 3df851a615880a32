"""Web pages: the activity stream. Work-log entries and hand-in decisions, newest first, filtered
by kind and by who acted, grouped by day in the reader's time zone, fifty to a page; the first
page refreshes live."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any
from urllib.parse import urlencode
from zoneinfo import ZoneInfo

from starlette.responses import Response
from starlette.routing import BaseRoute

from crewboard.contract.review.present_activity import activity_read_view
from crewboard.errors import ValidationFailed
from crewboard.services.review import activity_page as activity
from crewboard.web.context import Page, project_routes
from crewboard.web.pages.board.task_history import field_label
from crewboard.web.pages.board.week import remembered_zone

PAGE_SIZE = 50
# The kinds of the filter, as the service names them, in the words the page shows.
KIND_LABELS = {
    "tasks": "Tasks created, changed, deleted",
    "notes": "Comments, notes and outputs",
    "questions": "Questions and answers",
    "hand_ins": "Hand-ins and decisions",
    "proposals": "Proposals",
    "messages": "Messages",
    "project": "Project state and team",
}
FILTERS = ("kind", "who")


def _heading(day: date, today: date) -> str:
    if day == today:
        return "Today"
    if day == today - timedelta(days=1):
        return "Yesterday"
    return f"{day:%A} {day.day} {day:%B}" + (f" {day.year}" if day.year != today.year else "")


def by_day(entries: list[dict[str, Any]], zone: ZoneInfo, now: datetime) -> list[dict[str, Any]]:
    """Entries (newest first) in one group per day of the reader's zone, each with its time."""
    today = now.astimezone(zone).date()
    groups: list[dict[str, Any]] = []
    for entry in entries:
        local = datetime.fromisoformat(entry["at"]).astimezone(zone)
        if not groups or groups[-1]["date"] != local.date():
            heading = _heading(local.date(), today)
            groups.append({"date": local.date(), "heading": heading, "entries": []})
        groups[-1]["entries"].append(
            {**entry, "summary": worded(entry), "time": local.strftime("%H:%M")}
        )
    return groups


def worded(entry: dict[str, Any]) -> str:
    """The entry's summary with a task change's fields named by their labels ("due date",
    not `dueDate`): the service ends that summary with the wire names, for agents."""
    summary, changed = str(entry["summary"]), entry.get("changed") or []
    tail = ": " + ", ".join(changed)
    if not changed or not summary.endswith(tail):
        return summary
    return summary[: -len(tail)] + ": " + ", ".join(field_label(f).lower() for f in changed)


def _refusal(refused: ValidationFailed, asked: dict[str, str]) -> str:
    """A filter the page did not offer (an edited or stale link), in the page's words."""
    field = refused.details.get("field")
    if field == "kind":
        return (
            f"Kind: “{asked['kind']}” is not a kind of activity; choose one of "
            f"{', '.join(KIND_LABELS.values())}. Showing every kind."
        )
    if field == "who":
        return (
            f"Person or agent: “{asked['who']}” is not on this project; choose someone from "
            "the list. Showing everyone."
        )
    return "Older: this link to older entries is not one this page made. Showing the newest."


def activity_page(page: Page) -> Response:
    """The newest entries (or those before `before`), filtered by `kind` and `who`."""
    asked = {name: page.param(name).strip() for name in (*FILTERS, "before")}
    try:
        found = _read(page, **asked)
        error = None
    except ValidationFailed as refused:
        # An unknown filter value: say so and show the newest entries of everything instead.
        error, asked = _refusal(refused, asked), dict.fromkeys(asked, "")
        found = _read(page, **asked)
    zone_name = remembered_zone(page)
    chosen = {name: asked[name] for name in FILTERS if asked[name]}
    here = page.path("activity")
    older = found["older"] and f"{here}?{urlencode({**chosen, 'before': found['older']})}"
    return page.render(
        "activity.html",
        status_code=400 if error else 200,
        title="Activity",
        error=error,
        groups=by_day(found["entries"], ZoneInfo(zone_name), datetime.fromisoformat(found["now"])),
        count=len(found["entries"]),
        zone=zone_name,
        kinds=KIND_LABELS,
        people=found["people"],
        agents=found["agents"],
        chosen=chosen,
        first_page=not asked["before"],
        newest=f"{here}?{urlencode(chosen)}" if chosen else here,
        older=older,
    )


def _read(page: Page, *, kind: str, who: str, before: str) -> dict[str, Any]:
    return activity_read_view(
        activity.read_activity(
            page.db,
            page.actor,
            project=page.project_key,
            kind=kind or None,
            who=who or None,
            before=before or None,
            limit=PAGE_SIZE,
        )
    )


ROUTES: list[BaseRoute] = [
    *project_routes("activity", get=activity_page),
]
