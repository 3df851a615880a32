"""Inbox threads: one per participant of a project (a team role or a person), each message
optionally about a task. Posting changes no task, role or memory record."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from crewboard.domain.identity.access import Role, Scope
from crewboard.domain.identity.records import Actor
from crewboard.domain.ids import new_id
from crewboard.domain.projects import Project
from crewboard.domain.review import InboxMessage, Thread
from crewboard.domain.validation import check_no_nul, check_text
from crewboard.errors import NotFound, ValidationFailed
from crewboard.services.board.notes import after
from crewboard.services.board.task_lookup import access_task
from crewboard.services.board.views import task_key
from crewboard.services.idempotency import Ack, KeyedResult, do_keyed_write
from crewboard.services.identity.access import (
    ANY_WORKSPACE,
    WorkspaceRef,
    access_project,
    require_signed_in_person,
)
from crewboard.services.paging import check_page
from crewboard.services.views import actor_stamp, stamp_of
from crewboard.storage.database import Database
from crewboard.storage.review.proposals import MessageRepository
from crewboard.storage.uow import UnitOfWork

MAX_BODY = 20_000
PREVIEW_CHARS = 200
MAX_PAGE = 200


def messages_of(uow: UnitOfWork) -> MessageRepository:
    return MessageRepository(uow.conn)


Answer = Callable[[InboxMessage], dict[str, Any]]


def preview(text: str) -> str:
    return text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 1] + "…"


def _participant_not_found(participant_id: str, project: Project) -> NotFound:
    return NotFound(
        f"{participant_id!r} is not a participant of {project.key}: name an active team role id "
        "(rol_…) or a member's user id (usr_…); list_team shows both.",
        {"resource": "participant", "field": "participantId", "ref": participant_id},
    )


def check_participant(uow: UnitOfWork, project: Project, participant_id: str) -> str:
    """Raises: NotFound unless an active role of the project or a member of it."""
    if participant_id.startswith("rol_"):
        seat = uow.team.get(project.id, participant_id)
        if seat is not None and seat.archived_at is None:
            return participant_id
    elif (
        participant_id.startswith("usr_")
        and uow.projects.member_role(project.id, participant_id) is not None
    ):
        return participant_id
    raise _participant_not_found(participant_id, project)


def post_message(
    db: Database,
    actor: Actor,
    *,
    project: str,
    workspace_id: WorkspaceRef,
    participant_id: str,
    body: str,
    task: str | None = None,
    idempotency_key: str | None = None,
    answer: Answer,
) -> KeyedResult:
    """Post into a participant's thread, optionally about a task of the same project;
    `answer` words the posted message, and the ledger keeps that answer for a retry.

    The key is required for a project in a shared workspace and optional for a private one.

    Raises:
        NotFound: the project, participant or task. ValidationFailed, LimitExceeded: the body,
            the key, or a task of another project. PermissionDenied, IdempotencyConflict.
    """
    text = check_text("body", body, max_length=MAX_BODY, required=True)
    check_no_nul("participantId", participant_id)
    arguments = {
        "project": project,
        "workspaceId": workspace_id,
        "participantId": participant_id,
        "body": body,
        "taskId": task,
    }

    def work(uow: UnitOfWork) -> KeyedResult:
        access = access_project(
            uow,
            actor,
            project,
            scope=Scope.MESSAGES_WRITE,
            role=Role.WRITE,
            workspace_id=workspace_id,
        )
        if access.project.workspace_id is not None and not idempotency_key:
            raise ValidationFailed.field(
                "idempotencyKey",
                "required in a shared workspace: send a stable key and reuse it on retry.",
            )
        return do_keyed_write(
            uow,
            actor,
            key=idempotency_key,
            operation="post_message",
            arguments=arguments,
            perform=lambda: _write(
                uow,
                actor,
                access.project,
                participant_id=participant_id,
                text=text,
                task=task,
                answer=answer,
            ),
        )

    return db.write(work)


def _write(
    uow: UnitOfWork,
    actor: Actor,
    project: Project,
    *,
    participant_id: str,
    text: str,
    task: str | None,
    answer: Answer,
) -> Ack:
    check_participant(uow, project, participant_id)
    task_id, key = _about(uow, actor, project, task)
    author = stamp_of(uow, actor)
    messages = messages_of(uow)
    uow.serialize(f"thread:{project.id}:{participant_id}")
    message = InboxMessage(
        id=new_id("msg"),
        project_id=project.id,
        participant_id=participant_id,
        task_id=task_id,
        body=text,
        author=author,
        created_at=after(uow.now, messages.latest_time(project.id, participant_id)),
    )
    messages.add(message)
    uow.record_event(
        "message.posted",
        actor=actor.as_payload(),
        payload={
            "messageId": message.id,
            "participantId": participant_id,
            "taskId": task_id,
            "taskKey": key,
            "preview": preview(text),
        },
        project_id=project.id,
        workspace_id=project.workspace_id,
    )
    return Ack(
        answer(message),
        resource_type="message",
        resource_id=message.id,
        project_id=project.id,
    )


def _about(
    uow: UnitOfWork, actor: Actor, project: Project, task: str | None
) -> tuple[str | None, str | None]:
    if task is None:
        return None, None
    found, owner = access_task(uow, actor, task)
    if owner.id != project.id:
        raise ValidationFailed.field(
            "taskId", f"{task} is a task of {owner.key}, not of {project.key}."
        )
    return found.id, task_key(project, found)


def list_thread(
    db: Database,
    actor: Actor,
    project: str,
    participant_id: str,
    *,
    limit: int = 50,
    offset: int = 0,
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
) -> Thread:
    """A participant's thread, newest first, paged.

    Raises:
        NotFound: the project. ValidationFailed: a bad page.
    """
    check_page(limit, offset, MAX_PAGE)

    def work(uow: UnitOfWork) -> Thread:
        found = access_project(uow, actor, project, workspace_id=workspace_id).project
        rows, total = messages_of(uow).thread(found.id, participant_id, limit=limit, offset=offset)
        return Thread(found.id, participant_id, tuple(rows), total, offset)

    result: Thread = db.read(work)
    return result


def dismiss_message(db: Database, actor: Actor, project: str, message_id: str) -> InboxMessage:
    """A person clears a message from their inbox: one addressed to them or to a seat they
    hold. It stays in its thread. Dismissing it again changes nothing.

    Raises:
        PermissionDenied: through a token (the inbox is a person's).
        NotFound: no such message in the project, or one addressed to someone else.
    """
    require_signed_in_person(actor, "Dismissing an inbox message")
    check_no_nul("messageId", message_id)

    def work(uow: UnitOfWork) -> InboxMessage:
        found = access_project(uow, actor, project).project
        messages = messages_of(uow)
        message = messages.get(message_id)
        if (
            message is None
            or message.project_id != found.id
            or message.participant_id not in addressees(uow, actor, [found.id])
        ):
            raise NotFound(
                f"No message {message_id!r} for you in {found.key}.",
                {"resource": "message", "messageId": message_id},
            )
        stamp = actor_stamp(actor)
        if messages.dismiss(message.id, uow.now, stamp):
            uow.record_event(
                "message.dismissed",
                actor=actor.as_payload(),
                payload={"messageId": message.id, "participantId": message.participant_id},
                project_id=found.id,
                workspace_id=found.workspace_id,
            )
            message = replace(message, dismissed_at=uow.now, dismissed_by=stamp)
        return message

    result: InboxMessage = db.write(work)
    return result


def addressees(uow: UnitOfWork, actor: Actor, project_ids: list[str]) -> set[str]:
    """The person and the seats they hold: the threads whose messages are for them."""
    seats = {
        role.id
        for project_id in project_ids
        for role in uow.team.list(project_id)
        if role.member_user_id == actor.user_id
    }
    return {actor.user_id, *seats}


def recent_messages(uow: UnitOfWork, project_ids: list[str], limit: int) -> list[InboxMessage]:
    """The newest messages of these projects across their threads (for the inbox)."""
    return list(messages_of(uow).recent(project_ids, limit=limit))
