"""Inbox messages and the activity stream through the services."""

from __future__ import annotations

from typing import Any

import pytest

from crewboard.contract.projects import present
from crewboard.contract.review.present_activity import SUMMARIES, entry_view
from crewboard.contract.review.present_inbox import posted_view
from crewboard.contract.review.present_proposals import proposed_view
from crewboard.domain.identity.records import Actor, User
from crewboard.errors import ErrorCode
from crewboard.services.board import task_lookup, tasks
from crewboard.services.identity import tokens, users
from crewboard.services.identity.users import person_actor
from crewboard.services.projects import workspaces
from crewboard.services.review import activity, messages, proposals
from crewboard.services.review.messages import recent_messages
from crewboard.storage.database import Database
from crewboard.storage.projects import tables as projects_tables
from crewboard.storage.review import tables as t
from tests.support.errors import refused
from tests.support.factories import count_rows, make_project, make_user, token_actor
from tests.support.transfer_world import furnish_everything

SCOPES = ["read", "tasks.manage", "messages.write", "drafts.create"]


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    make_project(db, user, "OPS")
    person = person_actor(user)
    for project, title in (
        ("CRW", "Fix the login"),
        ("CRW", "Write notes"),
        ("OPS", "Rotate keys"),
    ):
        tasks.create_task(
            db, person, project=project, workspace_id=None, idempotency_key=title, title=title
        )
    present.add_team_role(db, person, project="CRW", name="Scribe", role="Technical writer")
    present.add_team_role(db, person, project="CRW", name="Coder", role="Developer")
    return user


def agent_actor(db: Database, owner: User, name: str = "Scribe", seat: str | None = None) -> Actor:
    issued = tokens.issue_token(
        db, person_actor(owner), kind="agent", scopes=SCOPES, project="CRW", name=name, seat=seat
    )
    return tokens.authenticate_token(db, issued.secret)


@pytest.fixture
def agent(db: Database, owner: User) -> Actor:
    return agent_actor(db, owner, seat="Scribe")


def seat(db: Database, owner: User, name: str) -> str:
    roles = present.list_team(db, person_actor(owner), project="CRW")[0]["roles"]
    return str(next(r["id"] for r in roles if r["name"] == name))


def post(db: Database, actor: Actor, participant: str, body: str = "Hello", **extra: Any) -> Any:
    arguments: dict[str, Any] = {
        "project": "CRW",
        "workspace_id": None,
        "participant_id": participant,
    }
    return messages.post_message(db, actor, body=body, **{**arguments, **extra}, answer=posted_view)


# --- post_message ----------------------------------------------------------------------------


def test_messages_go_to_a_roles_or_a_members_thread_and_nowhere_else(
    db: Database, owner: User, agent: Actor
) -> None:
    coder = seat(db, owner, "Coder")
    to_role = post(db, agent, coder, "Can you look at CRW-1?", task="CRW-1").body["message"]
    to_person = post(db, agent, owner.id, "Done for today.").body["message"]
    assert (to_role["participantId"], to_role["length"]) == (coder, 22)
    assert "body" not in to_role
    assert to_role["taskId"] is not None
    assert to_person["taskId"] is None
    for unknown in ("rol_nope", "usr_nope", "someone"):
        error = refused(ErrorCode.NOT_FOUND, post, db, agent, unknown)
        assert error.details["field"] == "participantId"
    outsider = make_user(db, "outsider@example.com")
    refused(ErrorCode.NOT_FOUND, post, db, agent, outsider.id)
    thread = messages.list_thread(db, person_actor(owner), "CRW", coder)
    assert [m.body for m in thread.messages] == ["Can you look at CRW-1?"]
    assert count_rows(db, "inbox_messages") == 2


def test_an_agents_message_is_signed_with_its_ai_seat(
    db: Database, owner: User, agent: Actor
) -> None:
    made = post(db, agent, owner.id).body["message"]
    assert made["author"]["tokenId"] == agent.principal
    assert made["author"]["roleId"] == seat(db, owner, "Scribe")
    # Named like a seat, yet none chosen, and two AI seats: the name does not decide.
    unnamed = agent_actor(db, owner, "Coder")
    assert "roleId" not in post(db, unnamed, owner.id).body["message"]["author"]
    by_person = post(db, person_actor(owner), seat(db, owner, "Coder")).body["message"]
    assert by_person["author"] == {
        "kind": "person",
        "userId": owner.id,
        "tokenId": None,
        "displayName": "owner",
    }


def test_a_message_about_a_task_of_another_project_is_refused(
    db: Database, owner: User, agent: Actor
) -> None:
    person = person_actor(owner)
    error = refused(ErrorCode.VALIDATION, post, db, person, owner.id, task="OPS-1")
    assert error.details["field"] == "taskId"
    assert count_rows(db, "inbox_messages") == 0


def test_a_shared_project_needs_a_key_and_replays_with_it(db: Database, owner: User) -> None:
    person = person_actor(owner)
    space = workspaces.create_workspace(db, person, name="Team")
    present.create_project(db, person, workspace_id=space.id, key="SHR", name="Shared")
    writer = token_actor(db, owner, SCOPES)
    arguments = {"project": "SHR", "workspace_id": space.id, "participant_id": owner.id}
    missing = refused(
        ErrorCode.VALIDATION,
        messages.post_message,
        db,
        writer,
        body="Hi",
        answer=posted_view,
        **arguments,
    )
    assert missing.details["field"] == "idempotencyKey"
    first = messages.post_message(
        db, writer, body="Hi", idempotency_key="m-1", **arguments, answer=posted_view
    )
    again = messages.post_message(
        db, writer, body="Hi", idempotency_key="m-1", **arguments, answer=posted_view
    )
    assert (again.replayed, again.body) == (True, first.body)
    assert count_rows(db, "inbox_messages") == 1
    wrong = refused(ErrorCode.VALIDATION, post, db, writer, owner.id, project="SHR")
    assert wrong.details["field"] == "workspaceId"


def test_posting_needs_the_messages_scope_and_fits_20000_characters(
    db: Database, owner: User, agent: Actor
) -> None:
    reader = token_actor(db, owner, ["read", "tasks.manage"])
    refused(ErrorCode.PERMISSION_DENIED, post, db, reader, owner.id)
    assert (
        refused(ErrorCode.LIMIT_EXCEEDED, post, db, agent, owner.id, "x" * 20_001).details["field"]
        == "body"
    )
    assert refused(ErrorCode.VALIDATION, post, db, agent, owner.id, "  ").details["field"] == "body"
    post(db, agent, owner.id, "x" * 20_000)
    recent = db.read(lambda uow: recent_messages(uow, list(project_ids(db)), 10))
    assert len(recent) == 1


def project_ids(db: Database) -> list[str]:
    with db.engine.connect() as conn:
        return [row.id for row in conn.execute(projects_tables.projects.select())]


# --- list_activity ---------------------------------------------------------------------------


def hand_in(db: Database, agent: Actor, task_key: str, *, draft_id: str, key: str) -> None:
    """A draft row and its draft.submitted event, written as the draft services will."""

    def work(uow: Any) -> None:
        task, project = task_lookup.access_task(uow, agent, task_key)
        uow.conn.execute(
            t.drafts.insert().values(
                id=draft_id,
                project_id=project.id,
                task_id=task.id,
                root_task_id=task.id,
                title="Result",
                summary="SECRET SUMMARY",
                content="SECRET CONTENT",
                references=[],
                status="pending",
                via="mcp",
                author=agent.as_payload(),
                token_id=agent.principal,
                idempotency_key=key,
                task_moved=True,
                created_at=uow.now,
                updated_at=uow.now,
            )
        )
        uow.record_event(
            "draft.submitted",
            actor=agent.as_payload(),
            payload={
                "draftId": draft_id,
                "taskId": task.id,
                "taskKey": task_key,
                "status": "pending",
                "handInTokenId": agent.principal,
            },
            project_id=project.id,
            workspace_id=None,
        )

    db.write(work)


def decide(db: Database, owner: User, draft_id: str, status: str, **extra: Any) -> None:
    """A person's decision on a draft: its status and the draft.* event naming the hand-in token."""

    def work(uow: Any) -> None:
        row = uow.conn.execute(t.drafts.select().where(t.drafts.c.id == draft_id)).one()
        uow.conn.execute(t.drafts.update().where(t.drafts.c.id == draft_id).values(status=status))
        uow.record_event(
            f"draft.{status}",
            actor=person_actor(owner).as_payload(),
            payload={
                "draftId": draft_id,
                "taskId": row.task_id,
                "status": status,
                "handInTokenId": row.token_id,
                **extra,
            },
            project_id=row.project_id,
            workspace_id=None,
        )

    db.write(work)


def listing(db: Database, actor: Actor, **options: Any) -> tuple[list[dict[str, Any]], str]:
    found = activity.list_activity(db, actor, **options)
    return [entry_view(e) for e in found.entries], found.cursor


def test_activity_lists_newest_first_and_a_cursor_follows_what_comes_after(
    db: Database, owner: User, agent: Actor
) -> None:
    entries, cursor = listing(db, agent, limit=100)
    assert [e["type"] for e in entries[:2]] == ["team.role_added", "team.role_added"]
    assert all(e["projectId"] for e in entries)
    assert not any(e["type"].startswith(("user.", "token.")) for e in entries)
    ids = [int(e["id"][4:], 36) for e in entries]
    assert ids == sorted(ids, reverse=True)
    assert cursor == entries[0]["id"]
    nothing, same = listing(db, agent, since=cursor)
    assert (nothing, same) == ([], cursor)
    post(db, agent, owner.id, "one")
    post(db, agent, owner.id, "two")
    proposals.propose_task(db, agent, project="CRW", title="three", answer=proposed_view)
    first, following = listing(db, agent, since=cursor, limit=2)
    assert [e["summary"] for e in first] == ["posted a message", "posted a message"]
    assert following == first[-1]["id"]
    rest, last = listing(db, agent, since=following)
    assert [(e["type"], e["summary"]) for e in rest] == [("proposal.created", "proposed task")]
    assert last == rest[0]["id"]
    assert listing(db, agent, since=last) == ([], last)


def test_hand_in_entries_carry_the_drafts_current_status_never_its_text(
    db: Database, owner: User, agent: Actor
) -> None:
    hand_in(db, agent, "CRW-1", draft_id="drf_one", key="hand-1")
    decide(
        db,
        owner,
        "drf_one",
        "revision_requested",
        followUpTaskId="tsk_x",
        commentPreview="Add tests",
    )
    entries, _ = listing(db, agent, mine=True)
    assert [e["type"] for e in entries] == ["draft.revision_requested", "draft.submitted"]
    decision, submitted = entries
    assert submitted["draftStatus"] == "revision_requested"  # the draft's status now
    assert (submitted["mine"], submitted["idempotencyKey"]) == (True, "hand-1")
    assert (decision["followUpTaskId"], decision["commentPreview"]) == ("tsk_x", "Add tests")
    assert decision["taskKey"] is None
    assert submitted["taskKey"] == "CRW-1"
    assert "SECRET" not in repr(entries)
    seen_by_owner, _ = listing(db, person_actor(owner), task="CRW-1")
    submitted_for_owner = next(e for e in seen_by_owner if e["type"] == "draft.submitted")
    assert submitted_for_owner["mine"] is False
    assert "idempotencyKey" not in submitted_for_owner


def test_mine_keeps_only_this_tokens_hand_ins_and_a_person_has_none(
    db: Database, owner: User, agent: Actor
) -> None:
    other = agent_actor(db, owner, "Coder", seat="Coder")
    hand_in(db, agent, "CRW-1", draft_id="drf_mine", key="k-1")
    hand_in(db, other, "CRW-2", draft_id="drf_theirs", key="k-1")
    post(db, agent, owner.id)  # the agent's own, but not a hand-in
    decide(db, owner, "drf_mine", "approved")
    entries, _ = listing(db, agent, mine=True)
    assert [(e["type"], e["draftId"]) for e in entries] == [
        ("draft.approved", "drf_mine"),
        ("draft.submitted", "drf_mine"),
    ]
    assert listing(db, person_actor(owner), mine=True)[0] == []


def test_task_filter_takes_an_id_or_a_key_and_a_project_narrows(
    db: Database, owner: User, agent: Actor
) -> None:
    post(db, agent, owner.id, "about two", task="CRW-2")
    by_key, _ = listing(db, agent, task="CRW-2")
    assert [e["type"] for e in by_key] == ["message.posted", "task.created"]
    task_id = by_key[0]["taskId"]
    assert listing(db, agent, task=task_id)[0] == by_key
    person = person_actor(owner)
    assert {e["projectId"] for e in listing(db, person, limit=100)[0]} == set(project_ids(db))
    only_ops, _ = listing(db, person, project="OPS")
    assert {e["taskKey"] for e in only_ops if e["taskKey"]} == {"OPS-1"}
    refused(ErrorCode.NOT_FOUND, listing, db, agent, task="OPS-1")  # the token is for CRW only


def test_limit_and_cursor_are_checked(db: Database, owner: User, agent: Actor) -> None:
    for limit in (0, 101):
        assert (
            refused(ErrorCode.VALIDATION, listing, db, agent, limit=limit).details["field"]
            == "limit"
        )
    assert len(listing(db, agent, limit=1)[0]) == 1
    assert len(listing(db, agent, limit=100)[0]) > 1
    for bad in ("", "act_", "act_!", "evt_12", "act_" + "1" * 14, "x" * 201):
        assert (
            refused(ErrorCode.VALIDATION, listing, db, agent, since=bad).details["field"] == "since"
        )
    assert activity.parse_cursor(activity.cursor_of(123_456)) == 123_456


def test_every_kind_of_project_event_is_worded(db: Database) -> None:
    """Spec files, comment threads, attachments, artifacts, handoffs and spec sessions read as
    sentences like the board's do, not as their event type."""
    world = furnish_everything(db, "WORD")
    person = person_actor(users.get_user_by_email(db, world.owner_email))
    entries, _ = listing(db, person, project="WORD", limit=100)
    unworded = {e["type"] for e in entries} - set(SUMMARIES)
    assert unworded == set()
    said = [e["summary"] for e in entries]
    for sentence in (
        "added spec file docs/plan.md",
        "saved revision 2 of docs/plan.md",
        "opened a comment thread on docs/plan.md",
        "replied in a comment thread on docs/plan.md",
        "attached logo.png",
        "created artifact mockup",
        "saved revision 2 of artifact mockup",
        "wrote the handoff for 2026-12-01",
        "added an action item to a handoff",
        "saved the project document overview",
        "added the repository app",
        "created the project",
    ):
        assert sentence in said
    assert any(s.startswith("started the spec session “") for s in said)
