"""Live events for outside clients: `GET /api/v1/projects/{project}/events` as Server-Sent
Events, for a stream token (`cbs_…`, made with create_stream_token), an API token or a
signed-in browser.

Every change event of the project goes out in commit order as `id: N` and one JSON line (its
type, ids, time, who, and its payload). `Last-Event-ID` (or `?after=N`) resumes exactly after
N; an id this server cannot resume from (newer than its newest event) gets an `event: reset`
that says so, then the stream goes on from now. A comment line every HEARTBEAT seconds keeps
proxies from closing a quiet stream. A stream ends with an `event: end` and its reason when
its token is revoked or runs out, when the client falls too far behind, or when the server
stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from anyio import to_thread
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from crewboard.api.auth import bearer_secret
from crewboard.api.errors import error_response
from crewboard.domain.identity.tokens import STREAM_PREFIX
from crewboard.errors import CrewboardError, NotFound, Unauthenticated
from crewboard.services.identity.access import access_project
from crewboard.services.identity.stream_tokens import still_valid, stream_grant
from crewboard.services.identity.tokens import authenticate_token
from crewboard.services.identity.web_sessions import session_of
from crewboard.services.live import Broker, StreamRefused, Subscription
from crewboard.services.views import iso
from crewboard.storage.database import Database
from crewboard.web.context import SESSION_COOKIE

HEARTBEAT = 15.0  # seconds between comments on a quiet stream
CHECK = 2.0  # seconds between checks that the stream's token still works
BACKFILL = 500  # events read from the log at a time while catching up


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


def control(kind: str, reason: str, **more: Any) -> str:
    return f"event: {kind}\ndata: {json.dumps({'reason': reason, **more})}\n\n"


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


def _resume_point(request: Request) -> int | None:
    raw = request.headers.get("last-event-id") or request.query_params.get("after")
    if raw is None:
        return None
    raw = raw.strip()
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 18):
        return -1
    return int(raw)


async def project_events(request: Request) -> Response:
    db: Database = request.app.state.db
    broker: Broker = request.app.state.broker
    try:
        project, holder, stream_token = await _who(request, db, request.path_params["project"])
    except CrewboardError as error:
        return error_response(error)
    try:
        sub = broker.subscribe({project}, holder)
    except StreamRefused as refused:
        return JSONResponse(
            {"error": {"code": "LIMIT_EXCEEDED", "message": refused.reason, "details": {}}},
            status_code=refused.status,
            headers={"retry-after": "5"},
        )
    wanted = _resume_point(request)

    following = _Stream(request, db, sub, project, stream_token)

    async def stream() -> AsyncIterator[str]:
        try:
            async for chunk in _follow(following, wanted):
                yield chunk
        finally:
            broker.unsubscribe(sub)

    return StreamingResponse(
        stream(),
        media_type="text/event-stream",
        headers={"cache-control": "no-store", "x-accel-buffering": "no"},
    )


@dataclass(frozen=True)
class _Stream:
    request: Request
    db: Database
    sub: Subscription
    project: str
    stream_token: str | None  # checked again while the stream is open


async def _follow(stream: _Stream, wanted: int | None) -> AsyncIterator[str]:
    yield "retry: 2000\n\n"
    if wanted is not None and (wanted < 0 or wanted > stream.sub.start):
        yield control(
            "reset",
            "Last-Event-ID names no event this server can resume after; the stream goes on from "
            "the newest event. Read the project again to catch up.",
            resumeFrom=stream.sub.start,
        )
    elif wanted is not None:
        async for chunk in _catch_up(stream, wanted):
            yield chunk
    async for chunk in _live(stream):
        yield chunk


async def _catch_up(stream: _Stream, after: int) -> AsyncIterator[str]:
    """From the log, up to where the broker stood when the stream joined; what came after is
    in the stream's queue."""
    while True:
        rows = await to_thread.run_sync(_log_after, stream.db, stream.project, after)
        rows = [r for r in rows if r["id"] <= stream.sub.start]
        for row in rows:
            after = row["id"]
            yield event_lines(row)
        if len(rows) < BACKFILL:
            return


async def _live(stream: _Stream) -> AsyncIterator[str]:
    sub = stream.sub
    last = sub.start
    loop = asyncio.get_running_loop()
    checked = quiet = loop.time()
    while sub.cut is None and not await stream.request.is_disconnected():
        if stream.stream_token is not None and loop.time() - checked >= CHECK:
            checked = loop.time()
            if not await to_thread.run_sync(still_valid, stream.db, stream.stream_token):
                yield control("end", "The stream token was revoked or has expired.")
                return
        sent = False
        while not sub.queue.empty():
            row = sub.queue.get_nowait()
            if row["id"] > last:
                last = row["id"]
                sent = True
                yield event_lines(row)
        if sent:
            quiet = loop.time()
            continue
        if loop.time() - quiet >= HEARTBEAT:
            quiet = loop.time()
            yield ": heartbeat\n\n"
        sub.woken.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(sub.woken.wait(), min(CHECK, HEARTBEAT))
    if sub.cut is not None:
        yield control("end", sub.cut)


ROUTES = [Route("/api/v1/projects/{project}/events", project_events, methods=["GET"])]
