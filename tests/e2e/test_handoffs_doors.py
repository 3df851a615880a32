"""Handoffs through the doors a person and an agent use: the eight tools over real HTTP with
the official SDK client (both eras) and the REST routes. A person hands a shift over and the
next shift's person works its action items; an agent token is refused on every tool and route
with HUMAN_IDENTITY_REQUIRED and a sentence saying who may call them."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest

from crewboard.contract.projects import present
from crewboard.domain.identity.access import Role
from crewboard.domain.identity.records import User
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support.factories import count_rows, grant, make_project, make_task, make_user
from tests.support.mcp_client import body_of, mcp_client

TOOLSETS = {"X-MCP-Toolsets": "handoffs"}
SCOPES = ["read", "tasks.manage"]
TOOLS = (
    "create_handoff", "update_handoff", "list_handoffs", "get_handoff",
    "list_handoff_action_items", "get_handoff_action_item", "create_handoff_action_item",
    "update_handoff_action_item",
)  # fmt: skip


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "alice@example.com")
    make_project(db, user, "CRW")
    present.update_project(
        db, person_actor(user), project="CRW", workspace_id=None,
        shift_time_zone_a="Europe/Berlin", shift_time_zone_b="America/New_York",
    )  # fmt: skip
    return user


@pytest.fixture
def bob(db: Database, owner: User) -> User:
    user = make_user(db, "bob@example.com")
    grant(db, owner, "CRW", user, Role.WRITE)
    return user


def personal(db: Database, user: User) -> str:
    return tokens.issue_token(db, person_actor(user), kind="personal", scopes=SCOPES).secret


def error_of(result: Any) -> dict[str, Any]:
    assert result.is_error
    assert isinstance(result.structured_content, dict)
    return result.structured_content


@pytest.mark.anyio
async def test_a_person_hands_over_and_the_next_shift_works_the_items(
    url: str, db: Database, owner: User, bob: User, mode: str
) -> None:
    task = make_task(db, owner, "CRW", "Roll out the API change")
    async with mcp_client(url, personal(db, owner), mode, TOOLSETS) as alice:
        names = {t.name for t in (await alice.list_tools()).tools}
        assert names >= set(TOOLS)
        arguments = {
            "projectId": "CRW", "workspaceId": None, "completed": "Released the API change.",
            "inProgress": "Watching the rollout.", "blockers": "",
            "nextSteps": "Review the next metrics window.", "linkedTaskIds": ["CRW-1"],
            "recipients": ["bob@example.com"], "idempotencyKey": "alice-shift-1",
        }  # fmt: skip
        made = body_of(await alice.call_tool("create_handoff", arguments))["handoff"]
        assert made["sourceTimeZone"] == "Europe/Berlin"
        assert [t["id"] for t in made["linkedTasks"]] == [task]
        assert [r["email"] for r in made["recipients"]] == ["bob@example.com"]
        replay = await alice.call_tool("create_handoff", arguments)
        assert body_of(replay)["handoff"]["id"] == made["id"]
        again = error_of(
            await alice.call_tool("create_handoff", {**arguments, "idempotencyKey": "other"})
        )
        assert again["code"] == "HANDOFF_ALREADY_EXISTS"
        assert again["details"]["handoffId"] == made["id"]
        item = body_of(
            await alice.call_tool(
                "create_handoff_action_item",
                {"handoffId": made["id"], "workspaceId": None, "text": "Check error rates",
                 "assignee": "bob@example.com", "dueDate": "2026-12-04"},
            )
        )["actionItem"]  # fmt: skip
    async with mcp_client(url, personal(db, bob), mode, TOOLSETS) as next_shift:
        listed = body_of(
            await next_shift.call_tool(
                "list_handoffs", {"projectId": "CRW", "recipient": "bob@example.com"}
            )
        )
        assert [h["id"] for h in listed["handoffs"]] == [made["id"]]
        read = body_of(await next_shift.call_tool("get_handoff", {"handoffId": made["id"]}))
        assert read["handoff"]["nextSteps"] == "Review the next metrics window."
        assert [i["id"] for i in read["handoff"]["actionItems"]] == [item["id"]]
        not_author = error_of(
            await next_shift.call_tool(
                "update_handoff",
                {"handoffId": made["id"], "workspaceId": None,
                 "expectedUpdatedAt": made["updatedAt"], "completed": "rewritten"},
            )
        )  # fmt: skip
        assert not_author["code"] == "PERMISSION_DENIED"
        done = body_of(
            await next_shift.call_tool(
                "update_handoff_action_item",
                {"actionItemId": item["id"], "workspaceId": None,
                 "expectedUpdatedAt": item["updatedAt"], "status": "done"},
            )
        )["actionItem"]  # fmt: skip
        assert done["status"] == "done"
        stale = error_of(
            await next_shift.call_tool(
                "update_handoff_action_item",
                {"actionItemId": item["id"], "workspaceId": None,
                 "expectedUpdatedAt": item["updatedAt"], "status": "open"},
            )
        )  # fmt: skip
        assert stale["code"] == "REVISION_CONFLICT"
        assert stale["details"]["currentUpdatedAt"] == done["updatedAt"]
        fetched = body_of(
            await next_shift.call_tool("get_handoff_action_item", {"actionItemId": item["id"]})
        )
        assert fetched["actionItem"]["status"] == "done"
        by_day = body_of(
            await next_shift.call_tool(
                "list_handoff_action_items", {"projectId": "CRW", "date": made["date"]}
            )
        )
        assert [i["id"] for i in by_day["actionItems"]] == [item["id"]]


@pytest.mark.anyio
async def test_an_agent_token_is_refused_on_every_handoff_tool(
    url: str, db: Database, owner: User, mode: str
) -> None:
    agent = tokens.issue_token(
        db, person_actor(owner), kind="agent", scopes=SCOPES, project="CRW"
    ).secret
    arguments: dict[str, dict[str, Any]] = {
        "create_handoff": {"projectId": "CRW", "workspaceId": None, "completed": "x"},
        "update_handoff": {"handoffId": "hof_x", "workspaceId": None,
                           "expectedUpdatedAt": "2026-12-03T09:00:00+00:00", "blockers": "x"},
        "list_handoffs": {"projectId": "CRW"},
        "get_handoff": {"handoffId": "hof_x"},
        "list_handoff_action_items": {"handoffId": "hof_x"},
        "get_handoff_action_item": {"actionItemId": "hai_x"},
        "create_handoff_action_item": {"handoffId": "hof_x", "workspaceId": None, "text": "x"},
        "update_handoff_action_item": {"actionItemId": "hai_x", "workspaceId": None,
                                       "expectedUpdatedAt": "2026-12-03T09:00:00+00:00",
                                       "status": "done"},
    }  # fmt: skip
    assert set(arguments) == set(TOOLS)
    async with mcp_client(url, agent, mode, TOOLSETS) as client:
        for name, args in arguments.items():
            refused = error_of(await client.call_tool(name, args))
            assert refused["code"] == "HUMAN_IDENTITY_REQUIRED", name
            assert "personal token or the web app" in refused["message"], name
    assert count_rows(db, "handoffs") == 0


def test_rest_routes_for_a_person_and_refusals_for_an_agent(
    url: str, db: Database, owner: User, bob: User
) -> None:
    auth = {"Authorization": f"Bearer {personal(db, owner)}"}
    with httpx2.Client(base_url=f"{url}/api/v1", headers=auth, timeout=30) as api:
        body = {"completed": "Done it.", "nextSteps": "Carry on.", "date": "2026-12-03",
                "recipients": [bob.id]}  # fmt: skip
        made = api.post("/projects/CRW/handoffs", json=body, headers={"Idempotency-Key": "k1"})
        assert made.status_code == 201, made.text
        handoff = made.json()["handoff"]
        replay = api.post("/projects/CRW/handoffs", json=body, headers={"Idempotency-Key": "k1"})
        assert (replay.status_code, replay.json()["replayed"]) == (201, True)
        taken = api.post("/projects/CRW/handoffs", json=body)
        assert (taken.status_code, taken.json()["error"]["code"]) == (
            409,
            "HANDOFF_ALREADY_EXISTS",
        )
        changed = api.patch(
            f"/handoffs/{handoff['id']}",
            json={"expectedUpdatedAt": handoff["updatedAt"], "blockers": "The VPN."},
        )
        assert changed.status_code == 200, changed.text
        carried = api.patch(
            f"/handoffs/{handoff['id']}",
            json={"handoffId": "hof_other", "expectedUpdatedAt": handoff["updatedAt"]},
        )
        assert (carried.status_code, carried.json()["error"]["details"]["field"]) == (
            422,
            "handoffId",
        )
        stale = api.patch(
            f"/handoffs/{handoff['id']}",
            json={"expectedUpdatedAt": handoff["updatedAt"], "blockers": "none"},
        )
        assert stale.status_code == 409
        assert (
            stale.json()["error"]["details"]["currentUpdatedAt"]
            == (changed.json()["handoff"]["updatedAt"])
        )
        item = api.post(f"/handoffs/{handoff['id']}/action-items", json={"text": "Call the vendor"})
        assert item.status_code == 201, item.text
        item_id = item.json()["actionItem"]["id"]
        assert api.get(f"/handoff-action-items/{item_id}").json()["actionItem"]["text"] == (
            "Call the vendor"
        )
        listed = api.get("/projects/CRW/handoffs", params={"since": "2026-12-01"}).json()
        assert [h["id"] for h in listed["handoffs"]] == [handoff["id"]]
        bad = api.get("/projects/CRW/handoffs", params={"since": "yesterday"})
        assert (bad.status_code, bad.json()["error"]["details"]["field"]) == (422, "since")
        by_day = api.get("/projects/CRW/handoff-action-items", params={"date": "2026-12-03"})
        assert [i["id"] for i in by_day.json()["actionItems"]] == [item_id]
        assert api.get("/projects/CRW/handoff-action-items").status_code == 422
    agent = tokens.issue_token(
        db, person_actor(owner), kind="agent", scopes=SCOPES, project="CRW"
    ).secret
    with httpx2.Client(
        base_url=f"{url}/api/v1", headers={"Authorization": f"Bearer {agent}"}, timeout=30
    ) as api:
        for answer in (
            api.get("/projects/CRW/handoffs"),
            api.post("/projects/CRW/handoffs", json={"completed": "x", "date": "2026-12-04"}),
            api.get(f"/handoffs/{handoff['id']}"),
            api.get(f"/handoff-action-items/{item_id}"),
        ):
            assert answer.status_code == 403
            assert answer.json()["error"]["code"] == "HUMAN_IDENTITY_REQUIRED"
    assert count_rows(db, "handoffs") == 1
