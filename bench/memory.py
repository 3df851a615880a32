"""`python -m bench memory`: get_task with its context pack on a project with a large memory.

A real server (bench/server.py) seeds two boards: `B1` with 100,000 tasks and `B2` with 100.
This module then writes accepted memory straight into the same database (SQLAlchemy Core,
executemany, one transaction per project; on SQLite the FTS5 triggers index each row as it
arrives): 10,000 records of 1-2 KB in B1, 100 in B2, and the `decisions` and `context`
documents in both. In each project one task names 3 records and shares words with many others.
One MCP client then reads that task with get_task (the pack, and the context receipt the
bench's token gets because it can hand in) in blocks that alternate between the projects.

The report: median and p95 latency per project, the pack's size in bytes, and the targets
(median on the large project within 3x the small one's; pack within the budget).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from sqlalchemy import insert, update  # noqa: TID251 - the benchmark seeds tables directly

from bench.measure import Summary, Tally, Target, answer_of, connect, server_cpu_seconds
from bench.process import ServerInfo, ServerProcess, run_workload
from bench.runner import add_database_options
from bench.seed import ADJECTIVES, NOUNS, SENTENCES, VERBS
from crewboard.cli.progress import bars, wanted
from crewboard.domain.ids import new_id
from crewboard.services.board.context import PACK_BUDGET
from crewboard.storage import migrate
from crewboard.storage.board import tables as board_tables
from crewboard.storage.database import Database
from crewboard.storage.memory import tables as t

BOARDS = (100_000, 100)  # tasks of B1 and B2
RECORDS = (10_000, 100)  # memory records of B1 and B2
NAMED = 3
GROWTH = 3.0
START_TIMEOUT = 900.0
BATCH = 1000
STAMP = {"kind": "person", "userId": "bench", "tokenId": None, "displayName": "bench"}
TARGET_TITLE = "Speed up invoice export for the billing dashboard"
TARGET_BRIEF = "Exports of large invoices time out; make the billing export stream its rows."


@dataclass(frozen=True)
class MemoryProject:
    key: str
    id: str
    tasks: int
    records: int
    task_key: str


@dataclass(frozen=True)
class MemoryRow:
    project: str
    tasks: int
    records: int
    pack_bytes: int
    reply_bytes: int
    records_in_full: int
    index_shown: int
    index_total: int
    summary: Summary


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench memory", description=__doc__)
    add_database_options(parser)
    parser.add_argument("--era", default="legacy", choices=("legacy", "2026-07-28"))
    parser.add_argument("--calls", type=int, default=200, help="get_task calls per project")
    parser.add_argument("--block", type=int, default=10, help="calls per alternating block")
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--quick", action="store_true", help="a smoke run: smaller and shorter")
    parser.add_argument("--output", type=Path, default=None, help="JSON results file")
    args = parser.parse_args(argv)
    args.boards, args.records = ((2000, 50), (500, 20)) if args.quick else (BOARDS, RECORDS)
    if args.quick:
        args.calls, args.warmup = 40, 3
    return args


def progress(message: str) -> None:
    sys.stderr.write(f"[bench memory] {message}\n")
    sys.stderr.flush()


# --- seeding ---------------------------------------------------------------------------------


def _sentence(rng: random.Random) -> str:
    return rng.choice(SENTENCES).format(
        a=rng.choice(ADJECTIVES), n1=rng.choice(NOUNS), n2=rng.choice(NOUNS), n3=rng.choice(NOUNS)
    )


def _record_text(rng: random.Random) -> tuple[str, str, str]:
    """A title, a one-line summary and 1-2 KB of markdown content."""
    title = f"{rng.choice(VERBS)} {rng.choice(ADJECTIVES)} {rng.choice(NOUNS)}: {rng.choice(NOUNS)}"
    paragraphs = [" ".join(_sentence(rng) for _ in range(rng.randint(3, 6))) for _ in range(2)]
    bullets = "\n".join(f"- {_sentence(rng)}" for _ in range(rng.randint(2, 5)))
    content = f"## Why\n\n{paragraphs[0]}\n\n## What we do\n\n{bullets}\n\n{paragraphs[1]}"
    while len(content) < 1000:
        content += f"\n\n{_sentence(rng)}"
    return title, _sentence(rng), content[:2000]


def seed_memory(db: Database, project_id: str, count: int, rng: random.Random) -> list[str]:
    """`count` accepted records (version 1 each) in one transaction; their ids. A progress bar
    counts them on standard error when it is a terminal."""
    ids: list[str] = []
    start = datetime(2025, 6, 1, tzinfo=UTC)
    with bars(wanted(as_json=False), {"records": count}) as advance, db.engine.connect() as conn:
        conn.execution_options(crewboard_write=True)
        with conn.begin():
            for first in range(0, count, BATCH):
                rows, versions = [], []
                for n in range(first, min(first + BATCH, count)):
                    title, summary, content = _record_text(rng)
                    at = start + timedelta(minutes=n)
                    record_id = new_id("mem")
                    row: dict[str, Any] = {
                        "id": record_id,
                        "project_id": project_id,
                        "title": title,
                        "summary": summary,
                        "content": content,
                        "collection": None,
                        "document": rng.choice([None, None, "decisions", "notes"]),
                        "status": rng.choice(["approved"] * 4 + ["canon"]),
                        "source_draft_id": None,
                        "version": 1,
                        "created_by": STAMP,
                        "updated_by": STAMP,
                        "created_at": at,
                        "updated_at": at,
                    }
                    rows.append(row)
                    versions.append(_version_of(row))
                    ids.append(record_id)
                conn.execute(insert(t.memory_records), rows)
                conn.execute(insert(t.memory_record_versions), versions)
                advance("records", len(rows))
            for name in ("decisions", "context"):
                text = "\n".join(f"- {_sentence(rng)}" for _ in range(20))
                at = start
                conn.execute(
                    insert(t.project_documents),
                    [
                        {
                            "project_id": project_id,
                            "name": name,
                            "content": text,
                            "version": 1,
                            "updated_by": STAMP,
                            "updated_at": at,
                        }
                    ],
                )
    return ids


def _version_of(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "record_id": row["id"],
        "version": 1,
        "project_id": row["project_id"],
        "title": row["title"],
        "summary": row["summary"],
        "content": row["content"],
        "collection": row["collection"],
        "document": row["document"],
        "status": row["status"],
        "author": STAMP,
        "created_at": row["created_at"],
    }


def name_records(db: Database, project_id: str, number: int, ids: list[str]) -> None:
    """Make task `number` the one the benchmark reads: it names `ids` and shares words."""
    with db.engine.connect() as conn:
        conn.execution_options(crewboard_write=True)
        with conn.begin():
            conn.execute(
                update(board_tables.tasks)
                .where(
                    board_tables.tasks.c.project_id == project_id,
                    board_tables.tasks.c.number == number,
                )
                .values(title=TARGET_TITLE, brief=TARGET_BRIEF, context_item_ids=ids)
            )


def prepare(info: ServerInfo, url: str, args: argparse.Namespace) -> list[MemoryProject]:
    db = Database(url)
    try:
        made = []
        for board, records in zip(info.board, args.records, strict=True):
            started = time.monotonic()
            rng = random.Random(f"{board['key']}-memory")  # noqa: S311 - bench text, no secret
            ids = seed_memory(db, board["id"], records, rng)
            name_records(db, board["id"], 1, rng.sample(ids, NAMED))
            progress(
                f"{board['key']}: {records:,} records seeded in {time.monotonic() - started:.1f} s"
            )
            made.append(
                MemoryProject(
                    board["key"], board["id"], board["tasks"], records, f"{board['key']}-1"
                )
            )
        migrate.refresh_statistics(db)
        return made
    finally:
        db.dispose()


# --- measuring -------------------------------------------------------------------------------


async def _get(client: Client, project: MemoryProject) -> tuple[int, dict[str, Any], int]:
    started = time.perf_counter_ns()
    result = await client.call_tool("get_task", {"taskId": project.task_key})
    elapsed = time.perf_counter_ns() - started
    if result.is_error:
        raise RuntimeError(f"get_task on {project.key} failed: {answer_of(result)}")
    first = result.content[0]
    reply = len(getattr(first, "text", "").encode())
    return elapsed, answer_of(result), reply


async def measure(
    target: Target, projects: list[MemoryProject], args: argparse.Namespace
) -> list[MemoryRow]:
    tallies = {p.key: Tally() for p in projects}
    last: dict[str, tuple[dict[str, Any], int]] = {}
    async with connect(target, args.era) as client:
        for _ in range(args.warmup):
            for project in projects:
                _, body, reply = await _get(client, project)
                last[project.key] = (body, reply)
        for index in range(max(1, math.ceil(args.calls / args.block))):
            for project in projects if index % 2 == 0 else projects[::-1]:
                await _block(client, target.pid, project, args.block, tallies[project.key])
    return [_row(p, tallies[p.key], *last[p.key]) for p in projects]


async def _block(
    client: Client, pid: int, project: MemoryProject, calls: int, tally: Tally
) -> None:
    server_before, client_before = server_cpu_seconds(pid), time.process_time()
    started = time.perf_counter()
    for _ in range(calls):
        elapsed, _, _ = await _get(client, project)
        tally.latencies_ns.append(elapsed)
    tally.wall_seconds += time.perf_counter() - started
    tally.server_cpu_seconds += server_cpu_seconds(pid) - server_before
    tally.client_cpu_seconds += time.process_time() - client_before


def _row(project: MemoryProject, tally: Tally, body: dict[str, Any], reply: int) -> MemoryRow:
    pack = body["contextPack"]
    if "contextReceiptId" not in body:
        raise RuntimeError(f"{project.key}: the read carried no context receipt")
    return MemoryRow(
        project=project.key,
        tasks=project.tasks,
        records=project.records,
        pack_bytes=len(json.dumps(pack, separators=(",", ":"), ensure_ascii=False).encode()),
        reply_bytes=reply,
        records_in_full=len(pack["records"]),
        index_shown=len(pack["memoryIndex"]),
        index_total=pack["memoryIndexTotal"],
        summary=tally.summary(),
    )


def render(rows: list[MemoryRow]) -> str:
    head = f"{'project':8} {'tasks':>8} {'records':>8} {'median ms':>10} {'p95 ms':>8} {'pack B':>8} {'reply B':>8} {'full':>5} {'index':>11}"
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(
            f"{r.project:8} {r.tasks:>8,} {r.records:>8,} {r.summary.median_ms:>10.2f} "
            f"{r.summary.p95_ms:>8.2f} {r.pack_bytes:>8,} {r.reply_bytes:>8,} "
            f"{r.records_in_full:>5} {r.index_shown:>5}/{r.index_total:<5}"
        )
    return "\n".join(lines)


def goals(rows: list[MemoryRow]) -> dict[str, bool]:
    large, small = rows[0], rows[-1]
    ratio = large.summary.median_ms / small.summary.median_ms
    found = {f"median ratio {ratio:.2f} <= {GROWTH:g}": ratio <= GROWTH}
    for r in rows:
        found[f"{r.project} pack {r.pack_bytes:,} B <= {PACK_BUDGET:,} B"] = (
            r.pack_bytes <= PACK_BUDGET
        )
        found[f"{r.project} reply {r.reply_bytes:,} B < 49,152 B"] = r.reply_bytes < 48 * 1024
    return found


def run(args: argparse.Namespace, database_url: str | None) -> dict[str, Any]:
    sizes = ",".join(str(size) for size in args.boards)
    server = ServerProcess(
        database_url, server_args=["--seed-board", sizes], start_timeout=START_TIMEOUT
    )
    progress(f"starting the server and seeding boards of {sizes} tasks")
    with server as info:
        # The server's own SQLite file (bench/server.py: the default in its data folder).
        url = database_url or f"sqlite:///{(server.folder / 'data' / 'crewboard.db').resolve()}"
        projects = prepare(info, url, args)
        target = Target(
            mcp_url=f"{info.base_url}/mcp", token=info.token, project=info.project, pid=info.pid
        )
        progress(f"{args.era}: {args.calls} get_task calls per project in blocks of {args.block}")
        rows = anyio.run(measure, target, projects, args)
    return {
        "workload": "memory",
        "database": info.database,
        "settings": {
            "era": args.era,
            "calls": args.calls,
            "block": args.block,
            "warmup": args.warmup,
        },
        "projects": [asdict(p) for p in projects],
        "rows": [asdict(r) for r in rows],
        "target_met": goals(rows),
        "server_exit_code": server.exit_code,
    }


def main(argv: list[str] | None = None) -> None:
    run_workload(
        "memory",
        parse_args(argv),
        run,
        lambda rows: render([MemoryRow(**{**r, "summary": Summary(**r["summary"])}) for r in rows]),
    )
