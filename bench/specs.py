"""`python -m bench specs`: the spec file measures, each on SQLite or PostgreSQL.

`--part reanchor`, `read`, `history` (default: all three, one after the other).

**reanchor**, re-anchoring comment threads when a spec file is saved. In-process (no server:
the cost is in the service and the database, not the transport). A generated spec file of about 2,000 lines gets 100 comment threads, each on a passage of its
own line, through the services. The file is then saved again and again, alternating between
two texts: the second adds a paragraph near the top (every passage moves), rewrites a word
inside five passages (their quotes change) and edits lines between passages; the first
undoes it, so every thread stays anchored. A twin file with the same texts and no threads is
saved the same way, in alternation with the first.

Figures (median and p95 of the saves):
- `reanchor`: the pure step, `domain.spec_comments.reanchor` of 100 anchors over one save;
- `save, 100 threads` and `save, no threads`: the whole `update_spec_file` use case;
- the difference of the two medians: what re-anchoring adds to a save (target: under 50 ms).

**read**, `read_spec_file` on a large file against a small one. A real server
(`bench/server.py`) in its own process; a file of 8 MiB (about 400,000 lines of 21 bytes) and
one of 20 lines are uploaded into its database through the services. Reads alternate in
blocks: a 2,000-line window in the middle of the large file, and the whole small file. Timed
twice: through the service in this process (`files.read_spec_file`), and over MCP HTTP
(`read_spec_file` through `mcp.Client`, the legacy era). Target: the large file's median
within 2x the small one's, on each path.

**history**, `update_spec_file` on a file with 10,000 revisions against one with 1. Both files
hold the same 100-line text; the first is saved 9,999 times through the service to build its
history, then both are saved in alternation (each save a new revision, from the version just
read). Target: the long history's median save within 1.5x the short one's.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio

from bench.measure import Target, answer_of, connect
from bench.process import ServerProcess, throwaway_postgres
from bench.runner import add_database_options, progress
from crewboard.contract.projects import present
from crewboard.contract.specs import present as comments
from crewboard.contract.specs import present as files
from crewboard.domain.files import MAX_WINDOW_LINES
from crewboard.domain.identity.records import Actor
from crewboard.domain.ids import new_id
from crewboard.domain.spec_comments import place, reanchor
from crewboard.domain.specs import MAX_READ_BYTES
from crewboard.services.identity.users import do_create_user, person_actor
from crewboard.services.specs import comments as spec_comments
from crewboard.services.specs import file_lookup
from crewboard.services.specs import files as spec_files
from crewboard.storage import migrate
from crewboard.storage.database import Database

TARGET_MS = 50.0
READ_RATIO = 2.0  # a window of the large file against the small file, median
HISTORY_RATIO = 1.5  # a save on a long history against a save on a short one, median
LINE = 21  # bytes of a line of the large file: a 2,000-line window fits one MCP answer
WORDS = ["export", "import", "token", "limit", "queue", "worker", "table", "column", "header",
         "archive", "audit", "stream", "request", "answer", "retry", "backlog", "review",
         "draft", "owner", "schedule", "budget"]  # fmt: skip


def spec_texts(lines: int, threads: int, seed: int = 7) -> tuple[str, str, list[str]]:
    """(the first text, the edited one, the passages to comment on: one per chosen line)."""
    rng = random.Random(seed)  # noqa: S311 - generated text, not a secret
    body: list[str] = []
    for n in range(lines):
        if n % 40 == 0:
            body.append(f"## Section {n // 40 + 1}\n")
        else:
            words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 12)))
            body.append(f"- Item {n}: the {words}.\n")
    chosen = sorted(rng.sample([n for n in range(lines) if n % 40], threads))
    passages = [body[n][2 : 2 + 30] for n in chosen]  # "Item N: the …", unique by its number
    edited = list(body)
    for n in chosen[:5]:  # a word inside five passages
        edited[n] = edited[n].replace(": the ", ": a ", 1)
    taken = set(chosen)
    for n in range(3, lines, 97):  # lines between passages
        if n not in taken:
            edited[n] = edited[n].rstrip("\n") + " (revised)\n"
    edited.insert(2, "A paragraph added near the top of the file, as an agent's save adds one.\n")
    return "".join(body), "".join(edited), passages


@contextmanager
def database(kind: str, postgres_url: str) -> Iterator[Database]:
    if kind == "postgresql":
        with throwaway_postgres(postgres_url) as url:
            db = Database(url)
            try:
                yield db
            finally:
                db.dispose()
        return
    with tempfile.TemporaryDirectory() as folder:
        db = Database(f"sqlite:///{Path(folder) / 'bench.db'}")
        try:
            yield db
        finally:
            db.dispose()


def owner_of(db: Database) -> Actor:
    """A migrated database with one person, the owner of project SPEC."""
    migrate.upgrade(db)
    user = db.write(
        lambda uow: do_create_user(
            uow,
            email="bench@example.com",
            display_name="bench",
            password_hash="!",  # noqa: S106 - no password: nobody signs in
        )
    )
    owner = person_actor(user)
    present.create_project(db, owner, workspace_id=None, key="SPEC", name="Specs")
    return owner


def upload(db: Database, owner: Actor, path: str, content: bytes, project: str = "SPEC") -> str:
    """A new spec file's id."""
    made = spec_files.upload_spec_file(
        db, owner, project=project, workspace_id=None, path=path, content=content,
        idempotency_key=None, answer=files.new_file_view,
    )  # fmt: skip
    return str(made.body["file"]["id"])


def seed(db: Database, first: str, passages: list[str]) -> tuple[Actor, str, str]:
    """The owner, and the ids of the file with a thread on each passage and of its twin."""
    owner = owner_of(db)
    commented = upload(db, owner, "docs/commented.md", first.encode())
    plain = upload(db, owner, "docs/plain.md", first.encode())
    for passage in passages:
        spec_comments.create_spec_file_comment_thread(
            db, owner, project="SPEC", workspace_id=None, ref=file_lookup.FileRef(file_id=commented),
            anchor_quote=passage, anchor_prefix=None, anchor_suffix=None,
            body="Is this still right?", idempotency_key=new_id("key"),
            answer=comments.thread_answer(owner),
        )  # fmt: skip
    return owner, commented, plain


def timed(run: Callable[[], object]) -> float:
    began = time.perf_counter()
    run()
    return (time.perf_counter() - began) * 1000


def saver(db: Database, owner: Actor, file_id: str) -> Callable[[str], float]:
    """Save `text` as the file's next revision; the milliseconds update_spec_file took (the
    read of the version it is made from is not counted)."""
    ref = file_lookup.FileRef(file_id=file_id)

    def save(text: str) -> float:
        version = files.get_spec_file(db, owner, project="SPEC", ref=ref)["file"]["contentVersion"]

        def work() -> object:
            return spec_files.update_spec_file(
                db, owner, project="SPEC", workspace_id=None, ref=ref, content=text.encode(),
                expected_version=version, idempotency_key=None, answer=files.saved_view,
            )  # fmt: skip

        return timed(work)

    return save


def summary(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, round(0.95 * len(ordered)))]


def run_reanchor(args: argparse.Namespace) -> bool:
    first, edited, passages = spec_texts(args.lines, args.threads)
    anchors = [place(first, p) for p in passages]
    pure = [timed(lambda: reanchor(first, edited, anchors)) for _ in range(args.saves)]
    with database(args.database, args.postgres_url) as db:
        owner, commented, plain = seed(db, first, passages)
        with_threads, without = saver(db, owner, commented), saver(db, owner, plain)
        timings: dict[str, list[float]] = {"with": [], "without": []}
        for n in range(args.warmup + args.saves):
            text = edited if n % 2 == 0 else first
            pair = (with_threads(text), without(text))
            if n >= args.warmup:
                timings["with"].append(pair[0])
                timings["without"].append(pair[1])
        listed = comments.list_spec_file_comments(
            db, owner, project="SPEC", ref=file_lookup.FileRef(file_id=commented)
        )
    anchored = sum(not t["orphaned"] for t in listed["threads"])
    rows = [
        ("reanchor (domain)", summary(pure)),
        (f"save, {args.threads} threads", summary(timings["with"])),
        ("save, no threads", summary(timings["without"])),
    ]
    added = rows[1][1][0] - rows[2][1][0]
    print(
        f"Re-anchoring on a save: {args.database}, {first.count(chr(10))} lines "
        f"({len(first.encode())} bytes), {args.saves} saves after {args.warmup} warm-up"
    )
    print(f"{'':<24}{'median ms':>12}{'p95 ms':>10}")
    for label, (median, p95) in rows:
        print(f"{label:<24}{median:>12.1f}{p95:>10.1f}")
    met = added < TARGET_MS and rows[0][1][0] < TARGET_MS
    print(
        f"Re-anchoring adds {added:.1f} ms to a save (target under {TARGET_MS:.0f}): "
        f"{'met' if met else 'MISSED'}; {anchored} of {args.threads} threads still anchored."
    )
    return met and anchored == args.threads


# --- read: a window of a large file against a small file ------------------------------------


def large_text(size: int = MAX_READ_BYTES) -> bytes:
    """`size` bytes of numbered lines of LINE bytes each (the last one shorter)."""
    lines = (size + LINE - 1) // LINE
    words = [f"{w[:7]:<7}" for w in WORDS]
    body = "".join(f"L{n:07d} {words[n % len(words)]} {n % 997:03d}\n" for n in range(lines))
    return body.encode()[:size]


def small_text(lines: int = 20) -> bytes:
    return "".join(f"- Item {n}: the {WORDS[n % len(WORDS)]}.\n" for n in range(lines)).encode()


def alternate(
    calls: dict[str, Callable[[], float]], rounds: int, warmup: int, block: int
) -> dict[str, list[float]]:
    """Each call `rounds` times, in blocks of `block` that alternate (A, B, B, A, ...), after
    `warmup` uncounted calls of each."""
    names = list(calls)
    for name in names:
        for _ in range(warmup):
            calls[name]()
    timings: dict[str, list[float]] = {name: [] for name in names}
    turn = 0
    while any(len(t) < rounds for t in timings.values()):
        order = names if turn % 2 == 0 else names[::-1]
        for name in order:
            for _ in range(min(block, rounds - len(timings[name]))):
                timings[name].append(calls[name]())
        turn += 1
    return timings


def _owner_of_server(db: Database) -> Actor:
    user = db.read(lambda uow: uow.users.get_by_email("owner@crewboard.local"))
    if user is None:
        raise RuntimeError("the bench server made no owner@crewboard.local")
    return person_actor(user)


async def _mcp_reads(
    target: Target, windows: dict[str, dict[str, Any]], args: argparse.Namespace
) -> dict[str, list[float]]:
    """The same alternation as `alternate`, over one MCP connection."""
    async with connect(target, "legacy") as client:

        async def read(name: str) -> float:
            began = time.perf_counter()
            result = await client.call_tool("read_spec_file", windows[name])
            elapsed = (time.perf_counter() - began) * 1000
            if result.is_error:
                raise RuntimeError(f"read_spec_file {name}: {answer_of(result)}")
            return elapsed

        first = answer_of(await client.call_tool("read_spec_file", windows["large"]))
        if first.get("lines") != MAX_WINDOW_LINES:
            raise RuntimeError(f"the MCP window has {first.get('lines')} lines, not 2,000")
        for name in windows:
            for _ in range(args.warmup):
                await read(name)
        timings: dict[str, list[float]] = {name: [] for name in windows}
        turn = 0
        while any(len(t) < args.reads for t in timings.values()):
            names = list(windows) if turn % 2 == 0 else list(windows)[::-1]
            for name in names:
                for _ in range(min(args.block, args.reads - len(timings[name]))):
                    timings[name].append(await read(name))
            turn += 1
    return timings


def run_read(args: argparse.Namespace, database_url: str | None) -> bool:
    large, small = large_text(), small_text()
    server = ServerProcess(database_url)
    with server as info:
        url = database_url or f"sqlite:///{(server.folder / 'data' / 'crewboard.db').resolve()}"
        db = Database(url)
        try:
            owner = _owner_of_server(db)
            progress(f"read: uploading {len(large):,} bytes and {len(small)} bytes")
            big = upload(db, owner, "docs/large.md", large, project=info.project)
            little = upload(db, owner, "docs/small.md", small, project=info.project)
            total = large.count(b"\n")
            middle = total // 2 - MAX_WINDOW_LINES // 2
            windows: dict[str, dict[str, Any]] = {
                "large": {"projectId": info.project, "fileId": big, "offset": middle,
                          "limit": MAX_WINDOW_LINES},
                "small": {"projectId": info.project, "fileId": little, "offset": 1,
                          "limit": MAX_WINDOW_LINES},
            }  # fmt: skip

            def service(name: str) -> Callable[[], float]:
                window = windows[name]

                def call() -> float:
                    return timed(
                        lambda: files.read_spec_file(
                            db,
                            owner,
                            project=info.project,
                            ref=file_lookup.FileRef(file_id=window["fileId"]),
                            offset=window["offset"],
                            limit=window["limit"],
                        )
                    )

                return call

            check = files.read_spec_file(
                db, owner, project=info.project, ref=file_lookup.FileRef(file_id=big),
                offset=middle, limit=MAX_WINDOW_LINES,
            )  # fmt: skip
            if check["lines"] != MAX_WINDOW_LINES:
                raise RuntimeError(f"the window has {check['lines']} lines, not 2,000")
            progress(f"read: {args.reads} reads of each through the service")
            in_process = alternate(
                {name: service(name) for name in windows}, args.reads, args.warmup, args.block
            )
            progress(f"read: {args.reads} reads of each over MCP HTTP")
            target = Target(
                mcp_url=f"{info.base_url}/mcp", token=info.token, project=info.project,
                pid=info.pid,
            )  # fmt: skip
            over_mcp = anyio.run(_mcp_reads, target, windows, args)
        finally:
            db.dispose()
    print(
        f"\nread_spec_file: {args.database}; a 2,000-line window from line {middle:,} of "
        f"{total:,} ({len(large):,} bytes) against a 20-line file ({len(small)} bytes); "
        f"{args.reads} reads of each after {args.warmup} warm-up, alternating in blocks of "
        f"{args.block}"
    )
    print(f"{'':<22}{'large ms':>10}{'p95':>8}{'small ms':>10}{'p95':>8}{'ratio':>8}")
    met = True
    for label, timings in (("service", in_process), ("MCP HTTP", over_mcp)):
        (lm, lp), (sm, sp) = summary(timings["large"]), summary(timings["small"])
        ratio = lm / sm
        met = met and ratio <= READ_RATIO
        print(f"{label:<22}{lm:>10.2f}{lp:>8.2f}{sm:>10.2f}{sp:>8.2f}{ratio:>7.2f}x")
    print(f"Target: the large window within {READ_RATIO:.0f}x: {'met' if met else 'MISSED'}.")
    return met


# --- history: a save on 10,000 revisions against a save on 1 ---------------------------------


def run_history(args: argparse.Namespace) -> bool:
    base = small_text(100).decode()
    with database(args.database, args.postgres_url) as db:
        owner = owner_of(db)
        long_id = upload(db, owner, "docs/long.md", base.encode())
        short_id = upload(db, owner, "docs/short.md", base.encode())
        ref = file_lookup.FileRef(file_id=long_id)
        version = files.get_spec_file(db, owner, project="SPEC", ref=ref)["file"]["contentVersion"]
        began = time.perf_counter()
        for n in range(2, args.revisions + 1):
            saved = spec_files.update_spec_file(
                db, owner, project="SPEC", workspace_id=None, ref=ref,
                content=f"{base}revision {n}\n".encode(), expected_version=version,
                idempotency_key=None, answer=files.saved_view,
            )  # fmt: skip
            version = saved.body["file"]["contentVersion"]
            if n % 1000 == 0:
                progress(f"history: {n:,} revisions ({time.perf_counter() - began:.0f} s)")
        built = time.perf_counter() - began
        count = files.get_spec_file(db, owner, project="SPEC", ref=ref)["file"]["revisionCount"]
        long_save, short_save = saver(db, owner, long_id), saver(db, owner, short_id)
        counter = iter(range(10**9))

        def save(on: Callable[[str], float]) -> Callable[[], float]:
            return lambda: on(f"{base}measured save {next(counter)}\n")

        progress(f"history: {args.saves} saves of each")
        timings = alternate(
            {"long": save(long_save), "short": save(short_save)}, args.saves, args.warmup, 5
        )
    (lm, lp), (sm, sp) = summary(timings["long"]), summary(timings["short"])
    ratio = lm / sm
    met = ratio <= HISTORY_RATIO
    print(
        f"\nupdate_spec_file: {args.database}; a 100-line file with {count:,} revisions against "
        f"one with 1 (both grow by one a save); {args.saves} saves of each after "
        f"{args.warmup} warm-up; {args.revisions - 1:,} saves to build the history took "
        f"{built:.0f} s"
    )
    print(f"{'':<22}{'median ms':>10}{'p95':>8}")
    print(f"{f'{count:,} revisions':<22}{lm:>10.2f}{lp:>8.2f}")
    print(f"{'1 revision':<22}{sm:>10.2f}{sp:>8.2f}")
    print(f"Ratio {ratio:.2f}x (target within {HISTORY_RATIO}x): {'met' if met else 'MISSED'}.")
    return met


def run(args: argparse.Namespace) -> int:
    parts = ("reanchor", "read", "history") if args.part == "all" else (args.part,)
    met = []
    for part in parts:
        if part == "reanchor":
            met.append(run_reanchor(args))
        elif part == "history":
            met.append(run_history(args))
        elif args.database == "postgresql":
            with throwaway_postgres(args.postgres_url) as url:
                met.append(run_read(args, url))
        else:
            met.append(run_read(args, None))
    return 0 if all(met) else 1


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench specs",
        description="Spec files: re-anchoring on a save, a large file's window, a long history.",
    )
    add_database_options(parser)
    parser.add_argument("--part", choices=("all", "reanchor", "read", "history"), default="all")
    parser.add_argument("--reads", type=int, default=200, help="reads of each file (read)")
    parser.add_argument("--block", type=int, default=10, help="calls in a row (read)")
    parser.add_argument("--revisions", type=int, default=10_000, help="history (history)")
    parser.add_argument("--lines", type=int, default=2000)
    parser.add_argument("--threads", type=int, default=100)
    parser.add_argument("--saves", type=int, default=40, help="saves (reanchor, history)")
    parser.add_argument("--warmup", type=int, default=4)
    sys.exit(run(parser.parse_args(argv)))


if __name__ == "__main__":
    main()
