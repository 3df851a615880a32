"""The session page's live reply: Server-Sent Events following the session's latest turn.

It reads the turn's row (`follow_turn`), not the broker, so it works on whichever node the
browser reached: the runner on any node saves the reply so far about every 0.25 s. Events:
`partial` (the whole reply so far, first and whenever it does not just grow), `more` (what
was added since), and `ended` (the turn's status) after which the stream closes. A stream that
runs out of time just closes; the browser's EventSource opens it again by itself.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from anyio import to_thread
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import BaseRoute, Route

from crewboard.contract.sessions import present
from crewboard.domain.identity.records import Actor
from crewboard.errors import CrewboardError
from crewboard.http.cookies import SESSION_COOKIE
from crewboard.services.identity.web_sessions import session_of
from crewboard.services.sessions import conversation
from crewboard.services.sessions.waiting import ENDED, follow_turn
from crewboard.storage.database import Database

STREAM_SECONDS = 120.0  # one stream's life; the browser reconnects after it
POLL = 0.25  # seconds between reads of the turn when no commit of this process wakes it
RETRY_MS = 1000


def _event(kind: str, data: dict[str, Any]) -> str:
    return f"event: {kind}\ndata: {json.dumps(data)}\n\n"


def _latest(db: Database, actor: Actor, project: str, ref: str) -> dict[str, Any]:
    """The latest turn (empty: none yet), read with the person's access to the session.

    Raises:
        NotFound: no such session, or not the person's to see.
    """
    return present.turn_view(conversation.session_page(db, actor, project=project, ref=ref).turn)


async def reply_stream(request: Request) -> Response:
    db: Database = request.app.state.db
    signed_in = await to_thread.run_sync(session_of, db, request.cookies.get(SESSION_COOKIE))
    if signed_in is None:
        return Response("Sign in first.", status_code=401)
    key, ref = request.path_params["key"], request.path_params["session_id"]
    try:
        turn = await to_thread.run_sync(_latest, db, signed_in.actor, key, ref)
    except CrewboardError as error:
        return Response(error.message, status_code=error.http_status)
    return StreamingResponse(
        _follow(db, turn),
        media_type="text/event-stream",
        headers={"cache-control": "no-store", "x-accel-buffering": "no"},
    )


async def _follow(db: Database, turn: dict[str, Any]) -> AsyncIterator[str]:
    yield f"retry: {RETRY_MS}\n\n"
    if not turn or turn["status"] in ENDED:
        yield _event("ended", {"status": turn.get("status", "none"), "turnId": turn.get("id")})
        return
    sent = None
    rows = follow_turn(db, turn["id"], seconds=STREAM_SECONDS, poll=POLL)
    try:
        async for row in rows:
            if row.partial != sent:
                if sent is not None and row.partial.startswith(sent):
                    yield _event("more", {"text": row.partial[len(sent) :]})
                else:
                    yield _event("partial", {"text": row.partial})
                sent = row.partial
            if row.status in ENDED:
                yield _event("ended", {"status": row.status.value, "turnId": row.id})
                return
    finally:  # at once, not when collected: following holds a listener on the database
        await rows.aclose()


ROUTES: list[BaseRoute] = [
    Route("/p/{key}/sessions/{session_id}/stream", reply_stream, methods=["GET"]),
]
