"""Web pages: a project's webhooks (settings → Webhooks) and one webhook with its delivery log.

Only the project's admins keep webhooks (the services refuse anyone else), so the list page
tells others so in a sentence instead of calling them. A new or rotated secret is rendered in
the answer to the form that made it, never redirected to, so it is never in a URL or a cookie.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from starlette.responses import Response
from starlette.routing import BaseRoute

from crewboard.domain.identity.access import Role
from crewboard.domain.validation import parse_whole
from crewboard.domain.webhooks import (
    DELIVERABLE,
    SIGNATURE_HEADER,
    TOLERANCE,
    Delivery,
    DeliveryState,
    Webhook,
    WebhookMade,
)
from crewboard.errors import ValidationFailed
from crewboard.services.webhooks import deliveries, subscriptions
from crewboard.web.context import Page, project_routes

HERE = "settings/webhooks"
PAGE_SIZE = 50
ALL = "*"


def _is_admin(page_: Page) -> bool:
    assert page_.project is not None  # noqa: S101 - a project route
    return page_.project.get("viewerRole") == str(Role.ADMIN)


def _typed_patterns(text: str) -> list[str]:
    """Exact event types typed in the free field, split on commas, spaces or lines."""
    return text.replace(",", " ").split()


def _patterns(page_: Page) -> list[str]:
    """The patterns the form chose: the ticked families (or everything) and the typed types."""
    return list(dict.fromkeys([*page_.fields("events"), *_typed_patterns(page_.field("exact"))]))


def _event_choices(events: tuple[str, ...] = ()) -> dict[str, Any]:
    """The form's event fields filled from a webhook's patterns (empty for a new one)."""
    families = [f"{name}.*" for name in sorted(DELIVERABLE)]
    return {
        "families": families,
        "chosen": set(events),
        "exact": " ".join(p for p in events if p != ALL and p not in families),
    }


def _webhook(page_: Page) -> Webhook:
    """The webhook the path names, when it is this project's.

    Raises:
        NotFound, PermissionDenied: as `subscriptions.get_webhook`, or it is another project's.
    """
    assert page_.project is not None  # noqa: S101 - a project route
    webhook_id = page_.request.path_params["webhook_id"]
    webhook = subscriptions.get_webhook(page_.db, page_.actor, webhook_id)
    if webhook.project_id != page_.project["id"]:
        raise subscriptions.webhook_not_found(webhook_id)
    return webhook


def _last(page_: Page, webhook: Webhook) -> Delivery | None:
    """The webhook's newest log entry (one short read each; a project has at most 20)."""
    found = deliveries.list_webhook_deliveries(page_.db, page_.actor, webhook.id, limit=1)
    return found.deliveries[0] if found.deliveries else None


def webhooks_page(page_: Page) -> Response:
    """The project's webhooks and a form for a new one (admins); a sentence for others."""
    rows: list[tuple[Webhook, Delivery | None]] = []
    if _is_admin(page_):
        listed = subscriptions.list_webhooks(page_.db, page_.actor, page_.project_key)
        rows = [(webhook, _last(page_, webhook)) for webhook in listed]
    return page_.render(
        "settings_webhooks.html",
        title=f"{page_.project_key} webhooks",
        is_admin=_is_admin(page_),
        rows=rows,
        at=page_.path(HERE),
        **_event_choices(),
    )


def _secret_page(page_: Page, made: WebhookMade, what: str) -> Response:
    # The templates name their own path `at`: base.html sets `here` to the request's path,
    # which for this POST's answer is the form's, not the webhook's.
    return page_.render(
        "settings_webhook_secret.html",
        title=f"Webhook {what}",
        what=what,
        webhook=made.webhook,
        secret=made.secret,
        header=SIGNATURE_HEADER,
        tolerance_minutes=TOLERANCE // 60,
        at=page_.path(f"{HERE}/{made.webhook.id}"),
    )


def create_webhook(page_: Page) -> Response:
    """Make a webhook and show its secret once."""
    made = subscriptions.create_webhook(
        page_.db,
        page_.actor,
        page_.project_key,
        url=page_.field("url").strip(),
        events=_patterns(page_),
        description=page_.field("description").strip() or None,
    )
    return _secret_page(page_, made, "created")


def _state_filter(page_: Page) -> str | None:
    """The log's state filter from the address ('' or absent: every state)."""
    return page_.param("state").strip() or None


def webhook_page(page_: Page) -> Response:
    """One webhook: its settings form, its state and actions, and its log (50 a page)."""
    webhook = _webhook(page_)
    state = _state_filter(page_)
    raw = page_.param("offset").strip()
    offset = parse_whole("offset", raw) if raw else 0
    found = deliveries.list_webhook_deliveries(
        page_.db, page_.actor, webhook.id, state=state, limit=PAGE_SIZE, offset=offset
    )
    here = page_.path(f"{HERE}/{webhook.id}")
    kept = {"state": state} if state else {}
    more = offset + PAGE_SIZE < found.total
    return page_.render(
        "settings_webhook.html",
        title=f"Webhook {webhook.url}"[:120],
        webhook=webhook,
        deliveries=found.deliveries,
        total=found.total,
        state=state or "",
        states=[s.value for s in DeliveryState],
        at=here,
        back=here + (f"?{urlencode(kept)}" if kept else ""),
        earlier=f"{here}?{urlencode({**kept, 'offset': max(offset - PAGE_SIZE, 0)})}"
        if offset
        else None,
        later=f"{here}?{urlencode({**kept, 'offset': offset + PAGE_SIZE})}" if more else None,
        **_event_choices(webhook.events),
    )


def save_webhook(page_: Page) -> Response:
    """Save the webhook's URL, events and description."""
    webhook = _webhook(page_)
    subscriptions.update_webhook(
        page_.db,
        page_.actor,
        webhook.id,
        url=page_.field("url").strip(),
        events=_patterns(page_),
        description=page_.field("description").strip(),
    )
    return page_.redirect(page_.path(f"{HERE}/{webhook.id}"), notice="Webhook saved.")


def set_state(page_: Page) -> Response:
    """Pause the webhook, or resume it (its failures forgotten, its next event tried now)."""
    webhook = _webhook(page_)
    active = page_.field("active") == "1"
    subscriptions.update_webhook(page_.db, page_.actor, webhook.id, active=active)
    notice = (
        "Webhook resumed: its next event is sent now."
        if active
        else "Webhook paused: events wait for it until you resume it."
    )
    return page_.redirect(page_.path(f"{HERE}/{webhook.id}"), notice=notice)


def rotate_secret(page_: Page) -> Response:
    """A new secret for the webhook, shown once; the old one stops signing at once."""
    webhook = _webhook(page_)
    made = subscriptions.rotate_webhook_secret(page_.db, page_.actor, webhook.id)
    return _secret_page(page_, made, "secret rotated")


def ping(page_: Page) -> Response:
    """Queue a ping to the webhook; its outcome shows in the log."""
    webhook = _webhook(page_)
    deliveries.ping_webhook(page_.db, page_.actor, webhook.id)
    return page_.redirect(
        page_.path(f"{HERE}/{webhook.id}"), notice="Ping queued: its outcome shows in the log."
    )


def delete(page_: Page) -> Response:
    """Delete the webhook and its log, once the person ticked that they mean it.

    Raises:
        ValidationFailed: the confirmation box was left unticked.
    """
    webhook = _webhook(page_)
    if page_.field("confirm") != "1":
        raise ValidationFailed.field("confirm", "tick the box to delete the webhook.")
    subscriptions.delete_webhook(page_.db, page_.actor, webhook.id)
    return page_.redirect(page_.path(HERE), notice=f"Webhook to {webhook.url} deleted.")


def redeliver(page_: Page) -> Response:
    """Queue a logged delivery's event again, as a new entry of the log."""
    webhook = _webhook(page_)
    delivery_id = page_.request.path_params["delivery_id"]
    queued = deliveries.redeliver_webhook(page_.db, page_.actor, delivery_id)
    back = page_.field("next") or page_.path(f"{HERE}/{webhook.id}")
    return page_.redirect(back, notice=f"{queued.event_type} queued again as a new delivery.")


ROUTES: list[BaseRoute] = [
    *project_routes(HERE, get=webhooks_page, post=create_webhook),
    *project_routes(HERE + "/{webhook_id}", get=webhook_page, post=save_webhook),
    *project_routes(HERE + "/{webhook_id}/state", post=set_state),
    *project_routes(HERE + "/{webhook_id}/rotate", post=rotate_secret),
    *project_routes(HERE + "/{webhook_id}/ping", post=ping),
    *project_routes(HERE + "/{webhook_id}/delete", post=delete),
    *project_routes(HERE + "/{webhook_id}/deliveries/{delivery_id}/redeliver", post=redeliver),
]
