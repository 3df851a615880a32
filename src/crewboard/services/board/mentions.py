"""Telling people of what concerns them on the board: a comment that mentions them, an answer
to a question asked in their name. Through the notification path (`services/notifications`),
inside the write, each once per cause, as each person's own settings allow."""

from __future__ import annotations

from crewboard.domain.board.tasks import Task
from crewboard.domain.identity.records import Actor
from crewboard.domain.projects import Project
from crewboard.services.board.views import task_key
from crewboard.services.notifications.mentions import tell_mentioned_people
from crewboard.services.notifications.notify import notify
from crewboard.services.views import actor_name
from crewboard.storage.uow import UnitOfWork


def tell_mentioned(
    uow: UnitOfWork, actor: Actor, project: Project, task: Task, *, comment_id: str, text: str
) -> None:
    """The people a comment mentions (not its writer) hear of it."""
    key = task_key(project, task)
    tell_mentioned_people(
        uow, actor, project_id=project.id, text=text, kind="task.mentioned", where=key,
        link=f"/p/{project.key}/tasks/{key}#{comment_id}", source=f"comment:{comment_id}",
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
        title=f"{actor_name(uow, actor)} answered a question on {key}",
        body=answer[:500], link=f"/p/{project.key}/tasks/{key}", source=f"question:{question_id}",
        in_app=True, email=True,
    )  # fmt: skip
