"""Proposal cards through the services: agents propose, only a person signed in decides."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import select

from crewboard.contract.board import present_notes
from crewboard.contract.projects import present
from crewboard.contract.review.present_proposals import (
    proposal_page_view,
    proposal_view,
    proposed_view,
)
from crewboard.domain.clock import ManualClock
from crewboard.domain.identity.access import Role
from crewboard.domain.identity.records import Actor, User
from crewboard.errors import ErrorCode
from crewboard.services.board import notes as task_notes
from crewboard.services.board import task_updates, tasks
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.services.review import proposals
from crewboard.services.review.proposals import pending_proposals
from crewboard.storage import tables as t
from crewboard.storage.database import Database
from tests.support.errors import refused
from tests.support.factories import count_rows, grant, make_project, make_user, token_actor

ALL_AGENT_SCOPES = ["read", "tasks.manage", "team.manage", "messages.write"]
# What a decision may touch besides the tables it is meant to change.
BOOKKEEPING = {"proposals", "events", "idempotency_keys"}


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    person = person_actor(user)
    for n, title in enumerate(("Fix the login redirect", "Write the release notes"), start=1):
        tasks.create_task(
            db, person, project="CRW", workspace_id=None, idempotency_key=f"t-{n}", title=title
        )
    present.add_team_role(db, person, project="CRW", name="Quill", role="Technical writer")
    present.add_team_role(db, person, project="CRW", name="Ada", role="Developer", kind="human")
    return user


@pytest.fixture
def agent(db: Database, owner: User) -> Actor:
    issued = tokens.issue_token(
        db, person_actor(owner), kind="agent", scopes=ALL_AGENT_SCOPES, project="CRW"
    )
    return tokens.authenticate_token(db, issued.secret)


def rows(db: Database, table: str) -> list[dict[str, Any]]:
    with db.engine.connect() as conn:
        found = conn.execute(select(t.metadata.tables[table])).mappings().all()
    return sorted((dict(r) for r in found), key=repr)


def snapshot(db: Database) -> dict[str, list[dict[str, Any]]]:
    return {name: rows(db, name) for name in t.metadata.tables if name not in BOOKKEEPING}


def by_id(db: Database, table: str) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in rows(db, table)}


def event_types(db: Database) -> list[str]:
    return [
        e["type"] for e in db.read(lambda uow: uow.events.list_after(project_id=None, limit=1000))
    ]


def role_id(db: Database, owner: User, name: str) -> str:
    (found,) = [
        r
        for r in present.list_team(db, person_actor(owner), project="CRW")[0]["roles"]
        if r["name"] == name
    ]
    return str(found["id"])


def card(result: Any) -> dict[str, Any]:
    return dict(result.body["proposal"])


# --- each kind, accepted ------------------------------------------------------------------------


def test_an_accepted_task_card_creates_one_backlog_task_assigned_to_the_role_it_names(
    db: Database, owner: User, agent: Actor
) -> None:
    made = card(
        proposals.propose_task(
            db,
            agent,
            project="CRW",
            workspace_id=None,
            title="Document the API",
            description="All endpoints.",
            type_hint="writing",
            role_hint="technical WRITER",
            answer=proposed_view,
        )
    )
    assert (made["kind"], made["status"], made["taskId"]) == ("task", "pending", None)
    assert made["author"]["tokenId"] == agent.principal
    before = by_id(db, "tasks")
    assert len(before) == 2  # proposing changed nothing on the board
    decided = proposal_view(proposals.accept_proposal(db, person_actor(owner), made["id"]))
    after = by_id(db, "tasks")
    (new_id,) = set(after) - set(before)
    assert {k: after[k] for k in before} == before
    new = after[new_id]
    assert (new["title"], new["description"], new["type"], new["status"]) == (
        "Document the API",
        "All endpoints.",
        "writing",
        "backlog",
    )
    assert (new["assignee_id"], new["assignee_type"]) == (role_id(db, owner, "Quill"), "ai")
    assert decided["status"] == "accepted"
    assert decided["result"]["taskId"] == new_id
    assert (decided["taskId"], decided["taskKey"]) == (new_id, "CRW-3")
    assert decided["decidedBy"]["userId"] == owner.id
    assert "proposal.accepted" in event_types(db)


def test_a_task_card_whose_role_hint_matches_no_role_lands_unassigned(
    db: Database, owner: User, agent: Actor
) -> None:
    made = card(
        proposals.propose_task(
            db, agent, project="CRW", title="Spike", role_hint="Nobody", answer=proposed_view
        )
    )
    result = proposal_view(proposals.accept_proposal(db, person_actor(owner), made["id"]))["result"]
    task = by_id(db, "tasks")[result["taskId"]]
    assert (task["assignee_id"], task["type"]) == (None, "general")


def test_a_task_update_card_keeps_the_diff_and_applies_at_the_tasks_current_revision(
    db: Database, owner: User, agent: Actor
) -> None:
    made = card(
        proposals.propose_task_update(
            db,
            agent,
            task="CRW-1",
            changes={"title": "Fix the login redirect loop", "priority": "high", "roleHint": "ada"},
            reason="It loops.",
            answer=proposed_view,
        )
    )
    assert made["payload"]["changes"] == {
        "title": {"from": "Fix the login redirect", "to": "Fix the login redirect loop"},
        "priority": {"from": "medium", "to": "high"},
        "roleHint": {"from": None, "to": "ada"},
    }
    assert (made["reason"], made["taskKey"]) == ("It loops.", "CRW-1")
    # Someone changes the task after the card was made: accept applies to what it is now.
    task_updates.update_task(
        db,
        person_actor(owner),
        project=None,
        workspace_id=None,
        idempotency_key=None,
        task_id="CRW-1",
        expected_revision=1,
        patch={"description": "Seen on Safari."},
    )
    before = by_id(db, "tasks")
    decided = proposal_view(proposals.accept_proposal(db, person_actor(owner), made["id"]))
    after = by_id(db, "tasks")
    task_id = made["taskId"]
    changed = {k for k in after[task_id] if after[task_id][k] != before[task_id][k]}
    # The same person at the same moment: who and when stay equal, the rest moved.
    assert changed == {"title", "priority", "assignee_id", "assignee_type", "revision"}
    assert after[task_id]["description"] == "Seen on Safari."
    assert after[task_id]["assignee_id"] == role_id(db, owner, "Ada")
    assert after[task_id]["revision"] == 3
    assert {k: v for k, v in after.items() if k != task_id} == {
        k: v for k, v in before.items() if k != task_id
    }
    assert decided["result"]["applied"] == ["assigneeId", "priority", "title"]


def test_a_task_update_whose_role_hint_matches_nothing_leaves_the_assignee(
    db: Database, owner: User, agent: Actor
) -> None:
    task_updates.update_task(
        db,
        person_actor(owner),
        project=None,
        workspace_id=None,
        idempotency_key=None,
        task_id="CRW-2",
        expected_revision=1,
        patch={"assignee_id": role_id(db, owner, "Ada")},
    )
    made = card(
        proposals.propose_task_update(
            db,
            agent,
            task="CRW-2",
            changes={"status": "ready_for_ai", "roleHint": "Nobody"},
            answer=proposed_view,
        )
    )
    assert made["payload"]["changes"]["roleHint"] == {"from": "Ada", "to": "Nobody"}
    proposals.accept_proposal(db, person_actor(owner), made["id"])
    task = by_id(db, "tasks")[made["taskId"]]
    assert (task["status"], task["assignee_id"]) == ("ready_for_ai", role_id(db, owner, "Ada"))


def test_an_accepted_delete_card_removes_the_task_and_what_hangs_off_it(
    db: Database, owner: User, agent: Actor
) -> None:
    person = person_actor(owner)
    task_notes.post_comment(
        db,
        person,
        task="CRW-1",
        workspace_id=None,
        content="note",
        idempotency_key="c-1",
        answer=present_notes.comment_answer,
    )
    task_updates.update_task(
        db,
        person,
        project=None,
        workspace_id=None,
        idempotency_key=None,
        task_id="CRW-2",
        expected_revision=1,
        patch={"parent_task_id": by_number(db, 1)["id"]},
    )
    made = card(
        proposals.propose_task_delete(
            db, agent, task="CRW-1", reason="Duplicate.", answer=proposed_view
        )
    )
    assert made["payload"] == {"title": "Fix the login redirect", "status": "backlog"}
    doomed = made["taskId"]
    decided = proposal_view(proposals.accept_proposal(db, person, made["id"]))
    assert doomed not in by_id(db, "tasks")
    assert count_rows(db, "task_comments") == 0
    child = by_number(db, 2)
    assert (child["parent_task_id"], child["revision"]) == (None, 3)
    assert decided["result"] == {"taskId": doomed, "taskKey": "CRW-1", "deleted": True}
    assert decided["taskKey"] == "CRW-1"
    assert "task.deleted" in event_types(db)


def by_number(db: Database, number: int) -> dict[str, Any]:
    (found,) = [r for r in rows(db, "tasks") if r["number"] == number]
    return found


def test_an_accepted_role_card_adds_one_unheld_human_seat(
    db: Database, owner: User, agent: Actor
) -> None:
    made = card(
        proposals.propose_role(
            db,
            agent,
            project="CRW",
            name="Mira",
            role="Illustrator",
            description="Covers.",
            answer=proposed_view,
        )
    )
    before = by_id(db, "team_roles")
    decided = proposal_view(proposals.accept_proposal(db, person_actor(owner), made["id"]))
    after = by_id(db, "team_roles")
    (new_id,) = set(after) - set(before)
    assert {k: after[k] for k in before} == before
    seat = after[new_id]
    assert (seat["name"], seat["role"], seat["kind"], seat["member_user_id"]) == (
        "Mira",
        "Illustrator",
        "human",
        None,
    )
    assert (seat["level"], seat["xp"], seat["model"]) == (1, 0, None)
    assert decided["result"] == {"roleIds": [new_id]}


def test_an_accepted_composition_adds_every_seat_in_order(
    db: Database, owner: User, agent: Actor
) -> None:
    seats = [
        {"role": "Animator", "typeHint": "ai"},
        {"role": "Composer", "name": "Lena"},
        {"role": "Editor", "typeHint": "human"},
    ]
    made = card(
        proposals.propose_composition(
            db, agent, project="CRW", seats=seats, rationale="A film.", answer=proposed_view
        )
    )
    assert made["payload"]["seats"][0] == {"role": "Animator", "name": "Animator", "typeHint": "ai"}
    before = set(by_id(db, "team_roles"))
    decided = proposal_view(proposals.accept_proposal(db, person_actor(owner), made["id"]))
    after = by_id(db, "team_roles")
    made_ids = decided["result"]["roleIds"]
    assert set(made_ids) == set(after) - before
    assert [(after[i]["name"], after[i]["kind"], after[i]["rank"]) for i in made_ids] == [
        ("Animator", "ai", 0),
        ("Lena", "human", 1),
        ("Editor", "human", 2),
    ]


# --- dismissing and deciding once ---------------------------------------------------------------


def every_kind(db: Database, agent: Actor) -> list[dict[str, Any]]:
    return [
        card(proposals.propose_task(db, agent, project="CRW", title="New", answer=proposed_view)),
        card(
            proposals.propose_task_update(
                db, agent, task="CRW-1", changes={"status": "done"}, answer=proposed_view
            )
        ),
        card(proposals.propose_task_delete(db, agent, task="CRW-2", answer=proposed_view)),
        card(
            proposals.propose_role(
                db, agent, project="CRW", name="Mira", role="Illustrator", answer=proposed_view
            )
        ),
        card(
            proposals.propose_composition(
                db, agent, project="CRW", seats=[{"role": "Editor"}], answer=proposed_view
            )
        ),
    ]


def test_dismissing_any_card_leaves_everything_as_it_was(
    db: Database, owner: User, agent: Actor
) -> None:
    cards = every_kind(db, agent)
    before = snapshot(db)
    for made in cards:
        decided = proposal_view(proposals.dismiss_proposal(db, person_actor(owner), made["id"]))
        assert (decided["status"], decided["result"]) == ("dismissed", None)
    assert snapshot(db) == before
    assert event_types(db).count("proposal.dismissed") == 5


def test_a_decided_card_cannot_be_decided_again(db: Database, owner: User, agent: Actor) -> None:
    person = person_actor(owner)
    first, second = every_kind(db, agent)[3:]
    proposals.accept_proposal(db, person, first["id"])
    proposals.dismiss_proposal(db, person, second["id"])
    seats = count_rows(db, "team_roles")
    for decide in (proposals.accept_proposal, proposals.dismiss_proposal):
        again = refused(ErrorCode.VALIDATION, decide, db, person, first["id"])
        assert again.details["status"] == "accepted"
        later = refused(ErrorCode.VALIDATION, decide, db, person, second["id"])
        assert later.details["status"] == "dismissed"
    assert count_rows(db, "team_roles") == seats


def test_no_token_decides_a_card_whatever_its_kind_and_scopes(
    db: Database, owner: User, agent: Actor
) -> None:
    made = card(proposals.propose_task(db, agent, project="CRW", title="New", answer=proposed_view))
    personal = token_actor(db, owner, [*ALL_AGENT_SCOPES, "projects.admin"])
    for actor in (agent, personal):
        for decide in (proposals.accept_proposal, proposals.dismiss_proposal):
            refused(ErrorCode.PERMISSION_DENIED, decide, db, actor, made["id"])
    assert (
        proposal_view(proposals.get_proposal(db, person_actor(owner), made["id"]))["status"]
        == "pending"
    )
    assert count_rows(db, "tasks") == 2


def test_team_cards_need_a_project_admin_and_task_cards_a_writer(
    db: Database, owner: User, agent: Actor
) -> None:
    writer = make_user(db, "writer@example.com")
    grant(db, owner, "CRW", writer, Role.WRITE)
    task_card, role_card = (
        card(proposals.propose_task(db, agent, project="CRW", title="New", answer=proposed_view)),
        card(
            proposals.propose_role(
                db, agent, project="CRW", name="Mira", role="Illustrator", answer=proposed_view
            )
        ),
    )
    refused(
        ErrorCode.PERMISSION_DENIED,
        proposals.accept_proposal,
        db,
        person_actor(writer),
        role_card["id"],
    )
    assert (
        proposal_view(proposals.accept_proposal(db, person_actor(writer), task_card["id"]))[
            "status"
        ]
        == "accepted"
    )
    stranger = make_user(db, "stranger@example.com")
    refused(
        ErrorCode.NOT_FOUND, proposals.accept_proposal, db, person_actor(stranger), role_card["id"]
    )
    refused(
        ErrorCode.NOT_FOUND, proposals.get_proposal, db, person_actor(stranger), role_card["id"]
    )


# --- proposing ----------------------------------------------------------------------------------


def test_a_composition_holds_one_to_twelve_seats(db: Database, agent: Actor) -> None:
    empty = refused(
        ErrorCode.VALIDATION,
        proposals.propose_composition,
        db,
        agent,
        project="CRW",
        seats=[],
        answer=proposed_view,
    )
    assert empty.details["field"] == "seats"
    many = [{"role": f"Role {n}"} for n in range(13)]
    over = refused(
        ErrorCode.LIMIT_EXCEEDED,
        proposals.propose_composition,
        db,
        agent,
        project="CRW",
        seats=many,
        answer=proposed_view,
    )
    assert over.details["field"] == "seats"
    bad = refused(
        ErrorCode.VALIDATION,
        proposals.propose_composition,
        db,
        agent,
        project="CRW",
        seats=[{"role": "Editor", "typeHint": "robot"}],
        answer=proposed_view,
    )
    assert (bad.details["field"], bad.details["accepted"]) == ("seats.0.typeHint", ["ai", "human"])
    proposals.propose_composition(db, agent, project="CRW", seats=many[:12], answer=proposed_view)
    assert count_rows(db, "proposals") == 1


def test_unknown_types_statuses_and_fields_are_refused_with_the_accepted_values(
    db: Database, agent: Actor
) -> None:
    kind = refused(
        ErrorCode.VALIDATION,
        proposals.propose_task,
        db,
        agent,
        project="CRW",
        title="x",
        type_hint="poem",
        answer=proposed_view,
    )
    assert kind.details["field"] == "typeHint"
    assert "writing" in kind.details["accepted"]
    status = refused(
        ErrorCode.VALIDATION,
        proposals.propose_task_update,
        db,
        agent,
        task="CRW-1",
        changes={"status": "finished"},
        answer=proposed_view,
    )
    assert status.details["field"] == "changes.status"
    assert "ready_for_ai" in status.details["accepted"]
    unknown = refused(
        ErrorCode.VALIDATION,
        proposals.propose_task_update,
        db,
        agent,
        task="CRW-1",
        changes={"dueDate": "x"},
        answer=proposed_view,
    )
    assert unknown.details["field"] == "changes.dueDate"
    assert "roleHint" in unknown.details["accepted"]
    none = refused(
        ErrorCode.VALIDATION,
        proposals.propose_task_update,
        db,
        agent,
        task="CRW-1",
        changes={},
        answer=proposed_view,
    )
    assert none.details["field"] == "changes"
    same = refused(
        ErrorCode.VALIDATION,
        proposals.propose_task_update,
        db,
        agent,
        task="CRW-1",
        changes={"priority": "medium"},
        answer=proposed_view,
    )
    assert same.details["field"] == "changes"
    listing = refused(ErrorCode.VALIDATION, proposals.list_proposals, db, agent, status="open")
    assert listing.details["accepted"] == ["pending", "accepted", "dismissed"]
    assert count_rows(db, "proposals") == 0


def test_a_keyed_proposal_is_made_once_and_a_changed_retry_is_refused(
    db: Database, agent: Actor
) -> None:
    first = proposals.propose_task(
        db, agent, project="CRW", title="New", idempotency_key="p-1", answer=proposed_view
    )
    again = proposals.propose_task(
        db, agent, project="CRW", title="New", idempotency_key="p-1", answer=proposed_view
    )
    assert (again.replayed, again.body) == (True, first.body)
    refused(
        ErrorCode.IDEMPOTENCY_CONFLICT,
        proposals.propose_task,
        db,
        agent,
        project="CRW",
        title="Other",
        idempotency_key="p-1",
        answer=proposed_view,
    )
    assert count_rows(db, "proposals") == 1


def test_proposing_needs_the_scope_and_the_write_role(db: Database, owner: User) -> None:
    reader = make_user(db, "reader@example.com")
    grant(db, owner, "CRW", reader, Role.READ)
    refused(
        ErrorCode.PERMISSION_DENIED,
        proposals.propose_task,
        db,
        person_actor(reader),
        project="CRW",
        title="x",
        answer=proposed_view,
    )
    tasks_only = token_actor(db, owner, ["read", "tasks.manage"])
    refused(
        ErrorCode.PERMISSION_DENIED,
        proposals.propose_role,
        db,
        tasks_only,
        project="CRW",
        name="Mira",
        role="Illustrator",
        answer=proposed_view,
    )
    proposals.propose_task(db, tasks_only, project="CRW", title="x", answer=proposed_view)
    assert count_rows(db, "proposals") == 1


def test_lists_show_cards_newest_first_and_the_inbox_only_pending_ones(
    db: Database, owner: User, agent: Actor, clock: ManualClock
) -> None:
    made = []
    for title in ("one", "two", "three"):
        made.append(
            card(
                proposals.propose_task(db, agent, project="CRW", title=title, answer=proposed_view)
            )
        )
        clock.advance(timedelta(seconds=1))
    proposals.dismiss_proposal(db, person_actor(owner), made[1]["id"])
    listed = proposal_page_view(proposals.list_proposals(db, agent, project="CRW"))
    assert [c["id"] for c in listed["proposals"]] == [c["id"] for c in reversed(made)]
    assert listed["total"] == 3
    pending = proposal_page_view(proposals.list_proposals(db, agent, status="pending", limit=1))
    assert (len(pending["proposals"]), pending["total"], pending["nextOffset"]) == (1, 2, 1)
    project_id = made[0]["projectId"]
    waiting = db.read(lambda uow: pending_proposals(uow, [project_id]))
    assert [c.proposal.payload["title"] for c in waiting] == ["three", "one"]
