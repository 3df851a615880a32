"""Three nodes on one PostgreSQL database behind HAProxy (`bench/cluster.py`, as
`scripts/scale-out` starts them): writers through the balancer, subscribers on every node,
an MCP client and a browser-like session through the balancer with requests spread over the
nodes; one node killed mid-run. Every subscriber sees every event once, in one order; its
clients go on through the others; nothing acknowledged is lost."""

from __future__ import annotations

import os
import shutil
import threading
import uuid
from pathlib import Path
from typing import Any

import httpx2
import pytest

from crewboard.domain.identity.records import User
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.conftest import ONLY_POSTGRESQL
from tests.support.factories import make_project, make_task, make_user
from tests.support.mcp_client import body_of, mcp_client
from tests.support.sse import Reader
from tests.support.web import post_form, sign_in

pytestmark = [pytest.mark.slow]
WRITERS = 3
EACH = 40


@pytest.fixture
def cluster(db: Database, tmp_path: Path) -> Any:
    from bench.cluster import Cluster  # noqa: PLC0415 - the repository's tool, not the package

    if shutil.which("haproxy") is None and not Path("/usr/sbin/haproxy").exists():
        reason = "HAProxy is not installed (Debian: apt-get install haproxy)"
        if os.environ.get("CREWBOARD_REQUIRE_HAPROXY"):
            pytest.fail(reason)
        pytest.skip(reason)
    url = db.engine.url.render_as_string(hide_password=False)
    running = Cluster(url, nodes=3, folder=tmp_path / "cluster").start()
    try:
        yield running
    finally:
        running.stop()


served: set[str] = set()  # the nodes that answered the writers


def write_comments(base: str, secret: str, task: str, count: int, acked: list[str]) -> None:
    """Comments through the balancer, each with its own key: a request the balancer retries on
    another node is the same write. Records the keys of those acknowledged (201)."""
    headers = {"Authorization": f"Bearer {secret}"}
    with httpx2.Client(base_url=base, headers=headers, timeout=30) as client:
        for n in range(count):
            key = uuid.uuid4().hex
            for _attempt in range(5):
                try:
                    answer = client.post(
                        f"/api/v1/tasks/{task}/comments",
                        json={"content": f"comment {n}", "workspaceId": None},
                        headers={"Idempotency-Key": key},
                    )
                except httpx2.TransportError:
                    continue
                served.add(answer.headers.get("x-crewboard-node", ""))
                if answer.status_code == 201:
                    acked.append(key)
                    break


def browse(base: str) -> set[str]:
    """Signed in on one node, the session and its CSRF token hold on the others: the board
    and a comment posted from the task page. The nodes that answered."""
    nodes: set[str] = set()
    browser = sign_in(base, "owner@example.com")
    try:
        for _ in range(4):
            page = browser.get("/p/CRW/board")
            assert page.status_code == 200
            assert "Shared task" in page.text
            nodes.add(page.headers["x-crewboard-node"])
        saved = post_form(browser, "/p/CRW/tasks/CRW-1/comments", {"content": "From a browser"})
        assert saved.status_code == 303, saved.text
        nodes.add(saved.headers["x-crewboard-node"])
    finally:
        browser.close()
    return nodes


@ONLY_POSTGRESQL
@pytest.mark.anyio
async def test_three_nodes_behind_haproxy_behave_as_one(db: Database, cluster: Any) -> None:
    owner: User = make_user(db, "owner@example.com")
    make_project(db, owner, "CRW")
    task = make_task(db, owner, "CRW", "Shared task")
    me = person_actor(owner)
    secret = tokens.issue_token(db, me, kind="personal", scopes=["read", "tasks.manage"]).secret
    # Made through the balancer, on the nodes' clock (this test's database runs a fixed one).
    async with mcp_client(cluster.url, secret, "legacy", {"X-MCP-Toolsets": "admin"}) as agent:
        made = await agent.call_tool("create_stream_token", {"projectIds": ["CRW"]})
        stream = body_of(made)["secret"]
    path = "/api/v1/projects/CRW/events"
    before = db.read(lambda uow: uow.events.latest_any())  # the streams start after this
    readers = {
        f"{node.name}-{n}": Reader(f"{node.url}{path}", stream) for node in cluster.running
        for n in range(2)
    }  # fmt: skip
    for reader in readers.values():
        assert reader.ready.wait(10)

    acked: list[str] = []
    writers = [
        threading.Thread(target=write_comments, args=(cluster.url, secret, task, EACH, acked))
        for _ in range(WRITERS)
    ]
    for writer in writers:
        writer.start()
    # An MCP client through the balancer, while the writers go on.
    async with mcp_client(cluster.url, secret, "legacy") as client:
        for n in range(6):
            posted = await client.call_tool(
                "post_comment",
                {
                    "taskId": task,
                    "workspaceId": None,
                    "content": f"mcp {n}",
                    "idempotencyKey": f"mcp-{n}",
                },
            )
            assert not posted.is_error, posted
        listed = body_of(await client.call_tool("list_tasks", {"projectId": "CRW"}))
        assert len(listed["tasks"]) == 1
    cluster.kill("node2")  # mid-run: the writers are still going
    for writer in writers:
        writer.join(120)
    # Requests through the balancer were spread over the nodes.
    assert {"node1", "node2", "node3"} <= served
    # A person in a browser through the balancer, after the kill: only the two left answer.
    assert browse(cluster.url) == {"node1", "node3"}

    # node2's subscribers lost their connection: they resume through the balancer.
    def events_of(project_key: str) -> list[dict[str, Any]]:
        project = db.read(lambda uow: uow.projects.get_by_key(project_key))
        assert project is not None
        return db.read(lambda uow: uow.events.list_after(project_id=project.id, limit=10_000))

    for name in [n for n in readers if n.startswith("node2")]:
        dead = readers[name]
        dead.join(30)
        assert dead.dropped or dead.controls, "node2's stream outlived node2"
        last = str(dead.events[-1][0]) if dead.events else None
        readers[name] = Reader(f"{cluster.url}{path}", stream, last_id=last)
        readers[name].earlier = dead.events  # type: ignore[attr-defined]
        assert readers[name].ready.wait(10)
    expected = [e["id"] for e in events_of("CRW")]
    assert len(acked) == WRITERS * EACH  # every write was acknowledged, through the kill
    said = [e for e in events_of("CRW") if e["payload"].get("comment") or "comment" in e["type"]]
    assert len(said) >= WRITERS * EACH + 6  # and each acknowledged one is in the log
    # One more event: every reader stops once it has it, having seen all before it.
    for reader in readers.values():
        reader.until = expected[-1] + 1
    write_comments(cluster.url, secret, task, 1, acked)
    final = [e["id"] for e in events_of("CRW") if e["id"] > before]
    for name, reader in readers.items():
        reader.join(60)
        got = [i for i, _n in getattr(reader, "earlier", []) + reader.events]
        assert got == final, (
            f"{name}: {len(got)} events, {len(final)} in the log, status {reader.status}, {reader.controls}"
        )
