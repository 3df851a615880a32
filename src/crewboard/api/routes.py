"""REST routes. A route parses, makes one service call, renders."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from crewboard.api.auth import authenticate_request
from crewboard.api.errors import error_response
from crewboard.errors import CrewboardError
from crewboard.services.views import token_view

Handler = Callable[[Request], Awaitable[Any]]


def json_route(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
    """Render a handler's result as JSON and any CrewboardError in the one error shape."""

    async def endpoint(request: Request) -> Response:
        try:
            return JSONResponse(await handler(request))
        except CrewboardError as error:
            return error_response(error)

    return endpoint


async def me(request: Request) -> dict[str, Any]:
    actor = await authenticate_request(request)
    assert actor.token is not None  # noqa: S101 - bearer authentication always names a token
    return {
        "userId": actor.user_id,
        "displayName": actor.display_name,
        "token": token_view(actor.token),
    }


def routes() -> list[Route]:
    return [Route("/api/v1/me", json_route(me), methods=["GET"])]
