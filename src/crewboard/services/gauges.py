"""What `/metrics` counts in the database at scrape time (see storage/gauges.py)."""

from __future__ import annotations

from crewboard.storage.database import Database
from crewboard.storage.gauges import backlog_counts


def read_backlog(db: Database, after_event: int | None) -> dict[str, int]:
    """Turns queued and running, emails pending, and events after `after_event` (if given)."""
    return db.read(lambda uow: backlog_counts(uow.conn, after_event))
