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
2. **Writer slow-down**: `--clients` writers make tasks as fast as they can for
   `--burst-seconds`, with 0, 1 and 50 subscriptions; tasks/s and the ratio to 0.
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
        self.project = info.project
        self.client = httpx2.Client(
            base_url=info.base_url, timeout=30,
            headers={"Authorization": f"Bearer {info.token}"},
        )  # fmt: skip

    def create(self, title: str) -> tuple[str, float, float]:
        """One task; its id, when the answer came, and how long the call took.

        Raises:
            RuntimeError: the server refused the write.
        """
        started = time.perf_counter()
        answer = self.client.post(
            f"/api/v1/projects/{self.project}/tasks", json={"title": title},
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
    info: ServerInfo, rate: float, seconds: float
) -> tuple[dict[str, float], list[float], float]:
    """Tasks at a steady `rate` for `seconds`, one at a time: answered time per task id, each
    call's duration, and the whole run's (longer than `seconds` when the writer fell behind)."""
    writer = Writer(info)
    answered: dict[str, float] = {}
    durations: list[float] = []
    start = time.perf_counter()
    try:
        for n in range(round(rate * seconds)):
            lag = start + n / rate - time.perf_counter()
            if lag > 0:
                time.sleep(lag)  # the pace itself: a writer with time between its writes
            task_id, done, took = writer.create(f"Paced task {n}")
            answered[task_id] = done
            durations.append(took)
    finally:
        writer.close()
    return answered, durations, time.perf_counter() - start


def burst(info: ServerInfo, clients: int, seconds: float) -> dict[str, Any]:
    """`clients` writers as fast as they can for `seconds`: tasks/s and call times."""
    durations: list[list[float]] = [[] for _ in range(clients)]
    ids: list[list[str]] = [[] for _ in range(clients)]
    errors: list[BaseException] = []

    def work(n: int) -> None:
        writer = Writer(info)
        try:
            while time.perf_counter() < until:
                task_id, _, took = writer.create(f"Burst task {n}")
                durations[n].append(took)
                ids[n].append(task_id)
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
            "call_p95_ms": ms_p(every, 95), "ids": [i for each in ids for i in each]}  # fmt: skip


def subscribe(info: ServerInfo, url: str, count: int) -> list[str]:
    """`count` subscriptions to every event of the project, made over REST; their ids."""
    made = []
    with httpx2.Client(base_url=info.base_url, timeout=30,
                       headers={"Authorization": f"Bearer {info.token}"}) as client:  # fmt: skip
        for n in range(count):
            answer = client.post(f"/api/v1/projects/{info.project}/webhooks",
                                 json={"url": url, "events": ["*"],
                                       "description": f"bench {n}"})  # fmt: skip
            if answer.status_code != 201:
                raise RuntimeError(f"create_webhook answered {answer.status_code}: {answer.text}")
            body = answer.json()
            made.append(str(body.get("webhook", body)["id"]))
    return made


def unsubscribe(info: ServerInfo, ids: list[str]) -> None:
    """Delete the subscriptions (a backlog they still had is dropped with them)."""
    with httpx2.Client(base_url=info.base_url, timeout=30,
                       headers={"Authorization": f"Bearer {info.token}"}) as client:  # fmt: skip
        for webhook_id in ids:
            answer = client.delete(f"/api/v1/webhooks/{webhook_id}")
            if answer.status_code not in (200, 204):
                raise RuntimeError(f"delete_webhook answered {answer.status_code}: {answer.text}")


def latency(receiver: HookReceiver, hooks: list[str], answered: dict[str, float],
            timeout: float) -> dict[str, Any]:  # fmt: skip
    """Wait (bounded) for every task.created at every subscription, then the two latencies."""
    keys = {(hook, task) for hook in hooks for task in answered}
    started = time.perf_counter()
    complete = receiver.wait_created(keys, timeout)
    waited = time.perf_counter() - started
    after_answer: list[float] = []
    after_at: list[float] = []
    with receiver.changed:
        found = [(key[1], receiver.created[key]) for key in keys if key in receiver.created]
    for task, arrival in found:
        after_answer.append(arrival.perf - answered[task])
        after_at.append(arrival.wall - datetime.fromisoformat(arrival.at).timestamp())
    return {"expected": len(keys), "arrived": len(found), "complete": complete,
            "drain_wait_s": round(waited, 2),
            "after_answer_p50_ms": ms_p(after_answer, 50),
            "after_answer_p95_ms": ms_p(after_answer, 95),
            "after_answer_max_ms": ms_p(after_answer, 100),
            "after_at_p50_ms": ms_p(after_at, 50), "after_at_p95_ms": ms_p(after_at, 95),
            "arrived_before_answer": sum(1 for v in after_answer if v < 0)}  # fmt: skip


def with_subscriptions(info: ServerInfo, receiver: HookReceiver, count: int,
                       args: argparse.Namespace) -> dict[str, Any]:  # fmt: skip
    """One subscription count: a paced run and its latencies, then a burst and how much of
    its backlog the dispatcher sent while it lasted and in `--drain` seconds after."""
    hooks = subscribe(info, receiver.url, count) if count else []
    progress(f"{info.database}: {count} subscription(s), {args.rate:g} tasks/s for "
             f"{args.seconds:g} s")  # fmt: skip
    answered, durations, _ = paced(info, args.rate, args.seconds)
    row: dict[str, Any] = {"subscriptions": count, "paced_call_p50_ms": ms_p(durations, 50),
                           "paced_call_p95_ms": ms_p(durations, 95)}  # fmt: skip
    if hooks:
        row["latency"] = latency(receiver, hooks, answered, args.latency_wait)
    progress(f"{info.database}: {count} subscription(s), {args.clients} writer(s) at full "
             f"speed for {args.burst_seconds:g} s")  # fmt: skip
    made = burst(info, args.clients, args.burst_seconds)
    ids = made.pop("ids")
    keys = {(hook, task) for hook in hooks for task in ids}
    if hooks:
        during = receiver.created_count(keys)
        receiver.wait_created(keys, args.drain)
        after = receiver.created_count(keys)
        made |= {"deliveries": len(keys), "delivered_during": during,
                 "delivered_during_per_s": round(during / made["wall_s"], 1),
                 "delivered_after_drain": after, "drain_s": args.drain}  # fmt: skip
        unsubscribe(info, hooks)
    row["burst"] = made
    return row


def sweep(
    info: ServerInfo, receiver: HookReceiver, args: argparse.Namespace
) -> list[dict[str, Any]]:
    """For each rate of `--sweep` (events/s), a one-at-a-time writer paced at that rate for
    `--sweep-seconds`, without subscriptions and then with one: its mean call time with
    against without. For a writer that waits for each answer, a call 10 % longer is a writer
    10 % slower."""
    steps = []
    for rate in args.sweep_rates:
        progress(f"{info.database}: sweep, {rate:g} tasks/s without and with one subscription")
        _, alone, _ = paced(info, rate, args.sweep_seconds)
        hooks = subscribe(info, receiver.url, 1)
        answered, loaded, took = paced(info, rate, args.sweep_seconds)
        lag = latency(receiver, hooks, answered, 1.0)  # keeping up: all there a moment after
        unsubscribe(info, hooks)
        ratio = statistics.fmean(loaded) / statistics.fmean(alone)
        steps.append({"rate": rate, "alone_mean_ms": round(statistics.fmean(alone) * 1000, 2),
                      "loaded_mean_ms": round(statistics.fmean(loaded) * 1000, 2),
                      "call_ratio": round(ratio, 3), "dispatcher_kept_up": lag["complete"],
                      "latency_p50_ms": lag["after_answer_p50_ms"],
                      "latency_p95_ms": lag["after_answer_p95_ms"],
                      "achieved_rate": round(len(loaded) / took, 1)})  # fmt: skip
    return steps


def run(args: argparse.Namespace, database_url: str | None) -> dict[str, Any]:
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
                named.create(f"Named by a branch {n + 1}")
            named.close()
            hub = github_hooks.deliver_all(info.base_url, info.project, secret,
                                           args.deliveries)  # fmt: skip
            rows = [with_subscriptions(info, receiver, count, args) for count in args.subs]
            steps = sweep(info, receiver, args)
    finally:
        receiver.stop()
    results = summarise(info.database, args, rows, hub, exit_code=server.exit_code,
                        duplicates=receiver.duplicates)  # fmt: skip
    results["sweep"] = steps
    slowed = [step["rate"] for step in steps if step["call_ratio"] >= 1 / SLOWER]
    results["slows_at_rate"] = slowed[0] if slowed else None
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
        lines.append(f"| {row['subscriptions']} | {shown} | {row['paced_call_p50_ms']} ms | "
                     f"{b['tasks_per_s']} ({b['ratio_to_none']}×) | "
                     f"{b.get('delivered_during_per_s', '—')} |")  # fmt: skip
    if results["sweep"]:
        lines += ["", "| paced tasks/s (1 subscription) | call mean alone | with 1 | × | "
                  "dispatcher kept up | latency p50 / p95 | achieved tasks/s |",
                  "| ---: | ---: | ---: | ---: | --- | ---: | ---: |"]  # fmt: skip
        lines += [f"| {s['rate']:g} | {s['alone_mean_ms']} ms | {s['loaded_mean_ms']} ms | "
                  f"{s['call_ratio']} | {'yes' if s['dispatcher_kept_up'] else 'no'} | "
                  f"{s['latency_p50_ms']} / {s['latency_p95_ms']} ms | {s['achieved_rate']} |"
                  for s in results["sweep"]]  # fmt: skip
        rate = results["slows_at_rate"]
        lines.append(f"first rate with calls 10 % slower: {rate:g} tasks/s" if rate else
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
    parser.add_argument("--sweep-seconds", type=float, default=3.0)
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
