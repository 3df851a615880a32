"""Projects with the reader's role, members, archive and delete."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import Connection, Row, and_, bindparam, func, or_, select, type_coerce
from sqlalchemy.sql.elements import ColumnElement

from crewboard.domain.identity.access import Role
from crewboard.domain.identity.records import User
from crewboard.domain.projects import (
    HandoffSettings,
    Project,
    ProjectPage,
    ProjectStatus,
    ProjectType,
)
from crewboard.storage.identity import tables as identity_tables
from crewboard.storage.identity.users import user_from_row
from crewboard.storage.projects import tables as t
from crewboard.storage.rows import record_from_row, record_values
from crewboard.storage.schema import events
from crewboard.storage.types import UTCDateTime

# A project's newest event: the (project_id, id) index read backwards, one entry. Every change
# records an event in its transaction (task changes too), so this is when it last changed.
_NEWEST_EVENT_AT = (
    select(events.c.created_at)
    .where(events.c.project_id == t.projects.c.id)
    .order_by(events.c.id.desc())
    .limit(1)
    .scalar_subquery()
)


# Built once: constructing a statement costs about as much as running it on SQLite.
def _project_with_role(match: Any) -> Any:
    return (
        select(t.projects, t.project_members.c.role.label("member_role"))
        .outerjoin(
            t.project_members,
            and_(
                t.project_members.c.project_id == t.projects.c.id,
                t.project_members.c.user_id == bindparam("user_id"),
            ),
        )
        .where(match)
    )


_PROJECT_WITH_ROLE_BY_ID = _project_with_role(t.projects.c.id == bindparam("ref"))


_PROJECT_WITH_ROLE_BY_KEY = _project_with_role(t.projects.c.key == bindparam("ref"))
_HANDOFFS = select(t.project_handoffs).where(
    t.project_handoffs.c.project_id == bindparam("project_id")
)
_PROJECT_BY_ID = select(t.projects).where(t.projects.c.id == bindparam("project_id"))
_PROJECT_BY_KEY = select(t.projects).where(t.projects.c.key == bindparam("key"))
_PROJECT_ID_BY_KEY = select(t.projects.c.id).where(t.projects.c.key == bindparam("key"))
_MEMBER_ROLE = select(t.project_members.c.role).where(
    t.project_members.c.project_id == bindparam("project_id"),
    t.project_members.c.user_id == bindparam("user_id"),
)
_MEMBERS = (
    select(identity_tables.users, t.project_members.c.role.label("member_role"))
    .join(t.project_members, t.project_members.c.user_id == identity_tables.users.c.id)
    .where(t.project_members.c.project_id == bindparam("project_id"))
    .order_by(identity_tables.users.c.display_name, identity_tables.users.c.id)
)


def _project(row: Row[Any]) -> Project:
    return record_from_row(
        Project,
        row,
        status=ProjectStatus(row.status),
        type=ProjectType(row.type),
        collections=tuple(row.collections),
    )


def project_with_role(by_id: bool, *probes: Any) -> Any:
    """The statement `get_with_role` runs, with more columns (EXISTS probes correlated to the
    project) for a caller that asks its questions in the same round trip; build it once."""
    base = _PROJECT_WITH_ROLE_BY_ID if by_id else _PROJECT_WITH_ROLE_BY_KEY
    return base.add_columns(*probes) if probes else base


def project_ref_params(ref: str, user_id: str) -> dict[str, str]:
    """The parameters of `project_with_role`: a ref is an id (prj_…) or a key (any case)."""
    return {"ref": ref if ref.startswith("prj_") else ref.upper(), "user_id": user_id}


def project_and_role(row: Row[Any]) -> tuple[Project, Role | None]:
    return _project(row), Role(row.member_role) if row.member_role else None


class ProjectRepository:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def add(self, project: Project, owner_user_id: str) -> None:
        self.conn.execute(
            t.projects.insert().values(
                **record_values(
                    project,
                    t.projects,
                    owner_user_id=owner_user_id,
                    status=project.status.value,
                    type=project.type.value,
                    collections=list(project.collections),
                )
            )
        )

    def get(self, project_id: str) -> Project | None:
        row = self.conn.execute(_PROJECT_BY_ID, {"project_id": project_id}).first()
        return _project(row) if row else None

    def get_by_key(self, key: str) -> Project | None:
        row = self.conn.execute(_PROJECT_BY_KEY, {"key": key.upper()}).first()
        return _project(row) if row else None

    def get_with_role(self, ref: str, user_id: str) -> tuple[Project, Role | None] | None:
        """A project by id (prj_…) or key, with the user's role on it, in one query."""
        statement = project_with_role(ref.startswith("prj_"))
        row = self.conn.execute(statement, project_ref_params(ref, user_id)).first()
        return project_and_role(row) if row is not None else None

    def key_taken(self, key: str) -> bool:
        return self.conn.execute(_PROJECT_ID_BY_KEY, {"key": key}).first() is not None

    def update(self, project_id: str, at: datetime, **fields: Any) -> None:
        """Set plain columns (name, goal, phase, status, description, type, collections, archived_at)."""
        values = {k: (v.value if isinstance(v, StrEnum) else v) for k, v in fields.items()}
        if "collections" in values:
            values["collections"] = list(values["collections"])
        self.conn.execute(
            t.projects.update().where(t.projects.c.id == project_id).values(**values, updated_at=at)
        )

    def handoff_settings(self, project_id: str) -> HandoffSettings:
        row = self.conn.execute(_HANDOFFS, {"project_id": project_id}).first()
        if row is None:
            return HandoffSettings()
        return HandoffSettings(row.zone_a, row.zone_b, row.notify_assignees)

    def set_handoff_settings(
        self, project_id: str, settings: HandoffSettings, at: datetime
    ) -> None:
        table = t.project_handoffs
        values = {"zone_a": settings.zone_a, "zone_b": settings.zone_b,
                  "notify_assignees": settings.notify_assignees, "updated_at": at}  # fmt: skip
        done = self.conn.execute(
            table.update().where(table.c.project_id == project_id).values(**values)
        )
        if done.rowcount == 0:
            self.conn.execute(table.insert().values(project_id=project_id, **values))

    def delete(self, project_id: str) -> None:
        # Tokens bound to the project go with it (ON DELETE CASCADE); so do members and pages.
        self.conn.execute(t.projects.delete().where(t.projects.c.id == project_id))

    def member_role(self, project_id: str, user_id: str) -> Role | None:
        role = self.conn.execute(
            _MEMBER_ROLE, {"project_id": project_id, "user_id": user_id}
        ).scalar_one_or_none()
        return Role(role) if role else None

    def set_member(self, project_id: str, user_id: str, role: Role, at: datetime) -> None:
        where = and_(
            t.project_members.c.project_id == project_id, t.project_members.c.user_id == user_id
        )
        if self.member_role(project_id, user_id) is None:
            self.conn.execute(
                t.project_members.insert().values(
                    project_id=project_id, user_id=user_id, role=role.value, created_at=at
                )
            )
        else:
            self.conn.execute(t.project_members.update().where(where).values(role=role.value))

    def remove_member(self, project_id: str, user_id: str) -> bool:
        """Take the person's role on the project away; whether they had one."""
        done = self.conn.execute(
            t.project_members.delete().where(
                t.project_members.c.project_id == project_id,
                t.project_members.c.user_id == user_id,
            )
        )
        return bool(done.rowcount)

    def list_for_user(
        self,
        user_id: str,
        *,
        only_project_id: str | None = None,
        workspace_id: str | None = None,
        filter_workspace: bool = False,
        include_archived: bool = True,
        words: tuple[str, ...] = (),
        by_activity: bool = False,
        limit: int = 50,
        offset: int = 0,
    ) -> ProjectPage:
        """Projects the user has a role on, with that role and when each was last active: by
        key, or (`by_activity`) most recently active first. `words` (lower-case) must each be
        in the key, name or description."""
        conditions = [t.project_members.c.user_id == user_id, *_holding(words)]
        if only_project_id is not None:
            conditions.append(t.projects.c.id == only_project_id)
        if filter_workspace:
            conditions.append(
                t.projects.c.workspace_id.is_(None)
                if workspace_id is None
                else t.projects.c.workspace_id == workspace_id
            )
        if not include_archived:
            conditions.append(t.projects.c.archived_at.is_(None))
        active_at = self._active_at()
        base = (
            select(
                t.projects,
                t.project_members.c.role.label("member_role"),
                active_at.label("active_at"),
            )
            .join(t.project_members, t.project_members.c.project_id == t.projects.c.id)
            .where(*conditions)
        )
        count = (
            select(func.count())
            .select_from(t.projects)
            .join(t.project_members, t.project_members.c.project_id == t.projects.c.id)
        )
        total = self.conn.execute(count.where(*conditions)).scalar_one()
        order = (active_at.desc(), t.projects.c.key) if by_activity else (t.projects.c.key,)
        rows = self.conn.execute(base.order_by(*order).limit(limit).offset(offset)).all()
        return ProjectPage(
            rows=[(_project(row), Role(row.member_role)) for row in rows],
            total=int(total),
            active_at={row.id: row.active_at for row in rows},
        )

    def _active_at(self) -> ColumnElement[datetime]:
        """The later of the project's own update and its newest event."""
        updated = t.projects.c.updated_at
        newest = func.coalesce(_NEWEST_EVENT_AT, updated)
        # SQLite's max() of two values is its greatest (text timestamps of one format compare
        # as times); PostgreSQL names it GREATEST.
        later = func.max if self.conn.dialect.name == "sqlite" else func.greatest
        return type_coerce(later(updated, newest), UTCDateTime())

    def roles_of(self, user_id: str, *, only_project_id: str | None = None) -> set[Role]:
        """The distinct roles the user holds over its projects (archived ones included)."""
        query = (
            select(t.project_members.c.role)
            .distinct()
            .where(t.project_members.c.user_id == user_id)
        )
        if only_project_id is not None:
            query = query.where(t.project_members.c.project_id == only_project_id)
        return {Role(role) for role in self.conn.execute(query).scalars()}

    def ids_with_role(self, user_id: str, role: Role) -> list[str]:
        """The projects the user holds exactly this role on (archived ones included)."""
        query = select(t.project_members.c.project_id).where(
            t.project_members.c.user_id == user_id, t.project_members.c.role == role.value
        )
        return list(self.conn.execute(query).scalars())

    def keys_open_to(self, user_id: str, project_ids: Sequence[str]) -> dict[str, str]:
        """Of these projects, the keys of those the user has a role on, by project id."""
        if not project_ids:
            return {}
        rows = self.conn.execute(
            select(t.projects.c.id, t.projects.c.key)
            .join(t.project_members, t.project_members.c.project_id == t.projects.c.id)
            .where(
                t.project_members.c.user_id == user_id,
                t.projects.c.id.in_(list(dict.fromkeys(project_ids))),
            )
        )
        return {row.id: row.key for row in rows}

    def members(self, project_id: str) -> list[tuple[User, Role]]:
        rows = self.conn.execute(_MEMBERS, {"project_id": project_id})
        return [(user_from_row(row), Role(row.member_role)) for row in rows]


def _holding(words: tuple[str, ...]) -> list[ColumnElement[bool]]:
    """Each word in the key, name or description, whatever its case."""
    c = t.projects.c
    return [
        or_(
            *(
                func.lower(column).like(f"%{_escape_like(word)}%", "\\")
                for column in (c.key, c.name, c.description)
            )
        )
        for word in words
    ]


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
