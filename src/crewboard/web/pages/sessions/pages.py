"""Web pages: a project's spec sessions. The list (active, archived or all; by status; by words
of the title; 20 a page) with the form that starts one; one session's page (the conversation,
the turn in progress, what waits for the person); renaming, archiving and deleting.

Starting a session only queues its first turn: the page it redirects to streams the reply in
(`stream.py`), so no request here waits on a model. What the person decides on the page is in
`decisions.py`.
"""

from __future__ import annotations

import uuid
from enum import StrEnum
from typing import Any, TypeVar

from starlette.responses import Response
from starlette.routing import BaseRoute

from crewboard.contract.sessions import present
from crewboard.domain.sessions import (
    LANGUAGE_NAMES,
    PAGE_MAX,
    ArchiveFilter,
    Language,
    Mode,
    Status,
)
from crewboard.domain.validation import parse_whole
from crewboard.errors import CrewboardError, ValidationFailed
from crewboard.services.sessions import conversation, sessions
from crewboard.services.sessions.workflows import workflows
from crewboard.web.context import Page, project_routes
from crewboard.web.diffs import diff_rows
from crewboard.web.forms import show_refusal

E = TypeVar("E", bound=StrEnum)
PAGE_SIZE = PAGE_MAX  # 20 a page
STATUS_WORDS = {
    "running": "Writing a reply",
    "waiting": "Waiting for you",
    "failed": "Failed",
    "stopped": "Stopped",
}
PENDING_WORDS = {
    "spec_file_pending_decision": "a proposed file to accept or send back",
    "review_feedback_pending": "review findings to decide on",
    "mcq_form_pending": "questions to answer",
    "user_choice_pending": "a choice to make",
    "turn_still_running": "the model's reply",
    "none": "your next message",
}
TOOL_WORDS = {"list_folder": "listed", "read_file": "read", "search_text": "searched"}
REFUSAL_WORDS = {
    "outside_folder": "outside the folder",
    "secret": "may hold secrets",
    "ignored": "ignored by .gitignore",
    "not_found": "not found",
    "not_text": "not text",
    "too_large": "too large",
    "bad_arguments": "arguments the tool does not take",
}
READ_STATES = {"queued": "waiting for the bridge", "taken": "being read", "failed": "not answered"}


def choice(kind: type[E], name: str, raw: str, default: E | None = None) -> E | None:
    """A form or query value as one of an enum's values (empty: the default).

    Raises:
        ValidationFailed: naming the field and the values it takes.
    """
    if not raw:
        return default
    try:
        return kind(raw)
    except ValueError:
        raise ValidationFailed.field(
            name, f"{raw!r} is not one of these.", [str(v.value) for v in kind]
        ) from None


def workspace(page: Page) -> str | None:
    assert page.project is not None  # noqa: S101 - a project route
    found: str | None = page.project["workspaceId"]
    return found


def session_id(page: Page) -> str:
    return str(page.request.path_params["session_id"])


# --- the list -----------------------------------------------------------------------------------


def session_list(page: Page) -> Response:
    return _list_page(page, typed={})


def _list_page(page: Page, *, typed: dict[str, str], status_code: int = 200) -> Response:
    archive = choice(ArchiveFilter, "archive", page.param("archive"), ArchiveFilter.ACTIVE)
    status = choice(Status, "status", page.param("status"))
    raw_offset = page.param("offset").strip()
    offset = parse_whole("offset", raw_offset) if raw_offset else 0
    query = page.param("q").strip()
    found = present.page_answer(sessions.list_sessions(
        page.db, page.actor, project=page.project_key, archive=archive or ArchiveFilter.ACTIVE,
        status=status, query=query or None, limit=PAGE_SIZE, offset=offset,
    ))  # fmt: skip
    choices = present.choices_view(
        conversation.session_choices(page.db, page.actor, project=page.project_key)
    )
    return page.render(
        "sessions.html",
        status_code=status_code,
        title="Spec sessions",
        found=found,
        choices=choices,
        archive=archive,
        status=status.value if status else "",
        query=query,
        offset=offset,
        page_size=PAGE_SIZE,
        statuses=STATUS_WORDS,
        pending_words=PENDING_WORDS,
        workflows=[w.view() for w in workflows().values()],
        languages=LANGUAGE_NAMES,
        typed=typed,
        new_key=uuid.uuid4().hex,
    )


def session_start(page: Page) -> Response:
    """Start a session for the signed-in person and open it; its first reply streams in there."""
    typed = {name: page.field(name) for name in ("mode", "workflow", "language", "model",
                                                  "title", "prompt")}  # fmt: skip
    try:
        made = sessions.start_session(
            page.db, page.actor, project=page.project_key, workspace_id=workspace(page),
            mode=choice(Mode, "mode", typed["mode"], Mode.GENERATE) or Mode.GENERATE,
            prompt=typed["prompt"], workflow_id=typed["workflow"] or None,
            language=choice(Language, "language", typed["language"], Language.EN) or Language.EN,
            model_id=typed["model"] or None, title=typed["title"].strip() or None,
            idempotency_key=page.field("key") or None, answer=present.started_answer,
        )  # fmt: skip
    except CrewboardError as error:
        show_refusal(page, error)
        return _list_page(page, typed=typed, status_code=error.http_status)
    return page.redirect(page.path(f"sessions/{made.body['sessionId']}"))


# --- one session --------------------------------------------------------------------------------


def session_page(page: Page) -> Response:
    return show_session(page, typed={})


def show_session(
    page: Page, *, typed: dict[str, Any], status_code: int = 200, ref: str | None = None
) -> Response:
    """The session page, with what the person typed kept in its forms (after a refusal)."""
    shown = _read(page, ref or session_id(page))
    proposals = [_with_diff(p, shown["currentFiles"]) for p in shown["proposals"]]
    pending = [p for p in proposals if p["status"] == "pending"]
    turn = shown["turn"]
    running = bool(turn) and turn["status"] in ("queued", "running")
    return page.render(
        "session.html",
        status_code=status_code,
        title=shown["session"]["title"],
        shown=shown,
        s=shown["session"],
        pending=pending,
        saved=[p for p in proposals if p["kind"] == "file" and p["status"] == "accepted"],
        turn=turn,
        running=running,
        failed=bool(turn) and turn["status"] == "failed",
        can_write=shown["canWrite"],
        statuses=STATUS_WORDS,
        pending_words=PENDING_WORDS,
        languages=LANGUAGE_NAMES,
        workflow=workflows().get(shown["session"]["workflowId"]),
        tool_words=TOOL_WORDS,
        refusal_words=REFUSAL_WORDS,
        read_states=READ_STATES,
        typed=typed,
        here=page.path(f"sessions/{shown['session']['id']}"),
    )


def _read(page: Page, ref: str) -> dict[str, Any]:
    return present.screen_view(
        conversation.session_page(page.db, page.actor, project=page.project_key, ref=ref)
    )


def _with_diff(proposal: dict[str, Any], current: dict[str, str | None]) -> dict[str, Any]:
    """A pending file proposal with its diff against the file as it is now (none: a new file)."""
    if proposal["kind"] != "file" or proposal["status"] != "pending":
        return proposal
    before = current.get(proposal["id"])
    content = str(proposal["body"].get("content", ""))
    if before is None:
        return {**proposal, "isNew": True, "rows": [], "content": content}
    rows = diff_rows(before, content, f"{proposal['path']} now", "proposed")
    return {**proposal, "isNew": False, "rows": rows, "same": not rows, "content": content}


def session_rename(page: Page) -> Response:
    try:
        sessions.rename_session(
            page.db, page.actor, project=page.project_key, workspace_id=workspace(page),
            ref=session_id(page), title=page.field("title"),
        )  # fmt: skip
    except CrewboardError as error:
        show_refusal(page, error)
        return show_session(page, typed={"title": page.field("title")},
                            status_code=error.http_status)  # fmt: skip
    return page.redirect(page.path(f"sessions/{session_id(page)}"), notice="Renamed.")


def session_archive(page: Page) -> Response:
    archived = page.field("archived") == "1"
    sessions.set_archived(
        page.db, page.actor, project=page.project_key, workspace_id=workspace(page),
        ref=session_id(page), archived=archived,
    )  # fmt: skip
    notice = "Archived: it shows under Archived sessions." if archived else "Back among the active."
    return page.redirect(page.path(f"sessions/{session_id(page)}"), notice=notice)


def session_delete(page: Page) -> Response:
    done = sessions.delete_session(
        page.db, page.actor, project=page.project_key, workspace_id=workspace(page),
        ref=session_id(page),
    )  # fmt: skip
    return page.redirect(
        page.path("sessions?archive=archived"),
        notice=f"Deleted the session {done.id}; the spec files it saved stay.",
    )


ROUTES: list[BaseRoute] = [
    *project_routes("sessions", get=session_list, post=session_start),
    *project_routes("sessions/{session_id}", get=session_page),
    *project_routes("sessions/{session_id}/rename", post=session_rename),
    *project_routes("sessions/{session_id}/archive", post=session_archive),
    *project_routes("sessions/{session_id}/delete", post=session_delete),
]
