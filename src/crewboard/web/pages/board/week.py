"""Web pages: the week. Monday to Sunday in a chosen time zone, with due tasks and work per day,
today and overdue tasks marked; the zone chosen is remembered for the next visit (and the
activity page's day headings)."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any
from urllib.parse import quote, unquote

from starlette.responses import Response
from starlette.routing import BaseRoute

from crewboard.contract.board.present_week import week_view
from crewboard.contract.projects import present
from crewboard.domain.board.week import load_zone
from crewboard.errors import LimitExceeded, ValidationFailed
from crewboard.services.board import week
from crewboard.web.context import Page, project_routes, secure
from crewboard.web.pages.projects.team import team_names
from crewboard.web.wording import STATUS_LABELS, human_message

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


TZ_COOKIE = "crewboard_tz"
TZ_COOKIE_AGE = 365 * 24 * 60 * 60  # a year, in seconds
FINISHED = ("done", "approved")  # due and in one of these: not overdue
KINDS = {"ai": "AI", "human": "person"}


def zone_error(name: str) -> str | None:
    """What is wrong with a time zone name, in words; None when it is a known IANA zone."""
    try:
        load_zone(name)
    except (ValidationFailed, LimitExceeded) as refused:
        return human_message(refused)
    return None


def remembered_zone(page: Page) -> str:
    """The zone this browser last chose on the week page, else UTC (a stale or forged cookie
    is ignored)."""
    name = unquote(page.request.cookies.get(TZ_COOKIE, ""))
    return name if name and zone_error(name) is None else "UTC"


def remember_zone(response: Response, page: Page, zone: str) -> None:
    response.set_cookie(
        TZ_COOKIE,
        quote(zone, safe=""),
        max_age=TZ_COOKIE_AGE,
        path="/",
        samesite="lax",
        httponly=True,
        secure=secure(page.request),
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


def _due(task: dict[str, Any], today: date) -> dict[str, Any]:
    overdue = task["status"] not in FINISHED and date.fromisoformat(task["dueDate"]) < today
    return {**task, "label": STATUS_LABELS.get(task["status"], task["status"]), "overdue": overdue}


def _days(answer: dict[str, Any], names: dict[str, str], today: date) -> list[dict[str, Any]]:
    days = []
    for day in answer["days"]:
        pieces = [
            {
                **piece,
                "time": f"{_clock(piece['from'])}–{_clock(piece['to'])}",
                "length": duration(piece["minutes"]),
                "who": names.get(piece["assigneeId"] or "", "unassigned"),
                "kind": KINDS.get(piece["assigneeType"] or ""),
            }
            for piece in day["inProgress"]
        ]
        days.append(
            {
                **day,
                "label": date.fromisoformat(day["date"]).strftime("%A %d %B"),
                "today": day["date"] == today.isoformat(),
                "due": [_due(task, today) for task in day["due"]],
                "pieces": pieces,
                "people": duration(day["minutes"]["people"]),
                "ai": duration(day["minutes"]["ai"]),
            }
        )
    return days


def _choices(page: Page) -> tuple[str, date | None, dict[str, str]]:
    """The zone and week asked for, and what was wrong with either (by field), so a mistyped
    value shows the week in the remembered zone with the mistake named beside its field."""
    errors: dict[str, str] = {}
    zone = page.param("tz").strip()
    if zone and (problem := zone_error(zone)) is not None:
        errors["tz"] = problem
    try:
        week_of = _week_param(page)
    except ValidationFailed as refused:
        errors["week"], week_of = human_message(refused), None
    return (zone if zone and "tz" not in errors else remembered_zone(page)), week_of, errors


def week_page(page: Page) -> Response:
    """Monday to Sunday in a chosen time zone: due tasks and in-progress stretches per day.

    A zone chosen here is remembered in a cookie and used when the address names none.
    """
    zone, week_of, errors = _choices(page)
    answer = week_view(
        week.get_week(page.db, page.actor, week=week_of, time_zone=zone, project=page.project_key)
    )
    names = team_names(present.get_team_page(page.db, page.actor, project=page.project_key))
    monday = date.fromisoformat(answer["week"]["from"])
    today = datetime.fromisoformat(answer["now"]).date()
    response = page.render(
        "week.html",
        status_code=400 if errors else 200,
        title="Week",
        labels=STATUS_LABELS,
        answer=answer,
        days=_days(answer, names, today),
        monday=f"{monday.day} {monday:%B %Y}",
        zone=zone,
        zones=ZONES,
        errors=errors,
        typed={"tz": page.param("tz"), "week": page.param("week")},
        previous=(monday - timedelta(days=7)).isoformat(),
        following=(monday + timedelta(days=7)).isoformat(),
        totals={k: duration(v) for k, v in answer["minutes"].items()},
        workers=[
            {
                **a,
                "who": names.get(a["assigneeId"], a["assigneeId"]),
                "kind": KINDS.get(a["assigneeType"], a["assigneeType"]),
                "length": duration(a["minutes"]),
            }
            for a in answer["assignees"]
        ],
    )
    if page.param("tz").strip() and "tz" not in errors:
        remember_zone(response, page, zone)
    return response


ROUTES: list[BaseRoute] = [
    *project_routes("week", get=week_page),
]
