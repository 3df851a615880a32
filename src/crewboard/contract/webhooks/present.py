"""Webhooks in words: the camelCase views every door gives of a webhook and of a delivery.
A webhook's secret is never in a view; it is shown once, by create and rotate, beside it."""

from __future__ import annotations

from typing import Any

from crewboard.domain.webhooks import Delivery, Webhook, WebhookMade
from crewboard.services.views import iso


def webhook_view(webhook: Webhook) -> dict[str, Any]:
    return {
        "id": webhook.id,
        "projectId": webhook.project_id,
        "url": webhook.url,
        "description": webhook.description,
        "events": list(webhook.events),
        "state": webhook.state.value,
        "pausedReason": webhook.paused_reason,
        "pausedAt": iso(webhook.paused_at),
        "failingSince": iso(webhook.failing_since),
        "failedAttempts": webhook.attempts,
        "nextAttemptAt": iso(webhook.next_attempt_at),
        "lastEventId": webhook.cursor,
        "createdBy": webhook.created_by,
        "createdAt": iso(webhook.created_at),
        "updatedAt": iso(webhook.updated_at),
    }


LISTED_CHARS = 300  # of a URL, description or pause reason in a list: 20 webhooks fit whole


def webhook_row(webhook: Webhook) -> dict[str, Any]:
    """A webhook as a list shows it: long texts cut (named in `cut`; get_webhook has them)."""
    row = webhook_view(webhook)
    cut = [k for k in ("url", "description", "pausedReason") if len(row[k] or "") > LISTED_CHARS]
    for key in cut:
        row[key] = row[key][:LISTED_CHARS]
    if cut:
        row["cut"] = cut
    return row


def made_view(made: WebhookMade) -> dict[str, Any]:
    return {"webhook": webhook_view(made.webhook), "secret": made.secret}


def delivery_view(delivery: Delivery) -> dict[str, Any]:
    return {
        "id": delivery.id,
        "webhookId": delivery.webhook_id,
        "eventId": delivery.event_id,
        "eventType": delivery.event_type,
        "kind": delivery.kind.value,
        "state": delivery.state.value,
        "attempts": delivery.attempts,
        "responseStatus": delivery.response_status,
        "responseExcerpt": delivery.response_excerpt,
        "error": delivery.error,
        "durationMs": delivery.duration_ms,
        "createdAt": iso(delivery.created_at),
        "lastAttemptAt": iso(delivery.last_attempt_at),
        "nextAttemptAt": iso(delivery.next_attempt_at),
        "deliveredAt": iso(delivery.delivered_at),
    }
