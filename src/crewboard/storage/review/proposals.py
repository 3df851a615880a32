"""SQL for the inbox's cards and threads: proposals agents make and messages to participants,
and the one task deletion a person's accept of a card performs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Connection, delete, func, select, update

from crewboard.domain.review import InboxMessage, Proposal, ProposalKind, ProposalStatus
from crewboard.storage.board import tables as board_tables
from crewboard.storage.review import tables as t
from crewboard.storage.rows import record_from_row


def _proposal(row: Any) -> Proposal:
    return record_from_row(
        Proposal, row, kind=ProposalKind(row.kind), status=ProposalStatus(row.status)
    )


def _message(row: Any) -> InboxMessage:
    return record_from_row(InboxMessage, row)


class ProposalRepository:
    """Proposal cards: written pending, decided once."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def add(self, proposal: Proposal) -> None:
        self.conn.execute(
            t.proposals.insert().values(
                **asdict(proposal) | {"kind": proposal.kind.value, "status": proposal.status.value}
            )
        )

    def get(self, proposal_id: str) -> Proposal | None:
        row = self.conn.execute(select(t.proposals).where(t.proposals.c.id == proposal_id)).first()
        return _proposal(row) if row else None

    def page(
        self, project_ids: Sequence[str], *, status: str | None, limit: int, offset: int
    ) -> tuple[list[Proposal], int]:
        """The projects' proposals (of one status, or all), newest first, and how many there are."""
        if not project_ids:
            return [], 0
        c = t.proposals.c
        conditions: list[ColumnElement[bool]] = [c.project_id.in_(list(project_ids))]
        if status is not None:
            conditions.append(c.status == status)
        total = self.conn.execute(
            select(func.count()).select_from(t.proposals).where(*conditions)
        ).scalar_one()
        rows = self.conn.execute(
            select(t.proposals)
            .where(*conditions)
            .order_by(c.created_at.desc(), c.id.desc())
            .limit(limit)
            .offset(offset)
        )
        return [_proposal(row) for row in rows], int(total)

    def claim_decision(
        self, proposal_id: str, *, status: str, decided_by: dict[str, Any], at: datetime
    ) -> bool:
        """Mark a pending proposal decided; False when it was no longer pending.

        The row lock this takes makes a second decider wait, then find it decided.
        """
        c = t.proposals.c
        result = self.conn.execute(
            update(t.proposals)
            .where(c.id == proposal_id, c.status == "pending")
            .values(status=status, decided_by=decided_by, decided_at=at)
        )
        return result.rowcount == 1

    def set_result(self, proposal_id: str, result: dict[str, Any]) -> None:
        self.conn.execute(
            update(t.proposals).where(t.proposals.c.id == proposal_id).values(result=result)
        )

    # --- the task deletion an accepted card performs ----------------------------------------

    def child_task_ids(self, task_id: str) -> list[str]:
        rows = self.conn.execute(
            select(board_tables.tasks.c.id)
            .where(board_tables.tasks.c.parent_task_id == task_id)
            .order_by(board_tables.tasks.c.id)
        )
        return [row.id for row in rows]

    def delete_task(self, task_id: str) -> bool:
        """Delete a task row; rows that hang off it go with it or lose the reference (FKs)."""
        return (
            self.conn.execute(
                delete(board_tables.tasks).where(board_tables.tasks.c.id == task_id)
            ).rowcount
            == 1
        )


class MessageRepository:
    """Inbox threads: one per participant of a project."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def add(self, message: InboxMessage) -> None:
        self.conn.execute(t.inbox_messages.insert().values(**asdict(message)))

    def latest_time(self, project_id: str, participant_id: str) -> datetime | None:
        c = t.inbox_messages.c
        value: datetime | None = self.conn.execute(
            select(func.max(c.created_at)).where(
                c.project_id == project_id, c.participant_id == participant_id
            )
        ).scalar_one()
        return value

    def thread(
        self, project_id: str, participant_id: str, *, limit: int, offset: int
    ) -> tuple[list[InboxMessage], int]:
        """A participant's thread, newest first, and its length."""
        c = t.inbox_messages.c
        where = (c.project_id == project_id, c.participant_id == participant_id)
        total = self.conn.execute(
            select(func.count()).select_from(t.inbox_messages).where(*where)
        ).scalar_one()
        rows = self.conn.execute(
            select(t.inbox_messages)
            .where(*where)
            .order_by(c.created_at.desc(), c.id.desc())
            .limit(limit)
            .offset(offset)
        )
        return [_message(row) for row in rows], int(total)

    def get(self, message_id: str) -> InboxMessage | None:
        row = self.conn.execute(
            select(t.inbox_messages).where(t.inbox_messages.c.id == message_id)
        ).first()
        return _message(row) if row else None

    def dismiss(self, message_id: str, at: datetime, by: dict[str, Any]) -> bool:
        """Mark a message dismissed, once; False when it already was."""
        c = t.inbox_messages.c
        result = self.conn.execute(
            update(t.inbox_messages)
            .where(c.id == message_id, c.dismissed_at.is_(None))
            .values(dismissed_at=at, dismissed_by=by)
        )
        return result.rowcount == 1

    def recent(self, project_ids: Sequence[str], *, limit: int) -> list[InboxMessage]:
        """The newest messages of these projects not yet dismissed, every thread together."""
        if not project_ids:
            return []
        c = t.inbox_messages.c
        rows = self.conn.execute(
            select(t.inbox_messages)
            .where(c.project_id.in_(list(project_ids)), c.dismissed_at.is_(None))
            .order_by(c.created_at.desc(), c.id.desc())
            .limit(limit)
        )
        return [_message(row) for row in rows]
