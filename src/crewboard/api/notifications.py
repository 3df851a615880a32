"""REST for the caller's own notifications under /api/v1/notifications: the list (newest
first, paged, `unreadOnly`), marking read (named ids, or all), and the notification settings.

Notifications belong to a person, not to a project: these routes name none, and a personal
token reaches only its own person's notifications. Agent tokens get 403
HUMAN_IDENTITY_REQUIRED (the inbox service refuses them).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field
from starlette.requests import Request

from crewboard.api.common import Endpoint, parse_args, query_params, read_body, run_service
from crewboard.contract import args as a
from crewboard.services.notifications import inbox
from crewboard.services.paging import MAX_PAGE

N = "/api/v1/notifications"
NotificationId = Annotated[str, Field(min_length=1, max_length=64)]


class ListQuery(a.Args):
    unread_only: bool = Field(default=False, description="Only the unread ones.")
    limit: int = Field(default=50, ge=1, le=MAX_PAGE)
    offset: a.Offset = 0


class ReadBody(a.Args):
    ids: list[NotificationId] | None = Field(
        default=None,
        max_length=inbox.MAX_MARK,
        description="The notifications to mark read (the caller's; others are left alone).",
    )
    all: bool = Field(default=False, description="Mark every unread notification read.")


class SettingsBody(a.Args):
    in_app: bool | None = Field(default=None, description="Show notifications in the app.")
    email: bool | None = Field(
        default=None, description="Send notifications by email (when the server has SMTP)."
    )


class SettingsQuery(a.Args):
    """No query parameters."""


async def list_notifications(request: Request) -> dict[str, Any]:
    args = parse_args(ListQuery, query_params(request, ListQuery), strict=False)
    return await run_service(
        request,
        lambda db, actor: inbox.list_notifications(
            db, actor, unread_only=args.unread_only, limit=args.limit, offset=args.offset
        ),
    )


async def mark_read(request: Request) -> dict[str, Any]:
    args = parse_args(ReadBody, await read_body(request))
    ids = tuple(dict.fromkeys(args.ids or ()))
    return await run_service(
        request, lambda db, actor: inbox.mark_read(db, actor, ids=ids, all_unread=args.all)
    )


async def get_settings(request: Request) -> dict[str, Any]:
    query_params(request, SettingsQuery)
    return await run_service(request, inbox.get_settings)


async def put_settings(request: Request) -> dict[str, Any]:
    args = parse_args(SettingsBody, await read_body(request))
    return await run_service(
        request,
        lambda db, actor: inbox.set_settings(db, actor, in_app=args.in_app, email=args.email),
    )


ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint(
        N,
        "GET",
        list_notifications,
        "Your notifications, newest first, paged (unreadOnly), with the total and unread count "
        "(a person only)",
        query=ListQuery,
    ),
    Endpoint(
        f"{N}/read",
        "POST",
        mark_read,
        "Mark notifications read: ids (at most 200) or all: true; answers how many changed and "
        "how many are still unread (a person only)",
        ReadBody,
    ),
    Endpoint(
        f"{N}/settings",
        "GET",
        get_settings,
        "Your notification settings: inApp, email, and emailAvailable (false: this server has "
        "no SMTP) (a person only)",
    ),
    Endpoint(
        f"{N}/settings",
        "PUT",
        put_settings,
        "Change your notification settings: inApp, email (a field left out stays as it is; "
        "a person only)",
        SettingsBody,
    ),
)
