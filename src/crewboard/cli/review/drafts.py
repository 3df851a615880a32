"""Operator commands for hand-ins: a person's decisions, and a project's acceptance rules."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from crewboard.cli.common import (
    State,
    acting_person,
    as_option,
    emit,
    guarded,
    json_option,
    pass_state,
)
from crewboard.contract.review.present import decided_view, draft_read_view, rule_view
from crewboard.domain.identity.records import Actor
from crewboard.domain.review import Decided, RuleMatch
from crewboard.services.review import decisions as review
from crewboard.services.review import drafts, rules
from crewboard.storage.database import Database

comment_option = click.option("--comment", default=None, help="A note for the draft's author.")


def _decide(
    state_: State,
    as_email: str | None,
    as_json: bool,
    decide: Callable[[Database, Actor], Decided],
) -> None:

    def act(db: Database) -> None:
        result = decided_view(decide(db, acting_person(db, as_email)))
        draft = result["draft"]
        emit(as_json, result, lambda: f"draft {draft['id']} is now {draft['status']}")

    guarded(state_, as_json, act)


@click.group("review")
def review_group() -> None:
    """Decide about hand-ins: approve, reject, ask for a revision, undo a rule's acceptance."""


@review_group.command("approve")
@click.argument("draft_id")
@click.option("--memory", "to_memory", is_flag=True, help="Also save it as a memory record.")
@click.option("--collection", default=None, help="File it in this collection (with --memory).")
@click.option("--document", default=None, help="File it under this project document.")
@comment_option
@as_option
@json_option
@pass_state
def review_approve(
    state_: State,
    draft_id: str,
    to_memory: bool,
    collection: str | None,
    document: str | None,
    comment: str | None,
    as_email: str | None,
    as_json: bool,
) -> None:
    """Approve a waiting draft; its task becomes approved."""
    _decide(
        state_,
        as_email,
        as_json,
        lambda db, actor: review.approve(
            db,
            actor,
            draft_id,
            save_to_memory=to_memory,
            collection=collection,
            document=document,
            comment=comment,
        ),
    )


@review_group.command("reject")
@click.argument("draft_id")
@comment_option
@as_option
@json_option
@pass_state
def review_reject(
    state_: State, draft_id: str, comment: str | None, as_email: str | None, as_json: bool
) -> None:
    """Reject a waiting draft; its task goes back to where it was."""
    _decide(
        state_,
        as_email,
        as_json,
        lambda db, actor: review.reject(db, actor, draft_id, comment=comment),
    )


@review_group.command("revise")
@click.argument("draft_id")
@click.option("--comment", required=True, help="What to change (it becomes the follow-up's brief).")
@as_option
@json_option
@pass_state
def review_revise(
    state_: State, draft_id: str, comment: str, as_email: str | None, as_json: bool
) -> None:
    """Ask for a revision: a follow-up task carries your comment to the same assignee."""
    _decide(
        state_,
        as_email,
        as_json,
        lambda db, actor: review.request_revision(db, actor, draft_id, comment=comment),
    )


@review_group.command("undo")
@click.argument("draft_id")
@as_option
@json_option
@pass_state
def review_undo(state_: State, draft_id: str, as_email: str | None, as_json: bool) -> None:
    """Undo an acceptance rule's acceptance: the draft waits for review again."""
    _decide(
        state_,
        as_email,
        as_json,
        lambda db, actor: review.undo_rule_acceptance(db, actor, draft_id),
    )


@review_group.command("show")
@click.argument("draft_id")
@as_option
@json_option
@pass_state
def review_show(state_: State, draft_id: str, as_email: str | None, as_json: bool) -> None:
    """Show a draft in full."""

    def act(db: Database) -> None:
        found = draft_read_view(drafts.get_draft(db, acting_person(db, as_email), draft_id))
        emit(as_json, found, lambda: _draft_text(found))

    guarded(state_, as_json, act)


def _draft_text(found: dict[str, Any]) -> str:
    lines = [
        f"{found['id']}  {found['status']}  {found['taskKey'] or '-'}  {found['title']}",
        f"summary: {found['summary']}" if found["summary"] else "",
        *(f"changed input: {c.get('title') or c.get('id')}" for c in found["inputsChanged"]),
        *(f"reference: {r['kind']} {r['value']}" for r in found["references"]),
        "",
        found.get("content") or "",
    ]
    return "\n".join(line for line in lines if line is not None)


@click.group("rule")
def rule_group() -> None:
    """A project's acceptance rules: hand-ins they match are accepted without review."""


@rule_group.command("add")
@click.argument("project")
@click.option("--match", required=True, type=click.Choice([m.value for m in RuleMatch]))
@click.option("--value", default=None, help="The task type, or the AI role id.")
@click.option("--collection", default=None, help="File accepted results in this collection.")
@click.option("--document", default=None, help="File accepted results under this document.")
@as_option
@json_option
@pass_state
def rule_add(
    state_: State,
    project: str,
    match: str,
    value: str | None,
    collection: str | None,
    document: str | None,
    as_email: str | None,
    as_json: bool,
) -> None:
    """Turn on an acceptance rule (project admins)."""

    def act(db: Database) -> None:
        added = rule_view(
            rules.add_rule(
                db,
                acting_person(db, as_email),
                project,
                match=match,
                value=value,
                collection=collection,
                document=document,
            )
        )
        emit(as_json, added, lambda: f"added rule {added['id']} ({added['match']})")

    guarded(state_, as_json, act)


@rule_group.command("list")
@click.argument("project")
@as_option
@json_option
@pass_state
def rule_list(state_: State, project: str, as_email: str | None, as_json: bool) -> None:
    """List a project's acceptance rules."""

    def act(db: Database) -> None:
        found = [rule_view(r) for r in rules.list_rules(db, acting_person(db, as_email), project)]
        emit(
            as_json,
            found,
            lambda: (
                "\n".join(
                    f"{r['id']}  {r['match']}  {r['value'] or '-'}  "
                    f"{r['collection'] or '-'}  {r['document'] or '-'}"
                    for r in found
                )
                or "no acceptance rules"
            ),
        )

    guarded(state_, as_json, act)


@rule_group.command("remove")
@click.argument("rule_id")
@as_option
@json_option
@pass_state
def rule_remove(state_: State, rule_id: str, as_email: str | None, as_json: bool) -> None:
    """Turn an acceptance rule off."""

    def act(db: Database) -> None:
        removed = rule_view(rules.remove_rule(db, acting_person(db, as_email), rule_id))
        emit(as_json, removed, lambda: f"removed rule {removed['id']}")

    guarded(state_, as_json, act)


def register(cli: click.Group) -> None:
    """Add this module's command groups to the CLI."""
    cli.add_command(review_group)
    cli.add_command(rule_group)
