"""Web pages: the task page (texts, facts, history, notes, outputs) and its edit form."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from markupsafe import Markup
from starlette.responses import Response
from starlette.routing import BaseRoute

from crewboard.domain.validation import parse_whole
from crewboard.errors import RevisionConflict, ValidationFailed
from crewboard.services.board import notes as task_notes
from crewboard.services.board import tasks
from crewboard.services.screens import board as board_pages
from crewboard.services.screens.board import COLUMNS
from crewboard.web.context import Page, project_routes
from crewboard.web.forms import show_conflict

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


def form_key(page: Page) -> str:
    """An idempotency key: the one the form carried (a resend replays), else a fresh one."""
    return page.field("key") or uuid.uuid4().hex


def _revision(page: Page) -> int:
    raw = page.field("expected_revision")
    if not raw.isdigit():
        raise ValidationFailed.field("expectedRevision", "reload the page and try again.")
    return parse_whole("expectedRevision", raw)


def here_of(page: Page) -> str:
    query = page.request.url.query
    return page.request.url.path + (f"?{query}" if query else "")


def _task_path(page: Page, ref: str, rest: str = "") -> str:
    return page.path(f"tasks/{ref}{rest}")


def ref_of(page: Page) -> str:
    return str(page.request.path_params["ref"])


def _tags(text: str) -> list[str]:
    return [tag.strip() for tag in text.split(",") if tag.strip()]


def update_from_form(page: Page, patch: dict[str, Any]) -> dict[str, Any]:
    assert page.project is not None  # noqa: S101 - a project route
    result = tasks.update_task(
        page.db,
        page.actor,
        project=page.project_key,
        workspace_id=page.project["workspaceId"],
        idempotency_key=form_key(page),
        task_id=ref_of(page),
        expected_revision=_revision(page),
        patch=patch,
    )
    return result.body


# --- the task page ---------------------------------------------------------------------------


def task(page: Page) -> Response:
    """One task: its texts, facts, relationships, history, notes, outputs and hand-ins."""
    return _task_page(page)


def _task_page(page: Page, *, draft: EditDraft | None = None, status_code: int = 200) -> Response:
    view = board_pages.task_page(page.db, page.actor, project=page.project_key, ref=ref_of(page))
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
        here=here_of(page),
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
        return page.redirect(
            _task_path(page, ref_of(page)), notice="Nothing changed; nothing saved."
        )
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
        body = update_from_form(page, patch)
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
        task=ref_of(page),
        workspace_id=page.project["workspaceId"],
        content=page.field("content"),
        idempotency_key=form_key(page),
    )
    return page.redirect(
        _task_path(page, ref_of(page)) + "#comments",
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
        raise tasks.task_not_found(ref_of(page))
    return page.render(
        "task_output.html",
        title=f"{found['output']['name']} · {found['task']['key']}",
        found=found,
    )


def _task_in_project(page: Page) -> str:
    """The task ref as a key of this project (a bare number becomes KEY-N)."""
    ref = ref_of(page)
    return f"{page.project_key}-{ref}" if ref.isdigit() else ref


ROUTES: list[BaseRoute] = [
    *project_routes("tasks/{ref}/comments", post=comment),
    *project_routes("tasks/{ref}/outputs/{name:path}", get=output),
    *project_routes("tasks/{ref}", get=task, post=edit),
]
