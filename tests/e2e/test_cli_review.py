"""`crewboard review …` and `crewboard rule …` in-process (click's runner) on each backend."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from click.testing import Result
from sqlalchemy.engine import URL

from crewboard.contract.review.present import hand_in_view
from crewboard.services.board import tasks
from crewboard.services.identity import tokens, users
from crewboard.services.identity.users import person_actor
from crewboard.services.review import drafts
from crewboard.storage.database import Database
from tests.support.cli import RunCli


@pytest.fixture
def run(run: RunCli) -> RunCli:
    """The CLI on a database `crewboard init` has set up."""
    assert run("init").exit_code == 0
    return run


@pytest.fixture
def hand_ins(empty_database_url: URL, run: RunCli) -> Callable[[int], list[str]]:
    """Hand in `n` drafts on DEMO-1 through a personal token of the owner."""

    def make(n: int) -> list[str]:
        db = Database(empty_database_url)
        try:
            owner = person_actor(next(u for u in users.list_users(db) if u.is_owner))
            tasks.create_task(
                db, owner, project="DEMO", workspace_id=None, idempotency_key="t", title="Write it"
            )
            issued = tokens.issue_token(
                db, owner, kind="personal", scopes=["read", "tasks.manage", "drafts.create"]
            )
            agent = tokens.authenticate_token(db, issued.secret)
            return [
                drafts.submit_result(
                    db, agent, project="DEMO", workspace_id=None, task="DEMO-1",
                    idempotency_key=f"h-{i}", expected_revision=1, context_receipt_id=None,
                    title=f"Result {i}", content="Done.", answer=hand_in_view,
                ).body["draft"]["id"]
                for i in range(n)
            ]  # fmt: skip
        finally:
            db.dispose()

    return make


def as_json(result: Result) -> Any:
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_a_person_approves_rejects_and_asks_for_revisions_at_the_cli(
    run: RunCli, hand_ins: Callable[[int], list[str]]
) -> None:
    first, second, third = hand_ins(3)
    revised = as_json(run("review", "revise", first, "--comment", "More detail.", "--json"))
    assert revised["draft"]["status"] == "revision_requested"
    assert revised["followUpTaskId"].startswith("tsk_")
    rejected = as_json(run("review", "reject", second, "--comment", "No.", "--json"))
    assert rejected["draft"]["reviewComment"] == "No."
    approved = as_json(
        run("review", "approve", third, "--memory", "--collection", "general", "--json")
    )
    assert approved["draft"]["status"] == "saved_to_memory"
    assert approved["memoryRecordId"] is not None
    shown = as_json(run("review", "show", first, "--json"))
    assert shown["status"] == "superseded"
    assert [v["id"] for v in shown["versions"]] == [first, second, third]
    plain = run("review", "show", third)
    assert plain.exit_code == 0
    assert "saved_to_memory" in plain.output


def test_decision_errors_exit_1_with_the_code(
    run: RunCli, hand_ins: Callable[[int], list[str]]
) -> None:
    [draft] = hand_ins(1)
    assert run("review", "reject", draft).exit_code == 0
    again = run("review", "approve", draft, "--json")
    assert again.exit_code == 1
    error = json.loads(again.output)["error"]
    assert (error["code"], error["details"]["status"]) == ("VALIDATION", "rejected")
    missing = run("review", "approve", "drf_nope")
    assert missing.exit_code == 1
    assert "NOT_FOUND" in missing.output
    no_comment = run("review", "revise", draft)
    assert no_comment.exit_code != 0


def test_rules_are_added_listed_used_undone_and_removed(
    run: RunCli, hand_ins: Callable[[int], list[str]]
) -> None:
    rule = as_json(run("rule", "add", "DEMO", "--match", "all", "--document", "notes", "--json"))
    assert (rule["match"], rule["document"]) == ("all", "notes")
    assert [r["id"] for r in as_json(run("rule", "list", "DEMO", "--json"))] == [rule["id"]]
    [draft] = hand_ins(1)
    shown = as_json(run("review", "show", draft, "--json"))
    assert (shown["status"], shown["ruleId"]) == ("accepted_by_rule", rule["id"])
    undone = as_json(run("review", "undo", draft, "--json"))
    assert undone["draft"]["status"] == "returned_to_review"
    assert undone["task"]["status"] == "review"
    assert as_json(run("rule", "remove", rule["id"], "--json"))["id"] == rule["id"]
    assert run("rule", "list", "DEMO").output.strip() == "no acceptance rules"
    bad = run("rule", "add", "DEMO", "--match", "task_type", "--value", "poetry", "--json")
    assert bad.exit_code == 1
    assert json.loads(bad.output)["error"]["details"]["field"] == "value"
