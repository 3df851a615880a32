"""The live stream for signed-in people: Server-Sent Events from the process's broker.

Each event goes out as `id: N` and a small JSON line (type, project, task, time; never a
payload's text): pages use it only to know when to refresh. A browser that reconnects sends
Last-Event-ID and gets what it missed, in order, from the log (`crewboard.http.sse`). The
broker is woken by commits on every node, so a page shows changes made through any node. The
stream ends (`event: end`) when its session does: sign-out, a password change elsewhere,
expiry; and when the person's role on one of its projects is removed.
"""

from __future__ import annotations

import json
from functools import partial
from typing import Any

from anyio import to_thread
from starlette.requests import Request
from starlette.responses import Response

from crewboard.http.cookies import SESSION_COOKIE
from crewboard.http.sse import BACKFILL, Stream, open_stream
from crewboard.services.live import Subscription
from crewboard.services.stream_access import web_stream_access
from crewboard.services.views import iso
from crewboard.storage.database import Database

TABS = 20  # streams one browser session may hold on one node (one per open tab)


def _line(event: dict[str, Any]) -> str:
    data = {
        "id": event["id"],
        "type": event["type"],
        "projectId": event["project_id"],
        "taskId": event["task_id"],
        "at": iso(event["created_at"]),
    }
    return f"id: {event['id']}\ndata: {json.dumps(data)}\n\n"


def _read(db: Database, project_ids: list[str], after: int) -> list[dict[str, Any]]:
    return db.read(
        lambda uow: uow.events.list_after_many(project_ids, after_id=after, limit=BACKFILL)
    )


async def events(request: Request) -> Response:
    db: Database = request.app.state.db
    cookie = request.cookies.get(SESSION_COOKIE)
    wanted = request.query_params.get("project")
    access = await to_thread.run_sync(partial(web_stream_access, db, cookie, wanted, tabs=TABS))
    if access is None:
        return Response("Sign in first.", status_code=401)
    ids = list(access.project_ids)

    def make(sub: Subscription) -> Stream:
        return Stream(request, sub, _line, partial(_read, db, ids), access.recheck)

    broker = request.app.state.broker
    return open_stream(broker, request, frozenset(ids), access.claim, make)
