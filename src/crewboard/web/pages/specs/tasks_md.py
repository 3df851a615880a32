"""Web pages: the checkbox lines of a markdown spec file as real checkboxes.

A line `- [ ] title` (`[x]` done, `[-]` in progress; see domain/tasks_md) renders as a box the
person may tick, with its title, and in a `tasks.md` the task's key and board status; the
lines indented under it render as its detail (paragraphs, lists), never glued to the title.
Ticking a box posts the line and the version the page showed; the save is the file's next
revision, and in a `tasks.md` it moves the line's task as any save does. A script (static/
tasks_md.js) sends it without a reload; without one, each box's form has a Save button.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute

from crewboard.domain.tasks_md import Box, parse
from crewboard.domain.validation import parse_whole
from crewboard.errors import CrewboardError, RevisionConflict
from crewboard.services.specs.boxes import BoxSet, check_box_name, set_spec_file_box
from crewboard.services.specs.file_lookup import FileRef
from crewboard.web.context import Page, project_routes
from crewboard.web.render import by_name, when
from crewboard.web.spec_text import TASK_LINE, SpecText
from crewboard.web.wording import STATUS_LABELS, human_message

_BOX_WORDS = {Box.DONE: "done", Box.IN_PROGRESS: "in progress", Box.PENDING: "not done"}
_MARK = TASK_LINE  # the renderer's marker on a task's <li>; raw HTML is off, so only ours
_SPLIT = re.compile(rf'<li {_MARK}="(\d+)">')


@dataclass(frozen=True)
class TaskLine:
    """One checkbox line as the page shows it."""

    line: int
    box: str  # " ", "-" or "x"
    title: Markup
    task: dict[str, Any] | None  # key, title, status, line: its task on the board
    block: int | None = None  # the title's numbered block of text, when rendered for review

    @property
    def state(self) -> str:
        return {"x": "done", "-": "in-progress"}.get(self.box, "pending")

    @property
    def words(self) -> str:
        return _BOX_WORDS[Box(self.box)]


def review_document(
    spec: SpecText, text: str, tasks: list[dict[str, Any]] | None
) -> list[tuple[str, Any]] | None:
    """The rendered file as parts in order: ("html", Markup) and ("task", TaskLine), each task
    part opening its list item, from the file rendered for review (web/spec_text.py): each title
    is a numbered block of text a selection maps to the source; the box and the task's key
    and status around it are no text of the file. None when no line renders as a checkbox."""
    if not spec.titles:
        return None
    boxes = {item.line: item.box.value for item in parse(text.encode("utf-8"))}
    on_line = {t["line"]: t for t in tasks or [] if t.get("line")}
    shown = {
        line: TaskLine(line, boxes[line], title.html, on_line.get(line), title.block)
        for line, title in spec.titles.items()
    }
    return _parts(spec.html, shown)


def _parts(html: Markup, shown: dict[int, TaskLine]) -> list[tuple[str, Any]]:
    pieces = _SPLIT.split(str(html))
    parts: list[tuple[str, Any]] = [("html", Markup(pieces[0]))]  # noqa: S704 - cleaned above
    for number, rest in zip(pieces[1::2], pieces[2::2], strict=True):
        parts.append(("task", shown[int(number)]))
        parts.append(("html", Markup(rest)))  # noqa: S704 - cleaned above
    return parts


def checkboxes(
    page: Page,
    file: dict[str, Any],
    window: dict[str, Any] | None,
    tasks: list[dict[str, Any]] | None,
    spec: SpecText | None = None,
) -> dict[str, Any]:
    """What the file page needs to show a markdown window's checkbox lines (`tasks_doc` None:
    none to show), and whether this person may tick them here, or why not. With `spec` (the
    window rendered for review) the titles are its numbered text, so words in them can be
    selected and commented on like any other."""
    if window is None or window.get("nextOffset"):
        return {"tasks_doc": None}
    current = window["revision"] == file["revisionCount"]
    on_board = tasks if current else None
    if spec is None:  # a compared pair of revisions: the text is not shown
        return {"tasks_doc": None}
    doc = review_document(spec, window["text"], on_board)
    why = None
    assert page.project is not None  # noqa: S101 - a project route
    if file.get("trashed"):
        why = "The file is in the trash bin: restore it to tick its boxes."
    elif not current:
        why = f"Revision {window['revision']} is an older one: open the current text to tick boxes."
    elif page.project.get("viewerRole") not in ("write", "admin"):
        why = "You can read this project: ticking a box needs the write role."
    return {
        "tasks_doc": doc,
        "boxes_open": why is None,
        "boxes_why": why,
        "boxes_version": window["contentVersion"],
    }


# --- a save that removes task lines --------------------------------------------------------------

LEAVING_FIELD = "leaving."  # + a task id: `done` or `keep`, what becomes of the task


def leaving_choices(page: Page) -> dict[str, str]:
    """The edit form's choices for the tasks whose lines the text removes (task id → `done`
    or `keep`); the service checks every such task has one, and only these values."""
    if page.form is None:
        return {}
    return {
        name.removeprefix(LEAVING_FIELD): page.field(name)
        for name in page.form
        if name.startswith(LEAVING_FIELD)
    }


def leaving_question(error: CrewboardError) -> list[dict[str, Any]] | None:
    """The tasks a refused save would take out of the file, when that is why it was refused
    (the edit page then asks what becomes of each); None for any other refusal."""
    details = error.details or {}
    if details.get("field") != "removedTasks" or not details.get("tasks"):
        return None
    return list(details["tasks"])


# --- ticking a box -----------------------------------------------------------------------------


def _wants_json(page: Page) -> bool:
    return "application/json" in page.request.headers.get("accept", "")


def spec_box(page: Page) -> Response:
    """Tick or untick one box: fields `line`, `box` (`done` when ticked; absent or `pending`
    when not; `in_progress`), `expected_version` (the version the page showed)."""
    file_id = str(page.request.path_params["file_id"])
    back = page.path(f"specs/files/{file_id}")
    raw_line = page.field("line").strip()
    try:
        line = parse_whole("line", raw_line, minimum=1)
        done = set_spec_file_box(
            page.db,
            page.actor,
            project=page.project_key,
            workspace_id=_workspace(page),
            ref=FileRef(file_id=file_id),
            line=line,
            box=check_box_name(page.field("box") or "pending"),
            expected_version=page.field("expected_version"),
        )
    except CrewboardError as error:
        said = _refusal(error)
        if _wants_json(page):
            body = {"ok": False, "error": said, "conflict": isinstance(error, RevisionConflict)}
            return JSONResponse({**body, "reload": back}, status_code=error.http_status)
        return page.redirect(f"{back}#task-line-{raw_line}", error=said)
    said = _notice(done, line)
    if _wants_json(page):
        return JSONResponse(_answer(done, line, said))
    return page.redirect(f"{back}#task-line-{line}", notice=said)


def _refusal(error: CrewboardError) -> str:
    if isinstance(error, RevisionConflict):
        details = error.details
        who = by_name(details.get("updatedBy"))
        return (
            f"Not saved: {who} saved revision {details.get('currentRevision')} of this file at "
            f"{when(details.get('updatedAt'))}, after this page was opened. Nothing was lost: "
            "their text is kept and your box was not changed; tick it again on the new text."
        )
    return f"Not saved: {human_message(error)}"


def _notice(done: BoxSet, line: int) -> str:
    what = f"Line {line} marked {_BOX_WORDS[done.box]}"
    if not done.saved:
        return f"{what} already; nothing to save."
    said = f"{what}: saved revision {done.file.revision_count}."
    if done.task is not None:
        label = STATUS_LABELS.get(done.task.status, done.task.status)
        said += f" {done.task.key} is in {label} on the board."
    return said


def _answer(done: BoxSet, line: int, said: str) -> dict[str, Any]:
    task = done.task
    return {
        "ok": True,
        "notice": said,
        "line": line,
        "box": done.box.value,
        "revision": done.file.revision_count,
        "contentVersion": done.file.content_version,
        "task": None
        if task is None
        else {
            "key": task.key,
            "status": task.status,
            "statusLabel": STATUS_LABELS.get(task.status, task.status),
        },
    }


def _workspace(page: Page) -> str | None:
    assert page.project is not None  # noqa: S101 - a project route
    workspace: str | None = page.project["workspaceId"]
    return workspace


ROUTES: list[BaseRoute] = [
    *project_routes("specs/files/{file_id}/box", post=spec_box),
]
