"""REST routes of projects: the projects themselves, their state page and their team.

Arguments are checked by the same models as the MCP tools (camelCase JSON), and errors use
the same codes: 404 for a project without a role, 409 on a stale revision in the body, 412
when an `If-Match` revision does not match.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field
from starlette.requests import Request

from crewboard.api.common import (
    IDEMPOTENCY_KEY,
    IF_MATCH_REVISION,
    Created,
    Endpoint,
    Handler,
    created,
    expected_revision,
    guard_precondition,
    keyed_body,
    model_without,
    parse_args,
    query_int,
    read_body,
    reads_headers,
    run_service,
    workspace_of,
)
from crewboard.api.operations import endpoint_for
from crewboard.contract import args as a
from crewboard.contract.projects import present
from crewboard.services.screens import project as project_screen


async def list_projects(request: Request) -> dict[str, Any]:
    params = dict(request.query_params)
    filters: dict[str, Any] = {
        "limit": query_int(request, "limit", 50, minimum=1, maximum=200),
        "offset": query_int(request, "offset", 0),
        "includeArchived": params.get("includeArchived", "false"),
        **({"q": params["q"]} if "q" in params else {}),
    }
    if "workspaceId" in params:
        filters["workspaceId"] = (
            None if params["workspaceId"] in ("", "null") else params["workspaceId"]
        )
    args = parse_args(a.ListProjects, filters, strict=False)
    views, total = await run_service(
        request,
        lambda db, actor: present.list_projects(
            db,
            actor,
            workspace_id=args.workspace_id,
            filter_workspace=args.given("workspace_id"),
            include_archived=args.include_archived,
            q=args.q,
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


@reads_headers(IDEMPOTENCY_KEY)
async def create_project(request: Request) -> Created:
    args = parse_args(a.CreateProject, await keyed_body(request))
    fields = args.model_dump()
    result = await run_service(
        request, lambda db, actor: present.create_project(db, actor, **fields)
    )
    return created(result)


async def get_project(request: Request) -> dict[str, Any]:
    ref = request.path_params["project"]
    return await run_service(
        request,
        lambda db, actor: present.overview_view(project_screen.describe_project(db, actor, ref)),
    )


async def update_project(request: Request) -> dict[str, Any]:
    data = await read_body(request)
    args = parse_args(
        a.UpdateProject, {"workspaceId": None, **data, "projectId": request.path_params["project"]}
    )
    workspace = workspace_of(data)
    return await run_service(
        request,
        lambda db, actor: present.update_project(
            db,
            actor,
            project=args.project_id,
            workspace_id=workspace,
            **args.changes(),
        ),
    )


def _archive(archived: bool) -> Handler:
    async def handler(request: Request) -> dict[str, Any]:
        workspace = parse_args(ProjectTarget, await read_body(request)).workspace_ref()
        ref = request.path_params["project"]
        return await run_service(
            request,
            lambda db, actor: present.set_project_archived(
                db, actor, project=ref, workspace_id=workspace, archived=archived
            ),
        )

    return handler


async def delete_project(request: Request) -> dict[str, Any]:
    workspace = parse_args(ProjectTarget, await read_body(request)).workspace_ref()
    ref = request.path_params["project"]
    return await run_service(
        request,
        lambda db, actor: present.delete_project(db, actor, project=ref, workspace_id=workspace),
    )


async def get_state(request: Request) -> dict[str, Any]:
    ref = request.path_params["project"]
    return await run_service(
        request, lambda db, actor: present.get_project_state(db, actor, project=ref)
    )


@reads_headers(IF_MATCH_REVISION)
async def put_state(request: Request) -> dict[str, Any]:
    data = await read_body(request)
    body = parse_args(StateBody, data)
    content, workspace = body.content, body.workspace_ref()
    expected, via_header = expected_revision(request, data)
    ref = request.path_params["project"]
    return await guard_precondition(
        lambda: run_service(
            request,
            lambda db, actor: present.update_project_state(
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
    limit = query_int(request, "limit", 20, minimum=1, maximum=present.MAX_VERSIONS_PAGE)
    offset = query_int(request, "offset", 0)
    return await run_service(
        request,
        lambda db, actor: present.list_state_versions(
            db, actor, project=ref, limit=limit, offset=offset
        ),
    )


@reads_headers(IF_MATCH_REVISION)
async def restore_state_version(request: Request) -> dict[str, Any]:
    data = await read_body(request)
    parse_args(RestoreBody, data)
    expected, via_header = expected_revision(request, data)
    ref = request.path_params["project"]
    revision = request.path_params["revision"]
    return await guard_precondition(
        lambda: run_service(
            request,
            lambda db, actor: present.restore_state_version(
                db, actor, project=ref, revision=revision, expected_revision=expected
            ),
        ),
        via_header,
    )


# The query strings, for OpenAPI. list_projects reads ListProjects' fields but projectId; the
# state versions mirror what query_int and list_state_versions check.
ListProjectsQuery = model_without("ListProjectsQuery", a.ListProjects, drop=("project_id",))


class ProjectTarget(a.Args):
    """The optional body of archive, unarchive and delete."""

    workspace_id: str | None = Field(
        default=None,
        max_length=200,
        description="The project's workspace id, or null for a private one; omit to skip the check.",
    )


class RestoreBody(ProjectTarget):
    expected_revision: a.Revision | None = Field(
        default=None, description='The page revision you read; or send If-Match: "N".'
    )


class StateBody(RestoreBody):
    content: str = Field(
        max_length=5000, description="The whole new text of the page (at most 5000 characters)."
    )


UpdateProjectBody = model_without(
    "UpdateProjectBody",
    a.UpdateProject,
    drop=("project_id",),
    workspace_id=(
        ProjectTarget.model_fields["workspace_id"].annotation,
        ProjectTarget.model_fields["workspace_id"],
    ),
)


class StateVersionsQuery(a.Args):
    limit: int = Field(default=20, ge=1, le=present.MAX_VERSIONS_PAGE)
    offset: a.Offset = 0


P = "/api/v1/projects/{project}"
ENDPOINTS: tuple[Endpoint, ...] = (
    endpoint_for("list_projects", list_projects, "Projects you can open", query=ListProjectsQuery),
    endpoint_for(
        "create_project",
        create_project,
        "Create a project (Idempotency-Key header)",
        a.CreateProject,
    ),
    endpoint_for(
        "get_project",
        get_project,
        "One project with your role, counts and its newest sessions, spec files, attachments",
    ),
    endpoint_for("update_project", update_project, "Change a project's fields", UpdateProjectBody),
    endpoint_for("delete_project", delete_project, "Delete an archived project", ProjectTarget),
    endpoint_for("archive_project", _archive(True), "Archive a project", ProjectTarget),
    endpoint_for(
        "unarchive_project", _archive(False), "Bring an archived project back", ProjectTarget
    ),
    endpoint_for("get_project_state", get_state, "The state page"),
    endpoint_for(
        "update_project_state",
        put_state,
        "Replace the state page (If-Match or expectedRevision)",
        StateBody,
    ),
    Endpoint(
        f"{P}/state/versions",
        "GET",
        list_state_versions,
        "Saved versions of the state page",
        query=StateVersionsQuery,
    ),
    Endpoint(
        f"{P}/state/versions/{{revision}}/restore",
        "POST",
        restore_state_version,
        "Save an old version as the newest (If-Match or expectedRevision)",
        RestoreBody,
    ),
)
