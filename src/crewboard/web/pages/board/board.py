"""Web pages: the board (columns by status, filters, quick create, moves)."""

from __future__ import annotations

import uuid
from typing import Any
from urllib.parse import urlencode

from starlette.responses import Response
from starlette.routing import BaseRoute

from crewboard.domain.validation import parse_whole
from crewboard.errors import CrewboardError
from crewboard.services.board import tasks
from crewboard.services.screens import board as board_pages
from crewboard.services.screens.board import COLUMNS, BoardFilters
from crewboard.web.context import Page, project_routes
from crewboard.web.pages.board.tasks import (
    MOVE_OPTIONS,
    STATUS_LABELS,
    form_key,
    here_of,
    ref_of,
    update_from_form,
)
from crewboard.web.wording import human_message


def _offset(page: Page) -> int:
    return parse_whole("offset", page.param("offset", "0"))


def _filters(page: Page) -> BoardFilters:
    return BoardFilters(
        assignee=page.param("assignee").strip() or None,
        tag=page.param("tag").strip() or None,
        q=page.param("q").strip() or None,
    )


def _query(filters: BoardFilters, **more: Any) -> str:
    """The board's query string for these filters (and a column page)."""
    values = {"assignee": filters.assignee, "tag": filters.tag, "q": filters.q, **more}
    kept = {name: value for name, value in values.items() if value not in (None, "")}
    return f"?{urlencode(kept)}" if kept else ""


# --- the board -------------------------------------------------------------------------------


def board(page: Page) -> Response:
    """The board: each status column's first tasks, or one column paged (?column=&offset=)."""
    filters = _filters(page)
    column = page.param("column") or None
    view = board_pages.board_columns(
        page.db,
        page.actor,
        project=page.project_key,
        filters=filters,
        column=column,
        offset=_offset(page) if column else 0,
    )
    return page.render(
        "board.html",
        title=f"Board · {page.project_key}",
        view=view,
        filters=filters,
        column=column,
        query=lambda **more: _query(filters, **more),
        labels=STATUS_LABELS,
        statuses=COLUMNS,
        move_options=MOVE_OPTIONS,
        here=here_of(page),
        new_key=uuid.uuid4().hex,
    )


def create(page: Page) -> Response:
    """Quick create from the board: a title and, optionally, the column it starts in."""
    assert page.project is not None  # noqa: S101 - a project route
    fields: dict[str, Any] = {"title": page.field("title")}
    if page.field("status"):
        fields["status"] = page.field("status")
    result = tasks.create_task(
        page.db,
        page.actor,
        project=page.project_key,
        workspace_id=page.project["workspaceId"],
        idempotency_key=form_key(page),
        **fields,
    )
    made = result.body["task"]
    return page.redirect(
        page.field("next") or page.path("board"), notice=f"Created {made['key']}: {made['title']}"
    )


def move(page: Page) -> Response:
    """Move a task to another column, from the revision the page showed. A refusal names the
    task: a board holds many."""
    status = page.field("status")
    if status in board_pages.SETTLED:
        waiting = board_pages.waiting_hand_in(
            page.db, page.actor, project=page.project_key, task=ref_of(page)
        )
        if waiting is not None:
            return page.redirect(
                page.path(f"inbox/drafts/{waiting}"),
                error=f"{ref_of(page)} was not moved to {STATUS_LABELS[status]}: a hand-in of it "
                "waits for review. Approve it here (that settles the task), or reject it first.",
            )
    try:
        result = update_from_form(page, {"status": status})
    except CrewboardError as error:
        return page.redirect(
            page.field("next") or page.path("board"),
            error=f"{ref_of(page)} was not moved: {human_message(error)}",
        )
    task = result["task"]
    label = STATUS_LABELS.get(task["status"], task["status"])
    return page.redirect(
        page.field("next") or page.path("board"), notice=f"{task['key']} moved to {label}."
    )


ROUTES: list[BaseRoute] = [
    *project_routes("board", get=board),
    *project_routes("board/tasks", post=create),
    *project_routes("tasks/{ref}/status", post=move),
]
