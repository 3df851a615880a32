"""Web pages: the task page (texts, facts, history, notes, outputs) and its edit form."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from functools import cached_property
from typing import Any
from urllib.parse import urlencode

from starlette.responses import Response
from starlette.routing import BaseRoute

from crewboard.contract.board.present import get_task_view, task_activity_view
from crewboard.contract.board.present_notes import comment_answer, output_read_view
from crewboard.domain.board.tasks import TaskType
from crewboard.domain.identity.access import Role
from crewboard.domain.validation import parse_whole
from crewboard.errors import (
    CrewboardError,
    LimitExceeded,
    NotFound,
    PermissionDenied,
    RevisionConflict,
    ValidationFailed,
)
from crewboard.services.board import claims, task_lookup, task_updates
from crewboard.services.board import notes as task_notes
from crewboard.services.screens import board as board_pages
from crewboard.services.screens.board import COLUMNS
from crewboard.web.context import Page, project_routes
from crewboard.web.forms import show_conflict
from crewboard.web.pages.board.task_history import history_rows
from crewboard.web.wording import STATUS_LABELS, human_message

PRIORITIES = ("low", "medium", "high")


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
    result = task_updates.update_task(
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


def _task_page(
    page: Page,
    *,
    draft: EditDraft | None = None,
    status_code: int = 200,
    waiting: str | None = None,
    refused: tuple[str | None, str] | None = None,
    inline: str | None = None,
    comment_refused: tuple[str, str] | None = None,
) -> Response:
    """The task page; after a refused edit, with the person's values in the form, and what
    changed meanwhile (`draft.theirs`), the hand-in that waits, or the refusal beside it.

    The forms are closed until asked for; the one a refused save came from opens again: the
    whole edit form, or the single field changed in place (`inline`), or the comment
    (`comment_refused`: the text and why)."""
    screen = board_pages.task_page(page.db, page.actor, project=page.project_key, ref=ref_of(page))
    view = {**get_task_view(screen.pop("read"), None), **screen}
    view["activity"] = task_activity_view(view["activity"])
    shown = _edit_values(view["task"], page.project_key)
    theirs = [] if draft is None else draft.theirs(shown)
    typed = page.param("subtask")
    return page.render(
        "task.html",
        status_code=status_code,
        title=f"{view['task']['key']} {view['task']['title']}",
        view=view,
        t=view["task"],
        shown=shown,
        form=shown if draft is None else {**shown, **draft.mine},
        theirs=theirs,
        waiting=waiting,
        refused=refused,
        edit_open=draft is not None and inline is None,
        inline=inline,
        said=None if inline is None else _inline_said(inline, theirs, waiting, refused),
        comment_refused=comment_refused,
        subtask_typed=typed[:200] if typed else None,
        history=history_rows(view, STATUS_LABELS, TYPE_LABELS),
        assignees=assignee_options(view["team"], view["task"], view["names"]),
        labels=STATUS_LABELS,
        statuses=COLUMNS,
        priorities=PRIORITIES,
        types=TYPE_LABELS,
        here=here_of(page),
        can_break=_may_break(page),
        comment_key=uuid.uuid4().hex,
        edit_key=uuid.uuid4().hex,
        subtask_key=uuid.uuid4().hex,
    )


def _inline_said(
    name: str,
    theirs: list[tuple[str, str, bool]],
    waiting: str | None,
    refused: tuple[str | None, str] | None,
) -> str:
    """Why a field changed in place was not saved, said beside it."""
    if waiting is not None:
        return "Not saved: a hand-in of this task waits for review; decide it first."
    if refused is not None:
        return f"Not saved: {refused[1]}"
    label = EDIT_FIELDS[name]
    for shown, value, _ in theirs:
        if shown == label:
            return (
                f"Not saved: someone changed the {label.lower()} meanwhile, to "
                f"“{value or '(empty)'}”. Your value is kept here: save again to replace it."
            )
    return "Not saved: someone changed this task meanwhile. Your value is kept: save again."


def _may_break(page: Page) -> bool:
    """Whether the page offers to break a claim: the role break_claim asks for (a person
    signed in to the web app; the service checks again)."""
    role = (page.project or {}).get("viewerRole")
    return role in set(Role) and Role(role).includes(Role.WRITE)


def break_claim(page: Page) -> Response:
    """Take a task's claim away from its holder (the claim the page showed, by its fence)."""
    ref = ref_of(page)
    raw = page.field("fence")
    fence = parse_whole("fence", raw, minimum=1) if raw else None
    back = _task_path(page, ref)
    try:
        claims.break_claim(page.db, page.actor, task=ref, project=page.project_key, fence=fence)
    except CrewboardError as error:
        return page.redirect(
            back, error=f"The claim on {ref} was not broken: {human_message(error)}"
        )
    return page.redirect(
        back,
        notice=f"Claim on {ref} broken: the task is free, and its holder's next write with that "
        "claim is refused.",
    )


def assignee_options(
    team: dict[str, Any], task: dict[str, Any], names: dict[str, str]
) -> list[tuple[str, list[tuple[str, str]]]]:
    """The assignee select's groups of (value, label): the team's roles with their kind, the
    project's people, and the current assignee when it is neither (an archived role), so the
    form never changes it unasked."""
    roles = [
        (role["id"], f"{role['name']} ({'AI' if role['kind'] == 'ai' else 'human'})")
        for role in team["roles"]
    ]
    people = [
        (person["userId"], person["displayName"] + (" (you)" if person.get("you") else ""))
        for person in team["people"]
    ]
    groups = [("Team roles", roles), ("People", people)]
    current = task.get("assigneeId")
    if current and current not in {value for _, options in groups for value, _ in options}:
        groups.append(("No longer on the team", [(current, names.get(current, "a former role"))]))
    return [(label, options) for label, options in groups if options]


# The edit form's fields: form name → label. `_patch` turns each into the task field it sets.
EDIT_FIELDS = {
    "title": "Title",
    "brief": "Brief",
    "description": "Description",
    "assignee": "Assignee",
    "type": "Type",
    "status": "Status",
    "priority": "Priority",
    "tags": "Tags",
    "due_date": "Due date",
    "parent": "Parent task",
    "blocked_by": "Blocked by",
}
# A refusal's field (as the service names it) → the form field to mark.
FORM_FIELD_OF = {
    "title": "title",
    "brief": "brief",
    "description": "description",
    "assigneeId": "assignee",
    "assigneeType": "assignee",
    "type": "type",
    "status": "status",
    "priority": "priority",
    "tags": "tags",
    "dueDate": "due_date",
    "parentTaskId": "parent",
    "blockedByTaskIds": "blocked_by",
}


def type_label(value: str) -> str:
    """A task type as people read it: game_design → Game design."""
    text = value.replace("_", " ")
    return text[:1].upper() + text[1:]


TYPE_LABELS = {kind.value: type_label(kind.value) for kind in TaskType}


def _key_of(project_key: str, number: int | None) -> str:
    return f"{project_key}-{number}" if number else ""


def _edit_values(t: dict[str, Any], project_key: str) -> dict[str, str]:
    """A task's values as the edit form shows them."""
    return {
        "title": t["title"],
        "brief": t.get("brief") or "",
        "description": t.get("description") or "",
        "assignee": t.get("assigneeId") or "",
        "type": t["type"],
        "status": t["status"],
        "priority": t["priority"],
        "tags": ", ".join(t.get("tags") or []),
        "due_date": t.get("dueDate") or "",
        "parent": _key_of(project_key, t.get("parentNumber")),
        "blocked_by": ", ".join(
            _key_of(project_key, n) for n in t.get("blockedByNumbers") or [] if n
        ),
    }


def task_ref(project_key: str, text: str) -> str:
    """A task named in a form as its key: `crw-3` → CRW-3, a bare `3` or `#3` → KEY-3."""
    ref = text.strip().lstrip("#").strip()
    return f"{project_key}-{ref}" if ref.isascii() and ref.isdigit() else ref.upper()


def _task_refs(project_key: str, text: str) -> list[str]:
    refs = (task_ref(project_key, part) for part in text.replace(" ", ",").split(","))
    return list(dict.fromkeys(ref for ref in refs if ref))


@dataclass(frozen=True)
class EditDraft:
    """What a person sent from the edit form: the values it showed (`was`) and theirs."""

    was: dict[str, str]
    sent: dict[str, str]
    project_key: str

    @classmethod
    def of(cls, page: Page) -> EditDraft:
        # A field the form did not carry (an older page) is not sent, so not changed.
        sent = {name: page.field(name) for name in EDIT_FIELDS if page.has_field(name)}
        # A form without the shown values (an older page) counts every field it sent as changed.
        was = {
            name: page.field(f"was_{name}") if page.has_field(f"was_{name}") else None
            for name in EDIT_FIELDS
        }
        return cls({k: v for k, v in was.items() if v is not None}, sent, page.project_key)

    @cached_property
    def mine(self) -> dict[str, str]:
        """The fields this person changed."""
        return {
            k: v
            for k, v in self.sent.items()
            if self.normal(k, v) != self.normal(k, self.was.get(k))
        }

    def theirs(self, current: dict[str, str]) -> list[tuple[str, str, bool]]:
        """Fields someone else changed since the form was shown: (label, their value, whether
        this person changed it too)."""
        mine = self.mine
        return [
            (label, current[name], name in mine)
            for name, label in EDIT_FIELDS.items()
            if name in self.was
            and self.normal(name, current[name]) != self.normal(name, self.was[name])
        ]

    def normal(self, name: str, value: str | None) -> object:
        """A field's value as compared: what saving it would set."""
        if value is None:
            return None
        if name == "tags":
            return tuple(_tags(value))
        if name == "blocked_by":
            return frozenset(_task_refs(self.project_key, value))
        if name == "parent":
            return task_ref(self.project_key, value)
        return value if name in ("brief", "description") else value.strip()

    def patch(self) -> dict[str, Any]:
        """update_task's patch for the fields this person changed."""
        patch: dict[str, Any] = {}
        for name, value in self.mine.items():
            if name == "tags":
                patch["tags"] = _tags(value)
            elif name == "priority":
                patch["priority"] = value.strip() or "medium"
            elif name == "due_date":
                patch["due_date"] = value.strip() or None
            elif name == "assignee":
                patch["assignee_id"] = value.strip() or None
            elif name in ("type", "status", "title"):
                patch[name] = value.strip()
            elif name == "parent":
                patch["parent_task_id"] = task_ref(self.project_key, value) or None
            elif name == "blocked_by":
                patch["blocked_by_task_ids"] = _task_refs(self.project_key, value)
            else:
                patch[name] = value
        return patch


def edit(page: Page) -> Response:
    """Save what the person changed in the edit form (only those fields). On a conflict the page
    comes back with their text in the form and the other change beside it; a refused value
    comes back the same way, the field named."""
    draft = EditDraft.of(page)
    mine = draft.mine
    inline = page.field("inline") if page.field("inline") in EDIT_FIELDS else None
    if not mine:
        return page.redirect(
            _task_path(page, ref_of(page)), notice="Nothing changed; nothing saved."
        )
    status = draft.normal("status", mine.get("status"))
    if status in board_pages.SETTLED:
        waiting = board_pages.waiting_hand_in(
            page.db, page.actor, project=page.project_key, task=ref_of(page)
        )
        if waiting is not None:
            page.flash = {
                "kind": "error",
                "text": f"Not saved: a hand-in of {ref_of(page)} waits for review, so it does "
                f"not move to {STATUS_LABELS[str(status)]} from here. Approve the hand-in (that "
                "settles the task), or reject it first. Your changes are still in the form.",
            }
            return _task_page(page, draft=draft, status_code=409, waiting=waiting, inline=inline)
    try:
        body = update_from_form(page, draft.patch())
    except RevisionConflict as conflict:
        show_conflict(page, conflict, "this task")
        return _task_page(page, draft=draft, status_code=409, inline=inline)
    except (ValidationFailed, LimitExceeded, PermissionDenied) as error:
        said = human_message(error)
        page.flash = {
            "kind": "error",
            "text": f"Not saved: {said} Your changes are still in the form.",
        }
        field = FORM_FIELD_OF.get(str(error.details.get("field", "")).rsplit(".", 1)[-1])
        return _task_page(
            page, draft=draft, status_code=error.http_status, refused=(field, said), inline=inline
        )
    key = body["task"]["key"]
    changed = ", ".join(EDIT_FIELDS[name].lower() for name in mine)
    return page.redirect(_task_path(page, key), notice=f"Saved {key} ({changed}).")


def subtasks(page: Page) -> Response:
    """Add an existing task as a subtask of this one (`add`: its key), or take one off
    (`remove`). The subtask changes, at whatever revision it is: this page never read it."""
    assert page.project is not None  # noqa: S101 - a project route
    parent = task_ref(page.project_key, ref_of(page))
    adding = page.field("add").strip()
    removing = page.field("remove").strip()
    if not adding and not removing:
        return page.redirect(
            _task_path(page, parent) + "#h-related",
            error=f"Subtask: type the key of a task to add (for example {page.project_key}-12).",
        )
    child = task_ref(page.project_key, adding or removing)
    # A refused addition comes back with its form open and the key as typed.
    refused_to = _task_path(page, parent) + (
        f"?{urlencode({'subtask': adding})}#add-subtask" if adding else "#h-related"
    )
    try:
        task_updates.set_task_parent(
            page.db,
            page.actor,
            project=page.project_key,
            workspace_id=page.project["workspaceId"],
            idempotency_key=form_key(page),
            task_id=child,
            parent_id=parent if adding else None,
            from_parent=None if adding else parent,
        )
    except NotFound:
        return page.redirect(
            refused_to,
            error=f"Subtask: {child} is not a task of {page.project_key}. Type the key of one "
            f"of its tasks, for example {page.project_key}-12.",
        )
    except CrewboardError as error:
        did = "added as a subtask" if adding else "taken off the subtasks"
        return page.redirect(
            refused_to,
            error=f"{child} was not {did}: {_subtask_words(human_message(error))}",
        )
    notice = (
        f"{child} is now a subtask of {parent}."
        if adding
        else f"{child} is no longer a subtask of {parent}."
    )
    return page.redirect(_task_path(page, parent) + "#h-related", notice=notice)


def _subtask_words(said: str) -> str:
    """The parent check speaks of the subtask's parent; on the parent's page say so."""
    return said.replace("Parent task: ", "", 1)


def comment(page: Page) -> Response:
    """Post a comment on the task."""
    assert page.project is not None  # noqa: S101 - a project route
    content = page.field("content")
    try:
        result = task_notes.post_comment(
            page.db,
            page.actor,
            task=ref_of(page),
            workspace_id=page.project["workspaceId"],
            content=content,
            idempotency_key=form_key(page),
            answer=comment_answer,
        )
    except (ValidationFailed, LimitExceeded) as error:
        said = human_message(error)
        page.flash = {
            "kind": "error",
            "text": f"Not posted: {said} Your text is still in the form.",
        }
        return _task_page(page, status_code=error.http_status, comment_refused=(content, said))
    return page.redirect(
        _task_path(page, ref_of(page)) + "#comments",
        notice="Comment posted." if not result.replayed else "That comment was already posted.",
    )


def output(page: Page) -> Response:
    """One output of a task as plain preformatted text (?version=N for an older one)."""
    raw = page.param("version")
    version = parse_whole("version", raw, minimum=1) if raw else None
    read = task_notes.get_output(
        page.db,
        page.actor,
        task=_task_in_project(page),
        name=str(page.request.path_params["name"]),
        version=version,
    )
    found = output_read_view(read)
    assert page.project is not None  # noqa: S101 - a project route
    if found["task"]["projectId"] != page.project["id"]:
        raise task_lookup.task_not_found(ref_of(page))
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
    *project_routes("tasks/{ref}/claim/break", post=break_claim),
    *project_routes("tasks/{ref}/subtasks", post=subtasks),
    *project_routes("tasks/{ref}/outputs/{name:path}", get=output),
    *project_routes("tasks/{ref}", get=task, post=edit),
]
