"""Waiting for a turn to end, without holding a worker thread: start_spec_session waits up to
75 seconds for the first reply, and the session page's stream follows a reply as it grows.

A turn run by this process ends with a commit whose event wakes the waiter at once; a turn
another node runs is seen by reading its row every `poll` seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator

import anyio
from anyio import to_thread

from crewboard.domain.sessions import Turn, TurnStatus
from crewboard.services.sessions.runner import TURN_ENDED
from crewboard.services.sessions.sessions import sessions_of
from crewboard.storage.database import Database
from crewboard.storage.uow import EventRecord, UnitOfWork

ENDED = (TurnStatus.DONE, TurnStatus.FAILED)


def read_turn(db: Database, turn_id: str) -> Turn | None:
    def work(uow: UnitOfWork) -> Turn | None:
        return sessions_of(uow).turn(turn_id)

    return db.read(work)


async def wait_for_turn(db: Database, turn_id: str, seconds: float, poll: float = 1.0) -> bool:
    """Whether the turn ended within `seconds`."""
    ended = False
    async with contextlib.aclosing(follow_turn(db, turn_id, seconds=seconds, poll=poll)) as rows:
        async for turn in rows:
            ended = turn.status in ENDED
    return ended


async def follow_turn(
    db: Database, turn_id: str, *, seconds: float, poll: float = 1.0
) -> AsyncGenerator[Turn, None]:
    """The turn's row each time it may have changed (its reply grew, it ended), until it ends
    or `seconds` pass. Between reads it waits for a commit of this process that ended
    the turn, or `poll` seconds."""
    loop = asyncio.get_running_loop()
    ended = asyncio.Event()

    def heard(events: list[EventRecord]) -> None:
        if any(e.type == TURN_ENDED and e.payload.get("turnId") == turn_id for e in events):
            loop.call_soon_threadsafe(ended.set)

    db.add_event_listener(heard)
    deadline = anyio.current_time() + seconds
    try:
        # No cancel scope spans a yield: a caller may stop iterating at any point, and a
        # scope left open in a suspended generator would be closed from another task.
        while True:
            turn = await to_thread.run_sync(read_turn, db, turn_id)
            if turn is None:
                return
            yield turn
            left = deadline - anyio.current_time()
            if turn.status in ENDED or left <= 0:
                return
            with anyio.move_on_after(min(poll, left)):
                await ended.wait()
    finally:
        db.remove_event_listener(heard)
