"""Web pages: the board (columns by status, filters, quick create, moves)."""

from __future__ import annotations

import uuid
from typing import Any
from urllib.parse import urlencode

from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute

from crewboard.domain.validation import parse_whole
from crewboard.errors import CrewboardError, RevisionConflict, ValidationFailed
from crewboard.services.board import moves, tasks
from crewboard.services.board.saved_views import list_saved_views
from crewboard.services.screens import board as board_pages
from crewboard.services.screens.board import COLUMNS, BoardFilters
from crewboard.web.context import Page, project_routes
from crewboard.web.pages.board.tasks import (
    form_key,
    here_of,
    ref_of,
    update_from_form,
)
from crewboard.web.render import when
from crewboard.web.wording import STATUS_LABELS, human_message


def _offset(page: Page) -> int:
    return parse_whole("offset", page.param("offset", "0"))


def _filters(page: Page) -> BoardFilters:
    return BoardFilters(
        assignee=page.param("assignee").strip() or None,
        tag=page.param("tag").strip() or None,
        q=page.param("q").strip() or None,
        sort=page.param("sort").strip() or "board",
        group=page.param("group").strip() or None,
    )


def _query(filters: BoardFilters, **more: Any) -> str:
    """The board's query string for these filters (and a column page)."""
    values = {
        "assignee": filters.assignee,
        "tag": filters.tag,
        "q": filters.q,
        "sort": None if filters.sort == "board" else filters.sort,
        "group": filters.group,
        **more,
    }
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
        filtered=bool(filters.q or filters.tag or filters.assignee),
        column=column,
        query=lambda **more: _query(filters, **more),
        current_query=_query(filters).lstrip("?"),
        saved_views=list_saved_views(page.db, page.actor, project=page.project_key),
        labels=STATUS_LABELS,
        statuses=COLUMNS,
        sorts=SORT_LABELS,
        groups=GROUP_LABELS,
        here=here_of(page),
        new_key=uuid.uuid4().hex,
    )


SORT_LABELS = {
    "board": "Board order",
    "priority": "Priority",
    "due": "Due date",
    "updated": "Last updated",
    "created": "Newest first",
    "title": "Title",
}
GROUP_LABELS = {"": "No grouping", "assignee": "Assignee", "priority": "Priority", "tag": "Tag"}


def create(page: Page) -> Response:
    """Quick create from the board: a title, the column it starts in and who it is for."""
    assert page.project is not None  # noqa: S101 - a project route
    fields: dict[str, Any] = {"title": page.field("title")}
    if page.field("status"):
        fields["status"] = page.field("status")
    if page.field("assignee"):
        fields["assignee_id"] = page.field("assignee")
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


def _wants_json(page: Page) -> bool:
    """The board's script moves tiles without a reload and asks for JSON; a form gets pages."""
    return "application/json" in page.request.headers.get("accept", "")


def _neighbour(page: Page, name: str) -> str | None:
    return page.field(name).strip() or None


def move(page: Page) -> Response:
    """Move a task to another column or place in one, from the revision the page showed.

    Fields: `status`, `expected_revision`, and from a drag `after`/`before` (the keys of the
    tiles it was dropped between). A move to Approved or Done while a hand-in of the task waits
    is refused with a link to it, unless `approve_hand_in` names that hand-in: the person chose
    to approve it, which settles the task. A refusal names the task: a board holds many.
    """
    ref = ref_of(page)
    status = page.field("status")
    try:
        if status not in STATUS_LABELS:  # only an edited form: say it in the board's words
            columns = ", ".join(STATUS_LABELS.values())
            raise ValidationFailed.field(
                "status", f"“{status}” is not a column of the board; choose one of {columns}."
            )
        if status in board_pages.SETTLED:
            waiting = board_pages.waiting_hand_in(
                page.db, page.actor, project=page.project_key, task=ref
            )
            if waiting is not None and page.field("approve_hand_in") != waiting:
                return _hand_in_waits(page, ref, status, waiting)
            if waiting is not None:
                return _approve_then_move(page, ref, status, waiting)
        patch: dict[str, Any] = {"status": status}
        if page.has_field("assignee"):  # the fix offered beside a move refused for no assignee
            patch["assignee_id"] = page.field("assignee") or None
        order = moves.board_order_between(
            page.db,
            page.actor,
            project=page.project_key,
            status=status,
            after=_neighbour(page, "after"),
            before=_neighbour(page, "before"),
        )
        if order is not None:
            patch["board_order"] = order
        task = update_from_form(page, patch)["task"]
    except RevisionConflict as conflict:
        return _refused(page, ref, conflict, current=_current(page, ref))
    except CrewboardError as error:
        return _refused(page, ref, error)
    return _moved(page, task)


def _moved(page: Page, task: dict[str, Any], approved: str | None = None) -> Response:
    label = STATUS_LABELS.get(task["status"], task["status"])
    said = f"{task['key']} moved to {label}."
    if approved:
        said = f"Approved the hand-in of {task['key']}; {task['key']} is in {label}."
    if _wants_json(page):
        return JSONResponse(
            {
                "ok": True,
                "notice": said,
                "key": task["key"],
                "status": task["status"],
                "revision": task["revision"],
            }
        )
    return page.redirect(page.field("next") or page.path("board"), notice=said)


def _refused(
    page: Page, ref: str, error: CrewboardError, current: dict[str, Any] | None = None
) -> Response:
    said = f"{ref} was not moved: {human_message(error)}"
    if _wants_json(page):
        body: dict[str, Any] = {"ok": False, "error": said}
        if current is not None:
            body["conflict"] = current
        if error.details.get("field") == "assigneeId":
            body["fix"] = "assignee"  # the card offers an assignee picker and moves again
        return JSONResponse(body, status_code=error.http_status)
    return page.redirect(page.field("next") or page.path("board"), error=said)


def _current(page: Page, ref: str) -> dict[str, Any] | None:
    """The task as it is now, as a tile shows it, for the conflict view (None: gone)."""
    try:
        found = board_pages.tile_now(page.db, page.actor, project=page.project_key, ref=ref)
    except CrewboardError:
        return None
    return {
        **found,
        "statusLabel": STATUS_LABELS.get(found["status"], found["status"]),
        "when": when(found["updatedAt"]),
    }


def _hand_in_waits(page: Page, ref: str, status: str, waiting: str) -> Response:
    url = page.path(f"inbox/drafts/{waiting}")
    said = (
        f"{ref} was not moved to {STATUS_LABELS[status]}: a hand-in of it waits for review. "
        "Approve it (that settles the task), or reject it first."
    )
    if _wants_json(page):
        return JSONResponse(
            {"ok": False, "error": said, "handIn": {"id": waiting, "url": url}}, status_code=409
        )
    return page.redirect(url, error=said)


def _approve_then_move(page: Page, ref: str, status: str, waiting: str) -> Response:
    """The person chose to approve the waiting hand-in (which settles the task), then move on."""
    assert page.project is not None  # noqa: S101 - a project route
    task_now = board_pages.approve_and_settle(
        page.db,
        page.actor,
        project=page.project_key,
        workspace_id=page.project["workspaceId"],
        task=ref,
        status=status,
        hand_in=waiting,
    )
    return _moved(page, task_now, approved=waiting)


ROUTES: list[BaseRoute] = [
    *project_routes("board", get=board),
    *project_routes("board/tasks", post=create),
    *project_routes("tasks/{ref}/status", post=move),
]
