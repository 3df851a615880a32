"""Project tools: list, get, create, update, archive, unarchive, delete."""

from __future__ import annotations

from crewboard.contract import args as a
from crewboard.contract.operation import Area, Call, Cli, Rest
from crewboard.contract.projects import present
from crewboard.contract.reply import RESPONSE_BUDGET, Reply, fit_rows, page_note
from crewboard.domain.identity.access import Scope, Toolset
from crewboard.services.projects import projects
from crewboard.services.screens import project as project_screen
from crewboard.services.text_windows import json_size

ROW_BUDGET = RESPONSE_BUDGET - 4096  # one project row and the page around it


def list_projects(call: Call, args: a.ListProjects) -> Reply:
    page = projects.list_projects(
        call.db, call.actor, project=args.project_id, workspace_id=args.workspace_id,
        filter_workspace=args.given("workspace_id"), include_archived=args.include_archived,
        q=args.q, limit=args.limit, offset=args.offset,
    )  # fmt: skip
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
    changed = present.update_project(
        call.db, call.actor, project=args.project_id, workspace_id=args.workspace_ref(),
        **args.changes(),
    )  # fmt: skip
    return Reply(changed)


def _set_archived(archived: bool):  # type: ignore[no-untyped-def]
    def run(call: Call, args: a.ProjectAction) -> Reply:
        changed = present.set_project_archived(
            call.db, call.actor, project=args.project_id, workspace_id=args.workspace_ref(),
            archived=archived,
        )  # fmt: skip
        return Reply(changed)

    return run


def delete_project(call: Call, args: a.ProjectAction) -> Reply:
    return Reply(
        present.delete_project(
            call.db, call.actor, project=args.project_id, workspace_id=args.workspace_ref()
        )
    )


BOARD = Area(Toolset.BOARD)
ADMIN = Area(Toolset.ADMIN, write_scopes=(Scope.PROJECTS_ADMIN,))

OPERATIONS = (
    BOARD.read(
        "list_projects",
        "List projects",
        "Projects you can open; q: words in key, name, description.",
        a.ListProjects,
        list_projects,
        Rest("GET", "/api/v1/projects"),
        Cli(("project", "list")),
        needs_project=False,
    ),
    BOARD.read(
        "get_project",
        "Get a project",
        "A project, your role, counts, newest active sessions, spec files, attachments.",
        a.GetProject,
        get_project,
        Rest("GET", "/api/v1/projects/{project}"),
        Cli(("project", "show")),
    ),
    ADMIN.write(
        "create_project",
        "Create a project",
        "Create a project; you become its admin.",
        a.CreateProject,
        create_project,
        Rest.created("/api/v1/projects"),
        Cli(("project", "create")),
        needs_project=False,
    ),
    ADMIN.write(
        "update_project",
        "Update a project",
        "Change a project's fields (admin role); omitted fields stay.",
        a.UpdateProject,
        update_project,
        Rest("PATCH", "/api/v1/projects/{project}"),
        Cli(("project", "update")),
    ),
    ADMIN.write(
        "archive_project",
        "Archive a project",
        "Archive a project (admin role); archiving it again changes nothing.",
        a.ProjectAction,
        _set_archived(True),
        Rest("POST", "/api/v1/projects/{project}/archive"),
        Cli(("project", "archive")),
    ),
    ADMIN.write(
        "unarchive_project",
        "Unarchive a project",
        "Bring an archived project back (admin role).",
        a.ProjectAction,
        _set_archived(False),
        Rest("POST", "/api/v1/projects/{project}/unarchive"),
        Cli(("project", "unarchive")),
    ),
    ADMIN.write(
        "delete_project",
        "Delete a project",
        "Delete an archived project and all in it, for good (admin role). Archive it first.",
        a.ProjectAction,
        delete_project,
        Rest("DELETE", "/api/v1/projects/{project}"),
        Cli(("project", "delete")),
        idempotent=False,
        destructive=True,
    ),
)
