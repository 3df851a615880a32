"""Keeping the background loops alive (the live broker, the mailer, the session runner, the
webhook dispatcher) and knowing how they are, for `/readyz`.

A loop is expected to survive a database outage by itself: a pass that fails reports it to its
`LoopHealth`, which logs the first failure of an outage (not every retry), and answers how long
to back off (bounded exponential with jitter); the next pass that works reports it, which logs
the recovery. The loop keeps its place meanwhile (the broker its cursor, the mailer the mails
it sent but could not mark yet).

The `Supervisor` runs each loop and restarts one that ends with an exception anyway (a bug),
after the same back-off: no loop can end the app's lifespan, and with it the MCP session manager
that lives in the same task group.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import anyio
from anyio import to_thread

from crewboard.storage.database import Database
from crewboard.storage.outages import is_outage

log = logging.getLogger(__name__)
# Jitter from a generator of our own: the process-wide `random` is left to whoever seeds it
# (a test framework that replays draws notices a background thread moving it).
_JITTER = random.Random()  # noqa: S311 - spreading retries, not a secret

FIRST_BACKOFF = 0.5  # seconds before the first retry of a failing loop
MOST_BACKOFF = 10.0  # seconds: the longest wait between two retries
PING_TIMEOUT = 2.0  # seconds /readyz waits for the database to answer


@dataclass
class Backoff:
    """Bounded exponential back-off with jitter: FIRST, then doubling up to MOST, each wait
    drawn between half of that and all of it (so the nodes of a cluster do not retry in step)."""

    first: float = FIRST_BACKOFF
    most: float = MOST_BACKOFF
    _step: float = 0.0

    def next(self) -> float:
        self._step = self.first if self._step == 0.0 else min(self.most, self._step * 2)
        return self._step * _JITTER.uniform(0.5, 1.0)

    def reset(self) -> None:
        self._step = 0.0


@dataclass
class LoopHealth:
    """How one background loop is: running, or failing since when and with what."""

    name: str
    failing_since: datetime | None = None
    error: str | None = None
    failures: int = 0  # failed passes in the current outage
    restarts: int = 0  # times the supervisor started the loop again after it ended
    backoff: Backoff = field(default_factory=Backoff)
    # Cuts the loop's back-off short (its own wake-up), for when the database is seen back.
    wake: Callable[[], None] | None = None
    _failing_at: float = 0.0  # monotonic time of the first failure, for the recovery log

    @property
    def failing(self) -> bool:
        return self.failing_since is not None

    def ok(self) -> None:
        """A pass worked: the loop is running (again)."""
        if self.failing_since is not None:
            log.warning(
                "%s: working again after %.1f s (%d failed passes)",
                self.name,
                time.monotonic() - self._failing_at,
                self.failures,
            )
            self.failing_since, self.error, self.failures = None, None, 0
        self.backoff.reset()

    def failed(self, error: BaseException) -> float:
        """A pass failed: log it if it is the first of an outage; the seconds to wait before
        the next try."""
        self.failures += 1
        if self.failing_since is None:
            self.failing_since = datetime.now(UTC)
            self._failing_at = time.monotonic()
            self.error = type(error).__name__
            if is_outage(error):
                log.warning(
                    "%s: the database is out of reach (%s: %s); retrying with back-off, "
                    "logging again once it works",
                    self.name,
                    type(error).__name__,
                    str(error).splitlines()[0] if str(error) else "",
                )
            else:
                log.error("%s: a pass failed; retrying with back-off", self.name, exc_info=error)
        return self.backoff.next()

    def view(self) -> dict[str, Any]:
        if self.failing_since is None:
            return {"state": "running", "restarts": self.restarts}
        return {
            "state": "failing",
            "since": self.failing_since.isoformat(),
            "error": self.error,
            "restarts": self.restarts,
        }


Loop = Callable[[LoopHealth], Awaitable[None]]


class Wakeup:
    """Cuts a background loop's wait short, from any thread (a commit's listener calls `wake`
    in the writer's thread)."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._event = asyncio.Event()

    def bind(self) -> asyncio.AbstractEventLoop:
        """The loop is running here now: wake it on this event loop."""
        self._loop = asyncio.get_running_loop()
        return self._loop

    def wake(self) -> None:
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._event.set)

    async def wait(self, seconds: float, *, clear: bool = True) -> None:
        """Until woken or `seconds` have passed; `clear=False` leaves the wake-up to `clear`."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._event.wait(), seconds)
        if clear:
            self._event.clear()

    def clear(self) -> None:
        self._event.clear()


async def run_pass(health: LoopHealth, step: Callable[[], Awaitable[object]], poll: float) -> float:
    """One pass of a polling loop, reported to its health: the seconds to wait before the next
    (`poll` after a pass that worked, the back-off after one that failed)."""
    try:
        await step()
    except Exception as error:  # back off and try again
        return health.failed(error)
    health.ok()
    return poll


async def repeat(
    health: LoopHealth, work: Callable[[], Awaitable[object]], every: float, wakeup: Wakeup
) -> None:
    """Run `work` now, then again `every` seconds after each pass (the back-off after a failed
    one) or as soon as `wakeup` is woken, until cancelled."""
    wakeup.bind()
    while True:
        await wakeup.wait(await run_pass(health, work, every))


class Supervisor:
    """Runs the process's background loops, restarting any that ends, and keeps their health."""

    def __init__(self) -> None:
        self.loops: dict[str, LoopHealth] = {}
        self.running = False

    def health(self, name: str) -> LoopHealth:
        return self.loops.setdefault(name, LoopHealth(name))

    async def run(self, loops: Mapping[str, Loop]) -> None:
        """Run every loop until cancelled (the app's lifespan runs this)."""
        self.running = True
        try:
            async with anyio.create_task_group() as tasks:
                for name, loop in loops.items():
                    tasks.start_soon(self.keep, name, loop)
        finally:
            self.running = False

    async def keep(self, name: str, loop: Loop) -> None:
        """Run `loop`, and start it again (after the back-off) whenever it ends; never raises
        but for cancellation."""
        health = self.health(name)
        while True:
            try:
                await loop(health)
            except Exception as error:  # anything at all: log, wait, restart
                wait = health.failed(error)
            else:
                wait = health.failed(RuntimeError(f"the {name} loop returned by itself"))
            health.restarts += 1
            await anyio.sleep(wait)

    def nudge(self) -> None:
        """Wake every failing loop to try again now (the database was just seen answering),
        rather than at the end of its back-off."""
        for health in self.loops.values():
            if health.failing and health.wake is not None:
                health.wake()

    def failing(self) -> dict[str, dict[str, Any]]:
        """The loops failing now, by name."""
        return {name: h.view() for name, h in self.loops.items() if h.failing}

    def view(self) -> dict[str, dict[str, Any]]:
        return {name: h.view() for name, h in self.loops.items()}


class DatabaseProbe:
    """Whether the database answers within `timeout`. One question at a time: a check made
    while one is still out waits on that one (a hung connection holds one thread, not one
    per check). The question is `ask` (a ping unless given, e.g. reading the schema revision);
    its last answer stays in `answer`."""

    def __init__(
        self, db: Database, timeout: float = PING_TIMEOUT, ask: Callable[[], Any] | None = None
    ) -> None:
        self.db = db
        self.timeout = timeout
        self.ask: Callable[[], Any] = ask or db.ping
        self.answer: Any = None
        self._ping: asyncio.Future[Any] | None = None

    async def check(self) -> str | None:
        """None when the database answered; else what went wrong, in a few words."""
        if self._ping is None or self._ping.done():
            self._ping = asyncio.ensure_future(to_thread.run_sync(self.ask, abandon_on_cancel=True))
            self._ping.add_done_callback(_retrieve)
        try:
            self.answer = await asyncio.wait_for(asyncio.shield(self._ping), self.timeout)
        except TimeoutError:
            return f"no answer within {self.timeout:g} s"
        except Exception as error:  # any failure of the question is the answer
            return type(error).__name__
        return None


def _retrieve(future: asyncio.Future[Any]) -> None:
    """Mark a ping's failure as seen (the check that waited may have stopped waiting)."""
    if not future.cancelled():
        future.exception()
