"""Waiting for a turn to end, without holding a worker thread: start_spec_session waits up to
75 seconds for the first reply, and the session page's stream follows a reply as it grows.

A turn run by this process ends with a commit whose event wakes the waiter at once; a turn
another node runs is seen by reading its row every `poll` seconds.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

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
    async for turn in follow_turn(db, turn_id, seconds=seconds, poll=poll):
        if turn.status in ENDED:
            return True
    return False


async def follow_turn(
    db: Database, turn_id: str, *, seconds: float, poll: float = 1.0
) -> AsyncIterator[Turn]:
    """The turn's row each time it may have changed (its reply grew, it ended), until it ends
    or `seconds` pass. Between reads it waits for a commit of this process that ended
    the turn, or `poll` seconds."""
    loop = asyncio.get_running_loop()
    ended = asyncio.Event()

    def heard(events: list[EventRecord]) -> None:
        if any(e.type == TURN_ENDED and e.payload.get("turnId") == turn_id for e in events):
            loop.call_soon_threadsafe(ended.set)

    db.add_event_listener(heard)
    try:
        with anyio.move_on_after(seconds):
            while True:
                turn = await to_thread.run_sync(read_turn, db, turn_id)
                if turn is None:
                    return
                yield turn
                if turn.status in ENDED:
                    return
                with anyio.move_on_after(poll):
                    await ended.wait()
    finally:
        db.remove_event_listener(heard)
