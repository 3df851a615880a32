"""Spec session tools: start a session that a person continues in the web app, find, read,
rename, archive, unarchive and delete sessions. No tool returns the conversation itself."""

from __future__ import annotations

from functools import partial
from typing import Any

from anyio import to_thread
from pydantic import Field

from crewboard.config import Settings
from crewboard.contract.args import Args, IdempotencyKey, Offset, ProjectRef, WorkspaceId
from crewboard.contract.operation import Area, Call, Cli, Rest
from crewboard.contract.reply import RESPONSE_BUDGET, Reply, paged_reply
from crewboard.contract.sessions import present
from crewboard.domain.identity.access import Scope, Toolset
from crewboard.domain.sessions import (
    MAX_PROMPT,
    MAX_REFERENCES,
    MAX_TITLE,
    PAGE_DEFAULT,
    PAGE_MAX,
    ArchiveFilter,
    Language,
    Mode,
    Status,
)
from crewboard.errors import ValidationFailed
from crewboard.services.sessions import sessions
from crewboard.services.sessions.context import session_context
from crewboard.services.sessions.waiting import wait_for_turn
from crewboard.services.sessions.workflows import workflows
from crewboard.services.text_windows import WINDOW_LIMIT, check_window, cut_text, window
from crewboard.storage.database import Database

_WRITE = (Scope.SPECS_WRITE,)
SessionRef = Field(min_length=1, max_length=64, description="The session's id (ses_…).")


def _workflow_help() -> str:
    """Each workflow with its mode, whether it is the default or reads the code (through a
    connected `crewboard reverse`), and the aliases it also answers to."""
    return "; ".join(
        f"{w.id} ({w.mode.value}{', default' if w.default else ''}"
        f"{', reads code' if w.reads_code else ''}"
        f"{''.join(f', alias {a}' for a in w.aliases)})"
        for w in workflows().values()
    )


class StartSpecSession(Args):
    project_id: ProjectRef
    workspace_id: WorkspaceId = None
    mode: Mode = Field(description="generate writes new spec files; edit changes existing ones.")
    prompt: str = Field(
        min_length=1,
        max_length=MAX_PROMPT,
        description="The opening message: the goal, what you know of the code and constraints.",
    )
    workflow_id: str | None = Field(
        default=None, max_length=64, description="A workflow of the mode; the mode's default if "
        "left out.",
    )  # fmt: skip
    language: Language = Field(
        default=Language.EN, description="What the session writes in; fixed once it starts."
    )
    model_id: str | None = Field(
        default=None, max_length=64, description="A configured model; the project's or the "
        "server's default if left out.",
    )  # fmt: skip
    attachment_ids: list[str] = Field(
        default_factory=list, max_length=MAX_REFERENCES,
        description="The project's attachments the session reads (att_…).",
    )  # fmt: skip
    spec_file_ids: list[str] = Field(
        default_factory=list, max_length=MAX_REFERENCES,
        description="The project's spec files the session works on (spf_…); edit needs these.",
    )  # fmt: skip
    session_title: str | None = Field(default=None, max_length=MAX_TITLE)
    idempotency_key: IdempotencyKey = None


class ListSpecSessions(Args):
    project_id: ProjectRef
    workspace_id: WorkspaceId = None
    archive_filter: ArchiveFilter = ArchiveFilter.ACTIVE
    status: Status | None = None
    query: str | None = Field(default=None, max_length=200, description="Words of the title.")
    limit: int = Field(default=PAGE_DEFAULT, ge=1, le=PAGE_MAX)
    offset: Offset = 0


class GetSpecSession(Args):
    project_id: ProjectRef
    workspace_id: WorkspaceId = None
    session_id: str = SessionRef
    include_context: bool = Field(
        default=False, description="Also the session's working context (at most 1 MiB)."
    )
    context_offset: Offset = Field(
        default=0, description="Read the working context in windows from here (code points)."
    )
    context_limit: int = Field(default=WINDOW_LIMIT, ge=1, le=WINDOW_LIMIT)


class RenameSpecSession(Args):
    project_id: ProjectRef
    workspace_id: WorkspaceId = None
    session_id: str = SessionRef
    title: str = Field(min_length=1, max_length=MAX_TITLE)


class SessionAction(Args):
    project_id: ProjectRef
    workspace_id: WorkspaceId = None
    session_id: str = SessionRef


def start_spec_session(call: Call, args: StartSpecSession) -> Reply:
    made = sessions.start_session(
        call.db, call.actor, project=args.project_id, workspace_id=args.workspace_ref(),
        mode=args.mode, prompt=args.prompt, workflow_id=args.workflow_id,
        language=args.language, model_id=args.model_id, attachment_ids=args.attachment_ids,
        spec_file_ids=args.spec_file_ids, title=args.session_title,
        idempotency_key=args.idempotency_key, answer=present.started_answer,
    )  # fmt: skip
    ack: dict[str, Any] = made.body
    db, settings = call.db, call.settings

    async def follow() -> Reply:
        answer = await first_reply(db, ack, settings)
        note = "Already started by this key: this is that session." if made.replayed else None
        return Reply(answer, note)

    return Reply(ack, follow=follow)


async def first_reply(db: Database, ack: dict[str, Any], settings: Settings) -> dict[str, Any]:
    """start_spec_session's answer once its wait for the first reply is over (on the event
    loop, holding no worker thread while it waits); REST answers the same."""
    waiting = await to_thread.run_sync(sessions.waiting_for_bridge, db, ack["sessionId"])
    if not waiting:
        await wait_for_turn(db, ack["turnId"], seconds=settings.session_first_turn_wait)
    first = await to_thread.run_sync(
        partial(sessions.first_turn, db, session_id=ack["sessionId"], turn_id=ack["turnId"])
    )
    return present.first_turn_answer(first, ack, settings.public_url)


def list_spec_sessions(call: Call, args: ListSpecSessions) -> Reply:
    found = sessions.list_sessions(
        call.db, call.actor, project=args.project_id,
        workspace_id=args.workspace_ref(), archive=args.archive_filter,
        status=args.status, query=args.query, limit=args.limit, offset=args.offset,
    )  # fmt: skip
    return paged_reply(present.page_answer(found), "sessions", args.offset)


def get_spec_session(call: Call, args: GetSpecSession) -> Reply:
    if args.given("context_offset") or args.given("context_limit"):
        return context_window(call, args)
    found = sessions.get_session(
        call.db, call.actor, project=args.project_id, workspace_id=args.workspace_ref(),
        ref=args.session_id,
    )  # fmt: skip
    body = present.found_answer(found, call.settings.public_url)
    if not args.include_context:
        return Reply(body)
    body["context"] = session_context(
        call.db, call.actor, project=args.project_id, ref=args.session_id
    )
    # The context may be 1 MiB; the answer holds 48 KiB: a prefix, flagged, read on in windows.
    fitted = cut_text(body, "context", RESPONSE_BUDGET)
    if not fitted.get("contextTruncated"):
        return Reply(fitted)
    note = (
        f"The context was cut ({fitted['contextLength']} characters): read on with "
        f"contextOffset {len(fitted['context'])}."
    )
    return Reply(fitted, note)


def context_window(call: Call, args: GetSpecSession) -> Reply:
    """One window of the session's working context (contextOffset, contextLimit).

    Raises:
        ValidationFailed: includeContext false with a window, bounds, an offset past the end.
    """
    if args.given("include_context") and not args.include_context:
        raise ValidationFailed.field(
            "contextOffset", "reads the working context: leave includeContext out or true."
        )
    check_window(
        args.context_offset, args.context_limit, offset_field="contextOffset",
        limit_field="contextLimit",
    )  # fmt: skip
    text = session_context(
        call.db, call.actor, project=args.project_id, ref=args.session_id,
        workspace_id=args.workspace_ref(),
    )  # fmt: skip
    body = window(
        {"sessionId": args.session_id, "field": "context"}, text, offset=args.context_offset,
        limit=args.context_limit, budget=RESPONSE_BUDGET, offset_field="contextOffset",
    )  # fmt: skip
    following = body["nextOffset"]
    note = None
    if following is not None:
        note = f"Pass contextOffset {following} for more ({body['length']} characters)."
    return Reply(body, note)


def rename_spec_session(call: Call, args: RenameSpecSession) -> Reply:
    return Reply(present.changed_answer(sessions.rename_session(
        call.db, call.actor, project=args.project_id, workspace_id=args.workspace_ref(),
        ref=args.session_id, title=args.title,
    )))  # fmt: skip


def archive_spec_session(call: Call, args: SessionAction) -> Reply:
    return Reply(present.changed_answer(sessions.set_archived(
        call.db, call.actor, project=args.project_id, workspace_id=args.workspace_ref(),
        ref=args.session_id, archived=True,
    )))  # fmt: skip


def unarchive_spec_session(call: Call, args: SessionAction) -> Reply:
    return Reply(present.changed_answer(sessions.set_archived(
        call.db, call.actor, project=args.project_id, workspace_id=args.workspace_ref(),
        ref=args.session_id, archived=False,
    )))  # fmt: skip


def delete_spec_session(call: Call, args: SessionAction) -> Reply:
    return Reply(present.deleted_answer(sessions.delete_session(
        call.db, call.actor, project=args.project_id, workspace_id=args.workspace_ref(),
        ref=args.session_id,
    )))  # fmt: skip


SPECS = Area(Toolset.SPECS, write_scopes=_WRITE)

OPERATIONS = (
    SPECS.read(
        "list_spec_sessions",
        "List spec sessions",
        f"A project's spec sessions, most recently active first ({PAGE_DEFAULT} a page, at "
        f"most {PAGE_MAX}): title, mode, status, pendingAction. archiveFilter active "
        "(default), archived or all; status; query matches the title.",
        ListSpecSessions,
        list_spec_sessions,
        Rest("GET", "/api/v1/projects/{project}/sessions"),
        Cli(("spec-session", "list")),
    ),
    SPECS.read(
        "get_spec_session",
        "Spec session details",
        "One session's status, what it waits for, counters, dates, link and warnings (no "
        "`crewboard reverse` connected for a session that reads code, a model without tools). "
        "includeContext: true adds its working context (the files it works on), cut to "
        "fit this answer (contextTruncated, contextLength): read the rest in windows with "
        "contextOffset. Never the conversation.",
        GetSpecSession,
        get_spec_session,
        Rest("GET", "/api/v1/projects/{project}/sessions/{session}"),
        Cli(("spec-session", "show")),
    ),
    SPECS.write(
        "start_spec_session",
        "Start a spec session",
        "Start an AI-guided spec session (the server's model) with your opening message, wait "
        "up to 75 s for its first reply, and give the person sessionUrl to continue it in the "
        "web app. Once per goal; after a timeout retry with the same idempotencyKey. "
        "Workflows: " + _workflow_help() + ". Never answer its questions yourself.",
        StartSpecSession,
        start_spec_session,
        Rest.created("/api/v1/projects/{project}/sessions"),
        Cli(("spec-session", "start")),
    ),
    SPECS.write(
        "rename_spec_session",
        "Rename a spec session",
        f"A new title, up to {MAX_TITLE} characters; archived sessions too.",
        RenameSpecSession,
        rename_spec_session,
        Rest("PATCH", "/api/v1/projects/{project}/sessions/{session}"),
        Cli(("spec-session", "rename")),
    ),
    SPECS.write(
        "archive_spec_session",
        "Archive a spec session",
        "Move a session out of the active list (it can be unarchived). A session "
        "must be archived before it can be deleted.",
        SessionAction,
        archive_spec_session,
        Rest("POST", "/api/v1/projects/{project}/sessions/{session}/archive"),
        Cli(("spec-session", "archive")),
    ),
    SPECS.write(
        "unarchive_spec_session",
        "Unarchive a spec session",
        "Bring an archived session back to the active list.",
        SessionAction,
        unarchive_spec_session,
        Rest("POST", "/api/v1/projects/{project}/sessions/{session}/unarchive"),
        Cli(("spec-session", "unarchive")),
    ),
    SPECS.write(
        "delete_spec_session",
        "Delete a spec session",
        "Delete an archived session and its conversation for good (spec files it "
        "saved stay). An active session is refused, never archived for you.",
        SessionAction,
        delete_spec_session,
        Rest("DELETE", "/api/v1/projects/{project}/sessions/{session}"),
        Cli(("spec-session", "delete")),
        idempotent=False,
        destructive=True,
    ),
)
