"""REST routes of identity: `/me`, the token's user and the token itself."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from crewboard.api.common import Endpoint, actor_of, run_service
from crewboard.services.identity.tokens import own_token
from crewboard.services.views import token_view


async def me(request: Request) -> dict[str, Any]:
    actor = actor_of(request)
    listed = await run_service(request, own_token)
    assert listed is not None  # noqa: S101 - bearer authentication always names a token
    return {
        "userId": actor.user_id,
        "displayName": actor.display_name,
        "token": token_view(listed.token, listed.seat),
    }


ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint("/api/v1/me", "GET", me, "The token's user and the token itself"),
)
