"""`python -m bench web`: how fast the web app's pages answer on a large board.

A real server (bench/server.py) seeds two boards: `B1` with 100,000 tasks and `B2` with 1,000
(bench/seed.py). This module then gives the owner a known password (written straight into the
same database, as bench/memory.py writes memory), adds a few hand-ins and questions to each
project's inbox through the services, and signs in over HTTP like a browser. One client then
GETs each page of each project in turn: the inbox, a hand-in, the board (all seven columns),
one board column page (`?column=backlog&offset=50`), a task page, memory, the state page, the
week, the team, activity and search. Then it moves one task back and forth between two columns
as the board's drag and drop does (a POST with the neighbours' keys and `Accept:
application/json`, answered when the move is saved): "move" is that drag-to-saved time.

Each figure is the wall time of one whole HTTP request on the loopback, as the client sees it
(send, the server's work, the full response read): the server's time for the page plus a
loopback round trip, with no browser rendering. Median and p95 per page and project. The
targets: on the 1,000-task project with 100 hand-ins, every page under 150 ms and a move under
100 ms (p95); on the 100,000-task project, a median under 50 ms for the board's own pages.
"""

from __future__ import annotations

import argparse
import functools
import re
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import httpx2

from bench.measure import Summary, Tally, server_cpu_seconds
from bench.process import ServerInfo, ServerProcess, run_workload
from bench.runner import add_database_options
from crewboard.cli.progress import bars, wanted
from crewboard.contract.board import present_notes
from crewboard.contract.review.present import hand_in_view
from crewboard.domain.identity.passwords import hash_password
from crewboard.services.board import questions
from crewboard.services.identity.users import person_actor
from crewboard.services.review import drafts
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork

BOARDS = (100_000, 1_000)
PASSWORD = "bench web password"  # noqa: S105 - a throw-away instance's owner
TARGET_MS = 50.0  # the board's pages at 100,000 tasks (median)
PAGE_TARGET_MS = 150.0  # every page on the 1,000-task project (p95)
MOVE_TARGET_MS = 100.0  # a drag's move, sent to saved, on the 1,000-task project (p95)
LARGE_BOARD_PAGES = ("inbox", "board", "column page", "task")
START_TIMEOUT = 900.0
HANDINS = 100
QUESTIONS = 3
PAGES = {
    "inbox": "inbox",
    "hand-in": "inbox/drafts/{draft}",
    "board": "board",
    "column page": "board?column=backlog&offset=50",
    "task": "tasks/{key}-1",
    "memory": "memory",
    "state": "state",
    "week": "week",
    "team": "team",
    "activity": "activity",
    "search": "search?q=export",
}
MOVE = "move"


@dataclass(frozen=True)
class PageRow:
    project: str
    tasks: int
    page: str
    path: str
    bytes: int
    summary: Summary


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench web", description=__doc__)
    add_database_options(parser)
    parser.add_argument("--requests", type=int, default=200, help="GETs per page and project")
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--quick", action="store_true", help="a smoke run: smaller and shorter")
    parser.add_argument("--output", type=Path, default=None, help="JSON results file")
    args = parser.parse_args(argv)
    args.boards = (2000, 200) if args.quick else BOARDS
    if args.quick:
        args.requests, args.warmup = 30, 3
    return args


def progress(message: str) -> None:
    sys.stderr.write(f"[bench web] {message}\n")
    sys.stderr.flush()


# --- preparing -------------------------------------------------------------------------------


def prepare(info: ServerInfo, url: str) -> tuple[str, dict[str, str]]:
    """Give the owner PASSWORD and fill each seeded project's inbox (HANDINS hand-ins); the
    owner's email and one hand-in id per project. A progress bar counts the inbox items on
    standard error when it is a terminal."""
    db = Database(url)
    try:

        def set_password(uow: UnitOfWork) -> str:
            owner = next(user for user in uow.users.list() if user.is_owner)
            uow.users.set_password_hash(owner.id, hash_password(PASSWORD), uow.now)
            return owner.email

        email: str = db.write(set_password)
        owner = db.read(lambda uow: uow.users.get_by_email(email))
        assert owner is not None
        actor = person_actor(owner)
        a_draft: dict[str, str] = {}
        total = (HANDINS + QUESTIONS) * len(info.board)
        with bars(wanted(as_json=False), {"inbox items": total}) as advance:
            for board in info.board:
                for n in range(1, HANDINS + 1):
                    made = drafts.create_draft(
                        db,
                        actor,
                        task=f"{board['key']}-{n}",
                        title=f"Hand-in {n}",
                        summary="What changed and why.",
                        content="## Result\n\nThe export now streams its rows.\n" * 20,
                        idempotency_key=f"bench-web-draft-{board['key']}-{n}",
                        answer=hand_in_view,
                    )
                    a_draft.setdefault(board["key"], str(made.body["draft"]["id"]))
                    advance("inbox items", 1)
                for n in range(1, QUESTIONS + 1):
                    questions.ask_question(
                        db,
                        actor,
                        task=f"{board['key']}-{n}",
                        workspace_id=None,
                        question=f"Question {n}: which format should the export use?",
                        idempotency_key=f"bench-web-question-{board['key']}-{n}",
                        answer=present_notes.question_answer,
                    )
                    advance("inbox items", 1)
        return email, a_draft
    finally:
        db.dispose()


def sign_in(base_url: str, email: str) -> httpx2.Client:
    """A client with a live session, sending what a browser sends for a page's own forms."""
    client = httpx2.Client(
        base_url=base_url,
        follow_redirects=False,
        headers={"sec-fetch-site": "same-origin"},
        timeout=60.0,
    )
    form = client.get("/login")
    token = re.search(r'name="login_token" value="([^"]+)"', form.text)
    if token is None:
        raise RuntimeError("the sign-in page has no form token")
    answer = client.post(
        "/login",
        data={"email": email, "password": PASSWORD, "login_token": token.group(1), "next": "/"},
    )
    if answer.status_code != 303:
        raise RuntimeError(f"signing in failed with {answer.status_code}")
    return client


# --- measuring -------------------------------------------------------------------------------


def _get(client: httpx2.Client, path: str) -> tuple[int, int]:
    started = time.perf_counter_ns()
    answer = client.get(path)
    elapsed = time.perf_counter_ns() - started
    if answer.status_code != 200:
        raise RuntimeError(f"GET {path} answered {answer.status_code}")
    return elapsed, len(answer.content)


def _size(client: httpx2.Client, path: str) -> int:
    return _get(client, path)[1]


def _timed(info: ServerInfo, calls: int, call: Callable[[], int]) -> tuple[Tally, int]:
    """`calls` calls of `call` (each answers its response's size), timed one by one."""
    tally, size = Tally(), 0
    server_before, client_before = server_cpu_seconds(info.pid), time.process_time()
    started = time.perf_counter()
    for _ in range(calls):
        begun = time.perf_counter_ns()
        size = call()
        tally.latencies_ns.append(time.perf_counter_ns() - begun)
    tally.wall_seconds = time.perf_counter() - started
    tally.server_cpu_seconds = server_cpu_seconds(info.pid) - server_before
    tally.client_cpu_seconds = time.process_time() - client_before
    return tally, size


def measure(
    client: httpx2.Client, info: ServerInfo, args: argparse.Namespace, drafts_by: dict[str, str]
) -> list[PageRow]:
    rows = []
    for board in info.board:
        key = board["key"]
        large = len(info.board) > 1 and board["tasks"] == max(b["tasks"] for b in info.board)
        for name, rest in PAGES.items():
            if large and name not in LARGE_BOARD_PAGES:
                continue  # the 100,000-task project: the board's own pages
            path = f"/p/{key}/{rest.format(key=key, draft=drafts_by.get(key, ''))}"
            for _ in range(args.warmup):
                _get(client, path)
            tally, size = _timed(info, args.requests, functools.partial(_size, client, path))
            rows.append(PageRow(key, board["tasks"], name, path, size, tally.summary()))
            progress(f"{path}: median {rows[-1].summary.median_ms:.1f} ms")
        mover = Mover(client, key)
        for _ in range(args.warmup):
            mover.move()
        tally, size = _timed(info, args.requests, mover.move)
        rows.append(PageRow(key, board["tasks"], MOVE, mover.path, size, tally.summary()))
        progress(f"{key} move: median {rows[-1].summary.median_ms:.1f} ms")
    return rows


class Mover:
    """Moves one task between Backlog and Ready for AI as a drag does: dropped just after the
    first tile of the other column, from the revision the last answer gave."""

    def __init__(self, client: httpx2.Client, project: str) -> None:
        self.client = client
        page = client.get(f"/p/{project}/board?column=backlog&offset=50").text
        csrf = re.search(r'data-csrf="([^"]+)"', page)
        tile = re.search(
            r'class="tile" id="tile-[^"]+" data-key="([^"]+)" data-revision="(\d+)"', page
        )
        ready = client.get(f"/p/{project}/board?column=ready_for_ai").text
        first_ready = re.search(r'class="tile" id="tile-[^"]+" data-key="([^"]+)"', ready)
        first_backlog = re.search(
            r'class="tile" id="tile-[^"]+" data-key="([^"]+)"',
            client.get(f"/p/{project}/board?column=backlog").text,
        )
        if not (csrf and tile and first_ready and first_backlog):
            raise RuntimeError("the board pages lack a tile to move or the form token")
        self.csrf, self.key, self.revision = csrf.group(1), tile.group(1), int(tile.group(2))
        self.after = {"ready_for_ai": first_ready.group(1), "backlog": first_backlog.group(1)}
        self.status = "backlog"
        self.path = f"/p/{project}/tasks/{self.key}/status"

    def move(self) -> int:
        target = "ready_for_ai" if self.status == "backlog" else "backlog"
        answer = self.client.post(
            self.path,
            data={
                "csrf": self.csrf,
                "expected_revision": str(self.revision),
                "status": target,
                "after": self.after[target],
                "before": "",
            },
            headers={"accept": "application/json"},
        )
        body = answer.json()
        if answer.status_code != 200 or not body.get("ok"):
            raise RuntimeError(f"the move answered {answer.status_code}: {body}")
        self.status, self.revision = target, int(body["revision"])
        return len(answer.content)


def render(rows: list[PageRow]) -> str:
    head = (
        f"{'project':8} {'tasks':>8} {'page':12} {'median ms':>10} {'p95 ms':>8} "
        f"{'server CPU ms':>13} {'bytes':>9}"
    )
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(
            f"{r.project:8} {r.tasks:>8,} {r.page:12} {r.summary.median_ms:>10.2f} "
            f"{r.summary.p95_ms:>8.2f} {r.summary.server_cpu_ms_per_call:>13.2f} {r.bytes:>9,}"
        )
    return "\n".join(lines)


def goals(rows: list[PageRow]) -> dict[str, bool]:
    largest, smallest = max(r.tasks for r in rows), min(r.tasks for r in rows)
    met = {
        f"{r.page} median {r.summary.median_ms:.1f} ms < {TARGET_MS:g} ms at {r.tasks:,} tasks": (
            r.summary.median_ms < TARGET_MS
        )
        for r in rows
        if r.tasks == largest and r.page in LARGE_BOARD_PAGES
    }
    for r in rows:
        if r.tasks != smallest:
            continue
        limit = MOVE_TARGET_MS if r.page == MOVE else PAGE_TARGET_MS
        met[f"{r.page} p95 {r.summary.p95_ms:.1f} ms < {limit:g} ms at {r.tasks:,} tasks"] = (
            r.summary.p95_ms < limit
        )
    return met


def run(args: argparse.Namespace, database_url: str | None) -> dict[str, Any]:
    sizes = ",".join(str(size) for size in args.boards)
    server = ServerProcess(
        database_url, server_args=["--seed-board", sizes], start_timeout=START_TIMEOUT
    )
    progress(f"starting the server and seeding boards of {sizes} tasks")
    with server as info:
        url = database_url or f"sqlite:///{(server.folder / 'data' / 'crewboard.db').resolve()}"
        email, drafts_by = prepare(info, url)
        client = sign_in(info.base_url, email)
        try:
            progress(f"{args.requests} GETs per page and project")
            rows = measure(client, info, args, drafts_by)
        finally:
            client.close()
    return {
        "workload": "web",
        "database": info.database,
        "settings": {"requests": args.requests, "warmup": args.warmup},
        "rows": [asdict(r) for r in rows],
        "target_met": goals(rows),
        "server_exit_code": server.exit_code,
    }


def main(argv: list[str] | None = None) -> None:
    run_workload(
        "web",
        parse_args(argv),
        run,
        lambda rows: render([PageRow(**{**r, "summary": Summary(**r["summary"])}) for r in rows]),
    )
