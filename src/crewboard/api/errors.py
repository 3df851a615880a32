"""The REST door's one error shape: `{"error": {"code", "message", "details"}}`, code's status."""

from __future__ import annotations

from starlette.responses import JSONResponse

from crewboard.errors import CrewboardError, Unauthenticated, Unavailable


def error_response(error: CrewboardError) -> JSONResponse:
    headers = {}
    if isinstance(error, Unauthenticated):
        headers["WWW-Authenticate"] = 'Bearer realm="crewboard"'
    if isinstance(error, Unavailable):
        headers["Retry-After"] = str(error.retry_after)
    return JSONResponse({"error": error.to_dict()}, status_code=error.http_status, headers=headers)
