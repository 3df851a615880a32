"""Saved board views: a person's named filters, sort and grouping of a project's board."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Connection, Row, delete, func, insert, select, update

from crewboard.domain.board.saved_views import SavedView
from crewboard.storage.board.view_tables import board_views

_v = board_views.c


def _view(row: Row[object]) -> SavedView:
    return SavedView(
        id=row.id,
        project_id=row.project_id,
        user_id=row.user_id,
        name=row.name,
        query=row.query,
        updated_at=row.updated_at,
    )


class SavedViewRepository:
    """A person's saved views of one project's board."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def list(self, project_id: str, user_id: str) -> list[SavedView]:
        """The person's views of the project, by name."""
        rows = self.conn.execute(
            select(board_views)
            .where(_v.project_id == project_id, _v.user_id == user_id)
            .order_by(func.lower(_v.name), _v.id)
        )
        return [_view(row) for row in rows]

    def count(self, project_id: str, user_id: str) -> int:
        return int(
            self.conn.execute(
                select(func.count()).where(_v.project_id == project_id, _v.user_id == user_id)
            ).scalar_one()
        )

    def by_name(self, project_id: str, user_id: str, name: str) -> SavedView | None:
        row = self.conn.execute(
            select(board_views).where(
                _v.project_id == project_id, _v.user_id == user_id, _v.name == name
            )
        ).first()
        return None if row is None else _view(row)

    def add(self, view: SavedView) -> None:
        self.conn.execute(
            insert(board_views).values(
                id=view.id,
                project_id=view.project_id,
                user_id=view.user_id,
                name=view.name,
                query=view.query,
                updated_at=view.updated_at,
            )
        )

    def replace_query(self, view_id: str, query: str, at: datetime) -> None:
        self.conn.execute(
            update(board_views).where(_v.id == view_id).values(query=query, updated_at=at)
        )

    def delete(self, project_id: str, user_id: str, view_id: str) -> bool:
        """Delete one of the person's views; False when it is not theirs or gone."""
        done = self.conn.execute(
            delete(board_views).where(
                _v.id == view_id, _v.project_id == project_id, _v.user_id == user_id
            )
        )
        return bool(done.rowcount)
