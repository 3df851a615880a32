"""The handoffs workload: `python -m bench handoffs [--database postgresql] [--reads N]`.

In-process, through the services (no HTTP): what reading handoffs costs as a project's history
grows, and what telling 50 people of one costs.

- Reads: project BIG holds 10,000 handoffs (100 people x 100 days, each with short bodies,
  two recipients and one action item), project SMALL holds 10 of the same. `list_handoffs`
  (a page of 10, newest first, on each: the same rows' worth of work; the default page, 20
  rows on BIG against the 10 SMALL has; filtered by one author) and `get_handoff` (the
  newest) are timed on each, alternating in blocks of 10, after a warm-up. Target: each
  median on BIG within 2x the one on SMALL.
- Fan-out: `create_handoff` naming 50 recipients, with sendNotification and sendEmail (email
  set up, so 50 notifications and 50 outbox rows are written in the same transaction), against
  the same handoff telling nobody. Reported: both medians and the difference per recipient.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from functools import partial
from typing import Any

from bench.runner import add_database_options, progress
from bench.specs import database
from crewboard.cli.progress import bars, wanted
from crewboard.contract.handoffs import present as handoffs
from crewboard.contract.projects import present
from crewboard.domain.handoffs import ActionItem, Bodies, Handoff, ItemStatus
from crewboard.domain.identity.access import Role
from crewboard.domain.identity.records import Actor
from crewboard.domain.ids import new_id
from crewboard.services.handoffs import commands, queries
from crewboard.services.identity.users import do_create_user, person_actor
from crewboard.services.notifications import inbox
from crewboard.services.notifications.notify import enable_email
from crewboard.storage import migrate
from crewboard.storage.database import Database
from crewboard.storage.handoffs.repository import HandoffRepository
from crewboard.storage.uow import UnitOfWork

PEOPLE = 100
DAYS = 100
RECIPIENTS = 50


def person(db: Database, n: int) -> Actor:
    user = db.write(
        lambda uow: do_create_user(
            uow,
            email=f"p{n}@example.com",
            display_name=f"Person {n}",
            password_hash="!",  # noqa: S106 - no password: nobody signs in
        )
    )
    return person_actor(user)


def seed(db: Database, owner: Actor, people: list[Actor], key: str, days: int) -> str:
    """`days` handoffs for each person (or, for SMALL, 10 in all), written through the
    repository in batches: seeding through the tool would take minutes. A progress bar counts
    them on standard error when it is a terminal."""
    project = present.create_project(db, owner, workspace_id=None, key=key, name=key)
    project_id = str(project.body["project"]["id"])

    def join(uow: UnitOfWork) -> None:
        for someone in people:
            uow.projects.set_member(project_id, someone.user_id, Role.WRITE, uow.now)

    db.write(join)
    rows = [(p, d) for d in range(days) for p in people]
    if key == "SMALL":
        rows = rows[:10]
    step = f"{key} handoffs"
    with bars(wanted(as_json=False), {step: len(rows)}) as advance:
        for first in range(0, len(rows), 500):
            batch = rows[first : first + 500]
            db.write(partial(write_handoffs, project_id=project_id, people=people, batch=batch))
            advance(step, len(batch))
    return project_id


def write_handoffs(
    uow: UnitOfWork, project_id: str, people: list[Actor], batch: list[tuple[Actor, int]]
) -> None:
    """One handoff, with one action item, per (author, day) of `batch`."""
    start = datetime(2026, 1, 1, tzinfo=UTC)
    repo = HandoffRepository(uow.conn)
    for someone, day in batch:
        at = start + timedelta(days=day, minutes=people.index(someone))
        item = Handoff(
            id=new_id("hof"), project_id=project_id, author_user_id=someone.user_id,
            author=someone.as_payload(), day=date(2026, 1, 1) + timedelta(days=day),
            source_zone="UTC", destination_zone="UTC", completed="Shipped the fix.",
            in_progress="Watching it.", blockers="", next_steps="Check the errors.",
            linked_task_ids=(), recipient_user_ids=(people[0].user_id, people[1].user_id),
            created_at=at, updated_at=at, updated_by=someone.as_payload(),
        )  # fmt: skip
        repo.add(item)
        repo.add_item(
            ActionItem(
                id=new_id("hai"),
                handoff_id=item.id,
                project_id=project_id,
                day=item.day,
                text="Follow up",
                assignee_user_id=None,
                status=ItemStatus.OPEN,
                due_date=None,
                created_by=item.author,
                created_at=at,
                updated_at=at,
                updated_by=item.author,
            )
        )


def timed(call: Callable[[], object]) -> float:
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000


def compare(name: str, big: Callable[[], object], small: Callable[[], object],
            reads: int) -> tuple[float, float]:  # fmt: skip
    for _ in range(20):
        big()
        small()
    times: dict[str, list[float]] = {"big": [], "small": []}
    for _ in range(reads // 10):
        for label, call in (("big", big), ("small", small)):
            times[label] += [timed(call) for _ in range(10)]
    b, s = statistics.median(times["big"]), statistics.median(times["small"])
    verdict = "met" if b <= 2 * s else "MISSED"
    print(f"  {name:32s} {b:7.2f} ms on 10,000 / {s:6.2f} ms on 10 = {b / s:4.2f}x ({verdict})")
    return b, s


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench handoffs", description=__doc__)
    add_database_options(parser)
    parser.add_argument("--reads", type=int, default=200)
    parser.add_argument("--fanouts", type=int, default=20)
    options = parser.parse_args(argv)
    with database(options.database, options.postgres_url) as db:
        migrate.upgrade(db)
        people = [person(db, n) for n in range(PEOPLE)]
        owner = people[0]
        progress("seeding 10,000 handoffs")
        big = seed(db, owner, people[1:], "BIG", DAYS + 1)
        small = seed(db, owner, people[1:], "SMALL", 1)
        print(f"handoffs on {options.database} (medians):")
        me = people[1]
        newest = {
            key: listed(db, me, project=key, limit=1)["handoffs"][0]["id"]
            for key in ("BIG", "SMALL")
        }
        compare("list_handoffs, a page of 10",
                lambda: listed(db, me, project=big, limit=10),
                lambda: listed(db, me, project=small, limit=10),
                options.reads)  # fmt: skip
        compare("list_handoffs, default page (20/10)",
                lambda: listed(db, me, project=big),
                lambda: listed(db, me, project=small), options.reads)  # fmt: skip
        compare("list_handoffs, one author",
                lambda: listed(db, me, project=big, author=me.user_id),
                lambda: listed(db, me, project=small, author=me.user_id),
                options.reads)  # fmt: skip
        compare("get_handoff",
                lambda: shown(db, me, handoff_id=newest["BIG"]),
                lambda: shown(db, me, handoff_id=newest["SMALL"]),
                options.reads)  # fmt: skip
        fan_out(db, people, options.fanouts)


def listed(db: Database, actor: Actor, **filters: Any) -> dict[str, Any]:
    """A page of handoffs as every door words it."""
    return handoffs.handoff_page_view(queries.list_handoffs(db, actor, **filters))


def shown(db: Database, actor: Actor, *, handoff_id: str) -> dict[str, Any]:
    """A handoff whole, as REST and the CLI word it."""
    return handoffs.handoff_answer(queries.get_handoff(db, actor, handoff_id=handoff_id), actor)


def fan_out(db: Database, people: list[Actor], count: int) -> None:
    enable_email(db, "https://crew.example.com")
    recipients = [p.user_id for p in people[2 : 2 + RECIPIENTS]]
    for someone in people[2 : 2 + RECIPIENTS]:
        inbox.set_settings(db, someone, email=True)
    author = people[1]
    day = date(2027, 1, 1)
    times: dict[bool, list[float]] = {True: [], False: []}
    for n in range(count * 2):
        tell = n % 2 == 0
        when = (day + timedelta(days=n)).isoformat()

        def write(tell: bool = tell, when: str = when) -> object:
            return commands.create_handoff(
                db, author, project="BIG", workspace_id=None, bodies=Bodies("Done."), day=when,
                recipients=recipients, send_notification=tell, send_email=tell,
                answer=handoffs.made_view(author),
            )  # fmt: skip

        times[tell].append(timed(write))
    told, quiet = statistics.median(times[True]), statistics.median(times[False])
    print(
        f"  create_handoff, {RECIPIENTS} recipients told in the app and by email: {told:.1f} ms; "
        f"telling nobody: {quiet:.1f} ms; fan-out {(told - quiet) / RECIPIENTS:.2f} ms a recipient"
    )
