"""Reading a person's code in a spec session: the code calls a turn's model sends to the
person's code bridge (`crewboard reverse`; registering and exchanging are in `bridges.py`).

A bridge connects out from the machine holding the code and registers for (that person, that
project); then it exchanges in a loop: answers to the calls it took, for new calls (waiting up
to 25 seconds). A turn's tool call is a `code_calls` row addressed to the session creator's
bridge in the project: everything goes through the database, so the node holding the
bridge's long poll and the node running the turn need not be the same. A node wakes its own
waiters at once (an in-process bell, rung after the commit); across nodes waiters read the
database every 0.1 s.

Neither a bridge's long poll nor a turn waiting on an answer holds a database connection or a
worker thread while it waits. Code calls are no project events: they would show in every
reader's live stream. Once the turn has read an answer only its summary stays (no code is
kept in the database).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, TypeVar

import anyio
from anyio import to_thread

from crewboard.config import Settings
from crewboard.domain import code_tools
from crewboard.domain.code_tools import BadArguments, check_arguments, error_answer
from crewboard.domain.ids import new_id
from crewboard.services.sessions.providers import ToolSpec
from crewboard.storage.database import Database
from crewboard.storage.sessions.bridges import (
    BRIDGE_CHANNEL,
    QUEUED,
    TAKEN,
    BridgeRepository,
    CallRepository,
    notify_nodes,
)
from crewboard.storage.uow import UnitOfWork

T = TypeVar("T")

LIVE_FOR = timedelta(seconds=45)  # a bridge not seen (an exchange) for this long is not live
CALL_TIMEOUT = 30.0  # seconds: the bridge_call_timeout setting's default
POLL = 0.1  # seconds between two reads of the database while waiting
BELL = "sessions.code_bell"  # the bell's place in Database.hooks (one per database handle)

CODE_TOOLS: tuple[ToolSpec, ...] = tuple(
    ToolSpec(tool.name, tool.description, tool.parameters) for tool in code_tools.TOOLS
)


@dataclass(frozen=True)
class CodeAnswer:
    content: str  # JSON text for the model (the result, or {"error": {...}})
    is_error: bool
    size: int  # characters of content (counted against the turn's budget)


class BridgeGone(Exception):
    """No bridge answered a code call in time; `message` says so to the person."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class BridgeView:
    id: str
    project_id: str
    user_id: str
    folder: str
    connected_at: datetime
    last_seen_at: datetime


@dataclass(frozen=True)
class CodeRead:
    """One recorded call, for the session page and get_spec_session."""

    id: str
    turn_id: str
    seq: int
    tool: str
    arguments: dict[str, Any]
    status: str  # queued | taken | answered | failed
    summary: dict[str, Any]
    created_at: datetime


# --- the bell -----------------------------------------------------------------------------------


class _Bell:
    """Wakes this process's waiters as soon as what they wait for was committed here: a call
    queued, a call answered, a bridge registered. A key names what a waiter waits for."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: dict[str, set[tuple[asyncio.AbstractEventLoop, asyncio.Event]]] = {}
        self.stopping = False  # the server is stopping: bridges' long polls answer at once

    @contextlib.contextmanager
    def listening(self, key: str) -> Iterator[asyncio.Event]:
        waiter = (asyncio.get_running_loop(), asyncio.Event())
        with self._lock:
            self._waiting.setdefault(key, set()).add(waiter)
        try:
            yield waiter[1]
        finally:
            with self._lock:
                found = self._waiting.get(key, set())
                found.discard(waiter)
                if not found:
                    self._waiting.pop(key, None)

    def ring(self, key: str) -> None:
        """Wake the waiters of `key` (from any thread)."""
        with self._lock:
            waiters = list(self._waiting.get(key, ()))
        self._wake(waiters)

    def stop(self) -> None:
        """The server is stopping: wake every waiter; the stoppable ones return."""
        self.stopping = True
        with self._lock:
            waiters = [waiter for found in self._waiting.values() for waiter in found]
        self._wake(waiters)

    @staticmethod
    def _wake(waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]]) -> None:
        for loop, event in waiters:
            with contextlib.suppress(RuntimeError):  # its loop has closed
                loop.call_soon_threadsafe(event.set)


def bell_of(db: Database) -> _Bell:
    found = db.hooks.get(BELL)
    if not isinstance(found, _Bell):
        found = db.hooks.setdefault(BELL, _Bell())
    assert isinstance(found, _Bell)  # noqa: S101 - only this module writes the entry
    return found


def stop_long_polls(db: Database) -> None:
    """The server is stopping: every bridge's waiting exchange on this process answers now
    (with no calls), so the graceful stop need not wait out their long polls."""
    bell_of(db).stop()


def queued_key(user_id: str, project_id: str) -> str:
    return f"queued:{user_id}:{project_id}"


def bridge_key(user_id: str, project_id: str) -> str:
    return f"bridge:{user_id}:{project_id}"


async def wait_until(
    bell: _Bell,
    key: str,
    deadline: float,
    look: Callable[[], T | None],
    poll: float,
    *,
    stoppable: bool = False,
) -> T | None:
    """`look()` (in a worker thread) until it finds something or `deadline` (anyio's clock)
    passes; between looks, the bell `key` or `poll` seconds, whichever comes first. A
    `stoppable` wait (a bridge's long poll) also ends once the server is stopping: a stopping
    server waits for every open request, and its bridges reconnect to another node."""
    with bell.listening(key) as rung:
        while True:
            rung.clear()
            found = await to_thread.run_sync(look)
            left = deadline - anyio.current_time()
            if found is not None or left <= 0 or (stoppable and bell.stopping):
                return found
            with anyio.move_on_after(min(poll, left)):
                await rung.wait()


# --- reads for the session's pages --------------------------------------------------------------


def bridge_view(row: dict[str, Any]) -> BridgeView:
    return BridgeView(
        id=row["id"], project_id=row["project_id"], user_id=row["user_id"], folder=row["folder"],
        connected_at=row["connected_at"], last_seen_at=row["last_seen_at"],
    )  # fmt: skip


def live_bridge(uow: UnitOfWork, *, project_id: str, user_id: str) -> BridgeView | None:
    """The person's bridge in the project when it is live (seen in the last 45 seconds)."""
    row = BridgeRepository(uow.conn).live(user_id, project_id, uow.now - LIVE_FOR)
    return bridge_view(row) if row else None


def code_reads(uow: UnitOfWork, session_id: str) -> list[CodeRead]:
    """The code calls of a session's turns, in the order they were made."""
    return [
        CodeRead(
            id=row["id"],
            turn_id=row["turn_id"],
            seq=row["seq"],
            tool=row["tool"],
            arguments=dict(row["arguments"]),
            status=row["status"],
            summary=dict(row["summary"] or {}),
            created_at=row["created_at"],
        )
        for row in CallRepository(uow.conn).of_session(session_id)
    ]


# --- the turn's side ----------------------------------------------------------------------------


def _answer_of(answer: dict[str, Any]) -> CodeAnswer:
    error = answer.get("error")
    if error is not None:
        content = json.dumps({"error": error}, ensure_ascii=False)
    else:
        content = json.dumps(answer.get("result"), ensure_ascii=False)
    return CodeAnswer(content=content, is_error=error is not None, size=len(content))


class CodeBridges:
    """The turn's way to the person's code: one per process, built by the app beside the
    session runner."""

    def __init__(self, db: Database, settings: Settings, *, poll: float = POLL) -> None:
        self.db = db
        self.settings = settings
        self.poll = poll
        self.timeout = settings.bridge_call_timeout
        self._bell = bell_of(db)

    channel = BRIDGE_CHANNEL  # where other nodes say what they did for this one's waiters

    def heard(self, key: str) -> None:
        """Another node committed what `key`'s waiters here wait for (a NOTIFY on `channel`,
        from any thread): wake them, as a commit in this process does."""
        self._bell.ring(key)

    async def wait_for_bridge(
        self, *, project_id: str, user_id: str, deadline: float
    ) -> BridgeView | None:
        """The person's live bridge in the project, as soon as there is one; None when none
        connected by `deadline` (anyio's clock, `anyio.current_time()`)."""

        def look() -> BridgeView | None:
            return self.db.read(
                lambda uow: live_bridge(uow, project_id=project_id, user_id=user_id)
            )

        key = bridge_key(user_id, project_id)
        return await wait_until(self._bell, key, deadline, look, self.poll)

    async def call(
        self,
        *,
        session_id: str,
        project_id: str,
        user_id: str,
        turn_id: str,
        tool: str,
        arguments: dict[str, Any],
        deadline: float,
    ) -> CodeAnswer:
        """Queue the call for the person's bridge and wait for its answer; only the answer's
        summary stays in the database. Arguments the model wrote wrongly are answered at
        once (`bad_arguments`, naming the field) and never sent.

        `deadline` is on anyio's clock. The call waits `bridge_call_timeout` seconds for a
        bridge to take it, and as long again for the answer after each take.

        Raises:
            BridgeGone: no bridge took and answered it in time (or by `deadline`).
        """
        try:
            checked = check_arguments(tool, arguments)
        except BadArguments as bad:
            return _answer_of(error_answer("bad_arguments", bad.message))
        call = {
            "session_id": session_id, "project_id": project_id, "user_id": user_id,
            "turn_id": turn_id, "tool": tool, "arguments": checked,
        }  # fmt: skip
        call_id, key = await to_thread.run_sync(self._queue, call)
        self._bell.ring(queued_key(user_id, project_id))
        try:
            return await self._answer(call_id, key, deadline)
        except BridgeGone:
            raise
        except BaseException:
            with anyio.CancelScope(shield=True):  # cancelled or failed: no bridge answers it now
                await to_thread.run_sync(self._abandon, call_id)
            raise

    def _queue(self, call: dict[str, Any]) -> tuple[str, str]:
        """Write the call, queued; its id and the project's key."""

        def work(uow: UnitOfWork) -> tuple[str, str]:
            calls = CallRepository(uow.conn)
            # Answers a turn never read (its node stopped mid-turn) leave with the next call.
            before = uow.now - timedelta(seconds=2 * self.timeout)
            calls.forget_unread(call["session_id"], before)
            call_id = new_id("bcl")
            seq = calls.next_seq(call["turn_id"])
            calls.add({**call, "id": call_id, "seq": seq, "status": QUEUED, "created_at": uow.now})
            notify_nodes(uow.conn, [queued_key(call["user_id"], call["project_id"])])
            project = uow.projects.get(call["project_id"])
            return call_id, project.key if project else call["project_id"]

        return self.db.write(work)

    async def _answer(self, call_id: str, project_key: str, deadline: float) -> CodeAnswer:
        taken_at: datetime | None = None
        limit = min(deadline, anyio.current_time() + self.timeout)
        with self._bell.listening(f"answered:{call_id}") as rung:
            while True:
                rung.clear()
                row = await to_thread.run_sync(self._read, call_id)
                status = row["status"] if row else None
                if status == "answered":
                    return _answer_of(await to_thread.run_sync(self._collect, call_id))
                if status == TAKEN and row and row["taken_at"] != taken_at:  # a bridge took it
                    taken_at = row["taken_at"]
                    limit = min(deadline, anyio.current_time() + self.timeout)
                left = limit - anyio.current_time()
                if status not in (QUEUED, TAKEN) or left <= 0:
                    if await to_thread.run_sync(self._give_up, call_id):
                        taken, out_of_time = taken_at is not None, limit >= deadline
                        raise BridgeGone(
                            self._gone(project_key, taken=taken, out_of_time=out_of_time)
                        )
                    continue  # answered meanwhile
                with anyio.move_on_after(min(self.poll, left)):
                    await rung.wait()

    def _gone(self, project_key: str, *, taken: bool, out_of_time: bool) -> str:
        within = "in the time the turn had left" if out_of_time else f"within {self.timeout:g} s"
        if taken:
            return (
                f"The `crewboard reverse` connected for project {project_key} took a code call "
                f"but did not answer it {within}. Check it is still running, then send the "
                "message again."
            )
        return (
            f"No `crewboard reverse` for project {project_key} answered a code call {within}. "
            f"Run `crewboard reverse --project {project_key} <folder>` on the machine with "
            "the code, then send the message again."
        )

    def _read(self, call_id: str) -> dict[str, Any] | None:
        return self.db.read(lambda uow: CallRepository(uow.conn).get(call_id))

    def _collect(self, call_id: str) -> dict[str, Any]:
        """The answer, read once: only its summary stays behind."""

        def work(uow: UnitOfWork) -> dict[str, Any]:
            calls = CallRepository(uow.conn)
            row = calls.get(call_id)
            calls.forget_answer(call_id)
            answer = row["answer"] if row else None
            if not isinstance(answer, dict):
                return error_answer("not_found", "The answer to this call was lost; ask again.")
            return answer

        return self.db.write(work)

    def _give_up(self, call_id: str) -> bool:
        """Fail a call no bridge answered; False when an answer came first. A missing call
        (its session was deleted) counts as given up."""

        def work(uow: UnitOfWork) -> bool:
            calls = CallRepository(uow.conn)
            row = calls.get(call_id)
            if row is None or row["status"] not in (QUEUED, TAKEN, "answered"):
                return True
            return calls.fail(call_id, {"error": "bridge_gone"}, uow.now)

        return self.db.write(work)

    def _abandon(self, call_id: str) -> None:
        """The turn stopped waiting (cancelled): no bridge should answer, no answer stay."""

        def work(uow: UnitOfWork) -> None:
            calls = CallRepository(uow.conn)
            if not calls.fail(call_id, {"error": "abandoned"}, uow.now):
                calls.forget_answer(call_id)

        self.db.write(work)
