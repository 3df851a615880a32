"""Webhook tools: a project's admins send its events to other systems over HTTP (signed, in
order, retried for a day), and read and redeliver from the delivery log."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from crewboard.contract.args import Args, Paging, ProjectRef, WorkspaceId
from crewboard.contract.operation import Area, Call, Cli, Rest
from crewboard.contract.reply import Reply, paged_reply
from crewboard.contract.webhooks.present import delivery_view, made_view, webhook_row, webhook_view
from crewboard.domain.identity.access import Scope, Toolset
from crewboard.domain.webhooks import MAX_DESCRIPTION, MAX_PATTERNS, MAX_URL
from crewboard.services.webhooks import deliveries, subscriptions

WebhookRef = Field(min_length=1, max_length=64, description="The webhook's id (whk_…).")
Url = Field(min_length=1, max_length=MAX_URL, description="Where deliveries go: an http(s) URL.")
Pattern = Annotated[str, Field(min_length=1, max_length=100)]
Patterns = Field(
    min_length=1, max_length=MAX_PATTERNS,
    description="Event types to send: '*', a family such as 'task.*', or a type such as "
    "'task.updated'.",
)  # fmt: skip
Note = Field(default=None, max_length=MAX_DESCRIPTION)
SIGNING = (
    "Each delivery is a POST signed in the Crewboard-Signature header (t=<unix seconds>,"
    "v1=<hex HMAC-SHA256 of '<t>.<body>' with the secret>)."
)


class CreateWebhook(Args):
    workspace_id: WorkspaceId = None
    project_id: ProjectRef
    url: str = Url
    events: list[Pattern] = Patterns
    description: str | None = Note
    active: bool = Field(default=True, description="false: made paused.")


class ProjectWebhooks(Args):
    workspace_id: WorkspaceId = None
    project_id: ProjectRef


class WebhookAction(Args):
    workspace_id: WorkspaceId = None
    webhook_id: str = WebhookRef


class DeleteWebhook(Args):
    # No workspaceId: a DELETE takes no query string, and the webhook names its project.
    webhook_id: str = WebhookRef


class UpdateWebhook(Args):
    workspace_id: WorkspaceId = None
    webhook_id: str = WebhookRef
    url: str | None = Field(default=None, min_length=1, max_length=MAX_URL)
    events: list[Pattern] | None = Field(default=None, min_length=1, max_length=MAX_PATTERNS)
    description: str | None = Note
    active: bool | None = Field(
        default=None, description="true resumes a paused webhook (retrying now); false pauses."
    )


class ListDeliveries(Paging):
    workspace_id: WorkspaceId = None
    webhook_id: str = WebhookRef
    state: Literal["pending", "delivered", "retrying", "failed"] | None = None


class Redeliver(Args):
    workspace_id: WorkspaceId = None
    delivery_id: str = Field(min_length=1, max_length=64, description="A delivery's id (whd_…).")


def create_webhook(call: Call, args: CreateWebhook) -> Reply:
    made = subscriptions.create_webhook(
        call.db, call.actor, args.project_id, url=args.url, events=args.events,
        description=args.description, active=args.active, workspace_id=args.workspace_ref(),
    )  # fmt: skip
    return Reply(made_view(made), f"The secret is shown this once: keep it. {SIGNING}")


def list_webhooks(call: Call, args: ProjectWebhooks) -> Reply:
    found = subscriptions.list_webhooks(
        call.db, call.actor, args.project_id, workspace_id=args.workspace_ref()
    )
    rows = [webhook_row(w) for w in found]
    note = (
        "Long texts are cut (`cut`); get_webhook shows them whole."
        if any("cut" in r for r in rows)
        else None
    )
    return Reply({"webhooks": rows}, note)


def get_webhook(call: Call, args: WebhookAction) -> Reply:
    return Reply(
        {"webhook": webhook_view(subscriptions.get_webhook(call.db, call.actor, args.webhook_id))}
    )


def update_webhook(call: Call, args: UpdateWebhook) -> Reply:
    changed = subscriptions.update_webhook(
        call.db, call.actor, args.webhook_id, url=args.url, events=args.events,
        description=args.description, active=args.active, workspace_id=args.workspace_ref(),
    )  # fmt: skip
    return Reply({"webhook": webhook_view(changed)})


def delete_webhook(call: Call, args: DeleteWebhook) -> Reply:
    subscriptions.delete_webhook(call.db, call.actor, args.webhook_id)
    return Reply({"deleted": True, "webhookId": args.webhook_id})


def rotate_webhook_secret(call: Call, args: WebhookAction) -> Reply:
    made = subscriptions.rotate_webhook_secret(
        call.db, call.actor, args.webhook_id, workspace_id=args.workspace_ref()
    )
    return Reply(made_view(made), "The new secret is shown this once; the old one no longer signs.")


def list_webhook_deliveries(call: Call, args: ListDeliveries) -> Reply:
    page = deliveries.list_webhook_deliveries(
        call.db, call.actor, args.webhook_id, state=args.state, limit=args.limit,
        offset=args.offset, workspace_id=args.workspace_ref(),
    )  # fmt: skip
    found = {"deliveries": [delivery_view(d) for d in page.deliveries], "total": page.total}
    return paged_reply(found, "deliveries", args.offset)


def redeliver_webhook(call: Call, args: Redeliver) -> Reply:
    queued = deliveries.redeliver_webhook(
        call.db, call.actor, args.delivery_id, workspace_id=args.workspace_ref()
    )
    return Reply({"delivery": delivery_view(queued)}, "Queued; its outcome shows in the log.")


def ping_webhook(call: Call, args: WebhookAction) -> Reply:
    queued = deliveries.ping_webhook(
        call.db, call.actor, args.webhook_id, workspace_id=args.workspace_ref()
    )
    return Reply({"delivery": delivery_view(queued)}, "Queued; its outcome shows in the log.")


ADMIN = Area(Toolset.ADMIN, write_scopes=(Scope.PROJECTS_ADMIN,))
READ_ADMIN = (Scope.PROJECTS_ADMIN,)  # the log and the URLs are for the project's admins only

OPERATIONS = (
    ADMIN.write(
        "create_webhook",
        "Create a webhook",
        "Send a project's events (those named by `events`) to a URL as they happen, in order, "
        "retried for a day when the receiver fails (admin role). The secret is returned once. "
        + SIGNING,
        CreateWebhook,
        create_webhook,
        Rest.created("/api/v1/projects/{project}/webhooks"),
        Cli(("webhook", "create")),
        idempotent=False,
    ),
    ADMIN.read(
        "list_webhooks",
        "List webhooks",
        "A project's webhooks: URL, events, state, failing since when (admin role). No secret.",
        ProjectWebhooks,
        list_webhooks,
        Rest("GET", "/api/v1/projects/{project}/webhooks"),
        Cli(("webhook", "list")),
        scopes=READ_ADMIN,
    ),
    ADMIN.read(
        "get_webhook",
        "Get a webhook",
        "One webhook (admin role). No secret.",
        WebhookAction,
        get_webhook,
        Rest("GET", "/api/v1/webhooks/{webhook}"),
        Cli(("webhook", "show")),
        scopes=READ_ADMIN,
    ),
    ADMIN.write(
        "update_webhook",
        "Update a webhook",
        "Change a webhook's URL, events or description; active: true resumes a paused one, "
        "false pauses it (admin role). Omitted fields stay.",
        UpdateWebhook,
        update_webhook,
        Rest("PATCH", "/api/v1/webhooks/{webhook}"),
        Cli(("webhook", "update")),
    ),
    ADMIN.write(
        "delete_webhook",
        "Delete a webhook",
        "Delete a webhook and its delivery log (admin role); nothing more is sent to it.",
        DeleteWebhook,
        delete_webhook,
        Rest("DELETE", "/api/v1/webhooks/{webhook}"),
        Cli(("webhook", "delete")),
        idempotent=False,
        destructive=True,
    ),
    ADMIN.write(
        "rotate_webhook_secret",
        "Rotate a webhook's secret",
        "A new signing secret, returned once; the old one stops at once (admin role).",
        WebhookAction,
        rotate_webhook_secret,
        Rest("POST", "/api/v1/webhooks/{webhook}/rotate-secret"),
        Cli(("webhook", "rotate-secret")),
        idempotent=False,
    ),
    ADMIN.read(
        "list_webhook_deliveries",
        "List a webhook's deliveries",
        "A webhook's delivery log, newest first, 50 a page (limit up to 200): event, state, "
        "attempts, the receiver's status and answer, the error (admin role).",
        ListDeliveries,
        list_webhook_deliveries,
        Rest("GET", "/api/v1/webhooks/{webhook}/deliveries"),
        Cli(("webhook", "deliveries")),
        scopes=READ_ADMIN,
    ),
    ADMIN.write(
        "redeliver_webhook",
        "Redeliver a webhook delivery",
        "Send a logged delivery's event again, as a new delivery (admin role).",
        Redeliver,
        redeliver_webhook,
        Rest("POST", "/api/v1/webhooks/deliveries/{delivery}/redeliver"),
        Cli(("webhook", "redeliver")),
        idempotent=False,
    ),
    ADMIN.write(
        "ping_webhook",
        "Ping a webhook",
        "Send a webhook.ping delivery to check the receiver (admin role).",
        WebhookAction,
        ping_webhook,
        Rest("POST", "/api/v1/webhooks/{webhook}/ping"),
        Cli(("webhook", "ping")),
        idempotent=False,
    ),
)
