"""Telling the people a text `@mentions`: who a project's text names, and the one notification
each of them gets. Task comments and spec comment threads both mention people this way."""

from __future__ import annotations

from crewboard.domain.identity.records import Actor
from crewboard.domain.notifications import mentions
from crewboard.services.notifications.notify import notify
from crewboard.services.views import actor_name
from crewboard.storage.uow import UnitOfWork


def mentioned_people(uow: UnitOfWork, project_id: str, text: str) -> list[str]:
    """The people of the project a text mentions: by email, or by the part of their email
    before the @ when only one person of the project has it."""
    written = mentions(text)
    if not written:
        return []
    members = [user for user, _ in uow.projects.members(project_id)]
    by_email = {user.email.lower(): user.id for user in members}
    by_name: dict[str, list[str]] = {}
    for user in members:
        by_name.setdefault(user.email.lower().split("@", 1)[0], []).append(user.id)
    found = []
    for name in written:
        if name in by_email:
            found.append(by_email[name])
        elif len(by_name.get(name, [])) == 1:
            found.append(by_name[name][0])
    return list(dict.fromkeys(found))


def tell_mentioned_people(
    uow: UnitOfWork, actor: Actor, *, project_id: str, text: str, kind: str, where: str,
    link: str, source: str,
) -> None:  # fmt: skip
    """The people `text` mentions (not its writer) hear of it once: "<who> mentioned you on
    <where>", with the text and a link to it."""
    people = [p for p in mentioned_people(uow, project_id, text) if p != actor.user_id]
    if not people:
        return
    notify(
        uow, recipients=people, kind=kind, project_id=project_id,
        title=f"{mentioner(uow, actor)} mentioned you on {where}", body=text[:500],
        link=link, source=source, in_app=True, email=True,
    )  # fmt: skip


def mentioner(uow: UnitOfWork, actor: Actor) -> str:
    """Who a mention says wrote it, by the one naming rule: "Owner", "Owner via laptop",
    "night agent (for Owner)"."""
    return actor_name(uow, actor)
