"""A person's saved views of a project's board: named filters, sort and grouping.

Personal, like notification settings: any member may keep views of a board they can read.
The query is stored as the board sends it and read back by the board's own parsing, so a
view never holds a value the board would not accept when it is opened.
"""

from __future__ import annotations

from typing import Any

from crewboard.domain.board.saved_views import (
    MAX_QUERY,
    SavedView,
    check_view_count,
    check_view_name,
)
from crewboard.domain.identity.records import Actor
from crewboard.domain.ids import new_id
from crewboard.errors import NotFound, ValidationFailed
from crewboard.services.identity.access import access_project, require_person
from crewboard.storage.board.saved_views import SavedViewRepository
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork


def list_saved_views(db: Database, actor: Actor, *, project: str) -> list[SavedView]:
    """The actor's saved views of the project's board, by name.

    Raises:
        NotFound: the project.
    """

    def work(uow: UnitOfWork) -> list[SavedView]:
        found = access_project(uow, actor, project).project
        return SavedViewRepository(uow.conn).list(found.id, actor.user_id)

    result: list[SavedView] = db.read(work)
    return result


def save_view(db: Database, actor: Actor, *, project: str, name: str, query: str) -> SavedView:
    """Save the board's query under `name` (a view of that name is replaced).

    Raises:
        ValidationFailed: no name, a long name or query. LimitExceeded: too many views.
        HumanIdentityRequired: a token. NotFound: the project.
    """
    require_person(actor, "Saving a board view")
    cleaned = check_view_name(name)
    if len(query) > MAX_QUERY:
        raise ValidationFailed.field("query", f"at most {MAX_QUERY} characters of filters.")

    def work(uow: UnitOfWork) -> SavedView:
        found = access_project(uow, actor, project).project
        repo = SavedViewRepository(uow.conn)
        kept = repo.by_name(found.id, actor.user_id, cleaned)
        if kept is not None:
            repo.replace_query(kept.id, query, uow.now)
            view = SavedView(kept.id, found.id, actor.user_id, cleaned, query, uow.now)
        else:
            check_view_count(repo.count(found.id, actor.user_id))
            view = SavedView(new_id("bvw"), found.id, actor.user_id, cleaned, query, uow.now)
            repo.add(view)
        _record(uow, actor, "board.view_saved", view)
        return view

    result: SavedView = db.write(work)
    return result


def delete_view(db: Database, actor: Actor, *, project: str, view_id: str) -> SavedView:
    """Delete one of the actor's saved views; answers the view it was.

    Raises:
        NotFound: the project, or no such view of the actor's.
    """

    def work(uow: UnitOfWork) -> SavedView:
        found = access_project(uow, actor, project).project
        repo = SavedViewRepository(uow.conn)
        view = next((v for v in repo.list(found.id, actor.user_id) if v.id == view_id), None)
        if view is None or not repo.delete(found.id, actor.user_id, view_id):
            raise NotFound(
                "That saved view is not one of yours on this board; reload the board.",
                {"resource": "view", "field": "view"},
            )
        _record(uow, actor, "board.view_deleted", view)
        return view

    result: SavedView = db.write(work)
    return result


def _record(uow: UnitOfWork, actor: Actor, kind: str, view: SavedView) -> None:
    # No project id: a person's own views are not news for the project's live stream.
    payload: dict[str, Any] = {"viewId": view.id, "projectId": view.project_id, "name": view.name}
    uow.record_event(kind, actor=actor.as_payload(), payload=payload)
