"""`crewboard inbox list`: what waits for a person's decision."""

from __future__ import annotations

from typing import Any

import click

from crewboard.cli.common import (
    PAGE_LIMIT,
    Shown,
    as_person,
)
from crewboard.contract.board.present_notes import open_questions_view, question_answered_view
from crewboard.contract.review.present_inbox import inbox_view
from crewboard.domain.identity.records import Actor
from crewboard.services.board import questions
from crewboard.services.review import inbox as inbox_service
from crewboard.storage.database import Database


@click.group("inbox")
def inbox_group() -> None:
    """The review inbox: hand-ins, proposals, questions and messages waiting for a person."""


@inbox_group.command("list")
@click.option("--project", default=None, help="Only this project (key or id).")
@click.option("--limit", default=50, show_default=True, type=PAGE_LIMIT)
@as_person
def inbox_list(db: Database, actor: Actor, project: str | None, limit: int) -> Shown:
    """List what waits for you, newest first, with counts of each kind."""
    found = inbox_view(inbox_service.inbox(db, actor, project=project, limit=limit))
    return found, lambda: _text(found)


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
@as_person
def question_list(db: Database, actor: Actor, project: str) -> Shown:
    """A project's open questions, the longest waiting first."""
    found = open_questions_view(questions.list_open_questions(db, actor, project))
    return (
        found,
        lambda: (
            "\n".join(
                f"{q['id']}  {q['task']['key']}  {q['question'][:80]}" for q in found["questions"]
            )
            or "no open questions"
        ),
    )


@question_group.command("answer")
@click.argument("question_id")
@click.option("--text", "answer", required=True, help="The answer (markdown).")
@as_person
def question_answer(db: Database, actor: Actor, question_id: str, answer: str) -> Shown:
    """Answer a question; the answer shows on its task."""
    done = question_answered_view(questions.answer_question(db, actor, question_id, answer))
    return done, lambda: f"answered {done['question']['id']}"


def register(cli: click.Group) -> None:
    cli.add_command(inbox_group)
    cli.add_command(question_group)
