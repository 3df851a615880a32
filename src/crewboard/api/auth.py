"""Bearer-token authentication for HTTP doors."""

from __future__ import annotations

from anyio import to_thread
from starlette.requests import Request

from crewboard.domain.identity.records import Actor
from crewboard.errors import Unauthenticated
from crewboard.services.identity.tokens import authenticate_token
from crewboard.services.oauth.grants import is_access_token
from crewboard.storage.database import Database


def bearer_secret(authorization: str | None) -> str:
    """Raises: Unauthenticated when the header is missing or not `Bearer <token>`."""
    if not authorization:
        raise Unauthenticated("Send the token as `Authorization: Bearer cb_…`.")
    scheme, _, secret = authorization.partition(" ")
    if scheme.lower() != "bearer" or not secret.strip():
        raise Unauthenticated("The Authorization header must be `Bearer cb_…`.")
    return secret.strip()


async def authenticate_request(request: Request) -> Actor:
    """Raises: Unauthenticated."""
    db: Database = request.app.state.db
    secret = bearer_secret(request.headers.get("authorization"))
    if is_access_token(secret):
        raise Unauthenticated(
            "An access token from signing in an app (OAuth) is for /mcp only; the REST API "
            "takes an API token (cb_…) from Settings → API tokens."
        )
    return await to_thread.run_sync(authenticate_token, db, secret)
