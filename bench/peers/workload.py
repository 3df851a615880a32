"""The peers workload: the same steps on every system, interleaved, and the races.

For each board size and run every system gets a fresh board and its own server, all open at
once. Each operation runs on every system in turn, the first one rotating, so drift and the
machine's other load fall on all of them alike; a step's figure is the median of its calls.
A size is measured in whole runs one after the other (bench/peers/runs.py puts them together).
Around each step the CPU (utime + stime of the server's process tree) and resident memory of
each server are read from /proc.
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, TextIO

import anyio
from mcp import Client

from bench.peers.systems import FACTORIES, Crewboard, Listing, Ref, Reply, System

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
BACKLOG_MAX = 1000  # Backlog.md's creates slow down as its board grows: 5,000 is ~40 minutes
VERBS = ("Fix", "Add", "Refactor", "Document", "Test")
NOUNS = ("invoice", "login", "search", "upload", "report", "billing", "profile", "export")
AREAS = ("page", "service", "api", "job", "form")


def progress(message: str) -> None:
    print(f"[bench peers] {message}", file=sys.stderr, flush=True)


def load_1min() -> float:
    return os.getloadavg()[0]


# --- /proc -----------------------------------------------------------------------------------


def _stat(pid: int) -> tuple[int, int] | None:
    """(parent pid, utime + stime in ticks) of a process, or None once it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    fields = text.rpartition(")")[2].split()
    return int(fields[1]), int(fields[11]) + int(fields[12])


def process_tree(roots: Sequence[int]) -> set[int]:
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            stat = _stat(int(entry.name))
            if stat is not None:
                parents[int(entry.name)] = stat[0]
    tree = {pid for pid in roots if pid in parents}
    grew = True
    while grew:
        more = {pid for pid, parent in parents.items() if parent in tree} - tree
        tree |= more
        grew = bool(more)
    return tree


def _rss_kib(pid: int) -> int:
    try:
        lines = Path(f"/proc/{pid}/status").read_text(encoding="ascii").splitlines()
    except OSError:
        return 0
    for line in lines:
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def usage(system: System) -> dict[str, float]:
    """CPU seconds so far and resident MiB now, summed over the system's server processes
    and their children (a Node server may run workers)."""
    tree = process_tree(system.pids)
    ticks = sum(stat[1] for pid in tree if (stat := _stat(pid)) is not None)
    return {
        "cpu_s": ticks / CLOCK_TICKS,
        "rss_mib": sum(_rss_kib(pid) for pid in tree) / 1024,
        "processes": len(tree),
    }


# --- figures ---------------------------------------------------------------------------------


def summary(replies: Sequence[Reply | Listing]) -> dict[str, Any]:
    times = sorted(reply.ms for reply in replies)
    failed = [reply for reply in replies if not reply.ok]
    out: dict[str, Any] = {
        "calls": len(replies),
        "failed": len(failed),
        "median_ms": statistics.median(times) if times else None,
        "p95_ms": times[min(len(times) - 1, int(0.95 * len(times)))] if times else None,
        "chars": sum(reply.chars for reply in replies),
    }
    errors = [reply.error for reply in failed if isinstance(reply, Reply) and reply.error]
    if errors:
        out["first_errors"] = sorted(set(errors))[:3]
    return out


def title_of(number: int) -> tuple[str, str]:
    rng = random.Random(number)  # noqa: S311 - bench text, no secret
    noun = rng.choice(NOUNS)
    title = f"{rng.choice(VERBS)} {noun} {rng.choice(AREAS)} {number}"
    description = (
        f"The {noun} {rng.choice(AREAS)} needs work: see the notes of task {number} and check "
        "the edge cases before review."
    )
    return title, description


async def interleaved(
    systems: Sequence[System],
    count: int,
    operation: Callable[[System, int], Awaitable[Reply | Listing]],
    label: str,
    *,
    timings: dict[str, list[Reply | Listing]],
    client_cpu: dict[str, float],
) -> None:
    """Run operation i on every system in turn, the first one rotating with i.

    `client_cpu` gathers the CPU seconds this (client) process spent in each system's calls:
    one call runs at a time, so it is that client library's share (HTTP against stdio)."""
    started = time.monotonic()
    for index in range(count):
        shift = index % len(systems)
        for system in list(systems[shift:]) + list(systems[:shift]):
            spent = time.process_time()
            timings[system.name].append(await operation(system, index))
            client_cpu[system.name] += time.process_time() - spent
        if (index + 1) % max(1, count // 10) == 0 or index + 1 == count:
            progress(f"  {label}: {index + 1}/{count} ({time.monotonic() - started:.0f} s)")


async def measured_step(
    name: str,
    systems: Sequence[System],
    count: int,
    operation: Callable[[System, int], Awaitable[Reply | Listing]],
    *,
    extra: Callable[[System, list[Reply | Listing]], dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """One step on every system: the calls' figures, CPU and memory of each server."""
    timings: dict[str, list[Reply | Listing]] = {system.name: [] for system in systems}
    client_cpu = {system.name: 0.0 for system in systems}
    before = {system.name: usage(system) for system in systems}
    load_start = load_1min()
    wall = time.monotonic()
    await interleaved(systems, count, operation, name, timings=timings, client_cpu=client_cpu)
    wall = time.monotonic() - wall
    after = {system.name: usage(system) for system in systems}
    per_system: dict[str, Any] = {}
    for system in systems:
        replies = timings[system.name]
        figures = summary(replies)
        cpu = after[system.name]["cpu_s"] - before[system.name]["cpu_s"]
        figures["server_cpu_ms"] = cpu * 1000
        figures["server_cpu_ms_per_op"] = cpu * 1000 / count if count else None
        figures["client_cpu_ms_per_op"] = client_cpu[system.name] * 1000 / count if count else None
        figures["rss_mib_before"] = before[system.name]["rss_mib"]
        figures["rss_mib_after"] = after[system.name]["rss_mib"]
        if extra is not None:
            figures.update(extra(system, replies))
        per_system[system.name] = figures
    return {
        "step": name,
        "operations": count,
        "wall_s": wall,
        "load_start": load_start,
        "load_end": load_1min(),
        "systems": per_system,
    }


# --- one board size --------------------------------------------------------------------------


async def run_size(
    names: Sequence[str],
    size: int,
    folder: Path,
    log: TextIO,
    *,
    sample: int,
    list_repeats: int,
    searches: int,
    run: int = 1,
) -> dict[str, Any]:
    """Every step at one board size, each system on a fresh board and server of its own
    (`run` numbers the repetitions of a size: each gets its own folders)."""
    load_start = load_1min()
    systems = [FACTORIES[name](folder / f"{name}-{size}-run{run}", log) for name in names]
    result: dict[str, Any] = {
        "size": size,
        "run": run,
        "load_start": load_start,
        "systems": list(names),
        "steps": [],
    }
    try:
        for system in systems:
            progress(f"N={size} run {run}: preparing {system.label}")
            system.folder.mkdir(parents=True)
            system.prepare()
        async with AsyncExitStack() as stack:
            clients: dict[str, Client] = {}
            for system in systems:
                clients[system.name] = await system.connect(stack)
            result["start"] = {system.name: usage(system) for system in systems}
            refs: dict[str, list[Ref | None]] = {system.name: [] for system in systems}

            async def create(system: System, index: int) -> Reply:
                title, description = title_of(index + 1)
                reply = await system.create(
                    clients[system.name], title, description, uuid.uuid4().hex
                )
                refs[system.name].append(system.created(reply))
                return reply

            def board_end(system: System, replies: list[Reply | Listing]) -> dict[str, Any]:
                del replies  # the figure is the server's, after the creates
                return {"board": usage(system)}

            result["steps"].append(
                await measured_step("create_task", systems, size, create, extra=board_end)
            )

            async def list_all(system: System, index: int) -> Listing:
                del index  # every repetition lists the same board
                return await system.list_board(clients[system.name])

            def pages(system: System, replies: list[Reply | Listing]) -> dict[str, Any]:
                del system  # the figures are the listing's
                listings = [reply for reply in replies if isinstance(reply, Listing)]
                return {
                    "calls_per_listing": listings[0].calls if listings else None,
                    "chars_per_listing": listings[0].chars if listings else None,
                    "tasks_listed": listings[0].tasks if listings else None,
                }

            result["steps"].append(
                await measured_step(
                    "list whole board", systems, list_repeats, list_all, extra=pages
                )
            )
            rng = random.Random(size)  # noqa: S311 - which tasks to edit is no secret
            picked = sorted(rng.sample(range(size), min(sample, size)))

            def ref(system: System, index: int) -> Ref:
                found = refs[system.name][picked[index % len(picked)]]
                return found if found is not None else Ref("missing")

            async def set_busy(system: System, index: int) -> Reply:
                return await system.set_status(clients[system.name], ref(system, index), True)

            result["steps"].append(
                await measured_step("update status", systems, len(picked), set_busy)
            )

            async def search(system: System, index: int) -> Reply:
                word = NOUNS[index % len(NOUNS)]
                return await system.search(clients[system.name], word, ref(system, index))

            step = await measured_step("search", systems, searches, search)
            step["labels"] = {system.name: system.search_label for system in systems}
            result["steps"].append(step)

            async def get(system: System, index: int) -> Reply:
                return await system.get(clients[system.name], ref(system, index))

            result["steps"].append(await measured_step("get_task", systems, len(picked), get))
            result["end"] = {system.name: usage(system) for system in systems}
            result["missing_refs"] = {
                system.name: sum(1 for found in refs[system.name] if found is None)
                for system in systems
            }
    finally:
        for system in systems:
            system.close()
        kill_leftovers(systems, log)
    return result


def kill_leftovers(systems: Sequence[System], log: TextIO) -> None:
    """SIGKILL any server process of ours that outlived its client (the SDK closes stdin and
    then terminates; this is the backstop when a run fails half-way). Only a pid that is
    still this process's child is ours: a finished one's number may belong to anyone now."""
    for system in systems:
        for pid in system.pids:
            stat = _stat(pid)
            if stat is None or stat[0] != os.getpid():
                continue
            try:
                os.kill(pid, 9)
                os.waitpid(pid, os.WNOHANG)
            except OSError:
                continue
            log.write(f"\nkilled leftover server {pid} of {system.name}\n")


# --- the races -------------------------------------------------------------------------------


async def run_races(
    names: Sequence[str],
    folder: Path,
    log: TextIO,
    *,
    writers: int,
    creates: int,
    edits: int,
    retries: int,
) -> dict[str, Any]:
    """Lost updates and duplicates, one system after another on fresh boards: `writers`
    clients (for stdio: server processes on the one board) at once."""
    out: dict[str, Any] = {"writers": writers, "systems": {}}
    for name in names:
        system = FACTORIES[name](folder / f"{name}-races", log)
        progress(f"races: {system.label}")
        try:
            system.folder.mkdir(parents=True)
            system.prepare()
            async with AsyncExitStack() as stack:
                clients = [await system.connect(stack) for _ in range(writers)]
                out["systems"][name] = await _races(
                    system, clients, creates=creates, edits=edits, retries=retries
                )
        finally:
            system.close()
            kill_leftovers([system], log)
    return out


async def fresh(system: System, stack: AsyncExitStack) -> Client:
    """A client of its own for reading after a race: a Backlog.md server keeps the board it
    has seen in memory and does not see another process's new files at once, so the board is
    read by a server started after the writes (for stdio; over HTTP, one more client)."""
    return await system.connect(stack)


async def fresh_count(system: System) -> int | None:
    async with AsyncExitStack() as stack:
        return await system.count(await fresh(system, stack))


async def _races(
    system: System, clients: list[Client], *, creates: int, edits: int, retries: int
) -> dict[str, Any]:
    refs: list[Ref] = []
    for number in range(1, edits + 1):
        made = system.created(await system.create(clients[0], *title_of(number), uuid.uuid4().hex))
        if made is not None:
            refs.append(made)
    return {
        "edits_of_different_tasks": await _edit_many(system, clients, refs),
        "edits_of_one_task": await _edit_one(
            system, clients, refs[0] if refs else Ref("missing"), max(1, edits // len(clients))
        ),
        "concurrent_creates": await _create_at_once(system, clients, creates),
        "retried_creates": await _retry_creates(system, clients[0], retries),
    }


async def _edit_many(system: System, clients: list[Client], refs: list[Ref]) -> dict[str, Any]:
    """Edits of different tasks at once: a lost update is an edit answered as done whose
    status is not there afterwards (a whole-file rewrite from a stale read drops it)."""
    answered: list[Ref] = []
    refused: list[str] = []

    async def edit(client: Client, ref: Ref) -> None:
        reply = await system.set_status(client, ref, True)
        if reply.ok:
            answered.append(ref)
        else:
            refused.append(reply.error or "")

    async with anyio.create_task_group() as group:
        for index, ref in enumerate(refs):
            group.start_soon(edit, clients[index % len(clients)], ref)
    async with AsyncExitStack() as stack:
        reader = await fresh(system, stack)
        lost = [ref.id for ref in answered if await system.is_busy(reader, ref) is False]
    return {
        "tasks": len(refs),
        "answered": len(answered),
        "refused": len(refused),
        "lost": len(lost),
        "refusals": sorted(set(refused))[:3],
    }


async def _edit_one(
    system: System, clients: list[Client], target: Ref, turns: int
) -> dict[str, Any]:
    """Edits of one task at once, each writer moving it back and forth. Nothing shows a loss
    here (the last write wins either way); a refusal is the system guarding the task
    (Crewboard: the revision read just before the write went stale)."""
    counts = {"answered": 0, "refused": 0}
    errors: list[str] = []

    async def writer(client: Client, number: int) -> None:
        mine = Ref(target.id, target.revision)
        for turn in range(turns):
            if isinstance(system, Crewboard):
                await system.refresh(client, mine)
            reply = await system.set_status(client, mine, (number + turn) % 2 == 0)
            counts["answered" if reply.ok else "refused"] += 1
            if not reply.ok:
                errors.append(reply.error or "")

    async with anyio.create_task_group() as group:
        for number, client in enumerate(clients):
            group.start_soon(writer, client, number)
    return {**counts, "refusals": sorted(set(errors))[:3]}


async def _create_at_once(system: System, clients: list[Client], creates: int) -> dict[str, Any]:
    """Creates from every writer at once: lost = answered as created but not on the board."""
    before = await fresh_count(system)
    answered: list[Ref] = []
    errors: list[str] = []

    async def writer(client: Client, number: int) -> None:
        for turn in range(creates):
            title, description = title_of(10_000 + number * 1000 + turn)
            reply = await system.create(client, title, description, uuid.uuid4().hex)
            made = system.created(reply)
            if made is not None:
                answered.append(made)
            else:
                errors.append(reply.error or reply.text[:200])

    async with anyio.create_task_group() as group:
        for number, client in enumerate(clients):
            group.start_soon(writer, client, number)
    after = await fresh_count(system)
    on_board = None if before is None or after is None else after - before
    return {
        "sent": creates * len(clients),
        "answered": len(answered),
        "on_board": on_board,
        "lost": None if on_board is None else max(0, len(answered) - on_board),
        "failed": len(errors),
        "errors": sorted(set(errors))[:3],
        "ids_answered": len({ref.id for ref in answered}),
        "on_disk": system.on_disk(),
    }


async def _retry_creates(system: System, client: Client, retries: int) -> dict[str, Any]:
    """The same create sent twice, as a client does when the first answer never arrived.
    Crewboard gets the same idempotencyKey both times; the peers take no key."""
    before = await fresh_count(system)
    for number in range(retries):
        key = uuid.uuid4().hex
        title, description = title_of(20_000 + number)
        for _ in range(2):
            await system.create(client, title, description, key)
    after = await fresh_count(system)
    added = None if before is None or after is None else after - before
    return {
        "creates": retries,
        "sent": retries * 2,
        "on_board": added,
        "duplicates": None if added is None else added - retries,
    }
