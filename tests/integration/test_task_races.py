"""Writers that name no revision never fail for a race they could not see.

On PostgreSQL, writers run at once under READ COMMITTED: between one writer's read of a task
and its compare-and-set, another may commit. A call with no expected revision must then run
again on what is committed (not answer REVISION_CONFLICT); a call with one must still be
refused when it turned stale.
"""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

from crewboard.services.board import batch as task_batch
from crewboard.services.board import tasks
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support.factories import make_project, make_user

WRITERS = 8
ROUNDS = 15
STATUSES = ("backlog", "ready_for_ai", "review")


def _run_at_once(work: Any) -> list[BaseException]:
    failures: list[BaseException] = []
    start = threading.Barrier(WRITERS)

    def run(index: int) -> None:
        start.wait()
        try:
            work(index)
        except BaseException as error:
            failures.append(error)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return failures


def test_concurrent_status_changes_without_a_revision_all_go_through(db: Database) -> None:
    owner = make_user(db, "owner@example.com")
    make_project(db, owner, "CRW")
    actor = person_actor(owner)
    task_id = tasks.create_task(
        db, actor, project="CRW", workspace_id=None, idempotency_key="t", title="Contended"
    ).body["task"]["id"]
    outcomes: Counter[str] = Counter()

    def writer(index: int) -> None:
        for n in range(ROUNDS):
            result = task_batch.set_task_status(
                db,
                actor,
                project="CRW",
                workspace_id=None,
                idempotency_key=f"w{index}-{n}",
                changes=[{"taskId": task_id, "status": STATUSES[(index + n) % len(STATUSES)]}],
            )
            outcome = result.body["outcomes"][0]
            outcomes["ok" if outcome["ok"] else outcome["error"]["code"]] += 1

    assert _run_at_once(writer) == []
    assert outcomes == Counter({"ok": WRITERS * ROUNDS})
    with db.engine.connect() as conn:
        revision = conn.exec_driver_sql("SELECT revision FROM tasks").scalar_one()
    # Each change that really changed the status added one revision; none was lost.
    assert revision >= 1 + WRITERS
