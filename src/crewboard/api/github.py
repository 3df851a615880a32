"""The GitHub webhook receiver: `POST /api/v1/projects/{project}/github`.

No bearer token: GitHub signs each delivery with the project's webhook secret
(`X-Hub-Signature-256`), and the service checks that signature before reading anything else.
Not an operation (nothing for MCP or the CLI to call), so it is written by hand here.
"""

from __future__ import annotations

from typing import Any

from anyio import to_thread
from starlette.requests import Request

from crewboard.api.common import Endpoint
from crewboard.domain.github import MAX_BODY
from crewboard.jsonbody import read_request_body
from crewboard.services.github.receive import receive_delivery


async def receive(request: Request) -> dict[str, Any]:
    """Raises: what `receive_delivery` raises; BodyTooLarge over 5 MiB."""
    body = await read_request_body(request, MAX_BODY)
    headers = request.headers
    received = await to_thread.run_sync(
        lambda: receive_delivery(
            request.app.state.db,
            request.path_params["project"],
            body=body,
            signature=headers.get("x-hub-signature-256"),
            event=headers.get("x-github-event"),
            delivery_id=headers.get("x-github-delivery"),
        )
    )
    if received.ignored is not None:
        return {"ignored": received.ignored, "project": received.project_key}
    answer: dict[str, Any] = {"outcome": received.outcome, "tasks": received.tasks}
    if received.zen is not None:
        answer |= {"zen": received.zen, "project": received.project_key}
    return answer


ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint(
        "/api/v1/projects/{project}/github",
        "POST",
        receive,
        "Take a GitHub webhook delivery (pull_request, push, check_run, check_suite, issues, "
        "ping), signed with the project's webhook secret in X-Hub-Signature-256 instead of a "
        "token; 401 for a missing or wrong signature, 404 when the project takes no "
        "deliveries, 413 over 5 MiB, an answer naming why for a delivery that changes nothing",
        signed=True,
    ),
)
