"""The backup workload: `python -m bench.backup [--database postgresql] [--size-mb 1024]
[--content tasks|attachments]`.

How long `crewboard backup` and `crewboard restore` take on a database of about 1 GB
(`--size-mb`), on SQLite or on a throw-away PostgreSQL database. The database is seeded in
this process, bulk-inserted through SQLAlchemy Core: a board of 20,000 tasks
(`bench/seed.py`), then, up to the size asked, either projects of 5,000 tasks with 8 KiB
descriptions (`tasks`, the default: the text indexes grow with them) or attachments' bytes in
the database's blob store (`attachments`, 4 MiB each). The text is word text (4 KiB blocks
drawn from a pool of generated sentences), so it compresses as real documents do, not as
random bytes or repeated ones.

Then, timed: the backup into a folder (the engine `crewboard backup` runs, `storage/backup.py`,
with its sha256s and, on SQLite, the integrity check of the copy) and the restore of that set
into a fresh empty database (checksums, the copy or `pg_restore`, the migrations' check). The
result goes to stdout and to bench/results/<UTC time>-backup-<database>.json.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import insert, text  # noqa: TID251 - the benchmark seeds tables directly

from bench.process import RESULTS, throwaway_postgres
from bench.runner import add_database_options, progress
from bench.seed import ADJECTIVES, NOUNS, SENTENCES, _batches, seed_board
from crewboard.contract.projects import present
from crewboard.domain.identity.passwords import hash_password
from crewboard.domain.identity.records import Actor
from crewboard.services.identity.users import do_create_user, person_actor
from crewboard.storage import backup, migrate, restore, schema
from crewboard.storage.blob_tables import blob_chunks, blobs
from crewboard.storage.blobs import CHUNK
from crewboard.storage.board import tables as t
from crewboard.storage.database import Database
from crewboard.storage.sequences import TASK_NUMBERS

TASKS = 20_000
PROJECT_TASKS = 5_000  # tasks of each project that fills the database (`--content tasks`)
BLOB_CHUNKS = 16  # 4 MiB attachments
POOL_BLOCKS = 4096  # distinct 4 KiB text blocks the attachments are drawn from
BLOCK = 4096


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.backup", description=__doc__)
    add_database_options(parser)
    parser.add_argument("--size-mb", type=int, default=1024, help="database size to seed")
    parser.add_argument(
        "--content",
        choices=("tasks", "attachments"),
        default="tasks",
        help="what fills the database: task descriptions (default) or attachments' bytes",
    )
    parser.add_argument("--output", type=Path, default=None, help="JSON results file")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="crewboard-bench-backup-") as folder:
        work = Path(folder)
        with _databases(args, work) as (source_url, target_url):
            results = run(source_url, target_url, work, args.size_mb, args.content)
    results["database"] = args.database
    results["content"] = args.content
    print(_table(results))
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    output = args.output or RESULTS / f"{stamp}-backup-{args.content}-{args.database}.json"
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"\nJSON results: {output}")


@contextmanager
def _databases(args: argparse.Namespace, work: Path) -> Iterator[tuple[str, str]]:
    if args.database == "sqlite":
        yield f"sqlite:///{work / 'live.db'}", f"sqlite:///{work / 'restored.db'}"
        return
    with (
        throwaway_postgres(args.postgres_url) as source,
        throwaway_postgres(args.postgres_url) as target,
    ):
        yield source, target


def run(source_url: str, target_url: str, work: Path, size_mb: int, content: str) -> dict[str, Any]:
    db = Database(source_url)
    try:
        started = time.monotonic()
        _seed(db, size_mb * 1024 * 1024, content)
        seeded = time.monotonic() - started
        size = _size(db)
        progress(f"seeded {size / 2**20:,.0f} MiB in {seeded:.0f} s; backing up")
        started = time.monotonic()
        made = backup.take_backup(db, work / "sets")
        backup_s = time.monotonic() - started
    finally:
        db.dispose()
    set_bytes = sum(f["size"] for f in made.manifest["files"])
    progress(f"backup: {backup_s:.1f} s, {set_bytes / 2**20:,.0f} MiB; restoring")
    target = Database(target_url)
    try:
        started = time.monotonic()
        restore.restore_backup(target, made.path)
        restore_s = time.monotonic() - started
        restored_size = _size(target)
    finally:
        target.dispose()
    shutil.rmtree(made.path)
    return {
        "database_bytes": size,
        "seed_seconds": round(seeded, 1),
        "backup_seconds": round(backup_s, 2),
        "set_bytes": set_bytes,
        "restore_seconds": round(restore_s, 2),
        "restored_database_bytes": restored_size,
        "backup_mib_per_second": round(size / 2**20 / backup_s, 1),
        "restore_mib_per_second": round(size / 2**20 / restore_s, 1),
    }


def _seed(db: Database, size: int, content: str) -> None:
    migrate.upgrade(db)
    owner = db.write(
        lambda uow: do_create_user(
            uow,
            email="owner@example.com",
            display_name="Owner",
            password_hash=hash_password("bench password"),
            is_owner=True,
        )
    )
    actor = person_actor(owner)
    seed_board(db, actor, [TASKS])
    rng = random.Random("backup-bench")  # noqa: S311 - text, not secrets
    pool = [_block(rng) for _ in range(POOL_BLOCKS)]
    number = 0
    while _size(db) < size:
        number += 1
        if content == "tasks":
            _insert_project(db, actor, number, pool, rng)
            continue
        with db.engine.connect() as conn:
            conn.execution_options(crewboard_write=True)
            with conn.begin():
                for n in range(16):  # 64 MiB a transaction
                    _insert_attachment(conn, number * 16 + n, pool, rng)


def _insert_project(
    db: Database, owner: Actor, number: int, pool: list[bytes], rng: random.Random
) -> None:
    """A project of PROJECT_TASKS tasks with long descriptions, as bench/seed.py fills one."""
    made = present.create_project(
        db, owner, workspace_id=None, key=f"T{number}", name=f"Backup bench {number}"
    )
    project_id = str(made.body["project"]["id"])
    with db.engine.connect() as conn:
        conn.execution_options(crewboard_write=True)
        with conn.begin():
            for batch in _batches(project_id, owner, PROJECT_TASKS, rng):
                for row in batch.tasks:
                    row["description"] = b"".join(rng.choice(pool) for _ in range(2)).decode()
                conn.execute(insert(t.tasks), batch.tasks)
                conn.execute(insert(t.task_labels), batch.labels)
                conn.execute(insert(t.task_events), batch.events)
                if batch.links:
                    conn.execute(insert(t.task_links), batch.links)
            conn.execute(
                insert(schema.project_sequences).values(
                    project_id=project_id, name=TASK_NUMBERS, value=PROJECT_TASKS
                )
            )


def _block(rng: random.Random) -> bytes:
    words: list[str] = []
    while sum(len(w) + 1 for w in words) < BLOCK:
        words.append(
            rng.choice(SENTENCES).format(
                a=rng.choice(ADJECTIVES),
                n1=rng.choice(NOUNS),
                n2=rng.choice(NOUNS),
                n3=rng.choice(NOUNS),
            )
        )
    return " ".join(words).encode()[:BLOCK]


def _insert_attachment(conn: Any, number: int, pool: list[bytes], rng: random.Random) -> None:
    chunks = [
        f"attachment {number} part {seq}\n".encode()
        + b"".join(rng.choice(pool) for _ in range(CHUNK // BLOCK))
        for seq in range(BLOB_CHUNKS)
    ]
    digest = hashlib.sha256(b"".join(chunks)).hexdigest()
    conn.execute(
        insert(blobs).values(
            digest=digest,
            size=sum(len(c) for c in chunks),
            chunk_size=len(chunks[0]),
            created_at=datetime.now(UTC),
        )
    )
    conn.execute(
        insert(blob_chunks),
        [{"digest": digest, "seq": seq, "data": data} for seq, data in enumerate(chunks)],
    )


def _size(db: Database) -> int:
    with db.engine.connect() as conn:
        if db.dialect == "sqlite":
            conn.execute(text("PRAGMA wal_checkpoint(TRUNCATE)"))
            pages = conn.execute(text("PRAGMA page_count")).scalar_one()
            page_size = conn.execute(text("PRAGMA page_size")).scalar_one()
            return int(pages) * int(page_size)
        return int(conn.execute(text("SELECT pg_database_size(current_database())")).scalar_one())


def _table(results: dict[str, Any]) -> str:
    rows = [
        ("database", results["database"]),
        ("database size", f"{results['database_bytes'] / 2**20:,.0f} MiB"),
        ("backup", f"{results['backup_seconds']:.1f} s ({results['backup_mib_per_second']} MiB/s)"),
        ("backup set size", f"{results['set_bytes'] / 2**20:,.0f} MiB"),
        (
            "restore",
            f"{results['restore_seconds']:.1f} s ({results['restore_mib_per_second']} MiB/s)",
        ),
        ("restored size", f"{results['restored_database_bytes'] / 2**20:,.0f} MiB"),
    ]
    return "\n".join(f"{name:<18} {value}" for name, value in rows)


if __name__ == "__main__":
    main()
