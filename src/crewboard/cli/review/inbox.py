"""`crewboard inbox list`: what waits for a person's decision."""

from __future__ import annotations

from typing import Any

import click

from crewboard.cli.common import (
    PAGE_LIMIT,
    State,
    acting_person,
    as_option,
    emit,
    guarded,
    json_option,
    pass_state,
)
from crewboard.contract.board.present_notes import open_questions_view, question_answered_view
from crewboard.contract.review.present_inbox import inbox_view
from crewboard.services.board import questions
from crewboard.services.review import inbox as inbox_service
from crewboard.storage.database import Database


@click.group("inbox")
def inbox_group() -> None:
    """The review inbox: hand-ins, proposals, questions and messages waiting for a person."""


@inbox_group.command("list")
@click.option("--project", default=None, help="Only this project (key or id).")
@click.option("--limit", default=50, show_default=True, type=PAGE_LIMIT)
@as_option
@json_option
@pass_state
def inbox_list(
    state_: State, project: str | None, limit: int, as_email: str | None, as_json: bool
) -> None:
    """List what waits for you, newest first, with counts of each kind."""

    def act(db: Database) -> None:
        found = inbox_view(
            inbox_service.inbox(db, acting_person(db, as_email), project=project, limit=limit)
        )
        emit(as_json, found, lambda: _text(found))

    guarded(state_, as_json, act)


def _text(found: dict[str, Any]) -> str:
    counts = ", ".join(f"{n} {kind.replace('_', '-')}" for kind, n in found["counts"].items())
    lines = [f"inbox: {counts}"]
    for item in found["items"]:
        title = item.get("title") or item.get("question") or item.get("body") or item.get("kind")
        lines.append(f"{item['kind']:<9} {item['id']}  {str(title)[:80]}")
    return "\n".join(lines)


@click.group("question")
def question_group() -> None:
    """Questions agents asked about tasks; a person answers them."""


@question_group.command("list")
@click.argument("project")
@as_option
@json_option
@pass_state
def question_list(state_: State, project: str, as_email: str | None, as_json: bool) -> None:
    """A project's open questions, the longest waiting first."""

    def act(db: Database) -> None:
        found = open_questions_view(
            questions.list_open_questions(db, acting_person(db, as_email), project)
        )
        emit(
            as_json,
            found,
            lambda: (
                "\n".join(
                    f"{q['id']}  {q['task']['key']}  {q['question'][:80]}"
                    for q in found["questions"]
                )
                or "no open questions"
            ),
        )

    guarded(state_, as_json, act)


@question_group.command("answer")
@click.argument("question_id")
@click.option("--text", "answer", required=True, help="The answer (markdown).")
@as_option
@json_option
@pass_state
def question_answer(
    state_: State, question_id: str, answer: str, as_email: str | None, as_json: bool
) -> None:
    """Answer a question; the answer shows on its task."""

    def act(db: Database) -> None:
        done = question_answered_view(
            questions.answer_question(db, acting_person(db, as_email), question_id, answer)
        )
        emit(as_json, done, lambda: f"answered {done['question']['id']}")

    guarded(state_, as_json, act)


def register(cli: click.Group) -> None:
    cli.add_command(inbox_group)
    cli.add_command(question_group)
