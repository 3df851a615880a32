"""The live-events workload: `python -m bench live [--database-url URL] [--events N]`.

Two nodes on a fresh PostgreSQL database (bench/cluster.py; HAProxy is started but not used:
each measure names its node). Writes are comments posted over REST; each makes one event.

- Delivery latency, same node and cross node: a subscriber on node 1; a writer posts to node 1,
  then to node 2, one comment every 20 ms. Latency is from the writer's 201 to the event
  arriving on the subscriber's stream (both clocks in this process).
- Memory per open stream: node 1's resident memory before and after opening 200 idle streams.
- Subscribers one node holds: writers post as fast as they can to node 1 (about 1,000 events
  a second is the goal) while 0, 50, 100, 200 and 400 subscribers on node 1 follow the project;
  the writers' throughput at each count against none.
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import httpx2
from tests.support.factories import make_project, make_task, make_user
from tests.support.sse import Reader

from bench.cluster import Cluster
from bench.process import throwaway_postgres
from crewboard.services.identity import stream_tokens, tokens
from crewboard.services.identity.users import person_actor
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
        make_project(self.db, owner, "LIVE")
        self.task = make_task(self.db, owner, "LIVE", "Followed")
        self.me = person_actor(owner)
        self.secret = tokens.issue_token(
            self.db, self.me, kind="personal", scopes=["read", "tasks.manage"]
        ).secret

    def stream_secret(self) -> str:
        return str(stream_tokens.create_stream_token(self.db, self.me, projects=["LIVE"])["secret"])


def post(client: httpx2.Client, task: str, n: int) -> None:
    answer = client.post(
        f"/api/v1/tasks/{task}/comments",
        json={"content": f"event {n}", "workspaceId": None},
        headers={"Idempotency-Key": uuid.uuid4().hex},
    )
    assert answer.status_code == 201, answer.text


def latency(world: World, subscriber_url: str, writer_url: str, count: int) -> list[float]:
    reader = Reader(f"{subscriber_url}/api/v1/projects/LIVE/events", world.stream_secret(),
                    want=count)  # fmt: skip
    arrived: dict[int, float] = {}
    original = reader.events.append

    def stamp(item: tuple[int, Any]) -> None:
        arrived[len(arrived)] = time.perf_counter()
        original(item)

    reader.events.append = stamp  # type: ignore[method-assign]
    assert reader.ready.wait(10)
    sent: list[float] = []
    headers = {"Authorization": f"Bearer {world.secret}"}
    with httpx2.Client(base_url=writer_url, headers=headers, timeout=30) as client:
        for n in range(count):
            post(client, world.task, n)
            sent.append(time.perf_counter())
            time.sleep(0.02)
    reader.join(60)
    return [(arrived[i] - sent[i]) * 1000 for i in range(count)]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def throughput(world: World, node_url: str, subscribers: int, seconds: float = 5.0) -> float:
    readers = [
        Reader(f"{node_url}/api/v1/projects/LIVE/events", secret)
        for secret in [world.stream_secret() for _ in range(-(-subscribers // 5))]
        for _ in range(5)
    ][:subscribers]
    for reader in readers:
        assert reader.ready.wait(30)
    done = 0
    lock = threading.Lock()
    stop = time.perf_counter() + seconds

    def write() -> None:
        nonlocal done
        headers = {"Authorization": f"Bearer {world.secret}"}
        with httpx2.Client(base_url=node_url, headers=headers, timeout=30) as client:
            n = 0
            while time.perf_counter() < stop:
                post(client, world.task, n)
                n += 1
                with lock:
                    done += 1

    writers = [threading.Thread(target=write) for _ in range(4)]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join()
    rate = done / seconds
    for reader in readers:
        reader.until = 0  # stop at the next event
    headers = {"Authorization": f"Bearer {world.secret}"}
    with httpx2.Client(base_url=node_url, headers=headers) as client:
        post(client, world.task, -1)
    for reader in readers:
        reader.join(60)
    cut = sum(1 for r in readers if r.controls)
    print(f"  {subscribers:4d} subscribers: {rate:7.0f} events/s written, {cut} streams cut")
    return rate


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench live", description=__doc__)
    parser.add_argument("--admin-url", default=ADMIN_URL)
    parser.add_argument("--events", type=int, default=300)
    options = parser.parse_args(argv)
    with throwaway_postgres(options.admin_url) as url:
        run(url, options.events)


def run(url: str, events: int) -> None:
    with Cluster(url, nodes=2) as cluster:
        world = World(url)
        one, two = cluster.running
        same = latency(world, one.url, one.url, events)
        cross = latency(world, one.url, two.url, events)
        print(f"delivery latency over {events} events, ms (p50 / p95):")
        print(f"  same node:  {statistics.median(same):6.1f} / {pct(same, 0.95):6.1f}")
        print(f"  cross node: {statistics.median(cross):6.1f} / {pct(cross, 0.95):6.1f}")
        memory(world, one)
        print("writers on node 1 (4 threads, as fast as they go) while subscribers follow:")
        base = throughput(world, one.url, 0)
        for count in (50, 100, 200, 400):
            rate = throughput(world, one.url, count)
            print(f"        {rate / base:5.2f}x the rate with none")
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
