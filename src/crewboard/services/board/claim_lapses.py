"""Leases that ran out: a supervised loop finds them, records `task.claim_lapsed` once per
claim and tells the project's people (`claims.end_if_lapsed`).

Every node may run the loop: the conditional update that ends a claim decides which node
records its lapse, so a lapse is recorded once however many nodes see it. A task whose lease
ran out is free for another caller even before the loop gets to it (a live claim is one whose
lease is still running); the caller that takes it records the lapse then.
"""

from __future__ import annotations

from anyio import to_thread

from crewboard.services.board.claims import end_if_lapsed
from crewboard.services.supervisor import LoopHealth, Wakeup, repeat
from crewboard.storage.board.claims import ClaimRepository
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork

BATCH = 100  # lapsed claims ended in one transaction
SWEEP_EVERY = 5.0  # seconds between two looks, by default


def sweep_lapsed(db: Database, limit: int = BATCH) -> int:
    """End the claims whose lease ran out (at most `limit`), each with its event and its
    notification; how many this call ended (another node may have ended the rest)."""

    def work(uow: UnitOfWork) -> int:
        ended = 0
        for claim in ClaimRepository(uow.conn).lapsed(uow.now, limit):
            task = uow.tasks.get(claim.task_id)
            project = uow.projects.get(claim.project_id)
            if task is not None and project is not None:
                ended += end_if_lapsed(uow, project, task, claim)
        return ended

    return db.write(work)


class ClaimSweeper:
    """The loop: a sweep every `every` seconds, until cancelled; a failing pass backs off."""

    def __init__(self, db: Database, every: float = SWEEP_EVERY) -> None:
        self.db = db
        self.every = every
        self._wakeup = Wakeup()

    def wake(self) -> None:
        self._wakeup.wake()

    async def run(self, health: LoopHealth | None = None) -> None:
        """Sweep every `every` seconds (at once again while whole batches come back), until
        cancelled; a pass that fails backs off and tries again: the claims wait."""
        health = health or LoopHealth("claims")
        health.wake = self.wake
        await repeat(health, self._sweep, self.every, self._wakeup)

    async def _sweep(self) -> None:
        while await to_thread.run_sync(sweep_lapsed, self.db) >= BATCH:
            pass  # more are due: on at once
