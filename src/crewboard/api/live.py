"""Live events for outside clients: `GET /api/v1/projects/{project}/events` as Server-Sent
Events, for a stream token (`cbs_…`, made with create_stream_token), an API token or a
signed-in browser.

Every change event of the project goes out in commit order as `id: N` and one JSON line (its
type, ids, time, who, and its payload). `Last-Event-ID` (or `?after=N`) resumes exactly after
N; an id this server cannot resume from (newer than its newest event) gets an `event: reset`
that says so, then the stream goes on from now. Heartbeats keep a quiet stream open. A stream
ends with an `event: end` and its reason when its credential ends (a token, stream token or the
credential that made it revoked or run out, a sign-out, the person's role removed), when the
client falls too far behind, or when the server stops. Who may open one and what ends it is
`crewboard.services.stream_access`; the streaming itself is `crewboard.http.sse`.
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
from crewboard.errors import CrewboardError
from crewboard.http.cookies import SESSION_COOKIE
from crewboard.http.sse import BACKFILL, Stream, open_stream
from crewboard.services.live import Subscription
from crewboard.services.stream_access import StreamAccess, rest_stream_access
from crewboard.services.views import event_view
from crewboard.storage.database import Database


def event_lines(row: dict[str, Any]) -> str:
    data = event_view(row)
    return f"id: {row['id']}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"


async def _access(request: Request, db: Database, ref: str) -> StreamAccess:
    """The stream's project, room and credential checks: a bearer secret, else the session.

    Raises:
        Unauthenticated, NotFound, PermissionDenied.
    """
    header = request.headers.get("authorization")
    cookie = request.cookies.get(SESSION_COOKIE)
    secret = None if header is None and cookie else bearer_secret(header)
    return await to_thread.run_sync(
        partial(rest_stream_access, db, ref, secret=secret, cookie=cookie)
    )


def _log_after(db: Database, project: str, after: int) -> list[dict[str, Any]]:
    return db.read(
        lambda uow: uow.events.list_after(project_id=project, after_id=after, limit=BACKFILL)
    )


async def project_events(request: Request) -> Response:
    db: Database = request.app.state.db
    try:
        access = await _access(request, db, request.path_params["project"])
    except CrewboardError as error:
        return error_response(error)
    (project,) = access.project_ids

    def make(sub: Subscription) -> Stream:
        return Stream(request, sub, event_lines, partial(_log_after, db, project), access.recheck)

    broker = request.app.state.broker
    return open_stream(broker, request, frozenset({project}), access.claim, make)


ROUTES = [Route("/api/v1/projects/{project}/events", project_events, methods=["GET"])]
