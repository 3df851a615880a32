"""REST routes under /api/v1. A route parses, makes one service call, renders.

Arguments are checked by the same models as the MCP tools (camelCase JSON), and errors use
the same codes: 404 for a project without a role, 409 on a stale revision in the body, 412
when an `If-Match` revision does not match.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from anyio import to_thread
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from crewboard.api.auth import authenticate_request
from crewboard.api.errors import error_response
from crewboard.domain.models import Actor
from crewboard.errors import CrewboardError, RevisionConflict, ValidationFailed
from crewboard.mcp import args as a
from crewboard.services import projects, state, team
from crewboard.services.access import ANY_WORKSPACE, WorkspaceRef
from crewboard.services.views import token_view
from crewboard.storage.database import Database

Handler = Callable[[Request], Awaitable[Any]]
M = TypeVar("M", bound=a.Args)


class Created:
    """A handler result answered with 201."""

    def __init__(self, body: Any) -> None:
        self.body = body


class PreconditionFailed(RevisionConflict):
    """A stale `If-Match`: the same conflict, answered with 412 as HTTP asks."""

    http_status = 412


def json_route(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
    """Render a handler's result as JSON and any CrewboardError in the one error shape."""

    async def endpoint(request: Request) -> Response:
        try:
            result = await handler(request)
        except CrewboardError as error:
            return error_response(error)
        if isinstance(result, Created):
            return JSONResponse(result.body, status_code=201)
        return JSONResponse(result)

    return endpoint


async def _body(request: Request) -> dict[str, Any]:
    raw = await request.body()
    if not raw.strip():
        return {}
    try:
        body = json.loads(raw)
    except ValueError as error:
        raise ValidationFailed("body: not valid JSON.", {"field": "body"}) from error
    if not isinstance(body, dict):
        raise ValidationFailed("body: must be a JSON object.", {"field": "body"})
    return body


def _parse(model: type[M], data: dict[str, Any]) -> M:
    try:
        return model.model_validate(data)
    except Exception as error:
        from pydantic import ValidationError  # noqa: PLC0415 - only on the error path

        if isinstance(error, ValidationError):
            raise a.argument_error(
                error, sorted(model.model_json_schema(by_alias=True)["properties"])
            ) from None
        raise


def _query_int(request: Request, name: str, default: int) -> int:
    raw = request.query_params.get(name)
    if raw is None:
        return default
    try:
        return int(raw)
    except ValueError:
        raise ValidationFailed.field(name, f"must be a whole number; got {raw!r}.") from None


def _if_match(request: Request) -> int | None:
    raw = request.headers.get("if-match")
    if raw is None:
        return None
    value = raw.strip().removeprefix("W/").strip('"')
    if not value.isdigit():
        raise ValidationFailed.field(
            "If-Match", f'must be the revision number, e.g. "3"; got {raw!r}.'
        )
    return int(value)


async def _run(request: Request, work: Callable[[Database, Actor], Any]) -> Any:
    actor = await authenticate_request(request)
    db: Database = request.app.state.db
    return await to_thread.run_sync(work, db, actor)


def _workspace(data: dict[str, Any]) -> WorkspaceRef:
    return data.get("workspaceId", ANY_WORKSPACE)  # type: ignore[no-any-return]


async def me(request: Request) -> dict[str, Any]:
    actor = await authenticate_request(request)
    assert actor.token is not None  # noqa: S101 - bearer authentication always names a token
    return {
        "userId": actor.user_id,
        "displayName": actor.display_name,
        "token": token_view(actor.token),
    }


async def list_projects(request: Request) -> dict[str, Any]:
    params = dict(request.query_params)
    filters: dict[str, Any] = {
        "limit": _query_int(request, "limit", 50),
        "offset": _query_int(request, "offset", 0),
        "includeArchived": params.get("includeArchived", "false").lower() == "true",
    }
    if "workspaceId" in params:
        filters["workspaceId"] = (
            None if params["workspaceId"] in ("", "null") else params["workspaceId"]
        )
    args = _parse(a.ListProjects, filters)
    views, total = await _run(
        request,
        lambda db, actor: projects.list_projects(
            db,
            actor,
            workspace_id=args.workspace_id,
            filter_workspace=args.given("workspace_id"),
            include_archived=args.include_archived,
            limit=args.limit,
            offset=args.offset,
        ),
    )
    following = args.offset + len(views)
    return {
        "projects": views,
        "total": total,
        "nextOffset": following if following < total else None,
    }


async def create_project(request: Request) -> Created:
    data = await _body(request)
    if key := request.headers.get("idempotency-key"):
        data["idempotencyKey"] = key
    args = _parse(a.CreateProject, data)
    fields = args.model_dump()
    result = await _run(request, lambda db, actor: projects.create_project(db, actor, **fields))
    return Created({**result.body, "replayed": result.replayed})


async def get_project(request: Request) -> dict[str, Any]:
    ref = request.path_params["project"]
    return await _run(request, lambda db, actor: projects.describe_project(db, actor, ref))  # type: ignore[no-any-return]


async def update_project(request: Request) -> dict[str, Any]:
    data = await _body(request)
    args = _parse(
        a.UpdateProject, {"workspaceId": None, **data, "projectId": request.path_params["project"]}
    )
    workspace = _workspace(data)
    return await _run(  # type: ignore[no-any-return]
        request,
        lambda db, actor: projects.update_project(
            db,
            actor,
            project=args.project_id,
            workspace_id=workspace,
            name=args.name,
            goal=args.goal,
            phase=args.phase,
            status=args.status,
            description=args.description,
            type=args.type,
            collections=args.collections,
        ),
    )


def _archive(archived: bool) -> Handler:
    async def handler(request: Request) -> dict[str, Any]:
        data = await _body(request)
        ref = request.path_params["project"]
        workspace = _workspace(data)
        return await _run(  # type: ignore[no-any-return]
            request,
            lambda db, actor: projects.set_project_archived(
                db, actor, project=ref, workspace_id=workspace, archived=archived
            ),
        )

    return handler


async def delete_project(request: Request) -> dict[str, Any]:
    data = await _body(request)
    ref = request.path_params["project"]
    workspace = _workspace(data)
    return await _run(  # type: ignore[no-any-return]
        request,
        lambda db, actor: projects.delete_project(db, actor, project=ref, workspace_id=workspace),
    )


async def get_state(request: Request) -> dict[str, Any]:
    ref = request.path_params["project"]
    return await _run(request, lambda db, actor: state.get_project_state(db, actor, project=ref))  # type: ignore[no-any-return]


def _expected_revision(request: Request, data: dict[str, Any]) -> tuple[int, bool]:
    """The revision the writer read: from If-Match (412 on mismatch) or expectedRevision (409)."""
    from_header = _if_match(request)
    if from_header is not None:
        return from_header, True
    if "expectedRevision" not in data:
        raise ValidationFailed(
            "expectedRevision: required (or send the revision in an If-Match header).",
            {"field": "expectedRevision"},
        )
    value = data["expectedRevision"]
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValidationFailed.field("expectedRevision", "must be a revision number, 0 or more.")
    return value, False


async def _guard_precondition(work: Callable[[], Awaitable[Any]], via_header: bool) -> Any:
    try:
        return await work()
    except RevisionConflict as conflict:
        if via_header:
            raise PreconditionFailed(conflict.message, conflict.details) from None
        raise


async def put_state(request: Request) -> dict[str, Any]:
    data = await _body(request)
    expected, via_header = _expected_revision(request, data)
    content = data.get("content")
    if not isinstance(content, str):
        raise ValidationFailed(
            "content: required, the whole text of the page.", {"field": "content"}
        )
    ref = request.path_params["project"]
    workspace = _workspace(data)
    return await _guard_precondition(  # type: ignore[no-any-return]
        lambda: _run(
            request,
            lambda db, actor: state.update_project_state(
                db,
                actor,
                project=ref,
                workspace_id=workspace,
                content=content,
                expected_revision=expected,
            ),
        ),
        via_header,
    )


async def list_state_versions(request: Request) -> dict[str, Any]:
    ref = request.path_params["project"]
    limit = _query_int(request, "limit", 20)
    offset = _query_int(request, "offset", 0)
    return await _run(  # type: ignore[no-any-return]
        request,
        lambda db, actor: state.list_state_versions(
            db, actor, project=ref, limit=limit, offset=offset
        ),
    )


async def restore_state_version(request: Request) -> dict[str, Any]:
    data = await _body(request)
    expected, via_header = _expected_revision(request, data)
    ref = request.path_params["project"]
    revision = request.path_params["revision"]
    return await _guard_precondition(  # type: ignore[no-any-return]
        lambda: _run(
            request,
            lambda db, actor: state.restore_state_version(
                db, actor, project=ref, revision=revision, expected_revision=expected
            ),
        ),
        via_header,
    )


async def get_team(request: Request) -> dict[str, Any]:
    ref = request.path_params["project"]
    teams = await _run(request, lambda db, actor: team.list_team(db, actor, project=ref))
    return teams[0]  # type: ignore[no-any-return]


@dataclass(frozen=True)
class Endpoint:
    path: str
    method: str
    handler: Handler
    summary: str
    body: type[a.Args] | None = None
    success: int = 200


P = "/api/v1/projects/{project}"
ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint("/api/v1/me", "GET", me, "The token's user and the token itself"),
    Endpoint("/api/v1/projects", "GET", list_projects, "Projects you can open"),
    Endpoint(
        "/api/v1/projects",
        "POST",
        create_project,
        "Create a project (Idempotency-Key header)",
        a.CreateProject,
        201,
    ),
    Endpoint(P, "GET", get_project, "One project with your role and counts"),
    Endpoint(P, "PATCH", update_project, "Change a project's fields", a.UpdateProject),
    Endpoint(P, "DELETE", delete_project, "Delete an archived project"),
    Endpoint(f"{P}/archive", "POST", _archive(True), "Archive a project"),
    Endpoint(f"{P}/unarchive", "POST", _archive(False), "Bring an archived project back"),
    Endpoint(f"{P}/state", "GET", get_state, "The state page"),
    Endpoint(
        f"{P}/state",
        "PUT",
        put_state,
        "Replace the state page (If-Match or expectedRevision)",
        a.UpdateProjectState,
    ),
    Endpoint(f"{P}/state/versions", "GET", list_state_versions, "Saved versions of the state page"),
    Endpoint(
        f"{P}/state/versions/{{revision}}/restore",
        "POST",
        restore_state_version,
        "Save an old version as the newest",
    ),
    Endpoint(f"{P}/team", "GET", get_team, "The project's roles and people"),
)


def routes() -> list[Route]:
    return [
        Route(
            e.path.replace("{revision}", "{revision:int}"),
            json_route(e.handler),
            methods=[e.method],
        )
        for e in ENDPOINTS
    ]
