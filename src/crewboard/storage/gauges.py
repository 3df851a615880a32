"""The few counts `/metrics` reads at scrape time, in one statement: cheap on an index each,
and the event count stops at a cap, so a scrape costs the same however far behind a node is."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, ScalarSelect, func, literal, select

from crewboard.domain.notifications import MailStatus
from crewboard.domain.sessions import TurnStatus
from crewboard.storage.notifications.tables import email_outbox
from crewboard.storage.schema import events
from crewboard.storage.sessions.tables import spec_session_turns

EVENTS_COUNTED = 10_000  # the events-behind count stops here (it is a gauge, not an audit)


def backlog_counts(conn: Connection, after_event: int | None) -> dict[str, int]:
    """Spec session turns queued and running, emails waiting in the outbox, and (when
    `after_event` is given) events in the log after it, up to EVENTS_COUNTED."""
    turns = spec_session_turns.c
    outbox = email_outbox.c

    def count_turns(status: TurnStatus) -> ScalarSelect[Any]:
        return (
            select(func.count())
            .select_from(spec_session_turns)
            .where(turns.status == status.value)
            .scalar_subquery()
        )

    pending = (
        select(func.count())
        .select_from(email_outbox)
        .where(outbox.status == MailStatus.PENDING.value)
        .scalar_subquery()
    )
    columns = [
        count_turns(TurnStatus.QUEUED).label("turns_queued"),
        count_turns(TurnStatus.RUNNING).label("turns_running"),
        pending.label("emails_pending"),
    ]
    if after_event is not None:
        newer = select(literal(1)).where(events.c.id > after_event).limit(EVENTS_COUNTED)
        behind = select(func.count()).select_from(newer.subquery()).scalar_subquery()
        columns.append(behind.label("events_behind"))
    row = conn.execute(select(*columns)).mappings().one()
    return {name: int(value) for name, value in row.items()}
