"""Repositories: SQL for one aggregate each, returning domain records."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import Connection, Row, and_, bindparam, func, or_, select

from crewboard.domain.identity.access import Role, Scope, TokenKind, Toolset
from crewboard.domain.models import (
    ApiToken,
    Effort,
    Project,
    ProjectStatus,
    ProjectType,
    SeatKind,
    StatePage,
    StateVersion,
    TeamRole,
    User,
    Workspace,
    WorkspaceRole,
)
from crewboard.domain.validation import INT32_MAX
from crewboard.storage import tables as t

# The reads every MCP call makes, built once: constructing a statement costs about as much
# as running it on SQLite.
_USER_BY_ID = select(t.users).where(t.users.c.id == bindparam("user_id"))
_TOKEN_BY_HASH = select(t.api_tokens).where(t.api_tokens.c.secret_hash == bindparam("secret_hash"))
_STATE_BY_PROJECT = select(t.project_state).where(
    t.project_state.c.project_id == bindparam("project_id")
)


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


def _user(row: Row[Any]) -> User:
    return User(
        id=row.id,
        email=row.email,
        display_name=row.display_name,
        created_at=row.created_at,
        is_owner=row.is_owner,
    )


def _project(row: Row[Any]) -> Project:
    return Project(
        id=row.id,
        workspace_id=row.workspace_id,
        key=row.key,
        name=row.name,
        goal=row.goal,
        phase=row.phase,
        status=ProjectStatus(row.status),
        description=row.description,
        type=ProjectType(row.type),
        collections=tuple(row.collections),
        archived_at=row.archived_at,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


def _token(row: Row[Any]) -> ApiToken:
    return ApiToken(
        id=row.id,
        user_id=row.user_id,
        name=row.name,
        kind=TokenKind(row.kind),
        scopes=frozenset(Scope(s) for s in row.scopes),
        display_prefix=row.display_prefix,
        created_at=row.created_at,
        project_id=row.project_id,
        role=Role(row.role) if row.role else None,
        toolsets=tuple(Toolset(s) for s in row.toolsets),
        last_used_at=row.last_used_at,
        revoked_at=row.revoked_at,
    )


class UserRepository:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def add(self, user: User, password_hash: str) -> None:
        self.conn.execute(
            t.users.insert().values(
                id=user.id,
                email=user.email,
                display_name=user.display_name,
                password_hash=password_hash,
                is_owner=user.is_owner,
                created_at=user.created_at,
                updated_at=user.created_at,
            )
        )

    def get(self, user_id: str) -> User | None:
        row = self.conn.execute(_USER_BY_ID, {"user_id": user_id}).first()
        return _user(row) if row else None

    def get_by_email(self, email: str) -> User | None:
        row = self.conn.execute(select(t.users).where(t.users.c.email == email)).first()
        return _user(row) if row else None

    def password_hash(self, user_id: str) -> str | None:
        return self.conn.execute(
            select(t.users.c.password_hash).where(t.users.c.id == user_id)
        ).scalar_one_or_none()

    def set_password_hash(self, user_id: str, password_hash: str, at: datetime) -> None:
        self.conn.execute(
            t.users.update()
            .where(t.users.c.id == user_id)
            .values(password_hash=password_hash, updated_at=at)
        )

    def list(self) -> list[User]:
        rows = self.conn.execute(select(t.users).order_by(t.users.c.created_at, t.users.c.id))
        return [_user(row) for row in rows]

    def count(self) -> int:
        return int(self.conn.execute(select(func.count()).select_from(t.users)).scalar_one())


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
        return Workspace(id=row.id, name=row.name, created_at=row.created_at) if row else None

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
            select(t.users, t.workspace_members.c.workspace_id, t.workspace_members.c.role)
            .join(t.workspace_members, t.workspace_members.c.user_id == t.users.c.id)
            .where(t.workspace_members.c.workspace_id.in_(list(workspace_ids)))
            .order_by(t.users.c.display_name, t.users.c.id)
        )
        for row in rows:
            found[row.workspace_id].append((_user(row), WorkspaceRole(row.role)))
        return found

    def list_for_user(self, user_id: str) -> list[tuple[Workspace, WorkspaceRole]]:
        rows = self.conn.execute(
            select(t.workspaces, t.workspace_members.c.role)
            .join(t.workspace_members, t.workspace_members.c.workspace_id == t.workspaces.c.id)
            .where(t.workspace_members.c.user_id == user_id)
            .order_by(t.workspaces.c.name, t.workspaces.c.id)
        )
        return [
            (Workspace(id=r.id, name=r.name, created_at=r.created_at), WorkspaceRole(r.role))
            for r in rows
        ]


@dataclass(frozen=True)
class ProjectPage:
    rows: list[tuple[Project, Role]]
    total: int


class ProjectRepository:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def add(self, project: Project, owner_user_id: str) -> None:
        self.conn.execute(
            t.projects.insert().values(
                id=project.id,
                workspace_id=project.workspace_id,
                owner_user_id=owner_user_id,
                key=project.key,
                name=project.name,
                goal=project.goal,
                phase=project.phase,
                status=project.status.value,
                description=project.description,
                type=project.type.value,
                collections=list(project.collections),
                archived_at=project.archived_at,
                created_at=project.created_at,
                updated_at=project.updated_at,
            )
        )

    def get(self, project_id: str) -> Project | None:
        row = self.conn.execute(select(t.projects).where(t.projects.c.id == project_id)).first()
        return _project(row) if row else None

    def get_by_key(self, key: str) -> Project | None:
        row = self.conn.execute(select(t.projects).where(t.projects.c.key == key.upper())).first()
        return _project(row) if row else None

    def get_with_role(self, ref: str, user_id: str) -> tuple[Project, Role | None] | None:
        """A project by id (prj_…) or key, with the user's role on it, in one query."""
        by_id = ref.startswith("prj_")
        row = self.conn.execute(
            _PROJECT_WITH_ROLE_BY_ID if by_id else _PROJECT_WITH_ROLE_BY_KEY,
            {"ref": ref if by_id else ref.upper(), "user_id": user_id},
        ).first()
        if row is None:
            return None
        return _project(row), Role(row.member_role) if row.member_role else None

    def key_taken(self, key: str) -> bool:
        return (
            self.conn.execute(select(t.projects.c.id).where(t.projects.c.key == key)).first()
            is not None
        )

    def update(self, project_id: str, at: datetime, **fields: Any) -> None:
        """Set plain columns (name, goal, phase, status, description, type, collections, archived_at)."""
        values = {k: (v.value if isinstance(v, StrEnum) else v) for k, v in fields.items()}
        if "collections" in values:
            values["collections"] = list(values["collections"])
        self.conn.execute(
            t.projects.update().where(t.projects.c.id == project_id).values(**values, updated_at=at)
        )

    def delete(self, project_id: str) -> None:
        # Tokens bound to the project go with it (ON DELETE CASCADE); so do members and pages.
        self.conn.execute(t.projects.delete().where(t.projects.c.id == project_id))

    def member_role(self, project_id: str, user_id: str) -> Role | None:
        role = self.conn.execute(
            select(t.project_members.c.role).where(
                t.project_members.c.project_id == project_id,
                t.project_members.c.user_id == user_id,
            )
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

    def list_for_user(
        self,
        user_id: str,
        *,
        only_project_id: str | None = None,
        workspace_id: str | None = None,
        filter_workspace: bool = False,
        include_archived: bool = True,
        limit: int = 50,
        offset: int = 0,
    ) -> ProjectPage:
        """Projects the user has a role on, by key, with that role."""
        conditions = [t.project_members.c.user_id == user_id]
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
        base = (
            select(t.projects, t.project_members.c.role.label("member_role"))
            .join(t.project_members, t.project_members.c.project_id == t.projects.c.id)
            .where(*conditions)
        )
        total = self.conn.execute(select(func.count()).select_from(base.subquery())).scalar_one()
        rows = self.conn.execute(base.order_by(t.projects.c.key).limit(limit).offset(offset))
        return ProjectPage(
            rows=[(_project(row), Role(row.member_role)) for row in rows], total=int(total)
        )

    def members(self, project_id: str) -> list[tuple[User, Role]]:
        rows = self.conn.execute(
            select(t.users, t.project_members.c.role.label("member_role"))
            .join(t.project_members, t.project_members.c.user_id == t.users.c.id)
            .where(t.project_members.c.project_id == project_id)
            .order_by(t.users.c.display_name, t.users.c.id)
        )
        return [(_user(row), Role(row.member_role)) for row in rows]


class TokenRepository:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def add(self, token: ApiToken, secret_hash: str) -> None:
        self.conn.execute(
            t.api_tokens.insert().values(
                id=token.id,
                user_id=token.user_id,
                name=token.name,
                kind=token.kind.value,
                secret_hash=secret_hash,
                display_prefix=token.display_prefix,
                scopes=sorted(s.value for s in token.scopes),
                project_id=token.project_id,
                role=token.role.value if token.role else None,
                toolsets=[s.value for s in token.toolsets],
                created_at=token.created_at,
            )
        )

    def get(self, token_id: str) -> ApiToken | None:
        row = self.conn.execute(select(t.api_tokens).where(t.api_tokens.c.id == token_id)).first()
        return _token(row) if row else None

    def get_by_hash(self, secret_hash: str) -> ApiToken | None:
        row = self.conn.execute(_TOKEN_BY_HASH, {"secret_hash": secret_hash}).first()
        return _token(row) if row else None

    def list(self, user_id: str | None = None, *, include_revoked: bool = False) -> list[ApiToken]:
        query = select(t.api_tokens).order_by(t.api_tokens.c.created_at, t.api_tokens.c.id)
        if user_id is not None:
            query = query.where(t.api_tokens.c.user_id == user_id)
        if not include_revoked:
            query = query.where(t.api_tokens.c.revoked_at.is_(None))
        return [_token(row) for row in self.conn.execute(query)]

    def revoke(self, token_id: str, at: datetime) -> None:
        self.conn.execute(
            t.api_tokens.update()
            .where(t.api_tokens.c.id == token_id, t.api_tokens.c.revoked_at.is_(None))
            .values(revoked_at=at)
        )

    def touch(self, token_id: str, at: datetime, *, older_than: datetime) -> bool:
        """Set last-used time, unless it was set after `older_than` (saves a write per call)."""
        result = self.conn.execute(
            t.api_tokens.update()
            .where(
                t.api_tokens.c.id == token_id,
                or_(
                    t.api_tokens.c.last_used_at.is_(None), t.api_tokens.c.last_used_at < older_than
                ),
            )
            .values(last_used_at=at)
        )
        return result.rowcount > 0


@dataclass(frozen=True)
class LedgerEntry:
    principal: str
    key: str
    operation: str
    fingerprint: str
    acknowledgement: dict[str, Any]
    resource_type: str | None
    resource_id: str | None
    project_id: str | None
    created_at: datetime


class IdempotencyRepository:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def get(self, principal: str, key: str) -> LedgerEntry | None:
        row = self.conn.execute(
            select(t.idempotency_keys).where(
                t.idempotency_keys.c.principal == principal, t.idempotency_keys.c.key == key
            )
        ).first()
        if row is None:
            return None
        return LedgerEntry(**row._asdict())

    def claim(
        self, *, principal: str, key: str, operation: str, fingerprint: str, at: datetime
    ) -> None:
        """Insert the key's row first: a concurrent first use waits here, fails, and retries."""
        self.conn.execute(
            t.idempotency_keys.insert().values(
                principal=principal,
                key=key,
                operation=operation,
                fingerprint=fingerprint,
                acknowledgement={},
                created_at=at,
            )
        )

    def complete(
        self,
        *,
        principal: str,
        key: str,
        acknowledgement: dict[str, Any],
        resource_type: str | None,
        resource_id: str | None,
        project_id: str | None,
    ) -> None:
        self.conn.execute(
            t.idempotency_keys.update()
            .where(t.idempotency_keys.c.principal == principal, t.idempotency_keys.c.key == key)
            .values(
                acknowledgement=acknowledgement,
                resource_type=resource_type,
                resource_id=resource_id,
                project_id=project_id,
            )
        )


class EventRepository:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def list_after(
        self, *, project_id: str | None, after_id: int = 0, limit: int = 100
    ) -> list[dict[str, Any]]:
        query = (
            select(t.events).where(t.events.c.id > after_id).order_by(t.events.c.id).limit(limit)
        )
        if project_id is not None:
            query = query.where(t.events.c.project_id == project_id)
        return [row._asdict() for row in self.conn.execute(query)]

    def latest_id(self, project_ids: Sequence[str]) -> int:
        """The newest event id of these projects (0 when they have none)."""
        query = select(func.max(t.events.c.id)).where(t.events.c.project_id.in_(project_ids))
        return int(self.conn.execute(query).scalar() or 0)

    def list_after_many(
        self, project_ids: Sequence[str], *, after_id: int, limit: int = 100
    ) -> list[dict[str, Any]]:
        """Events of these projects after `after_id`, oldest first."""
        e = t.events
        query = (
            select(e.c.id, e.c.project_id, e.c.type, e.c.task_id, e.c.created_at)
            .where(e.c.project_id.in_(project_ids), e.c.id > after_id)
            .order_by(e.c.id)
            .limit(limit)
        )
        return [row._asdict() for row in self.conn.execute(query)]

    def count(self, *, project_id: str | None = None, type_: str | None = None) -> int:
        query = select(func.count()).select_from(t.events)
        if project_id is not None:
            query = query.where(t.events.c.project_id == project_id)
        if type_ is not None:
            query = query.where(t.events.c.type == type_)
        return int(self.conn.execute(query).scalar_one())


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
            exists = self.conn.execute(
                select(t.project_state.c.revision).where(t.project_state.c.project_id == project_id)
            ).first()
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
        where = t.project_state_versions.c.project_id == project_id
        total = self.conn.execute(
            select(func.count()).select_from(t.project_state_versions).where(where)
        ).scalar_one()
        rows = self.conn.execute(
            select(t.project_state_versions)
            .where(where)
            .order_by(t.project_state_versions.c.revision.desc())
            .limit(limit)
            .offset(offset)
        )
        return [_state_version(row) for row in rows], int(total)

    def version(self, project_id: str, revision: int) -> StateVersion | None:
        row = self.conn.execute(
            select(t.project_state_versions).where(
                t.project_state_versions.c.project_id == project_id,
                t.project_state_versions.c.revision == revision,
            )
        ).first()
        return _state_version(row) if row else None


def _state_version(row: Row[Any]) -> StateVersion:
    return StateVersion(
        revision=row.revision,
        content=row.content,
        author=row.author,
        created_at=row.created_at,
        restored_from=row.restored_from,
    )


def _team_role(row: Row[Any]) -> TeamRole:
    return TeamRole(
        id=row.id,
        project_id=row.project_id,
        name=row.name,
        role=row.role,
        kind=SeatKind(row.kind),
        member_user_id=row.member_user_id,
        model=row.model,
        effort=Effort(row.effort) if row.effort else None,
        rank=row.rank,
        level=row.level,
        xp=row.xp,
        archived_at=row.archived_at,
        created_at=row.created_at,
    )


class TeamRepository:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def add(self, role: TeamRole) -> None:
        self.conn.execute(
            t.team_roles.insert().values(
                id=role.id,
                project_id=role.project_id,
                name=role.name,
                role=role.role,
                kind=role.kind.value,
                member_user_id=role.member_user_id,
                model=role.model,
                effort=role.effort.value if role.effort else None,
                rank=role.rank,
                level=role.level,
                xp=role.xp,
                archived_at=role.archived_at,
                created_at=role.created_at,
            )
        )

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
        row = self.conn.execute(
            select(t.team_roles).where(
                t.team_roles.c.project_id == project_id, t.team_roles.c.id == role_id
            )
        ).first()
        return _team_role(row) if row else None

    def set_archived(self, role_id: str, at: datetime | None) -> None:
        self.conn.execute(
            t.team_roles.update().where(t.team_roles.c.id == role_id).values(archived_at=at)
        )
