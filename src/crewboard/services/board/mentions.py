"""Telling people of what concerns them on the board: a comment that mentions them, an answer
to a question asked in their name. Through the notification path (`services/notifications`),
inside the write, each once per cause, as each person's own settings allow."""

from __future__ import annotations

from crewboard.domain.board.tasks import Task
from crewboard.domain.identity.records import Actor
from crewboard.domain.notifications import mentions
from crewboard.domain.projects import Project
from crewboard.services.board.views import task_key
from crewboard.services.notifications.notify import notify
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


def tell_mentioned(
    uow: UnitOfWork, actor: Actor, project: Project, task: Task, *, comment_id: str, text: str
) -> None:
    """The people a comment mentions (not its writer) hear of it."""
    people = [p for p in mentioned_people(uow, project.id, text) if p != actor.user_id]
    if not people:
        return
    key = task_key(project, task)
    notify(
        uow, recipients=people, kind="task.mentioned", project_id=project.id,
        title=f"{actor.display_name or 'Someone'} mentioned you on {key}", body=text[:500],
        link=f"/p/{project.key}/tasks/{key}#{comment_id}", source=f"comment:{comment_id}",
        in_app=True, email=True,
    )  # fmt: skip


def tell_asker(
    uow: UnitOfWork, actor: Actor, project: Project, task: Task, *, question_id: str,
    asker: str | None, answer: str,
) -> None:  # fmt: skip
    """The person a question was asked in the name of (through their agent's token) hears the
    answer, unless they gave it."""
    if not asker or asker == actor.user_id:
        return
    key = task_key(project, task)
    notify(
        uow, recipients=[asker], kind="task.question_answered", project_id=project.id,
        title=f"{actor.display_name or 'Someone'} answered a question on {key}",
        body=answer[:500], link=f"/p/{project.key}/tasks/{key}", source=f"question:{question_id}",
        in_app=True, email=True,
    )  # fmt: skip
