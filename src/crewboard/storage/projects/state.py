"""The state page: its current text and its versions."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Integer, Row, bindparam, func, select

from crewboard.domain.projects import StatePage, StateVersion
from crewboard.domain.validation import INT32_MAX
from crewboard.storage.projects import tables as t
from crewboard.storage.rows import record_from_row

# Built once: constructing a statement costs about as much as running it on SQLite.
_STATE_BY_PROJECT = select(t.project_state).where(
    t.project_state.c.project_id == bindparam("project_id")
)
_STATE_REVISION = select(t.project_state.c.revision).where(
    t.project_state.c.project_id == bindparam("project_id")
)
_VERSIONS = t.project_state_versions
_COUNT_VERSIONS = (
    select(func.count())
    .select_from(_VERSIONS)
    .where(_VERSIONS.c.project_id == bindparam("project_id"))
)
_VERSIONS_PAGE = (
    select(_VERSIONS)
    .where(_VERSIONS.c.project_id == bindparam("project_id"))
    .order_by(_VERSIONS.c.revision.desc())
    .limit(bindparam("limit", type_=Integer))
    .offset(bindparam("offset", type_=Integer))
)
_VERSION = select(_VERSIONS).where(
    _VERSIONS.c.project_id == bindparam("project_id"),
    _VERSIONS.c.revision == bindparam("revision"),
)


class StateRepository:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def get(self, project_id: str) -> StatePage:
        row = self.conn.execute(_STATE_BY_PROJECT, {"project_id": project_id}).first()
        if row is None:
            return StatePage(project_id, "", 0, None, None)
        return StatePage(project_id, row.content, row.revision, row.updated_by, row.updated_at)

    def save(
        self,
        project_id: str,
        *,
        content: str,
        expected_revision: int,
        author: dict[str, Any],
        at: datetime,
        restored_from: int | None = None,
    ) -> int | None:
        """Save a new revision if the page is still at `expected_revision`; None if it is not.

        The compare-and-set is one statement, so two writers at the same revision cannot both win.
        """
        if expected_revision >= INT32_MAX:
            return None  # no page is there, and the revision after it would not fit the column
        revision = expected_revision + 1
        values = {"content": content, "revision": revision, "updated_by": author, "updated_at": at}
        if expected_revision == 0:
            exists = self.conn.execute(_STATE_REVISION, {"project_id": project_id}).first()
            if exists is not None:
                return None
            self.conn.execute(t.project_state.insert().values(project_id=project_id, **values))
        else:
            changed = self.conn.execute(
                t.project_state.update()
                .where(
                    t.project_state.c.project_id == project_id,
                    t.project_state.c.revision == expected_revision,
                )
                .values(**values)
            )
            if changed.rowcount != 1:
                return None
        self.conn.execute(
            t.project_state_versions.insert().values(
                project_id=project_id,
                revision=revision,
                content=content,
                author=author,
                restored_from=restored_from,
                created_at=at,
            )
        )
        return revision

    def versions(
        self, project_id: str, *, limit: int, offset: int
    ) -> tuple[list[StateVersion], int]:
        total = self.conn.execute(_COUNT_VERSIONS, {"project_id": project_id}).scalar_one()
        rows = self.conn.execute(
            _VERSIONS_PAGE, {"project_id": project_id, "limit": limit, "offset": offset}
        )
        return [_state_version(row) for row in rows], int(total)

    def version(self, project_id: str, revision: int) -> StateVersion | None:
        row = self.conn.execute(_VERSION, {"project_id": project_id, "revision": revision}).first()
        return _state_version(row) if row else None


def _state_version(row: Row[Any]) -> StateVersion:
    return record_from_row(StateVersion, row)
