"""Operator commands for hand-ins: a person's decisions, and a project's acceptance rules."""

from __future__ import annotations

from typing import Any

import click

from crewboard.cli.common import Shown, as_person
from crewboard.contract.review.present import decided_view, draft_read_view, rule_view
from crewboard.domain.identity.records import Actor
from crewboard.domain.review import Decided, RuleMatch
from crewboard.services.review import decisions as review
from crewboard.services.review import drafts, rules
from crewboard.storage.database import Database

comment_option = click.option("--comment", default=None, help="A note for the draft's author.")


def _decided(decided: Decided) -> Shown:
    result = decided_view(decided)
    draft = result["draft"]
    return result, lambda: f"draft {draft['id']} is now {draft['status']}"


@click.group("review")
def review_group() -> None:
    """Decide about hand-ins: approve, reject, ask for a revision, undo a rule's acceptance."""


@review_group.command("approve")
@click.argument("draft_id")
@click.option("--memory", "to_memory", is_flag=True, help="Also save it as a memory record.")
@click.option("--collection", default=None, help="File it in this collection (with --memory).")
@click.option("--document", default=None, help="File it under this project document.")
@comment_option
@as_person
def review_approve(
    db: Database,
    actor: Actor,
    draft_id: str,
    to_memory: bool,
    collection: str | None,
    document: str | None,
    comment: str | None,
) -> Shown:
    """Approve a waiting draft; its task becomes approved."""
    return _decided(
        review.approve(
            db,
            actor,
            draft_id,
            save_to_memory=to_memory,
            collection=collection,
            document=document,
            comment=comment,
        )
    )


@review_group.command("reject")
@click.argument("draft_id")
@comment_option
@as_person
def review_reject(db: Database, actor: Actor, draft_id: str, comment: str | None) -> Shown:
    """Reject a waiting draft; its task goes back to where it was."""
    return _decided(review.reject(db, actor, draft_id, comment=comment))


@review_group.command("revise")
@click.argument("draft_id")
@click.option("--comment", required=True, help="What to change (it becomes the follow-up's brief).")
@as_person
def review_revise(db: Database, actor: Actor, draft_id: str, comment: str) -> Shown:
    """Ask for a revision: a follow-up task carries your comment to the same assignee."""
    return _decided(review.request_revision(db, actor, draft_id, comment=comment))


@review_group.command("undo")
@click.argument("draft_id")
@as_person
def review_undo(db: Database, actor: Actor, draft_id: str) -> Shown:
    """Undo an acceptance rule's acceptance: the draft waits for review again."""
    return _decided(review.undo_rule_acceptance(db, actor, draft_id))


@review_group.command("show")
@click.argument("draft_id")
@as_person
def review_show(db: Database, actor: Actor, draft_id: str) -> Shown:
    """Show a draft in full."""
    found = draft_read_view(drafts.get_draft(db, actor, draft_id))
    return found, lambda: _draft_text(found)


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
@as_person
def rule_add(
    db: Database,
    actor: Actor,
    project: str,
    match: str,
    value: str | None,
    collection: str | None,
    document: str | None,
) -> Shown:
    """Turn on an acceptance rule (project admins)."""
    added = rule_view(
        rules.add_rule(
            db, actor, project, match=match, value=value, collection=collection, document=document
        )
    )
    return added, lambda: f"added rule {added['id']} ({added['match']})"


@rule_group.command("list")
@click.argument("project")
@as_person
def rule_list(db: Database, actor: Actor, project: str) -> Shown:
    """List a project's acceptance rules."""
    found = [rule_view(r) for r in rules.list_rules(db, actor, project)]
    return (
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


@rule_group.command("remove")
@click.argument("rule_id")
@as_person
def rule_remove(db: Database, actor: Actor, rule_id: str) -> Shown:
    """Turn an acceptance rule off."""
    removed = rule_view(rules.remove_rule(db, actor, rule_id))
    return removed, lambda: f"removed rule {removed['id']}"


def register(cli: click.Group) -> None:
    """Add this module's command groups to the CLI."""
    cli.add_command(review_group)
    cli.add_command(rule_group)
