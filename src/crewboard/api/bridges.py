"""REST for code bridges (`crewboard reverse`): register one for a project, exchange answers for
calls (a long poll), close it.

The exchange waits on the event loop: it holds no database connection and no worker thread
while no call is there (`services.sessions.bridges.exchange`). Its body may carry 50 answers
of up to 256 KiB each, so it is read up to the upload limit rather than the usual 4 MiB.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from crewboard.api.common import (
    Created,
    Endpoint,
    actor_of,
    parse_args,
    read_body,
    refuse_carried,
    run_service,
)
from crewboard.config import Settings
from crewboard.contract.sessions.bridges import (
    ExchangeBridge,
    RegisterBridge,
    calls_answer,
    registered_answer,
)
from crewboard.jsonbody import MAX_UPLOAD_BODY
from crewboard.services.sessions import bridges

P = "/api/v1/projects/{project}/bridges"
ONE = "/api/v1/bridges/{bridge}"


async def register_bridge(request: Request) -> Created:
    data = refuse_carried(await read_body(request), ("projectId",), "the path names the project")
    args = parse_args(RegisterBridge, data)
    project = request.path_params["project"]
    settings: Settings = request.app.state.settings
    made = await run_service(
        request,
        lambda db, actor: bridges.register_bridge(
            db, actor, project=project, folder=args.folder, client=args.client,
            node=settings.node_name,
        ),
    )  # fmt: skip
    return Created(registered_answer(made))


async def exchange(request: Request) -> dict[str, Any]:
    """Answers in, calls out: at once when calls wait, else when one is queued, or none after
    waitSeconds."""
    args = parse_args(ExchangeBridge, await read_body(request, MAX_UPLOAD_BODY))
    settings: Settings = request.app.state.settings
    calls = await bridges.exchange(
        request.app.state.db,
        actor_of(request),
        request.path_params["bridge"],
        [answer.answer() for answer in args.answers],
        args.wait_seconds,
        taken_for=settings.bridge_call_timeout,
    )
    return calls_answer(calls)


async def close_bridge(request: Request) -> Response:
    bridge = request.path_params["bridge"]
    await run_service(request, lambda db, actor: bridges.close_bridge(db, actor, bridge))
    return Response(status_code=204)


ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint(
        P,
        "POST",
        register_bridge,
        "Register a code bridge (`crewboard reverse`) answering code calls for your spec "
        "sessions in the project from a folder; it replaces your older one there (the write "
        "role, as starting a session)",
        RegisterBridge,
        success=201,
    ),
    Endpoint(
        f"{ONE}/exchange",
        "POST",
        exchange,
        "Send the answers to the calls the bridge took and get new calls: at once when some "
        "wait, else as soon as one is queued, or none after waitSeconds (409 CONFLICT with "
        "details.reason replaced: a newer bridge took over; 410 GONE: closed)",
        ExchangeBridge,
    ),
    Endpoint(
        ONE,
        "DELETE",
        close_bridge,
        "Close the bridge (a clean exit); the calls it took and did not answer wait for your "
        "next one",
        success=204,
        produces=(),
    ),
)
