"""Who holds a task, as the reads show it, on both databases: get_task in each of its forms,
list rows, the activity stream, the web history's lines and the people's notifications."""

from __future__ import annotations

from datetime import timedelta

import pytest

from crewboard.contract.projects import present as project_present
from crewboard.contract.review.present_activity import entry_view
from crewboard.domain.clock import ManualClock
from crewboard.domain.identity.records import Actor, User
from crewboard.services.board import claims, tasks
from crewboard.services.board.claim_lapses import sweep_lapsed
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.services.notifications.inbox import list_notifications
from crewboard.services.projects.projects import set_project_member
from crewboard.services.review import activity
from crewboard.storage.database import Database
from tests.support import task_reads
from tests.support.factories import make_project, make_user

SCOPES = ["read", "tasks.manage"]


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    project_present.add_team_role(db, person_actor(user), project="CRW", name="Coder", kind="ai")
    for n in (1, 2):
        tasks.create_task(
            db, person_actor(user), project="CRW", workspace_id=None, idempotency_key=f"t{n}",
            title=f"Task {n}", status="ready_for_ai",
        )  # fmt: skip
    return user


def coder(db: Database, owner: User) -> Actor:
    """An agent token acting as the project's AI seat Coder (and named after it)."""
    issued = tokens.issue_token(
        db, person_actor(owner), kind="agent", scopes=SCOPES, project="CRW", name="Coder",
        seat="Coder",
    )  # fmt: skip
    return tokens.authenticate_token(db, issued.secret)


def test_get_task_names_the_holder_fence_and_lease_in_every_form_until_the_claim_lapses(
    db: Database, owner: User, clock: ManualClock
) -> None:
    reader = person_actor(owner)
    assert "claim" not in task_reads.get_task(db, reader, task="CRW-1")
    held = claims.claim_task(
        db, coder(db, owner), task="CRW-1", workspace_id=None, lease_seconds=60
    )
    until = held.claim.expires_at.isoformat()

    whole = task_reads.get_task(db, reader, task="CRW-1", include_context_pack=False)
    claim = whole["claim"]
    assert (claim["fence"], claim["expiresAt"]) == (1, until)
    assert claim["holder"] | {"tokenId": None, "roleId": None} == {
        "userId": owner.id, "tokenId": None, "roleId": None, "by": "Coder",
        "person": owner.display_name, "tokenName": "Coder", "seatName": "Coder",
    }  # fmt: skip
    assert claim["holder"]["roleId"].startswith("rol_")
    window = task_reads.get_task(db, reader, task="CRW-1", text_field="brief")
    assert window["claim"] == claim
    brief = task_reads.get_task(db, reader, task="CRW-1", format="agent_brief")
    line = brief.splitlines()[1]
    assert line.startswith(f"Claimed by Coder (for {owner.display_name}) until {until}")
    assert "fence 1" in line
    assert len(brief) <= 3000
    assert "claim" not in task_reads.get_task(db, reader, task="CRW-2")

    clock.advance(timedelta(seconds=60))  # lapsed, even before the sweeper records it
    assert "claim" not in task_reads.get_task(db, reader, task="CRW-1")
    assert "Claimed by" not in task_reads.get_task(db, reader, task="CRW-1", format="agent_brief")


def test_summary_rows_carry_claimed_by_and_until_only_for_held_tasks_other_rows_never(
    db: Database, owner: User
) -> None:
    reader = person_actor(owner)
    held = claims.claim_task(db, coder(db, owner), task="CRW-2", workspace_id=None)
    summary = task_reads.list_tasks(db, reader, project="CRW", projection="summary").rows
    by_key = {row["key"]: row for row in summary}
    assert by_key["CRW-2"]["claimedBy"] == "Coder"
    assert by_key["CRW-2"]["claimedUntil"] == held.claim.expires_at.isoformat()
    assert "claimedBy" not in by_key["CRW-1"]
    assert "claimedUntil" not in by_key["CRW-1"]
    chosen = task_reads.list_tasks(db, reader, project="CRW", fields=["key"]).rows
    assert all("claimedBy" not in row for row in chosen)  # the summary projection's column
    compact = task_reads.list_tasks(db, reader, project="CRW", projection="compact").rows
    assert all("claimedBy" not in row for row in compact)
    preview = task_reads.list_tasks(db, reader, project="CRW").rows
    assert all("claimedBy" not in row for row in preview)


def test_claim_events_read_as_sentences_in_the_activity_and_notifications(
    db: Database, owner: User, clock: ManualClock
) -> None:
    agent = coder(db, owner)
    other = make_user(db, "lead@example.com")
    set_project_member(db, person_actor(owner), project="CRW", email=other.email, role="write")
    held = claims.claim_task(db, agent, task="CRW-1", workspace_id=None, lease_seconds=30)
    claims.release_task(db, agent, task="CRW-1", workspace_id=None)
    claims.claim_task(db, agent, task="CRW-1", workspace_id=None, lease_seconds=30)
    claims.break_claim(db, person_actor(other), task="CRW-1")
    claims.claim_task(db, agent, task="CRW-2", workspace_id=None, lease_seconds=30)
    clock.advance(timedelta(seconds=30))
    assert sweep_lapsed(db) == 1

    page = activity.list_activity(db, person_actor(owner), project="CRW", limit=10)
    said = [entry_view(e)["summary"] for e in page.entries if e.event.type.startswith("task.claim")]
    clock_at = held.claim.expires_at.strftime("%H:%M UTC")
    assert said == [
        "ended the claim of Coder on CRW-2 “Task 2”: it was not renewed in time",
        f"claimed CRW-2 “Task 2” until {clock_at}",
        "broke the claim of Coder on CRW-1 “Task 1”",
        f"claimed CRW-1 “Task 1” until {clock_at}",
        "let go of the claim on CRW-1 “Task 1”",
        f"claimed CRW-1 “Task 1” until {clock_at}",
    ]

    # The owner is told of the lapse (the project's writers, lacking a task owner) and of the
    # claim its token held that another person broke; the one who broke it is not told.
    mine = list_notifications(db, person_actor(owner))["notifications"]
    titles = sorted(n["title"] for n in mine)
    assert titles == [
        # The holder by the one naming rule: the agent's seat, for its person.
        "The claim of Coder (for owner) on CRW-2 lapsed: it was not renewed in time",
        f"{other.display_name} broke the claim of Coder (for owner) on CRW-1",
    ]
    assert all(
        n["title"] != titles[1]
        for n in list_notifications(db, person_actor(other))["notifications"]
    )
