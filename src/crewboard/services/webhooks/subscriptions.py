"""A project's webhooks, kept by its admins: create (the secret shown once), list, read,
change (a paused one resumes with `active: true`), delete, rotate the secret.

A new webhook starts at the project's newest event: it receives what happens from now on,
never the history. Its URL is checked against the address policy now (its host resolved) and
again at every send (`sending.resolve_checked`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from crewboard.domain.identity.access import Role, Scope
from crewboard.domain.identity.records import Actor
from crewboard.domain.ids import new_id
from crewboard.domain.projects import Project
from crewboard.domain.validation import check_text
from crewboard.domain.webhooks import (
    MAX_DESCRIPTION,
    MAX_WEBHOOKS,
    WEBHOOK_PREFIX,
    Webhook,
    WebhookMade,
    WebhookState,
    check_patterns,
    new_secret,
)
from crewboard.errors import LimitExceeded
from crewboard.services.events import record_project_event
from crewboard.services.identity.access import (
    ANY_WORKSPACE,
    WorkspaceRef,
    access_project,
    not_open,
)
from crewboard.services.views import actor_stamp
from crewboard.services.webhooks.sending import check_destination, policy_of
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork
from crewboard.storage.webhooks.repository import WebhookRepository

webhook_not_found = not_open("webhook", "list_webhooks shows a project's webhooks.")


def access_webhook(
    uow: UnitOfWork, actor: Actor, webhook_id: str, workspace_id: WorkspaceRef = ANY_WORKSPACE
) -> tuple[Webhook, Project]:
    """The webhook and its project, for one of the project's admins.

    Raises:
        NotFound: no such webhook, or its project is not open to the actor.
        PermissionDenied: the actor is no admin there, or the token lacks projects.admin.
    """
    webhook = WebhookRepository(uow.conn).get(webhook_id)
    if webhook is None:
        raise webhook_not_found(webhook_id)
    return webhook, _admin_project(uow, actor, webhook.project_id, workspace_id)


def _admin_project(
    uow: UnitOfWork, actor: Actor, project: str, workspace_id: WorkspaceRef = ANY_WORKSPACE
) -> Project:
    found = access_project(
        uow, actor, project, scope=Scope.PROJECTS_ADMIN, role=Role.ADMIN, workspace_id=workspace_id
    )
    return found.project


def _description(text: str | None) -> str | None:
    if text is None:
        return None
    return check_text("description", text, max_length=MAX_DESCRIPTION) or None


def create_webhook(
    db: Database,
    actor: Actor,
    project: str,
    *,
    url: str,
    events: Sequence[str],
    description: str | None = None,
    active: bool = True,
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
) -> WebhookMade:
    """A new webhook of `project` (id or key), and its secret, shown this once.

    Raises:
        NotFound, PermissionDenied: the project is not open, or the actor is no admin of it.
        ValidationFailed: the URL, an event pattern or the description (naming the field).
        LimitExceeded: the project has MAX_WEBHOOKS webhooks already.
    """
    patterns = check_patterns(events)
    note = _description(description)
    db.read(lambda uow: _admin_project(uow, actor, project, workspace_id))  # before resolving
    check_destination(url, policy_of(db))

    def work(uow: UnitOfWork) -> WebhookMade:
        found = _admin_project(uow, actor, project, workspace_id)
        repo = WebhookRepository(uow.conn)
        if repo.count_for_project(found.id) >= MAX_WEBHOOKS:
            raise LimitExceeded(
                f"A project has at most {MAX_WEBHOOKS} webhooks; delete one first.",
                {"field": "webhooks", "limit": MAX_WEBHOOKS},
            )
        secret = new_secret()
        webhook = Webhook(
            id=new_id(WEBHOOK_PREFIX), project_id=found.id, workspace_id=found.workspace_id,
            url=url, description=note, events=patterns, secret=secret,
            state=WebhookState.ACTIVE if active else WebhookState.PAUSED,
            paused_reason=None if active else "made paused", paused_at=None if active else uow.now,
            cursor=repo.latest_event(found.id), attempts=0, failing_since=None,
            next_attempt_at=None, lease_owner=None, lease_until=None,
            created_by=actor_stamp(actor), created_at=uow.now, updated_at=uow.now,
        )  # fmt: skip
        repo.add(webhook)
        record_project_event(uow, actor, "webhook.created", found, {"webhookId": webhook.id})
        return WebhookMade(webhook, secret)

    return db.write(work)


def list_webhooks(
    db: Database, actor: Actor, project: str, *, workspace_id: WorkspaceRef = ANY_WORKSPACE
) -> list[Webhook]:
    """The project's webhooks, oldest first.

    Raises:
        NotFound, PermissionDenied: the project is not open, or the actor is no admin of it.
    """

    def work(uow: UnitOfWork) -> list[Webhook]:
        found = _admin_project(uow, actor, project, workspace_id)
        return WebhookRepository(uow.conn).list_for_project(found.id)

    return db.read(work)


def get_webhook(
    db: Database, actor: Actor, webhook_id: str, *, workspace_id: WorkspaceRef = ANY_WORKSPACE
) -> Webhook:
    """One webhook (never its secret on the wire: the door leaves it out).

    Raises:
        NotFound, PermissionDenied: as `access_webhook`.
    """
    return db.read(lambda uow: access_webhook(uow, actor, webhook_id, workspace_id)[0])


def update_webhook(
    db: Database,
    actor: Actor,
    webhook_id: str,
    *,
    url: str | None = None,
    events: Sequence[str] | None = None,
    description: str | None = None,
    active: bool | None = None,
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
) -> Webhook:
    """Change a webhook. `active: true` on a paused one resumes it: its failing state is
    cleared and its head event tried again now; `active: false` pauses it.

    Raises:
        NotFound, PermissionDenied: as `access_webhook`.
        ValidationFailed: the URL, an event pattern or the description (naming the field).
    """
    patterns = None if events is None else check_patterns(events)
    note = None if description is None else _description(description)
    db.read(lambda uow: access_webhook(uow, actor, webhook_id, workspace_id))
    if url is not None:
        check_destination(url, policy_of(db))

    def work(uow: UnitOfWork) -> Webhook:
        webhook, project = access_webhook(uow, actor, webhook_id, workspace_id)
        changes: dict[str, Any] = {"updated_at": uow.now}
        if url is not None:
            changes["url"] = url
        if patterns is not None:
            changes["events"] = patterns
        if description is not None:
            changes["description"] = note
        if active is not None:
            changes |= _state_change(webhook, active, uow)
        repo = WebhookRepository(uow.conn)
        repo.update(webhook.id, **changes)
        record_project_event(uow, actor, "webhook.updated", project, {"webhookId": webhook.id})
        updated = repo.get(webhook.id)
        assert updated is not None  # noqa: S101 - changed in this transaction
        return updated

    return db.write(work)


def _state_change(webhook: Webhook, active: bool, uow: UnitOfWork) -> dict[str, Any]:
    """The columns that resume (failing state cleared, the head event due now) or pause."""
    if active and webhook.state is WebhookState.PAUSED:
        return {
            "state": WebhookState.ACTIVE, "paused_reason": None, "paused_at": None,
            "attempts": 0, "failing_since": None, "next_attempt_at": None,
        }  # fmt: skip
    if not active and webhook.state is WebhookState.ACTIVE:
        return {"state": WebhookState.PAUSED, "paused_reason": "paused by an admin",
                "paused_at": uow.now}  # fmt: skip
    return {}


def delete_webhook(
    db: Database, actor: Actor, webhook_id: str, *, workspace_id: WorkspaceRef = ANY_WORKSPACE
) -> None:
    """Delete a webhook and its delivery log; nothing more is sent to it.

    Raises:
        NotFound, PermissionDenied: as `access_webhook`.
    """

    def work(uow: UnitOfWork) -> None:
        webhook, project = access_webhook(uow, actor, webhook_id, workspace_id)
        WebhookRepository(uow.conn).delete(webhook.id)
        record_project_event(uow, actor, "webhook.deleted", project, {"webhookId": webhook.id})

    db.write(work)


def rotate_webhook_secret(
    db: Database, actor: Actor, webhook_id: str, *, workspace_id: WorkspaceRef = ANY_WORKSPACE
) -> WebhookMade:
    """A new secret for the webhook, shown this once; the old one stops signing at once.

    Raises:
        NotFound, PermissionDenied: as `access_webhook`.
    """

    def work(uow: UnitOfWork) -> WebhookMade:
        webhook, project = access_webhook(uow, actor, webhook_id, workspace_id)
        secret = new_secret()
        WebhookRepository(uow.conn).update(webhook.id, secret=secret, updated_at=uow.now)
        record_project_event(
            uow, actor, "webhook.secret_rotated", project, {"webhookId": webhook.id}
        )
        return WebhookMade(replace(webhook, secret=secret, updated_at=uow.now), secret)

    return db.write(work)
