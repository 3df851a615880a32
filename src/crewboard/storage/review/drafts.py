"""SQL for hand-ins and their review: drafts, acceptance rules, and the xp a team role earns."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Row, func, select

from crewboard.domain.board.tasks import TaskStatus
from crewboard.domain.review import (
    WAITING,
    AcceptanceRule,
    Draft,
    DraftStatus,
    RuleMatch,
    level_for,
)
from crewboard.storage.projects import tables as projects_tables
from crewboard.storage.review import tables as t
from crewboard.storage.rows import record_from_row

_LIST_COLUMNS = [c for c in t.drafts.c if c.name != "content"]


def _draft(row: Row[Any]) -> Draft:
    before = row.task_status_before
    return record_from_row(
        Draft,
        row,
        content=row._mapping.get("content"),  # lists leave it out
        references=list(row.references or []),
        status=DraftStatus(row.status),
        task_status_before=TaskStatus(before) if before is not None else None,
    )


def _stored_states(draft: Draft) -> dict[str, str | None]:
    """The draft's states as the text columns hold them."""
    before = draft.task_status_before
    return {"status": draft.status.value, "task_status_before": before.value if before else None}


def _rule(row: Row[Any]) -> AcceptanceRule:
    return record_from_row(AcceptanceRule, row, match=RuleMatch(row.match))


class DraftRepository:
    """Drafts (every hand-in kept), acceptance rules, and team role xp."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def waiting_of(self, task_ids: Iterable[str]) -> set[str]:
        """Which of these tasks have a hand-in waiting for a person (one read)."""
        ids = list(set(task_ids))
        if not ids:
            return set()
        d = t.drafts.c
        waiting = [status.value for status in WAITING]
        rows = self.conn.execute(
            select(d.task_id).where(d.task_id.in_(ids), d.status.in_(waiting)).distinct()
        )
        return {row[0] for row in rows}

    # --- drafts ---------------------------------------------------------------------------

    def add(self, draft: Draft) -> None:
        self.conn.execute(t.drafts.insert().values(**asdict(draft) | _stored_states(draft)))

    def get(self, draft_id: str) -> Draft | None:
        row = self.conn.execute(select(t.drafts).where(t.drafts.c.id == draft_id)).first()
        return _draft(row) if row else None

    def update(self, draft_id: str, at: datetime, **values: Any) -> None:
        self.conn.execute(
            t.drafts.update().where(t.drafts.c.id == draft_id).values(**values, updated_at=at)
        )

    def root_for(self, task_id: str) -> str:
        """The task a chain of revisions started from: a follow-up task inherits its draft's root."""
        c = t.drafts.c
        root: str | None = self.conn.execute(
            select(c.root_task_id).where(c.follow_up_task_id == task_id).limit(1)
        ).scalar_one_or_none()
        return root or task_id

    def chain(self, root_task_id: str) -> list[Draft]:
        """Every draft of a chain, oldest first, without content."""
        c = t.drafts.c
        rows = self.conn.execute(
            select(*_LIST_COLUMNS)
            .where(c.root_task_id == root_task_id)
            .order_by(c.created_at, c.id)
        )
        return [_draft(row) for row in rows]

    def chains(self, root_task_ids: Iterable[str]) -> dict[str, list[Draft]]:
        """Every draft of these chains, oldest first, without content, by root task."""
        roots = sorted(set(root_task_ids))
        found: dict[str, list[Draft]] = {root: [] for root in roots}
        if not roots:
            return found
        c = t.drafts.c
        rows = self.conn.execute(
            select(*_LIST_COLUMNS).where(c.root_task_id.in_(roots)).order_by(c.created_at, c.id)
        )
        for row in rows:
            found[row.root_task_id].append(_draft(row))
        return found

    def page(
        self,
        project_ids: Iterable[str],
        *,
        statuses: Iterable[str] | None,
        limit: int,
        offset: int,
    ) -> tuple[list[Draft], int]:
        """Drafts of these projects, newest first, without content, and how many there are."""
        c = t.drafts.c
        conditions = [c.project_id.in_(list(project_ids))]
        if statuses is not None:
            conditions.append(c.status.in_(list(statuses)))
        total = self.conn.execute(
            select(func.count()).select_from(t.drafts).where(*conditions)
        ).scalar_one()
        rows = self.conn.execute(
            select(*_LIST_COLUMNS)
            .where(*conditions)
            .order_by(c.created_at.desc(), c.id.desc())
            .limit(limit)
            .offset(offset)
        )
        return [_draft(row) for row in rows], int(total)

    # --- acceptance rules -------------------------------------------------------------------

    def add_rule(self, rule: AcceptanceRule) -> None:
        self.conn.execute(
            t.acceptance_rules.insert().values(**asdict(rule) | {"match": rule.match.value})
        )

    def rules(self, project_id: str) -> list[AcceptanceRule]:
        c = t.acceptance_rules.c
        rows = self.conn.execute(
            select(t.acceptance_rules)
            .where(c.project_id == project_id)
            .order_by(c.created_at, c.id)
        )
        return [_rule(row) for row in rows]

    def get_rule(self, rule_id: str) -> AcceptanceRule | None:
        row = self.conn.execute(
            select(t.acceptance_rules).where(t.acceptance_rules.c.id == rule_id)
        ).first()
        return _rule(row) if row else None

    def remove_rule(self, rule_id: str) -> None:
        self.conn.execute(t.acceptance_rules.delete().where(t.acceptance_rules.c.id == rule_id))

    # --- team role xp -----------------------------------------------------------------------

    def add_xp(self, project_id: str, role_id: str, delta: int) -> tuple[int, int] | None:
        """Give (or, negative, take back) xp; the new xp and level, or None for no such role."""
        c = projects_tables.team_roles.c
        where = (c.project_id == project_id) & (c.id == role_id)
        xp: int | None = self.conn.execute(select(c.xp).where(where)).scalar_one_or_none()
        if xp is None:
            return None
        new_xp = max(xp + delta, 0)
        level = level_for(new_xp)
        self.conn.execute(
            projects_tables.team_roles.update().where(where).values(xp=new_xp, level=level)
        )
        return new_xp, level
