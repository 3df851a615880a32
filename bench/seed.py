"""Board data for the `board` workload: projects with many tasks, bulk-inserted.

Runs inside the bench server process before it serves (`python -m bench.server
--seed-board 100000,1000`). Rows go straight into the crewboard tables through SQLAlchemy
Core in batches, one transaction per project: the services would take minutes for 100,000
tasks. On SQLite the FTS5 triggers fill the text index as rows arrive; PostgreSQL's GIN index
is maintained by the database. Each task gets the lifecycle event a created task has.

The text is generated from fixed word lists with a seeded random generator, so every run
(and both databases) gets the same board. The filters the workload uses select a few per
cent of a project: status `review` about 6 %, tag `security` about 6 %, the two words of
`QUERY` about 2.5 %.

While it seeds, a progress bar on standard error counts the tasks, only when standard error is
a terminal (`python -m bench.server --seed-board …` run by hand); the runner sends the server's
output to a log file, which gets none.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from sqlalchemy import insert, text  # noqa: TID251 - the benchmark seeds tables directly

from crewboard.cli.progress import Advance, bars, wanted
from crewboard.contract.projects import present
from crewboard.domain.identity.records import Actor
from crewboard.domain.ids import new_id
from crewboard.storage import migrate, schema
from crewboard.storage.board import tables as t
from crewboard.storage.database import Database
from crewboard.storage.sequences import TASK_NUMBERS

BATCH = 2000
STATUS_FILTER = "review"
TAG_FILTER = "security"
QUERY = "invoice export"

STATUSES = {
    "backlog": 30,
    "ready_for_ai": 10,
    "in_progress": 12,
    "blocked": 5,
    "review": 6,
    "approved": 4,
    "done": 33,
}
TYPES = ["development"] * 5 + ["writing", "review", "research", "visual", "marketing", "general"]
PRIORITIES = ["low", "medium", "medium", "high"]
VERBS = [
    "Fix",
    "Add",
    "Remove",
    "Refactor",
    "Design",
    "Write",
    "Review",
    "Test",
    "Document",
    "Investigate",
    "Speed up",
    "Polish",
    "Translate",
    "Draft",
    "Plan",
    "Measure",
    "Clean up",
    "Migrate",
    "Localise",
    "Prototype",
]
ADJECTIVES = [
    "slow",
    "broken",
    "missing",
    "new",
    "old",
    "flaky",
    "shared",
    "private",
    "public",
    "mobile",
    "nightly",
    "weekly",
    "monthly",
    "legacy",
    "first",
    "last",
    "empty",
    "large",
    "small",
]
NOUNS = [
    "login",
    "billing",
    "invoice",
    "dashboard",
    "export",
    "import",
    "search",
    "cache",
    "timeout",
    "upload",
    "avatar",
    "webhook",
    "report",
    "chart",
    "payment",
    "refund",
    "email",
    "password",
    "session",
    "token",
    "migration",
    "schema",
    "index",
    "query",
    "latency",
    "memory",
    "crash",
    "deploy",
    "rollback",
    "release",
    "onboarding",
    "tutorial",
    "translation",
    "sprite",
    "level",
    "quest",
    "dialogue",
    "shader",
    "texture",
    "audio",
    "music",
    "trailer",
    "campaign",
    "newsletter",
    "landing",
    "pricing",
    "survey",
    "interview",
    "roadmap",
    "sprint",
    "retro",
    "budget",
    "contract",
    "privacy",
    "consent",
    "accessibility",
    "contrast",
    "keyboard",
    "tablet",
    "android",
    "desktop",
    "printer",
    "spreadsheet",
    "calendar",
    "reminder",
    "filter",
    "sorting",
    "pagination",
    "permissions",
    "roles",
    "audit",
    "backup",
    "restore",
    "archive",
]
# Tags with falling weights: the first few are common, the tail is rare.
TAGS = [
    "frontend",
    "backend",
    "api",
    "billing",
    "docs",
    "design",
    "bug",
    "infra",
    "mobile",
    "perf",
    "security",
    "ux",
    "content",
    "qa",
    "growth",
    "data",
    "ml",
    "ops",
    "legal",
    "i18n",
    "a11y",
    "sdk",
    "cli",
    "web",
]
TAG_WEIGHTS = [14, 12, 9, 6, 6, 5, 5, 4, 4, 3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1]
LABELS = ["sprint-goal", "customer", "tech-debt", "quick-win"]
SENTENCES = (
    "The {a} {n1} view shows the wrong {n2} after a {n3}.",
    "Users report that {n1} fails when the {n2} is {a}.",
    "We need a {a} {n1} for the {n2} team before the {n3} goes out.",
    "Check how {n1} and {n2} interact; the {n3} logs say little.",
    "Acceptance: the {n1} works on {a} devices and the {n2} stays under budget.",
    "Context: last {n1} we changed the {n2}, and the {n3} has been {a} since.",
    "Link the {n1} notes to the {n2} page and ask design about the {n3}.",
)


@dataclass(frozen=True)
class SeededProject:
    key: str
    id: str
    tasks: int


def seed_board(
    db: Database, owner: Actor, sizes: list[int], *, analyze: bool = False
) -> list[SeededProject]:
    """One project per size (keys B1, B2, …), each with that many tasks.

    Afterwards the tables are as a running server has them: PostgreSQL through VACUUM ANALYZE
    (what autovacuum does within a minute), SQLite through the sampled ANALYZE that
    `crewboard serve` runs at start; `analyze` asks for a full ANALYZE on SQLite as well.
    """
    made = []
    with bars(wanted(as_json=False), {"tasks": sum(sizes)}) as advance:
        for index, size in enumerate(sizes, start=1):
            key = f"B{index}"
            result = present.create_project(
                db, owner, workspace_id=None, key=key, name=f"Board bench {size:,} tasks"
            )
            project_id = str(result.body["project"]["id"])
            rng = random.Random(f"{key}-{size}")  # noqa: S311 - generated text, not a secret
            _insert_tasks(db, project_id, owner, size, rng, advance=advance)
            made.append(SeededProject(key, project_id, size))
    migrate.refresh_statistics(db)
    if db.dialect == "postgresql":
        # Autovacuum would vacuum and analyse the new rows within a minute (an insert-only
        # table qualifies since PostgreSQL 13): do it now, so every run measures the tables
        # as a server that has been up a while has them, with statistics and a visibility map
        # (without which every count visits the heap).
        with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.execute(text("VACUUM ANALYZE"))
    elif analyze:
        with db.engine.connect() as conn:
            conn.execute(text("ANALYZE"))
            conn.commit()
    return made


def _insert_tasks(
    db: Database, project_id: str, owner: Actor, count: int, rng: random.Random, *, advance: Advance
) -> None:
    with db.engine.connect() as conn:
        conn.execution_options(crewboard_write=True)  # SQLite: BEGIN IMMEDIATE, as writes do
        with conn.begin():
            for batch in _batches(project_id, owner, count, rng):
                conn.execute(insert(t.tasks), batch.tasks)
                conn.execute(insert(t.task_labels), batch.labels)
                conn.execute(insert(t.task_events), batch.events)
                if batch.links:
                    conn.execute(insert(t.task_links), batch.links)
                advance("tasks", len(batch.tasks))
            # The numbers given out, as create_task's counter would hold them: a task created
            # on the seeded board (the create step of bench/peers) takes the next number.
            conn.execute(
                insert(schema.project_sequences).values(
                    project_id=project_id, name=TASK_NUMBERS, value=count
                )
            )


@dataclass
class Batch:
    tasks: list[dict[str, Any]]
    labels: list[dict[str, Any]]
    events: list[dict[str, Any]]
    links: list[dict[str, Any]]


def _batches(project_id: str, owner: Actor, count: int, rng: random.Random) -> Iterator[Batch]:
    stamp = {**owner.as_payload(), "displayName": owner.display_name}
    start = datetime(2025, 1, 1, tzinfo=UTC)
    ids: list[str] = []
    batch = Batch([], [], [], [])
    for number in range(1, count + 1):
        created = start + timedelta(minutes=number * 500_000 // max(count, 1))
        row = _task_row(
            project_id=project_id,
            owner=owner,
            number=number,
            created=created,
            stamp=stamp,
            rng=rng,
        )
        if ids and rng.random() < 0.08:
            row["parent_task_id"] = rng.choice(ids)
        batch.tasks.append(row)
        batch.labels += [
            {"task_id": row["id"], "kind": kind, "value": value, "project_id": project_id}
            for kind, values in (("tag", row["tags"]), ("label", row["labels"]))
            for value in values
        ]
        batch.events.append(_created_event(row, stamp))
        if ids and rng.random() < 0.03:
            blocker = rng.choice(ids)
            low, high = sorted((row["id"], blocker))
            batch.links.append(
                {
                    "low_id": low,
                    "high_id": high,
                    "project_id": project_id,
                    "type": "blocks",
                    "blocker_id": blocker,
                    "created_at": created,
                }
            )
        ids.append(row["id"])
        if len(batch.tasks) == BATCH:
            yield batch
            batch = Batch([], [], [], [])
    if batch.tasks:
        yield batch


def _task_row(
    *,
    project_id: str,
    owner: Actor,
    number: int,
    created: datetime,
    stamp: dict[str, Any],
    rng: random.Random,
) -> dict[str, Any]:
    status = rng.choices(list(STATUSES), weights=list(STATUSES.values()))[0]
    tags = sorted(set(rng.choices(TAGS, weights=TAG_WEIGHTS, k=rng.randint(1, 3))))
    assigned = status == "in_progress" or rng.random() < 0.3
    updated = created + timedelta(hours=rng.randint(0, 24 * 30))
    return {
        "id": new_id("tsk"),
        "project_id": project_id,
        "number": number,
        "title": _title(rng),
        "description": _text(rng, rng.randint(2, 5)),
        "brief": _text(rng, 1) if rng.random() < 0.3 else "",
        "type": rng.choice(TYPES),
        "status": status,
        "priority": rng.choice(PRIORITIES),
        "assignee_id": owner.user_id if assigned else None,
        "assignee_type": "human" if assigned else None,
        "human_owner_id": None,
        "tags": tags,
        "labels": [rng.choice(LABELS)] if rng.random() < 0.2 else [],
        "due_date": date(2025, 1, 1) + timedelta(days=rng.randint(0, 500))
        if rng.random() < 0.4
        else None,
        "start_date": None,
        "story_points": rng.choice([1, 2, 3, 5, 8, None]),
        "cycle": f"2025-W{rng.randint(1, 52):02d}" if rng.random() < 0.6 else None,
        "parent_task_id": None,
        "context_refs": [],
        "context_item_ids": [],
        "external_reference_ids": [],
        "output_destination": None,
        "board_order": number * 1024.0,
        "revision": 1,
        "coverage": "complete",
        "created_by": stamp,
        "updated_by": stamp,
        "created_at": created,
        "updated_at": updated,
    }


def _title(rng: random.Random) -> str:
    return f"{rng.choice(VERBS)} {rng.choice(ADJECTIVES)} {rng.choice(NOUNS)} {rng.choice(NOUNS)}"


def _text(rng: random.Random, sentences: int) -> str:
    return " ".join(
        rng.choice(SENTENCES).format(
            a=rng.choice(ADJECTIVES),
            n1=rng.choice(NOUNS),
            n2=rng.choice(NOUNS),
            n3=rng.choice(NOUNS),
        )
        for _ in range(sentences)
    )


def _created_event(row: dict[str, Any], stamp: dict[str, Any]) -> dict[str, Any]:
    return {
        "project_id": row["project_id"],
        "task_id": row["id"],
        "type": "status_changed",
        "occurred_at": row["created_at"],
        "actor": stamp,
        "data": {"from": None, "to": row["status"]},
        "status": row["status"],
        "agent_assignee_id": None,
        "human_assignee_id": row["assignee_id"],
    }
