"""Operator commands: decide proposal cards, follow a project's activity, read inbox threads."""

from __future__ import annotations

from typing import Any

import click

from crewboard.cli.common import (
    PAGE_LIMIT,
    State,
    acting_person,
    as_option,
    check_args,
    emit,
    guarded,
    json_option,
    pass_state,
)
from crewboard.contract.review.activity import ListActivity
from crewboard.contract.review.present_activity import entry_view
from crewboard.contract.review.present_inbox import thread_view
from crewboard.contract.review.present_proposals import proposal_page_view, proposal_view
from crewboard.services.review import activity, messages, proposals
from crewboard.storage.database import Database


def _card_line(card: dict[str, Any]) -> str:
    about = f"  {card['taskKey']}" if card.get("taskKey") else ""
    return f"{card['id']}  {card['status']:<9}  {card['kind']}{about}"


@click.group("proposal")
def proposal_group() -> None:
    """Proposal cards agents leave in the inbox: a person accepts or dismisses each."""


def _decide(verb: str, decide: Any) -> Any:
    @proposal_group.command(verb)
    @click.argument("proposal_id", metavar="ID")
    @as_option
    @json_option
    @pass_state
    def command(state_: State, proposal_id: str, as_email: str | None, as_json: bool) -> None:

        def act(db: Database) -> None:
            card = proposal_view(decide(db, acting_person(db, as_email), proposal_id))
            emit(as_json, card, lambda: f"{card['status']} proposal {card['id']}")

        guarded(state_, as_json, act)

    return command


accept = _decide("accept", proposals.accept_proposal)
accept.help = "Accept a proposal card: apply it and record what it made."
dismiss = _decide("dismiss", proposals.dismiss_proposal)
dismiss.help = "Dismiss a proposal card; nothing else changes."


@proposal_group.command("list")
@click.option("--project", default=None, help="Only this project (id or key).")
@click.option("--status", default=None, type=click.Choice(["pending", "accepted", "dismissed"]))
@click.option("--limit", default=50, show_default=True, type=PAGE_LIMIT)
@as_option
@json_option
@pass_state
def proposal_list(
    state_: State,
    project: str | None,
    status: str | None,
    limit: int,
    as_email: str | None,
    as_json: bool,
) -> None:
    """List proposal cards, newest first."""

    def act(db: Database) -> None:
        found = proposal_page_view(
            proposals.list_proposals(
                db, acting_person(db, as_email), project=project, status=status, limit=limit
            )
        )
        cards = found["proposals"]
        emit(
            as_json,
            found,
            lambda: "\n".join(_card_line(c) for c in cards) or "no proposals",
        )

    guarded(state_, as_json, act)


@proposal_group.command("show")
@click.argument("proposal_id", metavar="ID")
@as_option
@json_option
@pass_state
def proposal_show(state_: State, proposal_id: str, as_email: str | None, as_json: bool) -> None:
    """Show one proposal card with what it proposes."""

    def act(db: Database) -> None:
        card = proposal_view(proposals.get_proposal(db, acting_person(db, as_email), proposal_id))
        emit(as_json, card, lambda: f"{_card_line(card)}\n{card['payload']}")

    guarded(state_, as_json, act)


@click.group("activity")
def activity_group() -> None:
    """What happened in a project."""


@activity_group.command("list")
@click.argument("project")
@click.option(
    "--limit", default=20, show_default=True, type=int, help=f"1 to {activity.MAX_LIMIT}."
)
@click.option("--since", default=None, help="A cursor from an earlier listing.")
@as_option
@json_option
@pass_state
def activity_list(
    state_: State,
    project: str,
    limit: int,
    since: str | None,
    as_email: str | None,
    as_json: bool,
) -> None:
    """List a project's activity, newest first (with --since: what came after, oldest first)."""

    def act(db: Database) -> None:
        # The model checks the values, so a bad one is MCP's refusal, not a usage error.
        args = check_args(ListActivity, {"projectId": project, "limit": limit, "since": since})
        found = activity.list_activity(
            db, acting_person(db, as_email), project=args.project_id, limit=args.limit,
            since=args.since,
        )  # fmt: skip
        entries, cursor = [entry_view(e) for e in found.entries], found.cursor
        lines = [f"{e['at']}  {e['type']:<26}  {e['summary']}" for e in entries]
        emit(
            as_json,
            {"entries": entries, "cursor": cursor},
            lambda: "\n".join([*lines, f"cursor: {cursor}"]),
        )

    guarded(state_, as_json, act)


@click.group("message")
def message_group() -> None:
    """Inbox threads: one per team role or person of a project."""


@message_group.command("list")
@click.argument("project")
@click.argument("participant")
@click.option("--limit", default=50, show_default=True, type=PAGE_LIMIT)
@as_option
@json_option
@pass_state
def message_list(
    state_: State,
    project: str,
    participant: str,
    limit: int,
    as_email: str | None,
    as_json: bool,
) -> None:
    """List a participant's thread, newest first."""

    def act(db: Database) -> None:
        thread = thread_view(
            messages.list_thread(db, acting_person(db, as_email), project, participant, limit=limit)
        )
        lines = [
            f"{m['createdAt']}  {m['author'].get('displayName', '')}: {m['body']}"
            for m in thread["messages"]
        ]
        emit(as_json, thread, lambda: "\n".join(lines) or "no messages")

    guarded(state_, as_json, act)


def register(cli: click.Group) -> None:
    """Add this module's command groups to the CLI."""
    for group in (proposal_group, activity_group, message_group):
        cli.add_command(group)
