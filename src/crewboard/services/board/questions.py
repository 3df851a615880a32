"""Questions an agent asks about a task; a person answers them from the inbox."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from crewboard.domain.board.notes import (
    OpenQuestion,
    OpenQuestions,
    QuestionAnswered,
    TaskQuestion,
)
from crewboard.domain.board.tasks import Task
from crewboard.domain.identity.access import Role, Scope
from crewboard.domain.identity.naming import name_of
from crewboard.domain.identity.records import Actor
from crewboard.domain.ids import new_id
from crewboard.domain.projects import Project
from crewboard.errors import AlreadyExists, NotFound
from crewboard.services.board.mentions import tell_asker
from crewboard.services.board.note_views import question_view
from crewboard.services.board.notes import (
    check_note,
    excerpt,
    keyed_task_write,
    noted_task,
    notes_of,
    record_task_event,
)
from crewboard.services.board.task_lookup import access_task
from crewboard.services.idempotency import Ack, KeyedResult
from crewboard.services.identity.access import (
    WorkspaceRef,
    access_project,
    require_person,
    require_signed_in_person,
)
from crewboard.services.paging import check_page
from crewboard.services.views import actor_stamp, iso, stamp_of
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork

# --- questions ------------------------------------------------------------------------------


def ask_question(
    db: Database,
    actor: Actor,
    *,
    task: str,
    workspace_id: WorkspaceRef,
    question: str,
    idempotency_key: str | None,
    answer: Callable[[TaskQuestion], dict[str, Any]],
) -> KeyedResult:
    """Ask the project's people a question about a task; it waits in their inbox (keyed). The
    ledger keeps `answer`'s words for the question.

    Raises:
        ValidationFailed, LimitExceeded, IdempotencyConflict, NotFound, PermissionDenied.
    """
    text = check_note("question", question)

    def perform(uow: UnitOfWork, found: Task, project: Project) -> Ack:
        asked = TaskQuestion(
            id=new_id("qst"),
            project_id=project.id,
            task_id=found.id,
            question=text,
            asked_by=stamp_of(uow, actor),
            asked_at=uow.now,
        )
        notes_of(uow).add_question(asked)
        record_task_event(
            uow,
            actor,
            "task.question_asked",
            found,
            project,
            payload={"questionId": asked.id, "excerpt": excerpt(text)},
        )
        return Ack(
            answer(asked),
            resource_type="question",
            resource_id=asked.id,
            project_id=project.id,
        )

    return keyed_task_write(
        db,
        actor,
        operation="ask_question",
        task=task,
        workspace_id=workspace_id,
        idempotency_key=idempotency_key,
        arguments={"question": question},
        perform=perform,
    )


def _question_not_found(question_id: str) -> NotFound:
    return NotFound(
        f"No question {question_id!r} is open to you; the inbox lists the open ones.",
        {"resource": "question", "ref": question_id},
    )


def answer_question(db: Database, actor: Actor, question_id: str, answer: str) -> QuestionAnswered:
    """Answer a question as a person (web app or operator CLI); the answer shows on the task.

    Sending the same answer again is a no-op (`changed: false`). Answering is a person's
    decision like a review, so no token answers, whatever its kind.

    Raises:
        HumanIdentityRequired: an agent token. PermissionDenied: a personal token.
        AlreadyExists: someone else (or another text) answered first; details carry the answer.
        NotFound, PermissionDenied, ValidationFailed, LimitExceeded.
    """
    require_person(actor, "Answering a question")
    require_signed_in_person(actor, "Answering a question")
    text = check_note("answer", answer)

    def work(uow: UnitOfWork) -> QuestionAnswered:
        notes = notes_of(uow)
        asked = notes.question(question_id)
        if asked is None:
            raise _question_not_found(question_id)
        try:
            found, project = access_task(
                uow, actor, asked.task_id, scope=Scope.TASKS_MANAGE, role=Role.WRITE
            )
        except NotFound:
            raise _question_not_found(question_id) from None
        stamp = actor_stamp(actor)
        if asked.answered_at is None and notes.answer_question(
            asked.id, answer=text, answered_by=stamp, at=uow.now
        ):
            answered = notes.question(asked.id)
            assert answered is not None  # noqa: S101 - answered in this transaction
            tell_asker(
                uow, actor, project, found, question_id=asked.id,
                asker=asked.asked_by.get("userId"), answer=text,
            )  # fmt: skip
            record_task_event(
                uow,
                actor,
                "task.question_answered",
                found,
                project,
                payload={
                    "questionId": asked.id,
                    "excerpt": excerpt(text),
                    "askedByTokenId": asked.asked_by.get("tokenId"),
                },
            )
            return QuestionAnswered(answered, changed=True)
        return _already_answered(notes.question(asked.id) or asked, actor, text)

    return db.write(work)


def _already_answered(question: TaskQuestion, actor: Actor, text: str) -> QuestionAnswered:
    by = question.answered_by or {}
    if question.answer == text and by.get("userId") == actor.user_id:
        return QuestionAnswered(question, changed=False)
    who = name_of(by)
    raise AlreadyExists(
        f"{who} already answered this question at {iso(question.answered_at)}; "
        "add a comment on the task to say more.",
        {"resource": "question", "questionId": question.id, "question": question_view(question)},
    )


def list_open_questions(
    db: Database,
    actor: Actor,
    project: str,
    *,
    limit: int = 50,
    offset: int = 0,
) -> OpenQuestions:
    """A project's unanswered questions, the longest waiting first, each with its task.

    Raises:
        ValidationFailed: a bad page. NotFound.
    """
    limit, offset = check_page(limit, offset)

    def work(uow: UnitOfWork) -> OpenQuestions:
        access = access_project(uow, actor, project)
        rows, total = notes_of(uow).open_questions(access.project.id, limit=limit, offset=offset)
        tasks = uow.tasks.get_many(q.task_id for q in rows)
        asked = [OpenQuestion(q, noted_task(tasks[q.task_id], access.project)) for q in rows]
        return OpenQuestions(access.project.id, asked, total, offset)

    return db.read(work)
