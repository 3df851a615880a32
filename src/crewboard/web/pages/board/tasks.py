"""Web pages: the board (columns by status, filters, quick create, moves) and the task page."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from functools import cached_property
from typing import Any
from urllib.parse import urlencode

from markupsafe import Markup
from starlette.responses import Response
from starlette.routing import BaseRoute

from crewboard.domain.validation import parse_whole
from crewboard.errors import CrewboardError, RevisionConflict, ValidationFailed
from crewboard.services.board import notes as task_notes
from crewboard.services.board import tasks
from crewboard.services.screens import board as board_pages
from crewboard.services.screens.board import COLUMNS, BoardFilters
from crewboard.web.context import Page, project_routes
from crewboard.web.forms import show_conflict
from crewboard.web.wording import human_message

STATUS_LABELS = {
    "backlog": "Backlog",
    "ready_for_ai": "Ready for AI",
    "in_progress": "In progress",
    "blocked": "Blocked",
    "review": "Review",
    "approved": "Approved",
    "done": "Done",
}
PRIORITIES = ("low", "medium", "high")
# The options of a tile's "move to" select, one markup per current status: a board shows up to
# 350 tiles, and building the same seven options in the template for each was most of its time.
MOVE_OPTIONS = {
    current: Markup("").join(
        Markup('<option value="{}"{}>{}</option>').format(
            status, Markup(" selected") if status == current else "", label
        )
        for status, label in STATUS_LABELS.items()
    )
    for current in STATUS_LABELS
}


# --- helpers ---------------------------------------------------------------------------------


def _key(page: Page) -> str:
    """An idempotency key: the one the form carried (a resend replays), else a fresh one."""
    return page.field("key") or uuid.uuid4().hex


def _revision(page: Page) -> int:
    raw = page.field("expected_revision")
    if not raw.isdigit():
        raise ValidationFailed.field("expectedRevision", "reload the page and try again.")
    return parse_whole("expectedRevision", raw)


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


def _here(page: Page) -> str:
    query = page.request.url.query
    return page.request.url.path + (f"?{query}" if query else "")


def _task_path(page: Page, ref: str, rest: str = "") -> str:
    return page.path(f"tasks/{ref}{rest}")


def _ref(page: Page) -> str:
    return str(page.request.path_params["ref"])


def _tags(text: str) -> list[str]:
    return [tag.strip() for tag in text.split(",") if tag.strip()]


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
        here=_here(page),
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
        idempotency_key=_key(page),
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
            page.db, page.actor, project=page.project_key, task=_ref(page)
        )
        if waiting is not None:
            return page.redirect(
                page.path(f"inbox/drafts/{waiting}"),
                error=f"{_ref(page)} was not moved to {STATUS_LABELS[status]}: a hand-in of it "
                "waits for review. Approve it here (that settles the task), or reject it first.",
            )
    try:
        result = _update(page, {"status": status})
    except CrewboardError as error:
        return page.redirect(
            page.field("next") or page.path("board"),
            error=f"{_ref(page)} was not moved: {human_message(error)}",
        )
    task = result["task"]
    label = STATUS_LABELS.get(task["status"], task["status"])
    return page.redirect(
        page.field("next") or page.path("board"), notice=f"{task['key']} moved to {label}."
    )


def _update(page: Page, patch: dict[str, Any]) -> dict[str, Any]:
    assert page.project is not None  # noqa: S101 - a project route
    result = tasks.update_task(
        page.db,
        page.actor,
        project=page.project_key,
        workspace_id=page.project["workspaceId"],
        idempotency_key=_key(page),
        task_id=_ref(page),
        expected_revision=_revision(page),
        patch=patch,
    )
    return result.body


# --- the task page ---------------------------------------------------------------------------


def task(page: Page) -> Response:
    """One task: its texts, facts, relationships, history, notes, outputs and hand-ins."""
    return _task_page(page)


def _task_page(page: Page, *, draft: EditDraft | None = None, status_code: int = 200) -> Response:
    view = board_pages.task_page(page.db, page.actor, project=page.project_key, ref=_ref(page))
    shown = _edit_values(view["task"])
    return page.render(
        "task.html",
        status_code=status_code,
        title=f"{view['task']['key']} {view['task']['title']}",
        view=view,
        t=view["task"],
        shown=shown,
        form=shown if draft is None else {**shown, **draft.mine},
        theirs=[] if draft is None else draft.theirs(shown),
        labels=STATUS_LABELS,
        statuses=COLUMNS,
        priorities=PRIORITIES,
        here=_here(page),
        comment_key=uuid.uuid4().hex,
        edit_key=uuid.uuid4().hex,
    )


# The edit form's fields: form name (the patch field it sets) → label.
EDIT_FIELDS = {
    "title": "Title",
    "brief": "Brief",
    "description": "Description",
    "priority": "Priority",
    "tags": "Tags",
    "due_date": "Due date",
}


def _edit_values(t: dict[str, Any]) -> dict[str, str]:
    """A task's values as the edit form shows them."""
    return {
        "title": t["title"],
        "brief": t.get("brief") or "",
        "description": t.get("description") or "",
        "priority": t["priority"],
        "tags": ", ".join(t.get("tags") or []),
        "due_date": t.get("dueDate") or "",
    }


@dataclass(frozen=True)
class EditDraft:
    """What a person sent from the edit form: the values it showed (`was`) and theirs."""

    was: dict[str, str]
    sent: dict[str, str]

    @classmethod
    def of(cls, page: Page) -> EditDraft:
        sent = {name: page.field(name) for name in EDIT_FIELDS}
        # A form without the shown values (an older page) counts every field as changed.
        was = {
            name: page.field(f"was_{name}") if page.has_field(f"was_{name}") else None
            for name in EDIT_FIELDS
        }
        return cls({k: v for k, v in was.items() if v is not None}, sent)

    @cached_property
    def mine(self) -> dict[str, str]:
        """The fields this person changed."""
        return {k: v for k, v in self.sent.items() if _normal(k, v) != _normal(k, self.was.get(k))}

    def theirs(self, current: dict[str, str]) -> list[tuple[str, str, bool]]:
        """Fields someone else changed since the form was shown: (label, their value, whether
        this person changed it too)."""
        mine = self.mine
        return [
            (label, current[name], name in mine)
            for name, label in EDIT_FIELDS.items()
            if name in self.was and _normal(name, current[name]) != _normal(name, self.was[name])
        ]


def _normal(name: str, value: str | None) -> object:
    if value is None:
        return None
    if name == "tags":
        return tuple(_tags(value))
    return value.strip() if name in ("title", "due_date", "priority") else value


def edit(page: Page) -> Response:
    """Save what the person changed in the edit form (only those fields). On a conflict the page
    comes back with their text in the form and the other change beside it."""
    draft = EditDraft.of(page)
    mine = draft.mine
    if not mine:
        return page.redirect(_task_path(page, _ref(page)), notice="Nothing changed; nothing saved.")
    patch: dict[str, Any] = {}
    for name, value in mine.items():
        if name == "tags":
            patch["tags"] = _tags(value)
        elif name == "priority":
            patch["priority"] = value or "medium"
        elif name == "due_date":
            patch["due_date"] = value or None
        else:
            patch[name] = value
    try:
        body = _update(page, patch)
    except RevisionConflict as conflict:
        show_conflict(page, conflict, "this task")
        return _task_page(page, draft=draft, status_code=409)
    key = body["task"]["key"]
    changed = ", ".join(EDIT_FIELDS[name].lower() for name in mine)
    return page.redirect(_task_path(page, key), notice=f"Saved {key} ({changed}).")


def comment(page: Page) -> Response:
    """Post a comment on the task."""
    assert page.project is not None  # noqa: S101 - a project route
    result = task_notes.post_comment(
        page.db,
        page.actor,
        task=_ref(page),
        workspace_id=page.project["workspaceId"],
        content=page.field("content"),
        idempotency_key=_key(page),
    )
    return page.redirect(
        _task_path(page, _ref(page)) + "#comments",
        notice="Comment posted." if not result.replayed else "That comment was already posted.",
    )


def output(page: Page) -> Response:
    """One output of a task as plain preformatted text (?version=N for an older one)."""
    raw = page.param("version")
    version = parse_whole("version", raw, minimum=1) if raw else None
    found = task_notes.get_output(
        page.db,
        page.actor,
        task=_task_in_project(page),
        name=str(page.request.path_params["name"]),
        version=version,
    )
    assert page.project is not None  # noqa: S101 - a project route
    if found["task"]["projectId"] != page.project["id"]:
        raise tasks.task_not_found(_ref(page))
    return page.render(
        "task_output.html",
        title=f"{found['output']['name']} · {found['task']['key']}",
        found=found,
    )


def _task_in_project(page: Page) -> str:
    """The task ref as a key of this project (a bare number becomes KEY-N)."""
    ref = _ref(page)
    return f"{page.project_key}-{ref}" if ref.isdigit() else ref


ROUTES: list[BaseRoute] = [
    *project_routes("board", get=board),
    *project_routes("board/tasks", post=create),
    *project_routes("tasks/{ref}/status", post=move),
    *project_routes("tasks/{ref}/comments", post=comment),
    *project_routes("tasks/{ref}/outputs/{name:path}", get=output),
    *project_routes("tasks/{ref}", get=task, post=edit),
]
