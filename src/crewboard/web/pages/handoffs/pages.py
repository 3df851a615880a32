"""Web pages: a project's shift handoffs of one day. Each handoff whole (bodies, the linked
tasks you may open, recipients, action items); your own handoff to write, or to change when
you wrote it already; action items to add, and their assignee and status to change.

The day is today in shift A's zone unless the page names one; a handoff's own day is taken in
the zone of the shift that hands over, which the form offers as A to B or B to A.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any
from urllib.parse import parse_qs, urlsplit

from starlette.responses import Response

from crewboard.contract.handoffs import present
from crewboard.domain.handoffs import BODY_LABELS, WIRE_BODIES, Bodies
from crewboard.services.handoffs import commands
from crewboard.web.context import Page, project_routes
from crewboard.web.forms import saved_or_form
from crewboard.web.zones import zone_label

STATUSES = ("open", "in_progress", "done", "cancelled")


def _workspace(page: Page) -> Any:
    assert page.project is not None  # noqa: S101 - a project route
    return page.project.get("workspaceId")


def day_page(
    page: Page,
    *,
    day_shown: str | None = None,
    typed: dict[str, Any] | None = None,
    status_code: int = 200,
) -> Response:
    """The day's handoffs; after a refused save, `typed` holds what was sent (`form` names
    which: "new" or a handoff's id) and that form comes back open with it."""
    shown = day_shown if day_shown is not None else page.param("date").strip()
    sheet = present.day_sheet(page.db, page.actor, project=page.project_key, day=shown or None)
    day = date.fromisoformat(sheet["date"])
    mine = [h for h in sheet["handoffs"] if h["author"]["userId"] == page.actor.user_id]
    zones = sheet["zones"]
    a, b = zone_label(zones["a"]), zone_label(zones["b"])
    shifts = [
        {"label": f"{a} hands over to {b}", "source": zones["a"], "handoffs": []},
        {"label": f"{b} hands over to {a}", "source": zones["b"], "handoffs": []},
    ]
    if zones["a"] == zones["b"]:  # one zone: a heading "UTC hands over to UTC" says nothing
        shifts = [{"label": f"Handoffs in {a}", "source": zones["a"], "handoffs": []}]
    other: list[dict[str, Any]] = []
    for item in sheet["handoffs"]:
        group = next((s for s in shifts if s["source"] == item["sourceTimeZone"]), None)
        (group["handoffs"] if group else other).append(item)
    return page.render(
        "handoffs.html",
        title=f"Handoffs {sheet['date']}",
        sheet=sheet,
        shifts=shifts,
        other=other,
        mine=mine,
        can_write=sheet["role"] in ("write", "admin"),
        body_fields=BODY_LABELS,
        wire=WIRE_BODIES,
        statuses=STATUSES,
        earlier=(day - timedelta(days=1)).isoformat(),
        later=(day + timedelta(days=1)).isoformat(),
        typed=typed or {},
        status_code=status_code,
    )


def _back(page: Page, day: str) -> str:
    return page.path(f"handoffs?date={day}") if day else page.path("handoffs")


def _typed(page: Page, form: str) -> dict[str, Any]:
    """What a handoff form sent, to show it again when the save is refused."""
    typed: dict[str, Any] = {name: page.field(name) for name, _ in BODY_LABELS}
    typed.update(
        form=form,
        shift=page.field("shift"),
        linked_tasks=page.field("linked_tasks"),
        recipients=page.fields("recipients"),
        notify=page.has_field("notify"),
        email=page.has_field("email"),
    )
    return typed


def _again(page: Page, form: str, day: str) -> Any:
    """The day's page again with the refused form open and what was typed in it."""

    def render(*, status_code: int, conflict: bool) -> Response:
        del conflict  # the flash says whose change came first; the text is kept either way
        return day_page(page, day_shown=day, typed=_typed(page, form), status_code=status_code)

    return render


def write_handoff(page: Page) -> Response:
    """Your handoff of the day: the shift chosen says which zone is handing over."""
    day = page.field("date").strip()
    made = saved_or_form(page, lambda: _write(page), "the handoff", _again(page, "new", day))
    if isinstance(made, Response):
        return made
    return page.redirect(_back(page, made["handoff"]["date"]), notice=_told(made["notifications"]))


def _write(page: Page) -> dict[str, Any]:
    zones = present.day_sheet(page.db, page.actor, project=page.project_key, day=None)["zones"]
    reverse = page.field("shift") == "b"
    source, destination = (zones["b"], zones["a"]) if reverse else (zones["a"], zones["b"])
    made: dict[str, Any] = commands.create_handoff(
        page.db,
        page.actor,
        project=page.project_key,
        workspace_id=_workspace(page),
        bodies=Bodies(*(page.field(name) for name, _ in BODY_LABELS)),
        day=page.field("date").strip() or None,
        source_time_zone=source,
        destination_time_zone=destination,
        linked_task_ids=_refs(page.field("linked_tasks")),
        recipients=page.fields("recipients"),
        send_notification=page.has_field("notify"),
        send_email=page.has_field("email"),
        answer=present.made_view(page.actor),
    ).body
    return made


def _told(told: dict[str, Any]) -> str:
    """The notice after a save: who was told, and why no email went out when none did."""
    parts = ["Handoff saved."]
    if told.get("inApp"):
        parts.append(f"{told['inApp']} notified in the app.")
    if told.get("emailsQueued"):
        parts.append(f"{told['emailsQueued']} emailed.")
    why = told.get("emailNotSent") or told.get("note")
    if why and "did not ask for one" not in why:
        parts.append(why[0].upper() + why[1:])
    return " ".join(parts)


def _day_sent(page: Page) -> str:
    """The day of the page a form was sent from (its `next` names it)."""
    query = urlsplit(page.field("next")).query
    return (parse_qs(query).get("date") or [""])[0]


def _refs(text: str) -> list[str]:
    return [part for part in text.replace(",", " ").split() if part]


def change_handoff(page: Page) -> Response:
    ref = str(page.request.path_params["handoff"])
    changes: dict[str, Any] = {name: page.field(name) for name, _ in BODY_LABELS
                               if page.has_field(name)}  # fmt: skip
    if page.has_field("linked_tasks"):
        changes["linked_task_ids"] = _refs(page.field("linked_tasks"))
    if page.has_field("recipients_sent"):
        changes["recipients"] = page.fields("recipients")
    read = saved_or_form(
        page,
        lambda: commands.update_handoff(
            page.db,
            page.actor,
            handoff_id=ref,
            workspace_id=_workspace(page),
            expected_updated_at=page.field("expected_updated_at"),
            changes=changes,
        ),
        "the handoff",
        _again(page, ref, _day_sent(page)),
    )
    if isinstance(read, Response):
        return read
    return page.redirect(_back(page, read.handoff.day.isoformat()), notice="Handoff changed.")


def add_item(page: Page) -> Response:
    ref = str(page.request.path_params["handoff"])
    made = commands.create_handoff_action_item(
        page.db,
        page.actor,
        handoff_id=ref,
        workspace_id=_workspace(page),
        text=page.field("text"),
        assignee=page.field("assignee") or None,
        due_date=page.field("due_date").strip() or None,
        answer=present.item_answer,
    ).body["actionItem"]
    return page.redirect(_back(page, made["date"]), notice="Action item added.")


def change_item(page: Page) -> Response:
    ref = str(page.request.path_params["item"])
    read = commands.update_handoff_action_item(
        page.db,
        page.actor,
        item_id=ref,
        workspace_id=_workspace(page),
        expected_updated_at=page.field("expected_updated_at"),
        changes={
            "status": page.field("status"),
            "assignee": page.field("assignee") or None,
            "due_date": page.field("due_date").strip() or None,
        },
    )
    return page.redirect(_back(page, read.item.day.isoformat()), notice="Action item saved.")


ROUTES = [
    *project_routes("handoffs", get=day_page, post=write_handoff),
    *project_routes("handoffs/{handoff}", post=change_handoff),
    *project_routes("handoffs/{handoff}/items", post=add_item),
    *project_routes("handoff-items/{item}", post=change_item),
]
