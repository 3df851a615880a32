"""Receiving a GitHub webhook delivery: find the project, check the signature, refuse a
replay, act as "GitHub" for the admin who set it up, and keep what the delivery did.

A project that does not exist and one not set up for GitHub get the same answer, so a caller
without the secret learns nothing about which projects exist.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from crewboard.domain.github import (
    HANDLED,
    MAX_DELIVERY_ID,
    DeliverySeen,
    GithubSettings,
    read_delivery,
    signature_ok,
)
from crewboard.domain.identity.access import Role, Scope
from crewboard.domain.identity.records import Actor
from crewboard.domain.projects import Project
from crewboard.errors import BadRequest, Conflict, NotFound, Unauthenticated
from crewboard.jsonbody import BadJson, parse_json
from crewboard.services.github.effects import Effect, apply_delivery
from crewboard.storage.database import Database
from crewboard.storage.github.repository import GithubRepository
from crewboard.storage.uow import UnitOfWork

GITHUB = "github"


@dataclass(frozen=True)
class Received:
    """What a delivery did: `outcome` and the task keys it changed, or why it was `ignored`."""

    project_key: str
    outcome: str | None = None
    ignored: str | None = None
    tasks: list[str] = field(default_factory=list)
    zen: str | None = None


def _project(uow: UnitOfWork, ref: str) -> tuple[Project, GithubSettings]:
    """Raises: NotFound for an unknown project and one without GitHub set up alike."""
    project = (
        uow.projects.get(ref) if ref.startswith("prj_") else uow.projects.get_by_key(ref.upper())
    )
    settings = GithubRepository(uow.conn).settings(project.id) if project else None
    if project is None or settings is None:
        raise NotFound(
            f"No project {ref!r} takes GitHub deliveries; a project admin sets it up with "
            "configure_github and pastes the webhook URL it gives into GitHub.",
            {"resource": "project", "ref": ref[:100]},
        )
    return project, settings


def github_actor(uow: UnitOfWork, project: Project, settings: GithubSettings) -> Actor:
    """GitHub, acting with the role of the admin who set it up.

    Raises:
        Conflict: that person can no longer write on the project.
    """
    role = uow.projects.member_role(project.id, settings.configured_by)
    if role not in (Role.WRITE, Role.ADMIN):
        raise Conflict(
            f"The person who set up GitHub for {project.key} can no longer write there; a "
            "project admin runs configure_github again to take it over.",
            {"projectId": project.id, "field": "configuredBy"},
        )
    return Actor(
        user_id=settings.configured_by,
        scopes=frozenset({Scope.READ, Scope.TASKS_MANAGE}),
        display_name="GitHub",
        integration=GITHUB,
    )


def _payload(body: bytes) -> dict[str, Any]:
    """Raises: BadRequest when the body is not a JSON object."""
    try:
        data = parse_json(body)
    except (BadJson, UnicodeDecodeError) as error:
        raise BadRequest.field(
            "body", f"not JSON: {error}. Choose application/json as the webhook's content type."
        ) from error
    if not isinstance(data, dict):
        raise BadRequest.field("body", "a GitHub delivery is a JSON object.")
    return data


def receive_delivery(
    db: Database,
    project_ref: str,
    *,
    body: bytes,
    signature: str | None,
    event: str | None,
    delivery_id: str | None,
) -> Received:
    """Handle one delivery in one transaction, with the events of what it changed.

    Raises:
        NotFound: no such project, or GitHub is not set up for it.
        Unauthenticated: the signature is missing or not the project's secret's.
        BadRequest: no X-GitHub-Event, a delivery id over 100 characters, or a body not JSON.
        Conflict: the admin who set GitHub up can no longer write on the project.
    """

    def work(uow: UnitOfWork) -> Received:
        project, settings = _project(uow, project_ref)
        if not signature_ok(settings.secret, body, signature):
            raise Unauthenticated(
                "X-Hub-Signature-256 is missing or does not match: GitHub signs each delivery "
                "with the webhook's secret; paste the one configure_github showed.",
                {"header": "X-Hub-Signature-256"},
            )
        if not event or not event.strip():
            raise BadRequest.field("X-GitHub-Event", "required: GitHub names the event in it.")
        if delivery_id is not None and len(delivery_id) > MAX_DELIVERY_ID:
            raise BadRequest.field("X-GitHub-Delivery", f"over {MAX_DELIVERY_ID} characters.")
        data = _payload(body)
        repository = GithubRepository(uow.conn)
        if delivery_id and repository.delivery(delivery_id) is not None:
            return Received(project.key, ignored=f"delivery {delivery_id} was already handled")
        delivery = read_delivery(event.strip(), data)
        if delivery.event == "ping":
            effect = Effect(outcome=f"pong: {project.key} takes this hook's deliveries")
        else:
            actor = github_actor(uow, project, settings)
            effect = apply_delivery(uow, actor, project, settings, delivery)
        if delivery_id:
            repository.add_delivery(
                DeliverySeen(
                    delivery_id, project.id, delivery.event[:64], (delivery.action or "")[:64] or None,
                    effect.outcome or f"ignored: {effect.ignored}", uow.now,
                )
            )  # fmt: skip
        return Received(
            project.key, effect.outcome, effect.ignored, list(effect.tasks), zen=delivery.zen
        )

    return db.write(work)


__all__ = ["HANDLED", "Received", "receive_delivery"]
