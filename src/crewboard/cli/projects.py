"""Operator commands for projects: projects, workspaces, a project's state page and team."""

from __future__ import annotations

import click

from crewboard.cli.common import (
    WHOLE,
    State,
    acting_person,
    as_option,
    emit,
    json_option,
    open_database,
    pass_state,
    run_guarded,
)
from crewboard.cli.operations import run_declared
from crewboard.contract.projects import present
from crewboard.domain.identity.access import Role
from crewboard.services.projects import workspaces
from crewboard.services.views import workspace_view


@click.group("project")
def project_group() -> None:
    """Projects."""


@project_group.command("create")
@click.option("--key", required=True, help="2-10 letters/digits, e.g. CRW (tasks become CRW-1).")
@click.option("--name", required=True)
@click.option("--goal", default="")
@click.option("--description", default="")
@click.option(
    "--workspace",
    "workspace_id",
    default=None,
    metavar="ID",
    help="Workspace id; omit for the person's private space.",
)
@as_option
@json_option
@pass_state
def project_create(
    state: State,
    key: str,
    name: str,
    goal: str,
    description: str,
    workspace_id: str | None,
    as_email: str | None,
    as_json: bool,
) -> None:
    """Create a project; the acting person becomes its admin."""
    run_declared(
        state,
        "create_project",
        {
            "workspace_id": workspace_id,
            "key": key,
            "name": name,
            "goal": goal,
            "description": description,
        },
        as_email=as_email,
        as_json=as_json,
        human=lambda made: f"created project {made['project']['key']} ({made['project']['id']})",
    )


@project_group.command("list")
@click.option("--limit", default=200, show_default=True, help="At most this many (1-200).")
@click.option("--offset", default=0, show_default=True, help="Skip this many first.")
@click.option(
    "--include-archived/--no-include-archived",
    default=True,
    show_default=True,
    help="List archived projects too.",
)
@click.option("--project-id", default=None, metavar="REF", help="Only this project (id or key).")
@click.option("--q", default=None, help="Words in the key, name or description.")
@as_option
@json_option
@pass_state
def project_list(
    state: State,
    limit: int,
    offset: int,
    include_archived: bool,
    project_id: str | None,
    q: str | None,
    as_email: str | None,
    as_json: bool,
) -> None:
    """List the projects the acting person can open."""
    # Out-of-range pages are left to the operation, so they are refused as on MCP and REST
    # (VALIDATION naming the field), not as a click usage error.
    run_declared(
        state,
        "list_projects",
        {
            "project_id": project_id,
            "include_archived": include_archived,
            "q": q,
            "limit": limit,
            "offset": offset,
        },
        as_email=as_email,
        as_json=as_json,
        human=lambda found: (
            "\n".join(
                f"{p['key']:<10} {p['id']}  {p['viewerRole']:<5}  {p['name']}"
                f"{'  (archived)' if p['archived'] else ''}"
                for p in found["projects"]
            )
            or "no projects"
        ),
    )


@project_group.command("add-member")
@click.argument("project")
@click.argument("email")
@click.option("--role", required=True, type=click.Choice([r.value for r in Role]))
@as_option
@json_option
@pass_state
def project_add_member(
    state: State, project: str, email: str, role: str, as_email: str | None, as_json: bool
) -> None:
    """Give a person a role on a project (read, write or admin)."""
    with open_database(state.settings()) as db:

        def act() -> None:
            change = present.set_project_member(
                db, acting_person(db, as_email), project=project, email=email, role=role
            )
            emit(as_json, change, lambda: f"{email} has {change['role']} on {project}")

        run_guarded(act, as_json)


@project_group.command("remove-member")
@click.argument("project")
@click.argument("email")
@as_option
@json_option
@pass_state
def project_remove_member(
    state: State, project: str, email: str, as_email: str | None, as_json: bool
) -> None:
    """Take a person's role on a project away (their live streams of it end)."""
    with open_database(state.settings()) as db:

        def act() -> None:
            change = present.remove_project_member(
                db, acting_person(db, as_email), project=project, email=email
            )
            emit(as_json, change, lambda: f"{email} no longer has a role on {project}")

        run_guarded(act, as_json)


@click.group("workspace")
def workspace_group() -> None:
    """Shared workspaces."""


@workspace_group.command("create")
@click.argument("name")
@as_option
@json_option
@pass_state
def workspace_create(state: State, name: str, as_email: str | None, as_json: bool) -> None:
    """Create a workspace; the acting person becomes its admin."""
    with open_database(state.settings()) as db:

        def act() -> None:
            workspace = workspaces.create_workspace(db, acting_person(db, as_email), name=name)
            emit(as_json, workspace_view(workspace), lambda: f"created workspace {workspace.id}")

        run_guarded(act, as_json)


@workspace_group.command("list")
@as_option
@json_option
@pass_state
def workspace_list(state: State, as_email: str | None, as_json: bool) -> None:
    """List the acting person's workspaces."""
    with open_database(state.settings()) as db:

        def act() -> None:
            found = workspaces.list_workspaces(db, acting_person(db, as_email))
            emit(
                as_json,
                [workspace_view(w, r) for w, r in found],
                lambda: "\n".join(f"{w.id}  {r:<6}  {w.name}" for w, r in found) or "no workspaces",
            )

        run_guarded(act, as_json)


@workspace_group.command("add-member")
@click.argument("workspace_id")
@click.argument("email")
@click.option("--role", default="member", type=click.Choice(["member", "admin"]), show_default=True)
@as_option
@json_option
@pass_state
def workspace_add_member(
    state: State, workspace_id: str, email: str, role: str, as_email: str | None, as_json: bool
) -> None:
    """Add a person to a workspace."""
    with open_database(state.settings()) as db:

        def act() -> None:
            granted = workspaces.add_workspace_member(
                db, acting_person(db, as_email), workspace_id=workspace_id, email=email, role=role
            )
            emit(
                as_json,
                {"workspaceId": workspace_id, "email": email, "role": str(granted)},
                lambda: f"{email} is {granted} of {workspace_id}",
            )

        run_guarded(act, as_json)


@click.group("state")
def state_group() -> None:
    """A project's state page and its versions."""


@state_group.command("show")
@click.argument("project")
@as_option
@json_option
@pass_state
def state_show(state_: State, project: str, as_email: str | None, as_json: bool) -> None:
    """Print the current page with its revision."""
    with open_database(state_.settings()) as db:

        def act() -> None:
            page = present.get_project_state(db, acting_person(db, as_email), project=project)
            emit(as_json, page, lambda: f"revision {page['revision']}\n\n{page['content']}")

        run_guarded(act, as_json)


@state_group.command("versions")
@click.argument("project")
@click.option("--limit", default=20, show_default=True)
@click.option("--offset", default=0, show_default=True)
@as_option
@json_option
@pass_state
def state_versions(
    state_: State, project: str, limit: int, offset: int, as_email: str | None, as_json: bool
) -> None:
    """List saved versions, newest first."""
    with open_database(state_.settings()) as db:

        def act() -> None:
            page = present.list_state_versions(
                db, acting_person(db, as_email), project=project, limit=limit, offset=offset
            )
            emit(
                as_json,
                page,
                lambda: (
                    "\n".join(
                        f"{v['revision']:>5}  {v['createdAt']}  {v['author'].get('displayName') or v['author'].get('userId')}"
                        f"{'  (restored ' + str(v['restoredFrom']) + ')' if v['restoredFrom'] else ''}"
                        for v in page["versions"]
                    )
                    or "no versions"
                ),
            )

        run_guarded(act, as_json)


@state_group.command("restore")
@click.argument("project")
@click.argument("revision", type=WHOLE)
@as_option
@json_option
@pass_state
def state_restore(
    state_: State, project: str, revision: int, as_email: str | None, as_json: bool
) -> None:
    """Save an earlier version's text as the newest revision."""
    with open_database(state_.settings()) as db:

        def act() -> None:
            actor = acting_person(db, as_email)
            current = present.get_project_state(db, actor, project=project)["revision"]
            page = present.restore_state_version(
                db, actor, project=project, revision=revision, expected_revision=current
            )
            emit(
                as_json,
                page,
                lambda: f"restored revision {revision} as revision {page['revision']}",
            )

        run_guarded(act, as_json)


@click.group("team")
def team_group() -> None:
    """A project's team roles (seats)."""


@team_group.command("list")
@click.argument("project")
@as_option
@json_option
@pass_state
def team_list(state_: State, project: str, as_email: str | None, as_json: bool) -> None:
    """List the roles and people of a project."""
    run_declared(
        state_,
        "list_team",
        {"project_id": project},
        as_email=as_email,
        as_json=as_json,
        human=lambda found: "\n".join(
            [
                f"{r['id']}  {r['kind']:<5}  {r['name']}  {r['model'] or ''}"
                for team in found["teams"]
                for r in team["roles"]
            ]
            + [
                f"{p['userId']}  {p['projectRole']:<5}  {p['displayName']}"
                for team in found["teams"]
                for p in team["people"]
            ]
        ),
    )


@team_group.command("add-role")
@click.argument("project")
@click.option("--name", required=True)
@click.option("--role", "description", default="", help="What the seat does.")
@click.option("--kind", default="ai", type=click.Choice(["ai", "human"]), show_default=True)
@click.option("--member", default=None, metavar="EMAIL", help="The person who holds the seat.")
@click.option("--model", default=None)
@click.option("--effort", default=None, type=click.Choice(["low", "medium", "high"]))
@click.option("--rank", default=0, show_default=True)
@as_option
@json_option
@pass_state
def team_add_role(
    state_: State,
    project: str,
    name: str,
    description: str,
    kind: str,
    member: str | None,
    model: str | None,
    effort: str | None,
    rank: int,
    as_email: str | None,
    as_json: bool,
) -> None:
    """Add a seat to a project's team (project admins)."""
    with open_database(state_.settings()) as db:

        def act() -> None:
            added = present.add_team_role(
                db,
                acting_person(db, as_email),
                project=project,
                name=name,
                role=description,
                kind=kind,
                member_email=member,
                model=model,
                effort=effort,
                rank=rank,
            )
            emit(as_json, added, lambda: f"added role {added['name']} ({added['id']})")

        run_guarded(act, as_json)


def register(cli: click.Group) -> None:
    for group in (project_group, workspace_group, state_group, team_group):
        cli.add_command(group)
