"""`crewboard proposal`, `activity` and `message` in-process (click's runner) on each backend."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy.engine import URL

from crewboard.contract.review.present_proposals import proposed_view
from crewboard.services.identity import users
from crewboard.services.review import proposals
from crewboard.storage.database import Database
from tests.support.cli import RunCli


@pytest.fixture
def run(run: RunCli) -> RunCli:
    """The CLI on a database `crewboard init` has set up."""
    assert run("init").exit_code == 0
    return run


@pytest.fixture
def db(empty_database_url: URL, run: Any) -> Iterator[Database]:
    database = Database(empty_database_url)
    yield database
    database.dispose()


def propose(db: Database, title: str) -> str:
    owner = next(u for u in users.list_users(db) if u.is_owner)
    made = proposals.propose_task(
        db, users.person_actor(owner), project="DEMO", title=title, answer=proposed_view
    )
    return str(made.body["proposal"]["id"])


def test_proposal_accept_applies_the_card_and_prints_it_as_json(run, db: Database) -> None:  # type: ignore[no-untyped-def]
    card = propose(db, "Write the README")
    accepted = run("proposal", "accept", card, "--json")
    assert accepted.exit_code == 0, accepted.output
    decided = json.loads(accepted.output)
    assert (decided["id"], decided["status"]) == (card, "accepted")
    assert decided["result"]["taskKey"] == decided["taskKey"]
    again = run("proposal", "accept", card, "--json")
    assert again.exit_code == 1
    error = json.loads(again.output)["error"]
    assert (error["code"], error["details"]["status"]) == ("VALIDATION", "accepted")
    shown = json.loads(run("proposal", "show", card, "--json").output)
    assert shown["decidedBy"]["kind"] == "person"
    listed = json.loads(run("proposal", "list", "--project", "DEMO", "--json").output)
    assert [c["id"] for c in listed["proposals"]] == [card]
    feed = json.loads(run("activity", "list", "DEMO", "--limit", "3", "--json").output)
    assert [e["type"] for e in feed["entries"]][:2] == ["proposal.accepted", "task.created"]
    after = json.loads(run("activity", "list", "DEMO", "--since", feed["cursor"], "--json").output)
    assert (after["entries"], after["cursor"]) == ([], feed["cursor"])


def test_dismiss_and_the_plain_text_forms(run, db: Database) -> None:  # type: ignore[no-untyped-def]
    card = propose(db, "Spike")
    plain = run("proposal", "dismiss", card)
    assert (plain.exit_code, plain.output.strip()) == (0, f"dismissed proposal {card}")
    assert run("proposal", "list", "--status", "pending").output.strip() == "no proposals"
    assert "dismissed" in run("proposal", "list").output
    missing = run("proposal", "accept", "prp_nope")
    assert missing.exit_code == 1
    assert "NOT_FOUND" in missing.output
    owner_id = next(u for u in users.list_users(db) if u.is_owner).id
    thread = run("message", "list", "DEMO", owner_id, "--json")
    assert json.loads(thread.output)["messages"] == []
    assert "cursor: act_" in run("activity", "list", "DEMO").output
