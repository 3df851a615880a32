"""Project tools: list, get, create, update, archive, unarchive, delete."""

from __future__ import annotations

from crewboard.contract import args as a
from crewboard.contract.operation import Call, Cli, Operation, Rest
from crewboard.contract.projects import present
from crewboard.contract.reply import RESPONSE_BUDGET, Reply, fit_rows, page_note
from crewboard.domain.identity.access import Scope, Toolset
from crewboard.services.projects import projects
from crewboard.services.screens import project as project_screen
from crewboard.services.text_windows import json_size

ROW_BUDGET = RESPONSE_BUDGET - 4096  # one project row and the page around it


def list_projects(call: Call, args: a.ListProjects) -> Reply:
    page = projects.list_projects(
        call.db,
        call.actor,
        project=args.project_id,
        workspace_id=args.workspace_id,
        filter_workspace=args.given("workspace_id"),
        include_archived=args.include_archived,
        limit=args.limit,
        offset=args.offset,
    )
    rows = fit_rows([present.fit_project(view, ROW_BUDGET) for view in present.project_rows(page)])
    following = args.offset + len(rows)
    body = {
        "projects": rows,
        "total": page.total,
        "nextOffset": following if following < page.total else None,
    }
    return Reply(body, page_note(shown=len(rows), offset=args.offset, total=page.total))


def get_project(call: Call, args: a.GetProject) -> Reply:
    found = present.overview_view(
        project_screen.describe_project(call.db, call.actor, args.project_id, args.workspace_ref())
    )
    rest = json_size({**found, "project": {}})
    return Reply(
        {**found, "project": present.fit_project(found["project"], RESPONSE_BUDGET - rest)}
    )


def create_project(call: Call, args: a.CreateProject) -> Reply:
    result = present.create_project(call.db, call.actor, **args.model_dump())
    note = "This key was used before: this is the original answer." if result.replayed else None
    return Reply(result.body, note)


def update_project(call: Call, args: a.UpdateProject) -> Reply:
    return Reply(
        present.update_project(
            call.db,
            call.actor,
            project=args.project_id,
            workspace_id=args.workspace_ref(),
            **args.changes(),
        )
    )


def _set_archived(archived: bool):  # type: ignore[no-untyped-def]
    def run(call: Call, args: a.ProjectAction) -> Reply:
        return Reply(
            present.set_project_archived(
                call.db,
                call.actor,
                project=args.project_id,
                workspace_id=args.workspace_ref(),
                archived=archived,
            )
        )

    return run


def delete_project(call: Call, args: a.ProjectAction) -> Reply:
    return Reply(
        present.delete_project(
            call.db, call.actor, project=args.project_id, workspace_id=args.workspace_ref()
        )
    )


OPERATIONS = (
    Operation(
        name="list_projects",
        title="List projects",
        description=(
            "The projects you can open: key, goal, phase, status, collections and your role "
            "(viewerRole)."
        ),
        args=a.ListProjects,
        toolset=Toolset.BOARD,
        run=list_projects,
        needs_project=False,
        rest=Rest("GET", "/api/v1/projects"),
        cli=Cli(("project", "list")),
    ),
    Operation(
        name="get_project",
        title="Get a project",
        description=(
            "One project: its fields, your role on it and counts of its people, roles and state "
            "page revision."
        ),
        args=a.GetProject,
        toolset=Toolset.BOARD,
        run=get_project,
        rest=Rest("GET", "/api/v1/projects/{project}"),
        cli=Cli(("project", "show")),
    ),
    Operation(
        name="create_project",
        title="Create a project",
        description="Create a project; you become its admin.",
        args=a.CreateProject,
        toolset=Toolset.ADMIN,
        run=create_project,
        scopes=(Scope.PROJECTS_ADMIN,),
        read_only=False,
        idempotent=True,
        needs_project=False,
        rest=Rest("POST", "/api/v1/projects", status=201),
        cli=Cli(("project", "create")),
    ),
    Operation(
        name="update_project",
        title="Update a project",
        description="Change a project's fields (admin role); omitted fields stay.",
        args=a.UpdateProject,
        toolset=Toolset.ADMIN,
        run=update_project,
        scopes=(Scope.PROJECTS_ADMIN,),
        read_only=False,
        idempotent=True,
        rest=Rest("PATCH", "/api/v1/projects/{project}"),
        cli=Cli(("project", "update")),
    ),
    Operation(
        name="archive_project",
        title="Archive a project",
        description="Archive a project (admin role); archiving it again changes nothing.",
        args=a.ProjectAction,
        toolset=Toolset.ADMIN,
        run=_set_archived(True),
        scopes=(Scope.PROJECTS_ADMIN,),
        read_only=False,
        idempotent=True,
        rest=Rest("POST", "/api/v1/projects/{project}/archive"),
        cli=Cli(("project", "archive")),
    ),
    Operation(
        name="unarchive_project",
        title="Unarchive a project",
        description="Bring an archived project back (admin role).",
        args=a.ProjectAction,
        toolset=Toolset.ADMIN,
        run=_set_archived(False),
        scopes=(Scope.PROJECTS_ADMIN,),
        read_only=False,
        idempotent=True,
        rest=Rest("POST", "/api/v1/projects/{project}/unarchive"),
        cli=Cli(("project", "unarchive")),
    ),
    Operation(
        name="delete_project",
        title="Delete a project",
        description="Delete an archived project and all in it, for good (admin role). Archive it first.",
        args=a.ProjectAction,
        toolset=Toolset.ADMIN,
        run=delete_project,
        scopes=(Scope.PROJECTS_ADMIN,),
        read_only=False,
        destructive=True,
        idempotent=False,
        rest=Rest("DELETE", "/api/v1/projects/{project}"),
        cli=Cli(("project", "delete")),
    ),
)
