"""Team roles: the seats people and agents hold in a project."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Row, bindparam, select

from crewboard.domain.projects import Effort, SeatKind, TeamRole
from crewboard.storage.projects import tables as t
from crewboard.storage.rows import record_from_row, record_values

# Built once, values passed as parameters: building one costs more than running it on SQLite.
_ROLE = select(t.team_roles).where(
    t.team_roles.c.project_id == bindparam("project_id"), t.team_roles.c.id == bindparam("role_id")
)


def _team_role(row: Row[Any]) -> TeamRole:
    return record_from_row(
        TeamRole, row, kind=SeatKind(row.kind), effort=Effort(row.effort) if row.effort else None
    )


class TeamRepository:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def add(self, role: TeamRole) -> None:
        self.conn.execute(
            t.team_roles.insert().values(
                **record_values(
                    role,
                    t.team_roles,
                    kind=role.kind.value,
                    effort=role.effort.value if role.effort else None,
                )
            )
        )

    def list_many(self, project_ids: Sequence[str]) -> list[TeamRole]:
        """The active roles of several projects, in one query (in each project's order)."""
        if not project_ids:
            return []
        c = t.team_roles.c
        query = (
            select(t.team_roles)
            .where(c.project_id.in_(list(project_ids)), c.archived_at.is_(None))
            .order_by(c.project_id, c.rank, c.name, c.id)
        )
        return [_team_role(row) for row in self.conn.execute(query)]

    def list(self, project_id: str, *, include_archived: bool = False) -> list[TeamRole]:
        query = (
            select(t.team_roles)
            .where(t.team_roles.c.project_id == project_id)
            .order_by(t.team_roles.c.rank, t.team_roles.c.name, t.team_roles.c.id)
        )
        if not include_archived:
            query = query.where(t.team_roles.c.archived_at.is_(None))
        return [_team_role(row) for row in self.conn.execute(query)]

    def get(self, project_id: str, role_id: str) -> TeamRole | None:
        row = self.conn.execute(_ROLE, {"project_id": project_id, "role_id": role_id}).first()
        return _team_role(row) if row else None

    def set_archived(self, role_id: str, at: datetime | None) -> None:
        self.conn.execute(
            t.team_roles.update().where(t.team_roles.c.id == role_id).values(archived_at=at)
        )
