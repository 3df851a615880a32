"""The check-in's first look, in one statement: the project with the caller's role on it, and
whether anything could be new for the caller (an event after its cursor, a live claim of its
to renew). An idle check-in ends there: one round trip to the database."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Integer, and_, bindparam, exists

from crewboard.domain.board.claims import Holder
from crewboard.domain.identity.access import Role
from crewboard.domain.projects import Project
from crewboard.storage import schema as shared
from crewboard.storage.board.claim_tables import task_claims
from crewboard.storage.projects import tables as projects_tables
from crewboard.storage.projects.projects import (
    project_and_role,
    project_ref_params,
    project_with_role,
)

_C = task_claims.c
_E = shared.events.c
_P = projects_tables.projects.c

_NEWS = exists().where(_E.project_id == _P.id, _E.id > bindparam("after", type_=Integer))
_LIVE = and_(
    _C.project_id == _P.id,
    _C.released_at.is_(None),
    _C.expires_at > bindparam("now", type_=_C.expires_at.type),
)
_HOLDS_BY_TOKEN = exists().where(_LIVE, _C.token_id == bindparam("token_id"))
_HOLDS_BY_PERSON = exists().where(_LIVE, _C.user_id == bindparam("user_id"), _C.token_id.is_(None))
# (the ref is an id, the caller is a token) -> the statement, built once
_LOOKS = {
    (by_id, by_token): project_with_role(
        by_id,
        _NEWS.label("news"),
        (_HOLDS_BY_TOKEN if by_token else _HOLDS_BY_PERSON).label("holds"),
    )
    for by_id in (True, False)
    for by_token in (True, False)
}


@dataclass(frozen=True)
class FirstLook:
    found: tuple[Project, Role | None]
    news: bool  # an event of the project after the cursor
    holds: bool  # the caller holds a live claim in the project


def first_look(
    conn: Connection, ref: str, *, after: int, holder: Holder, now: datetime
) -> FirstLook | None:
    """The project `ref` (id or key) with `holder`'s person's role on it and the two probes;
    None when there is no such project."""
    params: dict[str, Any] = project_ref_params(ref, holder.user_id)
    params |= {"after": after, "now": now, "token_id": holder.token_id}
    statement = _LOOKS[(ref.startswith("prj_"), holder.token_id is not None)]
    row = conn.execute(statement, params).first()
    if row is None:
        return None
    return FirstLook(project_and_role(row), bool(row.news), bool(row.holds))
