"""The webhooks workload: `python -m bench webhooks [--database postgresql]`.

A served node (`bench.server`, which builds the app `crewboard serve` builds, its webhook
dispatcher included) allowed to deliver to 127.0.0.1, and a receiver on loopback in this
process (bench/hook_receiver.py, 204 at once). Three questions:

1. **Delivery latency** with 1 and with 50 subscriptions to every event (`*`): a writer makes
   tasks over REST at a steady `--rate` for `--seconds`; for each task's `task.created` at each
   subscription, the arrival at the receiver less (a) when the writer got the REST answer (both
   on this process's clock: the commit is before it, so this slightly understates) and (b) the
   event's `at` (the server's transaction clock, taken when the write began: this overstates
   by the write's own time).
   A project takes at most 20 webhooks: 50 are spread over three projects (20, 20, 10), and
   the writers spread their tasks over the same projects.
2. **Writer slow-down**: `--clients` writers make tasks as fast as they can for
   `--burst-seconds`, with 0, 1 and 50 subscriptions; tasks/s and the ratio to 0. Then the
   sweep: one writer paced at each `--sweep` rate without and with one subscription, and the
   lowest rate from which its calls are 10 % slower.
3. **GitHub handling**: `--deliveries` signed pull_request deliveries (bench/github_hooks.py),
   the node's answer time from the client.
"""

from __future__ import annotations

import argparse
import json
import statistics
import threading
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx2

from bench import github_hooks
from bench.hook_receiver import HookReceiver
from bench.process import (
    RESULTS,
    ServerInfo,
    ServerProcess,
    hide_password,
    throwaway_postgres,
)
from bench.runner import add_database_options, progress
from crewboard.storage.database import Database

SLOWER = 0.9  # a writer at under 90 % of its speed without webhooks has slowed by 10 %
PER_PROJECT = 20  # the most webhooks a project may have (MAX_WEBHOOKS in domain/webhooks.py)
Hooks = dict[str, list[str]]  # project key -> its subscriptions' ids


def ms_p(values: list[float], q: float) -> float | None:
    """The nearest-rank percentile `q` (0-100) of seconds, in ms; None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, round(q / 100 * len(ordered) + 0.5) - 1))
    return round(ordered[rank] * 1000, 2)


class Writer:
    """REST create_task calls for one client, answered times on this process's clock."""

    def __init__(self, info: ServerInfo) -> None:
        self.client = httpx2.Client(
            base_url=info.base_url, timeout=30,
            headers={"Authorization": f"Bearer {info.token}"},
        )  # fmt: skip

    def create(self, project: str, title: str) -> tuple[str, float, float]:
        """One task; its id, when the answer came, and how long the call took.

        Raises:
            RuntimeError: the server refused the write.
        """
        started = time.perf_counter()
        answer = self.client.post(
            f"/api/v1/projects/{project}/tasks", json={"title": title},
            headers={"Idempotency-Key": uuid.uuid4().hex},
        )  # fmt: skip
        done = time.perf_counter()
        if answer.status_code != 201:
            raise RuntimeError(f"create_task answered {answer.status_code}: {answer.text[:300]}")
        body = answer.json()
        task = body.get("task", body)
        return str(task["id"]), done, done - started

    def close(self) -> None:
        self.client.close()


def paced(
    info: ServerInfo, projects: list[str], rate: float, seconds: float
) -> tuple[dict[str, tuple[str, float]], list[float], float]:
    """Tasks at a steady `rate` for `seconds`, one at a time, over `projects` in turn: the
    project and answered time per task id, each call's duration, and the whole run's (longer
    than `seconds` when the writer fell behind)."""
    writer = Writer(info)
    answered: dict[str, tuple[str, float]] = {}
    durations: list[float] = []
    start = time.perf_counter()
    try:
        for n in range(round(rate * seconds)):
            lag = start + n / rate - time.perf_counter()
            if lag > 0:
                time.sleep(lag)  # the pace itself: a writer with time between its writes
            project = projects[n % len(projects)]
            task_id, done, took = writer.create(project, f"Paced task {n}")
            answered[task_id] = (project, done)
            durations.append(took)
    finally:
        writer.close()
    return answered, durations, time.perf_counter() - start


def burst(info: ServerInfo, projects: list[str], clients: int, seconds: float) -> dict[str, Any]:
    """`clients` writers as fast as they can for `seconds`, over `projects` in turn: tasks/s,
    call times, and each task's project (`made`)."""
    durations: list[list[float]] = [[] for _ in range(clients)]
    made: dict[str, str] = {}
    errors: list[BaseException] = []

    def work(n: int) -> None:
        writer = Writer(info)
        try:
            while time.perf_counter() < until:
                project = projects[len(durations[n]) % len(projects)]
                task_id, _, took = writer.create(project, f"Burst task {n}")
                durations[n].append(took)
                made[task_id] = project  # one dict, many threads: each set is atomic
        except BaseException as error:  # reported by the main thread
            errors.append(error)
        finally:
            writer.close()

    start = time.perf_counter()
    until = start + seconds
    threads = [threading.Thread(target=work, args=(n,)) for n in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - start
    if errors:
        raise RuntimeError(f"a writer failed: {errors[0]}")
    every = [d for each in durations for d in each]
    return {"tasks": len(every), "wall_s": round(wall, 2),
            "tasks_per_s": round(len(every) / wall, 1), "call_p50_ms": ms_p(every, 50),
            "call_p95_ms": ms_p(every, 95), "made": made}  # fmt: skip


class Subscriber:
    """Subscriptions to every event (`*`) made and deleted over REST. A project takes at most
    20, so a larger count is spread over more projects (BENCH1, BENCH2, … made as needed),
    20 each; the writers then spread their tasks over the same projects."""

    def __init__(self, info: ServerInfo, url: str) -> None:
        self.info = info
        self.url = url
        self.projects = [info.project]
        self.client = httpx2.Client(
            base_url=info.base_url, timeout=30, headers={"Authorization": f"Bearer {info.token}"}
        )

    def _project(self, n: int) -> str:
        while len(self.projects) <= n:
            found = self._ok(self.client.get(f"/api/v1/projects/{self.info.project}"), 200)
            workspace = found.get("project", found)["workspaceId"]
            key = f"BENCH{len(self.projects)}"
            self._ok(self.client.post("/api/v1/projects", json={
                "workspaceId": workspace, "key": key, "name": f"Bench {key}"},
                headers={"Idempotency-Key": uuid.uuid4().hex}), 201)  # fmt: skip
            self.projects.append(key)
        return self.projects[n]

    def subscribe(self, count: int) -> Hooks:
        """`count` subscriptions, 20 a project; their ids by project."""
        hooks: Hooks = {}
        for n in range(count):
            project = self._project(n // PER_PROJECT)
            made = self._ok(self.client.post(f"/api/v1/projects/{project}/webhooks", json={
                "url": self.url, "events": ["*"], "description": f"bench {n}"}), 201)  # fmt: skip
            hooks.setdefault(project, []).append(str(made.get("webhook", made)["id"]))
        return hooks

    def unsubscribe(self, hooks: Hooks) -> None:
        """Delete the subscriptions (a backlog they still had is dropped with them)."""
        for ids in hooks.values():
            for webhook_id in ids:
                self._ok(self.client.delete(f"/api/v1/webhooks/{webhook_id}"), 200, 204)

    @staticmethod
    def _ok(answer: httpx2.Response, *expected: int) -> dict[str, Any]:
        """The answer's JSON (empty without a body).

        Raises:
            RuntimeError: the server answered another status.
        """
        if answer.status_code not in expected:
            raise RuntimeError(f"{answer.request.url.path} answered {answer.status_code}: "
                               f"{answer.text[:300]}")  # fmt: skip
        return dict(answer.json()) if answer.content else {}

    def close(self) -> None:
        self.client.close()


def pairs(hooks: Hooks, tasks: dict[str, str]) -> set[tuple[str, str]]:
    """(subscription, task) for every subscription of each task's project."""
    return {(hook, task) for task, project in tasks.items() for hook in hooks.get(project, [])}


def latency(receiver: HookReceiver, hooks: Hooks, answered: dict[str, tuple[str, float]],
            timeout: float) -> dict[str, Any]:  # fmt: skip
    """Wait (bounded) for every task.created at every subscription of its project, then the
    two latencies of those that arrived."""
    keys = pairs(hooks, {task: project for task, (project, _) in answered.items()})
    started = time.perf_counter()
    complete = receiver.wait_created(keys, timeout)
    waited = time.perf_counter() - started
    after_answer: list[float] = []
    after_at: list[float] = []
    with receiver.changed:
        found = [(key[1], receiver.created[key]) for key in keys if key in receiver.created]
    for task, arrival in found:
        after_answer.append(arrival.perf - answered[task][1])
        after_at.append(arrival.wall - datetime.fromisoformat(arrival.at).timestamp())
    return {"expected": len(keys), "arrived": len(found), "complete": complete,
            "drain_wait_s": round(waited, 2),
            "after_answer_p50_ms": ms_p(after_answer, 50),
            "after_answer_p95_ms": ms_p(after_answer, 95),
            "after_answer_max_ms": ms_p(after_answer, 100),
            "after_at_p50_ms": ms_p(after_at, 50), "after_at_p95_ms": ms_p(after_at, 95),
            "arrived_before_answer": sum(1 for v in after_answer if v < 0)}  # fmt: skip


def with_subscriptions(info: ServerInfo, receiver: HookReceiver, subscriber: Subscriber,
                       count: int, args: argparse.Namespace) -> dict[str, Any]:  # fmt: skip
    """One subscription count: a paced run and its latencies, then a burst and how much of
    its backlog the dispatcher sent while it lasted and in `--drain` seconds after."""
    hooks = subscriber.subscribe(count)
    projects = list(hooks) or [info.project]
    progress(f"{info.database}: {count} subscription(s), {args.rate:g} tasks/s for "
             f"{args.seconds:g} s")  # fmt: skip
    answered, durations, _ = paced(info, projects, args.rate, args.seconds)
    row: dict[str, Any] = {"subscriptions": count, "projects": len(projects), "paced_call_p50_ms": ms_p(durations, 50),
                           "paced_call_p95_ms": ms_p(durations, 95)}  # fmt: skip
    if hooks:
        row["latency"] = latency(receiver, hooks, answered, args.latency_wait)
    progress(f"{info.database}: {count} subscription(s), {args.clients} writer(s) at full "
             f"speed for {args.burst_seconds:g} s")  # fmt: skip
    made = burst(info, projects, args.clients, args.burst_seconds)
    keys = pairs(hooks, made.pop("made"))
    if hooks:
        during = receiver.created_count(keys)
        receiver.wait_created(keys, args.drain)
        after = receiver.created_count(keys)
        made |= {"deliveries": len(keys), "delivered_during": during,
                 "delivered_during_per_s": round(during / made["wall_s"], 1),
                 "delivered_after_drain": after, "drain_s": args.drain}  # fmt: skip
        subscriber.unsubscribe(hooks)
    row["burst"] = made
    return row


def sweep(
    info: ServerInfo, receiver: HookReceiver, subscriber: Subscriber, args: argparse.Namespace
) -> list[dict[str, Any]]:
    """For each rate of `--sweep` (events/s), a one-at-a-time writer paced at that rate for
    `--sweep-seconds`, without subscriptions and then with one: its median call time with
    against without. For a writer that waits for each answer, a call 10 % longer is a writer
    10 % slower."""
    steps = []
    for rate in args.sweep_rates:
        progress(f"{info.database}: sweep, {rate:g} tasks/s without and with one subscription")
        _, alone, _ = paced(info, [info.project], rate, args.sweep_seconds)
        hooks = subscriber.subscribe(1)
        answered, loaded, took = paced(info, [info.project], rate, args.sweep_seconds)
        lag = latency(receiver, hooks, answered, 1.0)  # keeping up: all there a moment after
        subscriber.unsubscribe(hooks)
        # Medians: a few calls held up by the machine's other load would swing a mean.
        ratio = statistics.median(loaded) / statistics.median(alone)
        steps.append({"rate": rate, "alone_p50_ms": ms_p(alone, 50),
                      "loaded_p50_ms": ms_p(loaded, 50),
                      "call_ratio": round(ratio, 3), "dispatcher_kept_up": lag["complete"],
                      "latency_p50_ms": lag["after_answer_p50_ms"],
                      "latency_p95_ms": lag["after_answer_p95_ms"],
                      "achieved_rate": round(len(loaded) / max(took, args.sweep_seconds), 1)})  # fmt: skip
    return steps


def slows_at(steps: list[dict[str, Any]]) -> float | None:
    """The lowest rate from which every faster step's calls were 10 % slower or more; one
    slow step below a fast one is taken for the machine's noise, not the deliveries."""
    found = None
    for step in sorted(steps, key=lambda s: s["rate"], reverse=True):
        if step["call_ratio"] < 1 / SLOWER:
            break
        found = step["rate"]
    return found


def run(args: argparse.Namespace, database_url: str | None) -> dict[str, Any]:
    """The whole workload on one fresh server: GitHub first (no subscription yet sends its
    events), then each subscription count, then the sweep."""
    receiver = HookReceiver().start()
    env = {"CREWBOARD_WEBHOOK_ALLOW_NETWORKS": "127.0.0.1/32"}
    server = ServerProcess(database_url, env=env, keep_data=args.keep_data)
    try:
        with server as info:
            url = database_url or f"sqlite:///{server.folder / 'data' / 'crewboard.db'}"
            db = Database(url)
            try:
                progress(f"{info.database}: {args.deliveries} GitHub deliveries")
                secret = github_hooks.set_up(db, info.token, info.project)
            finally:
                db.dispose()
            named = Writer(info)
            for n in range(github_hooks.TASKS):  # the tasks the branches name
                named.create(info.project, f"Named by a branch {n + 1}")
            named.close()
            hub = github_hooks.deliver_all(info.base_url, info.project, secret,
                                           args.deliveries)  # fmt: skip
            subscriber = Subscriber(info, receiver.url)
            try:
                rows = [with_subscriptions(info, receiver, subscriber, count, args)
                        for count in args.subs]  # fmt: skip
                steps = sweep(info, receiver, subscriber, args)
            finally:
                subscriber.close()
    finally:
        receiver.stop()
    results = summarise(info.database, args, rows, hub, exit_code=server.exit_code,
                        duplicates=receiver.duplicates)  # fmt: skip
    results["sweep"] = steps
    results["slows_at_rate"] = slows_at(steps)
    return results


def summarise(database: str, args: argparse.Namespace, rows: list[dict[str, Any]],
              hub: dict[str, Any], *, exit_code: int | None, duplicates: int) -> dict[str, Any]:  # fmt: skip
    base = rows[0]["burst"]["tasks_per_s"] if rows and rows[0]["subscriptions"] == 0 else None
    for row in rows:
        row["burst"]["ratio_to_none"] = (
            round(row["burst"]["tasks_per_s"] / base, 3) if base else None
        )
    github = {"deliveries": len(hub["seconds"]), "p50_ms": ms_p(hub["seconds"], 50),
              "p95_ms": ms_p(hub["seconds"], 95), "mean_ms": round(
                  statistics.fmean(hub["seconds"]) * 1000, 2), "outcomes": hub["outcomes"]}  # fmt: skip
    complete = all(r.get("latency", {"complete": True})["complete"] for r in rows)
    slowed = [r["subscriptions"] for r in rows if (r["burst"]["ratio_to_none"] or 1) < SLOWER]
    return {
        "workload": "webhooks", "database": database, "when": datetime.now().astimezone().isoformat(),
        "options": {k: v for k, v in vars(args).items() if k not in ("output", "postgres_url")},
        "rows": rows, "github": github, "server_exit_code": exit_code,
        "duplicate_deliveries": duplicates,
        "target_met": {
            "every paced delivery arrived": complete,
            "the writer at full speed within 10 % with every subscription count": not slowed,
            "the server exited 0": exit_code == 0,
        },
    }  # fmt: skip


def table(results: dict[str, Any]) -> str:
    lines = [f"Webhooks on {results['database']}", "",
             "| subscriptions | latency after REST answer p50 / p95 (max) | after event `at` "
             "p50 / p95 | arrived | writer call p50 at pace | full speed tasks/s (× none) | "
             "deliveries/s during burst |", "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]  # fmt: skip
    for row in results["rows"]:
        lat, b = row.get("latency"), row["burst"]
        shown = (f"{lat['after_answer_p50_ms']} / {lat['after_answer_p95_ms']} "
                 f"({lat['after_answer_max_ms']}) ms | {lat['after_at_p50_ms']} / "
                 f"{lat['after_at_p95_ms']} ms | {lat['arrived']} of {lat['expected']}"
                 if lat else "— | — | —")  # fmt: skip
        spread = f" ({row['projects']} projects)" if row["projects"] > 1 else ""
        lines.append(f"| {row['subscriptions']}{spread} | {shown} | {row['paced_call_p50_ms']} ms | "
                     f"{b['tasks_per_s']} ({b['ratio_to_none']}×) | "
                     f"{b.get('delivered_during_per_s', '—')} |")  # fmt: skip
    if results["sweep"]:
        lines += ["", "| paced tasks/s (1 subscription) | call p50 alone | with 1 | × | "
                  "dispatcher kept up | latency p50 / p95 | achieved tasks/s |",
                  "| ---: | ---: | ---: | ---: | --- | ---: | ---: |"]  # fmt: skip
        lines += [f"| {s['rate']:g} | {s['alone_p50_ms']} ms | {s['loaded_p50_ms']} ms | "
                  f"{s['call_ratio']} | {'yes' if s['dispatcher_kept_up'] else 'no'} | "
                  f"{s['latency_p50_ms']} / {s['latency_p95_ms']} ms | {s['achieved_rate']} |"
                  for s in results["sweep"]]  # fmt: skip
        rate = results["slows_at_rate"]
        lines.append(f"calls 10 % slower or more from {rate:g} tasks/s on" if rate else
                     "no rate of the sweep made the writer's calls 10 % slower")  # fmt: skip
    hub = results["github"]
    lines += ["", f"GitHub: {hub['deliveries']} pull_request deliveries, answer p50 "
              f"{hub['p50_ms']} ms, p95 {hub['p95_ms']} ms; outcomes {hub['outcomes']}"]  # fmt: skip
    return "\n".join(lines)


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench webhooks", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    add_database_options(parser)
    parser.add_argument("--rate", type=float, default=20.0, help="paced writer, tasks/s")
    parser.add_argument("--seconds", type=float, default=10.0, help="paced run's length")
    parser.add_argument("--burst-seconds", type=float, default=8.0)
    parser.add_argument("--clients", type=int, default=2, help="writers at full speed")
    parser.add_argument("--drain", type=float, default=10.0,
                        help="seconds to wait after a burst for its backlog")  # fmt: skip
    parser.add_argument("--latency-wait", type=float, default=30.0,
                        help="seconds to wait after a paced run for its deliveries")  # fmt: skip
    parser.add_argument("--subscriptions", default="0,1,50", help="counts, 0 first")
    parser.add_argument("--sweep", default="5,10,20,40",
                        help="paced rates (tasks/s) for the slow-down sweep; empty: none")  # fmt: skip
    parser.add_argument("--sweep-seconds", type=float, default=4.0)
    parser.add_argument("--deliveries", type=int, default=200, help="GitHub deliveries")
    parser.add_argument("--keep-data", action="store_true")
    parser.add_argument("--output", default=None)
    args = parser.parse_args(argv)
    args.subs = [int(n) for n in args.subscriptions.split(",")]
    args.sweep_rates = [float(n) for n in args.sweep.split(",") if n.strip()]
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse(argv)
    if args.database == "postgresql":
        progress(f"creating a throw-away database on {hide_password(args.postgres_url)}")
        with throwaway_postgres(args.postgres_url) as url:
            results = run(args, url)
    else:
        results = run(args, None)
    print(table(results))
    for goal, met in results["target_met"].items():
        print(f"{'met ' if met else 'MISSED'} {goal}")
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    output = (
        Path(args.output)
        if args.output
        else RESULTS / f"{stamp}-webhooks-{results['database']}.json"
    )
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"\nJSON results: {output}")
