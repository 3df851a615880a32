"""Workspaces and their members."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import Connection, select

from crewboard.domain.identity.records import User
from crewboard.domain.projects import Workspace, WorkspaceRole
from crewboard.storage.identity import tables as identity_tables
from crewboard.storage.identity.users import user_from_row
from crewboard.storage.projects import tables as t
from crewboard.storage.rows import record_from_row


class WorkspaceRepository:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def add(self, workspace: Workspace, created_by: str) -> None:
        self.conn.execute(
            t.workspaces.insert().values(
                id=workspace.id,
                name=workspace.name,
                created_by=created_by,
                created_at=workspace.created_at,
            )
        )

    def get(self, workspace_id: str) -> Workspace | None:
        row = self.conn.execute(
            select(t.workspaces).where(t.workspaces.c.id == workspace_id)
        ).first()
        return record_from_row(Workspace, row) if row else None

    def set_member(
        self, workspace_id: str, user_id: str, role: WorkspaceRole, at: datetime
    ) -> None:
        existing = self.member_role(workspace_id, user_id)
        if existing is None:
            self.conn.execute(
                t.workspace_members.insert().values(
                    workspace_id=workspace_id, user_id=user_id, role=role.value, created_at=at
                )
            )
        elif existing is not role:
            self.conn.execute(
                t.workspace_members.update()
                .where(
                    t.workspace_members.c.workspace_id == workspace_id,
                    t.workspace_members.c.user_id == user_id,
                )
                .values(role=role.value)
            )

    def member_role(self, workspace_id: str, user_id: str) -> WorkspaceRole | None:
        role = self.conn.execute(
            select(t.workspace_members.c.role).where(
                t.workspace_members.c.workspace_id == workspace_id,
                t.workspace_members.c.user_id == user_id,
            )
        ).scalar_one_or_none()
        return WorkspaceRole(role) if role else None

    def members(self, workspace_ids: Sequence[str]) -> dict[str, list[tuple[User, WorkspaceRole]]]:
        """Each workspace's members with their role, by display name."""
        found: dict[str, list[tuple[User, WorkspaceRole]]] = {w: [] for w in workspace_ids}
        rows = self.conn.execute(
            select(
                identity_tables.users,
                t.workspace_members.c.workspace_id,
                t.workspace_members.c.role,
            )
            .join(t.workspace_members, t.workspace_members.c.user_id == identity_tables.users.c.id)
            .where(t.workspace_members.c.workspace_id.in_(list(workspace_ids)))
            .order_by(identity_tables.users.c.display_name, identity_tables.users.c.id)
        )
        for row in rows:
            found[row.workspace_id].append((user_from_row(row), WorkspaceRole(row.role)))
        return found

    def list_for_user(self, user_id: str) -> list[tuple[Workspace, WorkspaceRole]]:
        rows = self.conn.execute(
            select(t.workspaces, t.workspace_members.c.role)
            .join(t.workspace_members, t.workspace_members.c.workspace_id == t.workspaces.c.id)
            .where(t.workspace_members.c.user_id == user_id)
            .order_by(t.workspaces.c.name, t.workspaces.c.id)
        )
        return [(record_from_row(Workspace, r), WorkspaceRole(r.role)) for r in rows]
