"""Live events for outside clients: `GET /api/v1/projects/{project}/events` as Server-Sent
Events, for a stream token (`cbs_…`, made with create_stream_token), an API token or a
signed-in browser.

Every change event of the project goes out in commit order as `id: N` and one JSON line (its
type, ids, time, who, and its payload). `Last-Event-ID` (or `?after=N`) resumes exactly after
N; an id this server cannot resume from (newer than its newest event) gets an `event: reset`
that says so, then the stream goes on from now. Heartbeats keep a quiet stream open. A stream
ends with an `event: end` and its reason when its token is revoked or runs out, when the client
falls too far behind, or when the server stops. The streaming itself is `crewboard.web.sse`.
"""

from __future__ import annotations

import json
from functools import partial
from typing import Any

from anyio import to_thread
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from crewboard.api.auth import bearer_secret
from crewboard.api.errors import error_response
from crewboard.domain.identity.tokens import STREAM_PREFIX
from crewboard.errors import CrewboardError, NotFound, Unauthenticated
from crewboard.services.identity.access import access_project
from crewboard.services.identity.stream_tokens import still_valid, stream_grant
from crewboard.services.identity.tokens import authenticate_token
from crewboard.services.identity.web_sessions import session_of
from crewboard.services.live import Subscription
from crewboard.services.views import iso
from crewboard.storage.database import Database
from crewboard.web.context import SESSION_COOKIE
from crewboard.web.sse import BACKFILL, Stream, open_stream


def event_lines(row: dict[str, Any]) -> str:
    data = {
        "id": row["id"],
        "type": row["type"],
        "projectId": row["project_id"],
        "taskId": row.get("task_id"),
        "at": iso(row["created_at"]),
        "actor": row.get("actor"),
        "payload": row.get("payload"),
    }
    return f"id: {row['id']}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"


def _project_for_grant(db: Database, ref: str, allowed: tuple[str, ...], user_id: str) -> str:
    def work(uow: Any) -> str:
        found = None if "\x00" in ref else uow.projects.get_with_role(ref, user_id)
        if found is None or found[0].id not in allowed or found[1] is None:
            raise NotFound(
                f"This stream token does not follow project {ref!r}.",
                {"resource": "project", "ref": ref},
            )
        return str(found[0].id)

    return db.read(work)


def _project_for_actor(db: Database, actor: Any, ref: str) -> str:
    return str(db.read(lambda uow: access_project(uow, actor, ref)).project.id)


async def _who(request: Request, db: Database, ref: str) -> tuple[str, str, str | None]:
    """(the project id, the stream's holder, the stream token to check again, if any).

    Raises:
        Unauthenticated, NotFound, PermissionDenied.
    """
    header = request.headers.get("authorization")
    if header is None and (cookie := request.cookies.get(SESSION_COOKIE)):
        signed_in = await to_thread.run_sync(session_of, db, cookie)
        if signed_in is None:
            raise Unauthenticated("Sign in again, or send a token.")
        project = await to_thread.run_sync(_project_for_actor, db, signed_in.actor, ref)
        return project, f"session:{signed_in.actor.user_id}", None
    secret = bearer_secret(header)
    if secret.startswith(STREAM_PREFIX):
        grant = await to_thread.run_sync(stream_grant, db, secret)
        if grant is None:
            raise Unauthenticated("This stream token is unknown, revoked or expired.")
        project = await to_thread.run_sync(
            _project_for_grant, db, ref, grant.project_ids, grant.user_id
        )
        return project, grant.token_id, grant.token_id
    actor = await to_thread.run_sync(authenticate_token, db, secret)
    project = await to_thread.run_sync(_project_for_actor, db, actor, ref)
    return project, actor.principal, None


def _log_after(db: Database, project: str, after: int) -> list[dict[str, Any]]:
    return db.read(
        lambda uow: uow.events.list_after(project_id=project, after_id=after, limit=BACKFILL)
    )


async def project_events(request: Request) -> Response:
    db: Database = request.app.state.db
    try:
        project, holder, stream_token = await _who(request, db, request.path_params["project"])
    except CrewboardError as error:
        return error_response(error)

    def make(sub: Subscription) -> Stream:
        return Stream(
            request,
            sub,
            event_lines,
            partial(_log_after, db, project),
            None if stream_token is None else partial(still_valid, db, stream_token),
        )

    return open_stream(request.app.state.broker, request, frozenset({project}), holder, make)


ROUTES = [Route("/api/v1/projects/{project}/events", project_events, methods=["GET"])]
