"""REST for spec sessions under /api/v1/projects/{project}/sessions: list, start (waiting for
the first reply as start_spec_session does), details (with the working context on request),
rename, archive, unarchive and delete an archived one; and a project's default model under
…/session-settings.

Bodies and queries are checked by the MCP tools' argument models (camelCase), so a bad value
is refused with the same code and field. No route returns the conversation itself: the person
continues a session in the web app, at its sessionUrl.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field
from starlette.requests import Request

from crewboard.api.common import (
    IDEMPOTENCY_KEY,
    OPTIONAL_WORKSPACE,
    Created,
    Endpoint,
    Handler,
    keyed_body,
    model_without,
    parse_args,
    query_params,
    read_body,
    reads_headers,
    refuse_carried,
    run_service,
    workspace_of,
)
from crewboard.api.operations import endpoint_for, run_made
from crewboard.config import Settings
from crewboard.contract import args as a
from crewboard.contract.reply import RESPONSE_BUDGET
from crewboard.contract.sessions import present
from crewboard.contract.sessions import sessions as contract
from crewboard.contract.sessions.sessions import (
    GetSpecSession,
    ListSpecSessions,
    RenameSpecSession,
    SessionAction,
    StartSpecSession,
    first_reply,
)
from crewboard.domain.identity.records import Actor
from crewboard.services.sessions import models, sessions
from crewboard.services.sessions.context import session_context
from crewboard.services.text_windows import cut_text
from crewboard.storage.database import Database

P = "/api/v1/projects/{project}"
S = f"{P}/sessions"
ONE = f"{S}/{{session}}"


def _carried(data: dict[str, Any]) -> dict[str, Any]:
    return refuse_carried(
        data, ("projectId", "sessionId"), "the path names the project and the session"
    )


def _named(request: Request, data: dict[str, Any]) -> dict[str, Any]:
    """`data` with the project and the session the path names."""
    path = request.path_params
    return {**data, "projectId": path["project"], "sessionId": path["session"]}


async def list_spec_sessions(request: Request) -> dict[str, Any]:
    query = query_params(request, ListSpecSessions)
    args = parse_args(
        ListSpecSessions, {**query, "projectId": request.path_params["project"]}, strict=False
    )
    return await run_service(
        request,
        lambda db, actor: present.page_answer(sessions.list_sessions(
            db, actor, project=args.project_id, archive=args.archive_filter,
            status=args.status, query=args.query, limit=args.limit, offset=args.offset,
        )),
    )  # fmt: skip


@reads_headers(IDEMPOTENCY_KEY)
async def start_spec_session(request: Request) -> Created:
    """Start a session, then wait for its first reply on the event loop (holding no worker
    thread), as start_spec_session does; the answer says how far the reply got."""
    data = _carried(await keyed_body(request))
    workspace = workspace_of(data)
    args = parse_args(
        StartSpecSession,
        {"workspaceId": None, **data, "projectId": request.path_params["project"]},
    )
    made = await run_service(
        request,
        lambda db, actor: sessions.start_session(
            db, actor, project=args.project_id, workspace_id=workspace, mode=args.mode,
            prompt=args.prompt, workflow_id=args.workflow_id, language=args.language,
            model_id=args.model_id, attachment_ids=args.attachment_ids,
            spec_file_ids=args.spec_file_ids, title=args.session_title,
            idempotency_key=args.idempotency_key, answer=present.started_answer,
        ),
    )  # fmt: skip
    settings: Settings = request.app.state.settings
    answer = await first_reply(request.app.state.db, made.body, settings)
    return Created({**answer, "replayed": made.replayed})


async def get_spec_session(request: Request) -> dict[str, Any]:
    """A session's facts and link; with includeContext its working context, cut (and flagged)
    to what one answer holds as get_spec_session cuts it; with contextOffset or contextLimit
    one window of it."""
    args = parse_args(
        GetSpecSession, _named(request, query_params(request, OneQuery)), strict=False
    )
    if args.given("context_offset") or args.given("context_limit"):
        return (await run_made(request, contract.context_window, args)).body
    public_url = request.app.state.settings.public_url

    def read(db: Database, actor: Actor) -> dict[str, Any]:
        found = sessions.get_session(db, actor, project=args.project_id, ref=args.session_id)
        body = present.found_answer(found, public_url)
        if not args.include_context:
            return body
        body["context"] = session_context(db, actor, project=args.project_id, ref=args.session_id)
        return cut_text(body, "context", RESPONSE_BUDGET)

    return await run_service(request, read)


async def rename_spec_session(request: Request) -> dict[str, Any]:
    data = _carried(await read_body(request))
    workspace = workspace_of(data)
    args = parse_args(RenameSpecSession, _named(request, {"workspaceId": None, **data}))
    return await run_service(
        request,
        lambda db, actor: present.changed_answer(sessions.rename_session(
            db, actor, project=args.project_id, workspace_id=workspace, ref=args.session_id,
            title=args.title,
        )),
    )  # fmt: skip


async def _target(request: Request) -> tuple[SessionAction, Any]:
    """The session the path names, and the workspace the optional body checks."""
    data = _carried(await read_body(request))
    args = parse_args(SessionAction, _named(request, {"workspaceId": None, **data}))
    return args, workspace_of(data)


def _archive(archived: bool) -> Handler:
    async def handler(request: Request) -> dict[str, Any]:
        args, workspace = await _target(request)
        return await run_service(
            request,
            lambda db, actor: present.changed_answer(sessions.set_archived(
                db, actor, project=args.project_id, workspace_id=workspace,
                ref=args.session_id, archived=archived,
            )),
        )  # fmt: skip

    return handler


async def delete_spec_session(request: Request) -> dict[str, Any]:
    args, workspace = await _target(request)
    return await run_service(
        request,
        lambda db, actor: present.deleted_answer(
            sessions.delete_session(
                db, actor, project=args.project_id, workspace_id=workspace, ref=args.session_id
            )
        ),
    )


async def put_session_settings(request: Request) -> dict[str, Any]:
    data = refuse_carried(await read_body(request), ("projectId",), "the path names the project")
    args = parse_args(SettingsBody, data)
    project = request.path_params["project"]
    return await run_service(
        request,
        lambda db, actor: present.project_model_answer(
            models.set_project_model(db, actor, project=project, model_id=args.model_id)
        ),
    )


async def get_session_settings(request: Request) -> dict[str, Any]:
    project = request.path_params["project"]
    return await run_service(
        request,
        lambda db, actor: present.project_model_answer(
            models.get_project_model(db, actor, project=project)
        ),
    )


# --- what OpenAPI shows of the queries and bodies ----------------------------------------------

_NAMED = ("project_id", "session_id")
OneQuery = model_without("SpecSessionQuery", GetSpecSession, drop=_NAMED)
StartBody = model_without(
    "SpecSessionStartBody",
    StartSpecSession,
    drop=("project_id",),
    workspace_id=OPTIONAL_WORKSPACE,
)
RenameBody = model_without(
    "SpecSessionRenameBody", RenameSpecSession, drop=_NAMED, workspace_id=OPTIONAL_WORKSPACE
)
TargetBody = model_without(
    "SpecSessionTargetBody", SessionAction, drop=_NAMED, workspace_id=OPTIONAL_WORKSPACE
)


class SettingsBody(a.Args):
    """A project's default model for new sessions."""

    model_id: str | None = Field(
        max_length=64,
        description="A configured model's id, or null for the server's default.",
    )


ENDPOINTS: tuple[Endpoint, ...] = (
    endpoint_for(
        "list_spec_sessions",
        list_spec_sessions,
        "The project's spec sessions, most recently active first (archiveFilter, status, "
        "query on the title), paged",
        query=ListSpecSessions,
    ),
    endpoint_for(
        "start_spec_session",
        start_spec_session,
        "Start a spec session with an opening message and wait for its first reply (up to 75 s "
        "by default): assistantText, pendingAction, sessionUrl for the person who continues "
        "it, firstTurnError when it could not run (Idempotency-Key header)",
        StartBody,
    ),
    endpoint_for(
        "get_spec_session",
        get_spec_session,
        "A spec session's status, what it waits for, counters and link; never the "
        "conversation. includeContext: its working context, cut to one answer (contextTruncated, "
        "contextLength); contextOffset and contextLimit read it in windows",
        query=OneQuery,
    ),
    endpoint_for(
        "rename_spec_session",
        rename_spec_session,
        "Rename a spec session (archived ones too)",
        RenameBody,
    ),
    endpoint_for(
        "delete_spec_session",
        delete_spec_session,
        "Delete an archived spec session and its conversation (spec files it saved stay)",
        TargetBody,
    ),
    endpoint_for(
        "archive_spec_session",
        _archive(True),
        "Archive a spec session (a second call changes nothing)",
        TargetBody,
    ),
    endpoint_for(
        "unarchive_spec_session",
        _archive(False),
        "Bring an archived spec session back to the active list",
        TargetBody,
    ),
    Endpoint(
        f"{P}/session-settings",
        "GET",
        get_session_settings,
        "The project's default model for new spec sessions (null: the server's default)",
    ),
    Endpoint(
        f"{P}/session-settings",
        "PUT",
        put_session_settings,
        "Set the project's default model for new spec sessions (null: the server's default; "
        "the project's admins)",
        SettingsBody,
    ),
)
