"""The live-events workload: `python -m bench live [--database-url URL] [--events N]`.

Two nodes on a fresh PostgreSQL database (bench/cluster.py; HAProxy is started but not used:
each measure names its node). Writes are comments posted over REST; each makes one event.

- Delivery latency, same node and cross node: a subscriber on node 1; a writer posts to node 1,
  then to node 2, one comment every 20 ms. Latency is from the writer's 201 to the event
  arriving on the subscriber's stream (both clocks in this process).
- Memory per open stream: node 1's resident memory before and after opening 200 idle streams.
- Subscribers one node holds: one writer puts events in the log as fast as it can (through
  the storage layer: a REST write costs the node far more than 1 ms on this machine, so only
  this reaches about 1,000 events a second) while 0, 25, 50, 100, 200 and 400 subscribers on
  node 1 follow the project from a separate process of raw connections that only count
  events; the writer's rate at each count against none, and whether every stream got every
  event.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import statistics
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
from tests.support.factories import make_project, make_task, make_user
from tests.support.sse import Reader

from bench.cluster import Cluster
from bench.process import throwaway_postgres
from crewboard.contract.projects import present
from crewboard.services.identity import stream_tokens, tokens
from crewboard.services.identity.users import person_actor
from crewboard.services.live import PER_PERSON, PER_TOKEN
from crewboard.storage.database import Database

ADMIN_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"  # may CREATE DATABASE


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


class World:
    def __init__(self, url: str) -> None:
        self.db = Database(url)
        owner = make_user(self.db, "bench@example.com")
        self.project = make_project(self.db, owner, "LIVE")
        self.task = make_task(self.db, owner, "LIVE", "Followed")
        self.me = person_actor(owner)
        self.secret = tokens.issue_token(
            self.db, self.me, kind="personal", scopes=["read", "tasks.manage"]
        ).secret
        self.made = 0
        self.follower = self.me

    def stream_secret(self) -> str:
        """A new stream token for LIVE, for 5 streams. A person's streams are capped (20 on a
        node), so every fourth comes from a new reader of the project."""
        if self.made % (PER_PERSON // PER_TOKEN) == 0:
            reader = make_user(self.db, f"reader{self.made}@example.com")
            present.set_project_member(
                self.db, self.me, project="LIVE", email=reader.email, role="read"
            )
            self.follower = person_actor(reader)
        self.made += 1
        made = stream_tokens.create_stream_token(self.db, self.follower, projects=["LIVE"])
        return str(made["secret"])


def post(client: httpx2.Client, task: str, n: int) -> None:
    answer = client.post(
        f"/api/v1/tasks/{task}/comments",
        json={"content": f"event {n}", "workspaceId": None},
        headers={"Idempotency-Key": uuid.uuid4().hex},
    )
    assert answer.status_code == 201, answer.text


def latency(
    world: World, subscriber_url: str, writer_url: str, count: int
) -> tuple[list[float], list[float]]:
    """(delivery latencies, the writes' own round trips), in ms, one write at a time. A
    delivery is timed from the moment the write was sent: the event cannot exist earlier,
    and it may reach the stream before the writer has read its 201."""
    reader = Reader(f"{subscriber_url}/api/v1/projects/LIVE/events", world.stream_secret(),
                    want=count)  # fmt: skip
    assert reader.ready.wait(10)
    sent: list[float] = []
    round_trips: list[float] = []
    headers = {"Authorization": f"Bearer {world.secret}"}
    with httpx2.Client(base_url=writer_url, headers=headers, timeout=30) as client:
        for n in range(count):
            sent.append(time.perf_counter())
            post(client, world.task, n)
            round_trips.append((time.perf_counter() - sent[-1]) * 1000)
            time.sleep(0.02)
    reader.join(60)
    ids = [event_id for event_id, _ in reader.events]
    assert len(ids) == count, f"{count - len(ids)} events lost"
    assert ids == sorted(set(ids)), "events repeated or out of order"
    return [(reader.arrived[i] - sent[i]) * 1000 for i in range(count)], round_trips


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


@dataclass
class Followers:
    """What the subscribers' process is asked to follow, and what it counts."""

    port: int
    path: str
    secrets: list[str]
    seen: list[int] = field(default_factory=list)  # events per stream
    cut: int = 0  # streams the server ended
    opened: int = 0

    async def follow(self, slot: int, ready: Any) -> None:
        """One subscriber as light as a client can be: a raw connection counting events."""
        reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
        writer.write(
            f"GET {self.path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Authorization: Bearer {self.secrets[slot]}\r\n"
            "Accept: text/event-stream\r\n\r\n".encode()
        )
        tail, started = b"", False
        while chunk := await reader.read(65536):
            buffer = tail + chunk
            if not started and b"retry:" in buffer:
                started = True
                self.opened += 1
                if self.opened == len(self.secrets):
                    ready.set()
            self.seen[slot] += buffer.count(b"\nid: ") + buffer.startswith(b"id: ")
            if b"event: end" in buffer:
                self.cut += 1
                break
            tail = buffer[-5:]
        writer.close()


def _subscribers(plan: Followers, ready: Any, stop: Any, results: Any) -> None:
    """The subscribers' own process (so their reading takes no time from the writer's
    interpreter): follow until `stop`, then report (events seen per stream, streams cut)."""
    plan.seen = [0] * len(plan.secrets)

    async def main() -> None:
        if not plan.secrets:
            ready.set()
        tasks = [asyncio.create_task(plan.follow(i, ready)) for i in range(len(plan.secrets))]
        await asyncio.to_thread(stop.wait)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    asyncio.run(main())
    results.put((plan.seen, plan.cut))


def throughput(world: World, node: Any, subscribers: int, seconds: float = 5.0) -> float:
    """Events a second one writer puts in the log (straight through the storage layer, the
    cheapest write there is) while `subscribers` streams on `node` follow the project."""
    secrets = [world.stream_secret() for _ in range(-(-subscribers // 5))]
    context = multiprocessing.get_context("spawn")
    ready, stop, results = context.Event(), context.Event(), context.Queue()
    path = "/api/v1/projects/LIVE/events"
    port = int(node.url.rsplit(":", 1)[1])
    plan = Followers(port, path, [s for s in secrets for _ in range(5)][:subscribers])
    child = context.Process(target=_subscribers, args=(plan, ready, stop, results))
    child.start()
    assert ready.wait(60), "the subscribers did not all connect"
    project = world.project
    written = 0
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        world.db.write(
            lambda uow: uow.record_event("bench.tick", actor={}, payload={}, project_id=project)
        )
        written += 1
    rate = written / (time.perf_counter() - started)
    time.sleep(2.0)  # let the streams drain
    stop.set()
    seen, cut = results.get(timeout=60)
    child.join(30)
    short = sum(1 for n in seen if n < written)
    print(f"  {subscribers:4d} subscribers: {rate:6.0f} events/s written, {cut} streams cut, "
          f"{short} short of the {written} events")  # fmt: skip
    return rate


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench live", description=__doc__)
    parser.add_argument("--admin-url", default=ADMIN_URL)
    parser.add_argument("--events", type=int, default=300)
    options = parser.parse_args(argv)
    with throwaway_postgres(options.admin_url) as url:
        run(url, options.events)


def run(url: str, events: int) -> None:
    # Up to 400 subscribers follow the one project on node 1: above a project's default cap.
    os.environ.setdefault("CREWBOARD_LIVE_STREAMS_PER_PROJECT", "1000")
    with Cluster(url, nodes=2) as cluster:
        world = World(url)
        one, two = cluster.running
        same, writes = latency(world, one.url, one.url, events)
        cross, _ = latency(world, one.url, two.url, events)
        print(f"delivery latency over {events} events, ms from the write being sent (p50 / p95):")
        print(f"  same node:  {statistics.median(same):6.1f} / {pct(same, 0.95):6.1f}")
        print(f"  cross node: {statistics.median(cross):6.1f} / {pct(cross, 0.95):6.1f}")
        print(f"  (the write's own round trip: {statistics.median(writes):.1f} / "
              f"{pct(writes, 0.95):.1f})")  # fmt: skip
        memory(world, one)
        print("one writer into the log, as fast as it goes, while subscribers on node 1 follow:")
        base = throughput(world, one, 0)
        held = 0
        for count in (25, 50, 100, 200, 400):
            rate = throughput(world, one, count)
            print(f"        {rate / base:5.2f}x the rate with none")
            if rate >= 0.9 * base:
                held = count
        print(f"subscribers node 1 holds before the writer slows by 10%: {held} (of those tried)")
        world.db.dispose()


def memory(world: World, node: Any) -> None:
    before = rss_kib(node.process.pid)
    idle = [
        Reader(f"{node.url}/api/v1/projects/LIVE/events", secret)
        for secret in [world.stream_secret() for _ in range(40)]
        for _ in range(5)
    ]
    for reader in idle:
        assert reader.ready.wait(30)
    time.sleep(1)
    after = rss_kib(node.process.pid)
    print(
        f"memory per open stream: {(after - before) / len(idle):.1f} KiB "
        f"(node RSS {before} -> {after} KiB with {len(idle)} streams)"
    )
    for reader in idle:
        reader.until = 0
    headers = {"Authorization": f"Bearer {world.secret}"}
    with httpx2.Client(base_url=node.url, headers=headers) as client:
        post(client, world.task, -2)
    for reader in idle:
        reader.join(60)
