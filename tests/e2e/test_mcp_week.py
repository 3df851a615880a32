"""list_task_events and get_week through the official SDK client, both protocol eras."""

from __future__ import annotations

from datetime import timedelta

import pytest

from crewboard.contract.projects import present
from crewboard.domain.clock import ManualClock
from crewboard.domain.identity.records import Actor
from crewboard.services.board import task_updates, tasks
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support.factories import make_project, make_user, personal_secret
from tests.support.mcp_client import body_of, mcp_client

pytestmark = pytest.mark.anyio


@pytest.fixture
def owner(db: Database) -> Actor:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    return person_actor(user)


@pytest.fixture
def secret(db: Database, owner: Actor) -> str:
    return personal_secret(db, owner, ["read"])


@pytest.fixture
def worked_task(db: Database, owner: Actor, clock: ManualClock) -> str:
    """CRW-1: an AI role's task, in progress from Monday 09:00 UTC for 90 minutes, then in review."""
    coder = present.add_team_role(db, owner, project="CRW", name="Coder", kind="ai")["id"]
    made = tasks.create_task(
        db,
        owner,
        project="CRW",
        workspace_id=None,
        idempotency_key="c1",
        title="Fix the login redirect",
        status="in_progress",
        assignee_id=coder,
        due_date="2026-03-04",
    ).body["task"]
    clock.advance(timedelta(minutes=90))
    task_updates.update_task(
        db,
        owner,
        project="CRW",
        workspace_id=None,
        idempotency_key="u1",
        task_id=made["id"],
        expected_revision=1,
        patch={"status": "review"},
    )
    return str(coder)


async def test_list_task_events_pages_a_tasks_history(
    url: str, secret: str, mode: str, worked_task: str
) -> None:
    async with mcp_client(url, secret, mode) as client:
        first = await client.call_tool("list_task_events", {"taskId": "CRW-1", "limit": 2})
        page = body_of(first)
        assert [(e["type"], e["status"]) for e in page["events"]] == [
            ("status_changed", "in_progress"),
            ("assignment_changed", "in_progress"),
        ]
        assert page["events"][0]["taskKey"] == "CRW-1"
        assert page["events"][0]["occurredAt"] == "2026-03-02T09:00:00+00:00"
        assert page["hasMore"] is True
        assert page["coverage"] == "complete"
        assert len(first.content) == 2  # the second part says how to go on
        rest = body_of(
            await client.call_tool(
                "list_task_events",
                {"taskId": "CRW-1", "limit": 2, "cursor": page["nextCursor"]},
            )
        )
        assert [(e["type"], e["data"]) for e in rest["events"]] == [
            ("status_changed", {"from": "in_progress", "to": "review"})
        ]
        assert (rest["hasMore"], rest["nextCursor"]) == (False, None)
        by_agent = body_of(
            await client.call_tool("list_task_events", {"agentAssigneeId": worked_task})
        )
        assert len(by_agent["events"]) == 3


async def test_list_task_events_refuses_unbounded_requests_and_foreign_cursors(
    url: str, secret: str, mode: str, worked_task: str
) -> None:
    async with mcp_client(url, secret, mode) as client:
        unbounded = await client.call_tool("list_task_events", {"projectId": "CRW"})
        assert unbounded.is_error
        assert unbounded.structured_content is not None
        assert unbounded.structured_content["code"] == "VALIDATION"
        assert "humanAssigneeId" in unbounded.structured_content["details"]["accepted"]
        naive = await client.call_tool(
            "list_task_events", {"since": "2026-03-01T00:00:00", "until": "2026-04-01T00:00:00Z"}
        )
        assert naive.structured_content is not None
        assert naive.structured_content["details"]["field"] == "since"
        page = body_of(await client.call_tool("list_task_events", {"taskId": "CRW-1", "limit": 1}))
        other = await client.call_tool(
            "list_task_events",
            {"taskId": "CRW-1", "eventTypes": ["status_changed"], "cursor": page["nextCursor"]},
        )
        assert other.structured_content is not None
        assert other.structured_content["code"] == "VALIDATION"
        assert other.structured_content["details"]["field"] == "cursor"


async def test_get_week_shows_the_plan_and_the_time_in_progress(
    url: str, secret: str, mode: str, worked_task: str
) -> None:
    async with mcp_client(url, secret, mode) as client:
        result = await client.call_tool(
            "get_week", {"week": "2026-03-05", "timeZone": "Europe/Berlin"}
        )
        body = body_of(result)
    assert body["week"]["from"] == "2026-03-02"
    assert body["week"]["timeZone"] == "Europe/Berlin"
    monday, _, wednesday = body["days"][:3]
    [stretch] = monday["inProgress"]
    assert stretch["taskKey"] == "CRW-1"
    assert (stretch["assigneeId"], stretch["assigneeType"]) == (worked_task, "ai")
    assert (stretch["from"], stretch["to"]) == (
        "2026-03-02T10:00:00+01:00",
        "2026-03-02T11:30:00+01:00",
    )
    assert stretch["minutes"] == 90
    assert [t["key"] for t in wednesday["due"]] == ["CRW-1"]
    assert body["minutes"] == {"people": 0, "ai": 90}
    assert body["undated"] == []
    assert len(result.content) == 1


async def test_get_week_refuses_an_unknown_time_zone(url: str, secret: str, mode: str) -> None:
    async with mcp_client(url, secret, mode) as client:
        unknown = await client.call_tool("get_week", {"timeZone": "Mars/Olympus_Mons"})
        assert unknown.is_error
        assert unknown.structured_content is not None
        assert unknown.structured_content["code"] == "VALIDATION"
        assert unknown.structured_content["details"]["field"] == "timeZone"
        bad_day = await client.call_tool("get_week", {"week": "next monday"})
        assert bad_day.structured_content is not None
        assert bad_day.structured_content["details"]["field"] == "week"


async def test_big_answers_stay_within_48_kib_and_say_what_was_left_out(
    url: str, db: Database, mode: str
) -> None:
    writer = make_user(db, "w" * 110 + "@example.com")  # a long display name in every event
    make_project(db, writer, "BIG")
    actor = person_actor(writer)
    coder = present.add_team_role(db, actor, project="BIG", name="Coder", kind="ai")["id"]
    for n in range(100):  # one full page of events, which the budget still cuts
        tasks.create_task(
            db,
            actor,
            project="BIG",
            workspace_id=None,
            idempotency_key=f"b{n}",
            title=f"{n:03} " + "x" * 296,
            assignee_id=coder,
            human_owner_id=writer.id,
            due_date="2026-03-04",
        )
    secret = tokens.issue_token(db, actor, kind="personal", scopes=["read"]).secret
    budget = 48 * 1024
    async with mcp_client(url, secret, mode) as client:
        arguments = {"agentAssigneeId": coder, "eventTypes": ["assignment_changed"], "limit": 100}
        first = await client.call_tool("list_task_events", arguments)
        assert len(first.content[0].text.encode()) <= budget  # type: ignore[union-attr]
        page = body_of(first)
        assert 0 < len(page["events"]) < 100
        assert page["hasMore"] is True
        seen = [e["id"] for e in page["events"]]
        while page["hasMore"]:
            page = body_of(
                await client.call_tool(
                    "list_task_events", {**arguments, "cursor": page["nextCursor"]}
                )
            )
            seen += [e["id"] for e in page["events"]]
        assert len(seen) == len(set(seen)) == 100
        result = await client.call_tool("get_week", {"week": "2026-03-04"})
        assert len(result.content[0].text.encode()) <= budget  # type: ignore[union-attr]
        body = body_of(result)
    wednesday = body["days"][2]
    assert 0 < len(wednesday["due"]) < 100
    assert (body["dueTotal"], body["truncated"]) == (100, True)
    assert [t["title"][:3] for t in wednesday["due"]][:2] == ["000", "001"]
    assert "left out" in result.content[1].text  # type: ignore[union-attr]
