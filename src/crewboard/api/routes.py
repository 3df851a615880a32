"""REST routes under /api/v1, gathered from the area modules. A route parses, makes one
service call, renders.

Arguments are checked by the same models as the MCP tools (camelCase JSON), and errors use
the same codes: 404 for a project without a role, 409 on a stale revision in the body, 412
when an `If-Match` revision does not match.
"""

from __future__ import annotations

from starlette.routing import Route

from crewboard.api import artifacts as artifact_routes
from crewboard.api import bridges as bridge_routes
from crewboard.api import github as github_routes
from crewboard.api import handoffs as handoff_routes
from crewboard.api import identity as identity_routes
from crewboard.api import memory as memory_routes
from crewboard.api import notifications as notification_routes
from crewboard.api import projects as project_routes
from crewboard.api import sessions as session_routes
from crewboard.api import specs as spec_routes
from crewboard.api.board import claims as claim_routes
from crewboard.api.board import notes as note_routes
from crewboard.api.board import tasks as task_routes
from crewboard.api.common import Endpoint, by_path
from crewboard.api.operations import operation_endpoints
from crewboard.api.review import activity as activity_routes
from crewboard.api.review import drafts as review_routes


def all_endpoints() -> tuple[Endpoint, ...]:
    """Every REST endpoint, in the order OpenAPI lists them: the hand-written ones, then one
    per operation whose declared route no hand-written endpoint serves."""
    written = _written_endpoints()
    served = frozenset(e.operation for e in written if e.operation is not None)
    return (*written, *operation_endpoints(served))


def _written_endpoints() -> tuple[Endpoint, ...]:
    return (
        *identity_routes.ENDPOINTS,
        *project_routes.ENDPOINTS,
        *task_routes.ENDPOINTS,
        *claim_routes.ENDPOINTS,
        *note_routes.ENDPOINTS,
        *review_routes.ENDPOINTS,
        *memory_routes.ENDPOINTS,
        *activity_routes.ENDPOINTS,
        *spec_routes.ENDPOINTS,
        *artifact_routes.ENDPOINTS,
        *handoff_routes.ENDPOINTS,
        *session_routes.ENDPOINTS,
        *bridge_routes.ENDPOINTS,
        *github_routes.ENDPOINTS,
        *notification_routes.ENDPOINTS,
    )


def routes() -> list[Route]:
    """One route per path, taking every method the endpoint table (and so OpenAPI) lists for
    it: a method it does not take gets 405 with an `Allow` naming all of them."""
    paths: dict[str, list[Endpoint]] = {}
    for endpoint in all_endpoints():
        paths.setdefault(endpoint.path, []).append(endpoint)
    return [
        Route(
            path.replace("{revision}", "{revision:int}"),
            by_path(tuple(endpoints)),
            methods=[e.method for e in endpoints],
        )
        for path, endpoints in paths.items()
    ]
