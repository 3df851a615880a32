"""What is said on a task: comments, agent progress notes, saved outputs, questions for people.

Every write here is keyed (idempotencyKey required), names the task's workspace explicitly
and records an event; it answers with what the door's `answer` makes of the record it wrote,
which the idempotency ledger keeps for a retry. Notes on one task are written one at a time, each a microsecond or
more after the one before, so a thread and an output's versions have one fixed order.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from crewboard.domain.board.notes import (
    CommentPage,
    NotedTask,
    NoteKind,
    OutputPage,
    OutputRead,
    TaskComment,
    TaskOutput,
)
from crewboard.domain.board.tasks import Task
from crewboard.domain.identity.access import Role, Scope
from crewboard.domain.identity.records import Actor
from crewboard.domain.ids import new_id
from crewboard.domain.projects import Project
from crewboard.domain.validation import check_no_nul, check_text
from crewboard.errors import LimitExceeded, NotFound, ValidationFailed
from crewboard.services.board.mentions import tell_mentioned
from crewboard.services.board.note_views import noted_task_view
from crewboard.services.board.task_lookup import access_task
from crewboard.services.board.views import task_key
from crewboard.services.idempotency import Ack, KeyedResult, do_keyed_write, require_key
from crewboard.services.identity.access import ANY_WORKSPACE, WorkspaceRef
from crewboard.services.paging import check_page
from crewboard.services.views import actor_stamp
from crewboard.storage.board.notes import NoteRepository
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork

MAX_NOTE_CHARS = 20_000  # a comment, an agent update, a question or an answer
MAX_OUTPUT_NAME = 200
MAX_OUTPUT_BYTES = 1024 * 1024  # an output's content, UTF-8 encoded
EXCERPT_CHARS = 280  # how much of a note an event carries
COMMENT = NoteKind.COMMENT
AGENT_UPDATE = NoteKind.AGENT_UPDATE
NOTE_KINDS = (COMMENT, AGENT_UPDATE)
TICK = timedelta(microseconds=1)

Perform = Callable[[UnitOfWork, Task, Project], Ack]


# --- naming the task ---------------------------------------------------------------------------


def noted_task(task: Task, project: Project) -> NotedTask:
    """Enough of a task to name it next to what was said on it."""
    return NotedTask(
        id=task.id,
        key=task_key(project, task),
        title=task.title,
        status=str(task.status),
        project_id=project.id,
        workspace_id=project.workspace_id,
    )


def task_ref_view(task: Task, project: Project) -> dict[str, Any]:
    """The task's reference as the review inbox and task_activity still word it.

    # merge: lead removes once services/review/inbox.py and task_activity use `noted_task`.
    """
    return noted_task_view(noted_task(task, project))


# --- shared by every keyed write on a task -----------------------------------------------------


def keyed_task_write(
    db: Database,
    actor: Actor,
    *,
    operation: str,
    task: str,
    workspace_id: WorkspaceRef,
    idempotency_key: str | None,
    arguments: dict[str, Any],
    perform: Perform,
) -> KeyedResult:
    """Run `perform` on the task (tasks.manage, write role, the named workspace) once per key.

    Raises:
        ValidationFailed, LimitExceeded: the key is missing, empty or too long.
        IdempotencyConflict: the key was used for another request.
        NotFound, PermissionDenied, ValidationFailed: as `access_task`.
    """
    key = require_key(idempotency_key)
    request = {"taskId": task, "workspaceId": workspace_id, **arguments}

    def work(uow: UnitOfWork) -> KeyedResult:
        def run() -> Ack:
            found, project = access_task(
                uow,
                actor,
                task,
                scope=Scope.TASKS_MANAGE,
                role=Role.WRITE,
                workspace_id=workspace_id,
            )
            return perform(uow, found, project)

        return do_keyed_write(
            uow, actor, key=key, operation=operation, arguments=request, perform=run
        )

    return db.write(work)


def after(now: datetime, latest: datetime | None) -> datetime:
    """`now`, or just after `latest` when the clock has not moved past it."""
    return now if latest is None or now > latest else latest + TICK


def excerpt(text: str) -> str:
    return text if len(text) <= EXCERPT_CHARS else text[: EXCERPT_CHARS - 1] + "…"


def notes_of(uow: UnitOfWork) -> NoteRepository:
    return NoteRepository(uow.conn)


def record_task_event(
    uow: UnitOfWork,
    actor: Actor,
    event: str,
    task: Task,
    project: Project,
    *,
    payload: dict[str, Any],
) -> None:
    """Record an event about a task, naming it by id and key."""
    uow.record_event(
        event,
        actor=actor.as_payload(),
        payload={"taskId": task.id, "taskKey": task_key(project, task), **payload},
        project_id=project.id,
        workspace_id=project.workspace_id,
    )


# --- comments and agent updates -----------------------------------------------------------


def check_note(field: str, text: str) -> str:
    """Raises: ValidationFailed when blank or holding NUL, LimitExceeded over 20,000 characters."""
    return check_text(field, text, max_length=MAX_NOTE_CHARS, required=True)


def _write_note(
    db: Database,
    actor: Actor,
    *,
    kind: NoteKind,
    task: str,
    workspace_id: WorkspaceRef,
    content: str,
    idempotency_key: str | None,
    answer: Callable[[TaskComment], dict[str, Any]],
) -> KeyedResult:
    text = check_note("content", content)

    def perform(uow: UnitOfWork, found: Task, project: Project) -> Ack:
        notes = notes_of(uow)
        uow.serialize(f"task-notes:{found.id}")
        comment = TaskComment(
            id=new_id("cmt" if kind == COMMENT else "upd"),
            project_id=project.id,
            task_id=found.id,
            kind=kind,
            content=text,
            author=actor_stamp(actor),
            created_at=after(uow.now, notes.latest_note_time(found.id)),
        )
        notes.add_comment(comment)
        if kind == COMMENT:
            tell_mentioned(uow, actor, project, found, comment_id=comment.id, text=text)
        record_task_event(
            uow,
            actor,
            "task.comment_posted" if kind == COMMENT else "task.agent_update_posted",
            found,
            project,
            payload={"commentId": comment.id, "kind": kind, "excerpt": excerpt(text)},
        )
        return Ack(
            answer(comment), resource_type=kind, resource_id=comment.id, project_id=project.id
        )

    return keyed_task_write(
        db,
        actor,
        operation="post_comment" if kind == COMMENT else "agent_update",
        task=task,
        workspace_id=workspace_id,
        idempotency_key=idempotency_key,
        arguments={"content": content},
        perform=perform,
    )


def post_comment(
    db: Database,
    actor: Actor,
    *,
    task: str,
    workspace_id: WorkspaceRef,
    content: str,
    idempotency_key: str | None,
    answer: Callable[[TaskComment], dict[str, Any]],
) -> KeyedResult:
    """Post a markdown comment on a task, signed with the actor (keyed); the ledger keeps
    `answer`'s words for the comment.

    Raises:
        ValidationFailed, LimitExceeded, IdempotencyConflict, NotFound, PermissionDenied.
    """
    return _write_note(
        db,
        actor,
        kind=COMMENT,
        task=task,
        workspace_id=workspace_id,
        content=content,
        idempotency_key=idempotency_key,
        answer=answer,
    )


def agent_update(
    db: Database,
    actor: Actor,
    *,
    task: str,
    workspace_id: WorkspaceRef,
    content: str,
    idempotency_key: str | None,
    answer: Callable[[TaskComment], dict[str, Any]],
) -> KeyedResult:
    """Leave a progress note on a task; the task itself (status included) stays as it is (keyed).

    Raises:
        ValidationFailed, LimitExceeded, IdempotencyConflict, NotFound, PermissionDenied.
    """
    return _write_note(
        db,
        actor,
        kind=AGENT_UPDATE,
        task=task,
        workspace_id=workspace_id,
        content=content,
        idempotency_key=idempotency_key,
        answer=answer,
    )


def list_comments(
    db: Database,
    actor: Actor,
    *,
    task: str,
    kind: str = COMMENT,
    limit: int = 50,
    offset: int = 0,
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
) -> CommentPage:
    """A task's comments (or agent updates, or both with kind `all`), newest first, paged.

    Raises:
        ValidationFailed: an unknown kind or a bad page. NotFound.
    """
    if kind != "all" and kind not in NOTE_KINDS:
        raise ValidationFailed.field("kind", f"unknown value {kind!r}.", [*NOTE_KINDS, "all"])
    kinds = NOTE_KINDS if kind == "all" else (kind,)
    limit, offset = check_page(limit, offset)

    def work(uow: UnitOfWork) -> CommentPage:
        found, project = access_task(uow, actor, task, workspace_id=workspace_id)
        rows, total = notes_of(uow).comments(found.id, kinds=kinds, limit=limit, offset=offset)
        return CommentPage(noted_task(found, project), rows, total, offset)

    return db.read(work)


# --- outputs --------------------------------------------------------------------------------


def check_output_name(name: str) -> str:
    """Raises: ValidationFailed when blank or holding control characters; LimitExceeded."""
    clean = check_text("name", name, max_length=MAX_OUTPUT_NAME, required=True)
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in clean):
        raise ValidationFailed.field("name", "must be one line of text, e.g. audit.md.")
    return clean


def check_output_content(content: str) -> str:
    """Kept exactly as sent.

    Raises:
        ValidationFailed: blank, or holding NUL. LimitExceeded: over 1 MiB in UTF-8.
    """
    if not content.strip():
        raise ValidationFailed.field("content", "must not be empty.")
    check_no_nul("content", content)
    size = len(content.encode("utf-8"))
    if size > MAX_OUTPUT_BYTES:
        raise LimitExceeded(
            f"content: {size} bytes is over the output limit of {MAX_OUTPUT_BYTES} (1 MiB); "
            "split it into several outputs.",
            {"field": "content", "limit": MAX_OUTPUT_BYTES, "actual": size},
        )
    return content


def save_output(
    db: Database,
    actor: Actor,
    *,
    task: str,
    workspace_id: WorkspaceRef,
    name: str,
    content: str,
    idempotency_key: str | None,
    answer: Callable[[TaskOutput], dict[str, Any]],
) -> KeyedResult:
    """Save a named deliverable on a task; the same name again adds a newer version (keyed).

    Raises:
        ValidationFailed, LimitExceeded, IdempotencyConflict, NotFound, PermissionDenied.
    """
    clean_name = check_output_name(name)
    body = check_output_content(content)

    def perform(uow: UnitOfWork, found: Task, project: Project) -> Ack:
        notes = notes_of(uow)
        uow.serialize(f"task-notes:{found.id}")
        count, latest = notes.output_history(found.id, clean_name)
        output = TaskOutput(
            id=new_id("out"),
            project_id=project.id,
            task_id=found.id,
            name=clean_name,
            content=body,
            length=len(body),
            author=actor_stamp(actor),
            created_at=after(uow.now, latest),
            version=count + 1,
            versions=count + 1,
        )
        notes.add_output(
            output_id=output.id,
            project_id=project.id,
            task_id=found.id,
            name=clean_name,
            content=body,
            author=output.author,
            at=output.created_at,
        )
        record_task_event(
            uow,
            actor,
            "task.output_saved",
            found,
            project,
            payload={"outputId": output.id, "name": clean_name, "version": output.version},
        )
        return Ack(
            answer(output), resource_type="output", resource_id=output.id, project_id=project.id
        )

    return keyed_task_write(
        db,
        actor,
        operation="save_output",
        task=task,
        workspace_id=workspace_id,
        idempotency_key=idempotency_key,
        arguments={"name": name, "content": content},
        perform=perform,
    )


def list_outputs(
    db: Database,
    actor: Actor,
    *,
    task: str,
    limit: int = 50,
    offset: int = 0,
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
) -> OutputPage:
    """The newest version of each output of a task, by name, with a preview and version count.

    Raises:
        ValidationFailed: a bad page. NotFound.
    """
    limit, offset = check_page(limit, offset)

    def work(uow: UnitOfWork) -> OutputPage:
        found, project = access_task(uow, actor, task, workspace_id=workspace_id)
        rows, total = notes_of(uow).latest_outputs(found.id, limit=limit, offset=offset)
        return OutputPage(noted_task(found, project), rows, total, offset)

    return db.read(work)


def get_output(
    db: Database,
    actor: Actor,
    *,
    task: str,
    name: str,
    version: int | None = None,
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
) -> OutputRead:
    """One output in full: its newest version, or `version` (1 is the first save).

    Raises:
        NotFound: no such task, output name or version.
    """

    def work(uow: UnitOfWork) -> OutputRead:
        found, project = access_task(uow, actor, task, workspace_id=workspace_id)
        output = notes_of(uow).output(found.id, name, version)
        if output is None:
            which = f"version {version} of " if version is not None else ""
            raise NotFound(
                f"Task {task_key(project, found)} has no {which}output {name!r}; "
                "list its outputs to see the names and version counts.",
                {"resource": "output", "name": name, "version": version},
            )
        return OutputRead(noted_task(found, project), output)

    return db.read(work)
