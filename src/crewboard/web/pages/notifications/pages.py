"""Web pages: the person's notifications (/notifications) and their notification settings
(/settings/notifications), and the small JSON count the header's bell refreshes from.

Notifications belong to the person, not to a project, so these pages live outside /p/{KEY}/.
A notification is marked read when it is opened: an unread row's title is a button in a POST
form (CSRF like every form) that marks that one read and goes on to its link; read rows are
plain links. "Mark all read" is a form of its own. Visiting the list marks nothing.
"""

from __future__ import annotations

from typing import Any

from anyio import to_thread
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from crewboard.domain.notifications import is_app_link
from crewboard.errors import CrewboardError, ValidationFailed
from crewboard.http.cookies import SESSION_COOKIE
from crewboard.services.identity.web_sessions import session_of
from crewboard.services.notifications import inbox
from crewboard.storage.database import Database
from crewboard.web.context import Page, action, page

LIST = "/notifications"
SETTINGS = "/settings/notifications"
PAGE_SIZE = 30
CHECKED = ("on", "1", "true")


def _offset(page_: Page) -> int:
    raw = page_.param("offset", "0")
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 9):
        raise ValidationFailed.field("offset", "must be a whole number, 0 or more.")
    return int(raw)


def notifications_page(page_: Page) -> Response:
    """The person's notifications, newest first, PAGE_SIZE at a time; unread ones marked."""
    unread_only = page_.param("unread") == "1"
    offset = _offset(page_)
    found = inbox.list_notifications(
        page_.db, page_.actor, unread_only=unread_only, limit=PAGE_SIZE, offset=offset
    )
    rows: list[dict[str, Any]] = [
        {**n, "link": n["link"] if is_app_link(n["link"]) else "/"} for n in found["notifications"]
    ]
    query = "unread=1&" if unread_only else ""
    previous = max(offset - PAGE_SIZE, 0) if offset > 0 else None
    return page_.render(
        "notifications.html",
        title="Notifications",
        notifications=rows,
        total=found["total"],
        unread=found["unread"],
        unread_only=unread_only,
        offset=offset,
        newer=f"{LIST}?{query}offset={previous}" if previous is not None else None,
        older=f"{LIST}?{query}offset={found['nextOffset']}" if found["nextOffset"] else None,
    )


def open_notification(page_: Page) -> Response:
    """Mark one notification read and go on to its link."""
    notification_id = page_.request.path_params["notification_id"]
    inbox.mark_read(page_.db, page_.actor, ids=[notification_id])
    link = page_.field("link")
    return page_.redirect(link if is_app_link(link) else LIST)


def read_all(page_: Page) -> Response:
    """Mark every unread notification of the person read."""
    done = inbox.mark_read(page_.db, page_.actor, all_unread=True)
    marked = done["marked"]
    text = "No unread notifications." if not marked else f"Marked {marked} read."
    return page_.redirect(LIST, notice=text)


def settings_page(page_: Page) -> Response:
    return page_.render(
        "settings_notifications.html",
        title="Notification settings",
        notification_settings=inbox.get_settings(page_.db, page_.actor),
    )


def _checkbox(page_: Page, name: str, label: str) -> bool:
    """A checkbox: ticked, or absent; any other value is refused, naming the field."""
    value = page_.field(name)
    if page_.has_field(name) and value not in CHECKED:
        raise ValidationFailed(f"{label}: tick the box or leave it empty.", {"field": name})
    return page_.has_field(name)


def save_settings(page_: Page) -> Response:
    """Save the two checkboxes. The email box is only on the form (with `email_shown`) when
    the server can send email; without it the email setting is left as it is, and an email
    box sent anyway is refused, naming the field."""
    in_app = _checkbox(page_, "in_app", "In-app notifications")
    email: bool | None = None
    if page_.has_field("email_shown"):
        email = _checkbox(page_, "email", "Email notifications")
    elif page_.has_field("email"):
        raise ValidationFailed(
            "Email notifications: this server sends no email (no SMTP server is configured).",
            {"field": "email"},
        )
    inbox.set_settings(page_.db, page_.actor, in_app=in_app, email=email)
    return page_.redirect(SETTINGS, notice="Notification settings saved.")


def _count(db: Database, cookie: str | None) -> int | None:
    signed_in = session_of(db, cookie)
    if signed_in is None:
        return None
    try:
        return inbox.unread_count(db, signed_in.actor)
    except CrewboardError:
        return 0


async def count(request: Request) -> Response:
    """{"unread": n} for the signed-in session: what the header's bell shows (app.js fetches
    it when a notification event arrives). 401 without a session."""
    db: Database = request.app.state.db
    unread = await to_thread.run_sync(_count, db, request.cookies.get(SESSION_COOKIE))
    headers = {"cache-control": "no-store"}
    if unread is None:
        return JSONResponse({"error": "Sign in first."}, status_code=401, headers=headers)
    return JSONResponse({"unread": unread}, headers=headers)


ROUTES: list[BaseRoute] = [
    Route(LIST, page(notifications_page), methods=["GET"]),
    Route(f"{LIST}/count", count, methods=["GET"]),
    Route(f"{LIST}/read-all", action(read_all), methods=["POST"]),
    Route(f"{LIST}/{{notification_id}}/open", action(open_notification), methods=["POST"]),
    Route(SETTINGS, page(settings_page), methods=["GET"]),
    Route(SETTINGS, action(save_settings), methods=["POST"]),
]
