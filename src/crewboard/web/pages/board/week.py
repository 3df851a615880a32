"""Web pages: the week. Monday to Sunday in a chosen time zone, with due tasks and work per day."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any

from starlette.responses import Response
from starlette.routing import BaseRoute

from crewboard.errors import LimitExceeded, ValidationFailed
from crewboard.services.board import week
from crewboard.services.projects import team
from crewboard.web.context import Page, project_routes
from crewboard.web.pages.board.tasks import STATUS_LABELS
from crewboard.web.pages.projects.team import team_names

ZONES = (
    "UTC",
    "Europe/London",
    "Europe/Berlin",
    "Europe/Helsinki",
    "America/New_York",
    "America/Chicago",
    "America/Denver",
    "America/Los_Angeles",
    "America/Sao_Paulo",
    "Asia/Kolkata",
    "Asia/Shanghai",
    "Asia/Tokyo",
    "Australia/Sydney",
    "Pacific/Auckland",
)


def _week_param(page: Page) -> date | None:
    """Raises: ValidationFailed when `week` is not a YYYY-MM-DD date."""
    raw = page.param("week").strip()
    if not raw:
        return None
    try:
        return date.fromisoformat(raw)
    except ValueError:
        raise ValidationFailed.field(
            "week", f"must be a date like 2026-03-02; got {raw!r}."
        ) from None


def duration(minutes: int) -> str:
    """Minutes as people read them: 45 min, 3 h, 2 h 15 min."""
    hours, rest = divmod(int(minutes), 60)
    if not hours:
        return f"{rest} min"
    return f"{hours} h {rest} min" if rest else f"{hours} h"


def _clock(moment: str) -> str:
    return datetime.fromisoformat(moment).strftime("%H:%M")


def _days(answer: dict[str, Any], names: dict[str, str]) -> list[dict[str, Any]]:
    days = []
    for day in answer["days"]:
        pieces = [
            {
                **piece,
                "time": f"{_clock(piece['from'])}–{_clock(piece['to'])}",
                "length": duration(piece["minutes"]),
                "who": names.get(piece["assigneeId"] or "", "unassigned"),
            }
            for piece in day["inProgress"]
        ]
        days.append(
            {
                **day,
                "label": date.fromisoformat(day["date"]).strftime("%A %d %B"),
                "pieces": pieces,
                "people": duration(day["minutes"]["people"]),
                "ai": duration(day["minutes"]["ai"]),
            }
        )
    return days


def week_page(page: Page) -> Response:
    """Monday to Sunday in a chosen time zone: due tasks and in-progress stretches per day."""
    zone = page.param("tz").strip() or "UTC"
    try:
        answer = week.get_week(
            page.db, page.actor, week=_week_param(page), time_zone=zone, project=page.project_key
        )
    except (ValidationFailed, LimitExceeded) as refused:
        # A mistyped zone or date: back to this week in UTC, saying what was wrong.
        return page.redirect(page.path("week"), error=refused.message)
    names = team_names(team.get_team_page(page.db, page.actor, project=page.project_key))
    monday = date.fromisoformat(answer["week"]["from"])
    return page.render(
        "week.html",
        title="Week",
        labels=STATUS_LABELS,
        answer=answer,
        days=_days(answer, names),
        zone=zone,
        zones=ZONES,
        previous=(monday - timedelta(days=7)).isoformat(),
        following=(monday + timedelta(days=7)).isoformat(),
        totals={k: duration(v) for k, v in answer["minutes"].items()},
        workers=[
            {
                **a,
                "who": names.get(a["assigneeId"], a["assigneeId"]),
                "length": duration(a["minutes"]),
            }
            for a in answer["assignees"]
        ],
    )


ROUTES: list[BaseRoute] = [
    *project_routes("week", get=week_page),
]
