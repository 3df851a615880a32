"""A saved output is read whole in windows of lines: through the official SDK client in both
protocol eras, over REST at the route the declaration gives, and by the CLI command; a long
output joined window by window is the original exactly, each answer within the budget."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest
from mcp import Client

from crewboard.contract.reply import RESPONSE_BUDGET
from crewboard.domain.identity.records import User
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support.factories import make_user
from tests.support.mcp_client import body_of, mcp_client
from tests.support.review import review_world

pytestmark = pytest.mark.anyio

TASK = {"taskId": "CRW-1", "workspaceId": None}
# 5,000 lines that differ, with a quote, a backslash, a tab, CRLF ends and characters of two,
# three and four bytes: every one the window must count as JSON and give back as it was.
LONG = (
    "".join(
        f'line {n}: "é\\ü" 漢字 🙂\tend{chr(13) if n % 7 == 0 else ""}\n' for n in range(1, 5001)
    )
    + "no newline at the end"
)


@pytest.fixture
def world(db: Database) -> dict[str, str]:
    owner: User = make_user(db, "owner@example.com")
    return review_world(db, owner)


async def save(client: Client, name: str, content: str, key: str) -> dict[str, Any]:
    result = await client.call_tool(
        "save_output", {**TASK, "idempotencyKey": key, "name": name, "content": content}
    )
    assert not result.is_error, result.content
    return dict(body_of(result)["output"])


async def test_a_long_output_read_window_by_window_is_the_original_exactly(
    url: str, world: dict[str, str], mode: str
) -> None:
    async with mcp_client(url, world["secret"], mode) as agent:
        output = await save(agent, "report.md", LONG, "o-1")
        notes = await agent.call_tool("list_task_notes", {"taskId": "CRW-1", "kind": "output"})
        row = body_of(notes)["notes"][0]
        assert (row["id"], row["contentTruncated"]) == (output["id"], True)
        assert "read_output" in notes.content[1].text  # type: ignore[union-attr]
        pieces, offset, calls = [], 1, 0
        while offset is not None:
            result = await agent.call_tool(
                "read_output", {"taskId": "CRW-1", "outputId": output["id"], "offset": offset}
            )
            assert not result.is_error, result.content
            answer = result.content[0].text  # type: ignore[union-attr]
            assert len(answer.encode()) <= RESPONSE_BUDGET
            window = json.loads(answer)
            assert window["offset"] == offset
            assert window["totalLines"] == 5001
            assert window["output"]["id"] == output["id"]
            if window["nextOffset"] is not None:
                assert str(window["nextOffset"]) in result.content[1].text  # type: ignore[union-attr]
            pieces.append(window["text"])
            offset, calls = window["nextOffset"], calls + 1
        assert "".join(pieces) == LONG
        assert calls > 3  # the budget cut them, not the 2,000-line limit (3 windows)


async def test_read_output_reads_any_version_from_a_line_and_refuses_what_it_cannot_read(
    url: str, world: dict[str, str], mode: str
) -> None:
    async with mcp_client(url, world["secret"], mode) as agent:
        first = await save(agent, "plan.md", "one\ntwo\nthree\n", "o-1")
        second = await save(agent, "plan.md", "uno\ndos\n", "o-2")
        read = {"taskId": "CRW-1", "outputId": first["id"], "offset": 2}
        window = body_of(await agent.call_tool("read_output", read))
        assert (window["text"], window["nextOffset"], window["totalLines"]) == (
            "two\nthree\n", None, 3,
        )  # fmt: skip
        assert (window["output"]["version"], window["output"]["versions"]) == (1, 2)
        newest = body_of(
            await agent.call_tool("read_output", {"taskId": "CRW-1", "outputId": second["id"]})
        )
        assert (newest["text"], newest["nextOffset"], newest["output"]["version"]) == (
            "uno\ndos\n", None, 2,
        )  # fmt: skip
        for arguments, code, field in (
            ({"outputId": "out_nope"}, "NOT_FOUND", None),
            ({"outputId": first["id"], "offset": 4}, "VALIDATION", "offset"),
            ({"outputId": first["id"], "offset": 0}, "VALIDATION", "offset"),
            ({"outputId": first["id"], "taskId": "CRW-99"}, "NOT_FOUND", None),
        ):
            refused = await agent.call_tool("read_output", {"taskId": "CRW-1", **arguments})
            assert refused.is_error, arguments
            error = refused.structured_content
            assert isinstance(error, dict)
            assert error["code"] == code, error
            assert error["message"]
            if field is not None:
                assert error["details"]["field"] == field


def test_rest_reads_an_output_in_windows_at_the_declared_route(
    url: str, db: Database, world: dict[str, str]
) -> None:
    owner = db.read(lambda uow: uow.users.get_by_email("owner@example.com"))
    assert owner is not None
    secret = tokens.issue_token(
        db, person_actor(owner), kind="personal", scopes=["read", "tasks.manage"]
    ).secret
    with httpx2.Client(
        base_url=f"{url}/api/v1", headers={"Authorization": f"Bearer {secret}"}
    ) as api:
        saved = api.post(
            "/tasks/CRW-1/outputs",
            json={"workspaceId": None, "name": "report.md", "content": LONG},
            headers={"Idempotency-Key": "o-1"},
        )
        assert saved.status_code == 201, saved.text
        output_id = saved.json()["output"]["id"]
        pieces, offset = [], 1
        while offset is not None:
            got = api.get(f"/tasks/CRW-1/outputs/{output_id}/lines", params={"offset": offset})
            assert got.status_code == 200, got.text
            window = got.json()
            assert window["lines"] <= 2000
            pieces.append(window["text"])
            offset = window["nextOffset"]
        assert "".join(pieces) == LONG
        past = api.get(f"/tasks/CRW-1/outputs/{output_id}/lines", params={"offset": 6000})
        assert (past.status_code, past.json()["error"]["details"]["field"]) == (422, "offset")
        missing = api.get("/tasks/CRW-1/outputs/out_nope/lines")
        assert (missing.status_code, missing.json()["error"]["code"]) == (404, "NOT_FOUND")
        paths = api.get("/openapi.json").json()["paths"]
        assert "get" in paths["/api/v1/tasks/{task}/outputs/{output}/lines"]
