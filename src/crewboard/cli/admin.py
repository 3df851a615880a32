"""Operator commands: users, tokens, projects, workspaces. Each takes --json for scripts."""

from __future__ import annotations

import click

from crewboard.cli.common import (
    State,
    emit,
    open_database,
    pass_state,
    read_password,
    run_guarded,
    split_list,
)
from crewboard.domain.identity.access import Role, Scope, TokenKind, Toolset
from crewboard.domain.models import Actor
from crewboard.services.identity import tokens, users
from crewboard.services.projects import projects, workspaces
from crewboard.services.views import token_view, user_view, workspace_view
from crewboard.storage.database import Database

json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
as_option = click.option(
    "--as",
    "as_email",
    default=None,
    metavar="EMAIL",
    help="Act as this person (default: the owner).",
)


def acting_person(db: Database, email: str | None) -> Actor:
    """The person an operator command acts as: `--as EMAIL`, else the instance owner."""
    if email is not None:
        return users.person_actor(users.get_user_by_email(db, email))
    owner = next((u for u in users.list_users(db) if u.is_owner), None)
    if owner is None:
        raise click.ClickException("no owner account yet: run `crewboard init` first")
    return users.person_actor(owner)


@click.group("user")
def user_group() -> None:
    """People's accounts."""


@user_group.command("create")
@click.argument("email")
@click.option("--name", default=None, help="Display name (default: the part before @).")
@click.option("--password-stdin", is_flag=True, help="Read the password from standard input.")
@json_option
@pass_state
def user_create(
    state: State, email: str, name: str | None, password_stdin: bool, as_json: bool
) -> None:
    """Create a person's account."""
    with open_database(state.settings()) as db:
        password = read_password(password_stdin)

        def act() -> None:
            user = users.create_user(db, email=email, password=password, display_name=name)
            emit(as_json, user_view(user), lambda: f"created user {user.email} ({user.id})")

        run_guarded(act, as_json)


@user_group.command("list")
@json_option
@pass_state
def user_list(state: State, as_json: bool) -> None:
    """List accounts."""
    with open_database(state.settings()) as db:
        found = users.list_users(db)
        emit(
            as_json,
            [user_view(u) for u in found],
            lambda: (
                "\n".join(
                    f"{u.id}  {u.email}  {u.display_name}{'  (owner)' if u.is_owner else ''}"
                    for u in found
                )
                or "no users"
            ),
        )


@user_group.command("set-password")
@click.argument("email")
@click.option("--password-stdin", is_flag=True, help="Read the password from standard input.")
@pass_state
def user_set_password(state: State, email: str, password_stdin: bool) -> None:
    """Set a person's password."""
    with open_database(state.settings()) as db:
        password = read_password(password_stdin)
        run_guarded(
            lambda: click.echo(
                f"password set for {users.set_password(db, email=email, password=password).email}"
            )
        )


@click.group("token")
def token_group() -> None:
    """API tokens for MCP clients and scripts."""


@token_group.command("create")
@click.option("--user", "email", required=True, metavar="EMAIL", help="Whose token it is.")
@click.option(
    "--scopes",
    required=True,
    help=f"Comma-separated: {', '.join(s.value for s in Scope)}.",
)
@click.option(
    "--kind",
    default="personal",
    show_default=True,
    help="personal or agent.",
    type=click.Choice([k.value for k in TokenKind]),
)
@click.option("--project", default=None, metavar="KEY", help="Limit the token to one project.")
@click.option(
    "--role",
    default=None,
    type=click.Choice([r.value for r in Role]),
    help="Cap the token's role on --project.",
)
@click.option(
    "--toolsets", default=None, help=f"Default toolsets: {', '.join(t.value for t in Toolset)}."
)
@click.option("--name", default=None, help="A label to recognise the token by.")
@json_option
@pass_state
def token_create(
    state: State,
    email: str,
    scopes: str,
    kind: str,
    project: str | None,
    role: str | None,
    toolsets: str | None,
    name: str | None,
    as_json: bool,
) -> None:
    """Issue a token; its secret is printed once."""
    with open_database(state.settings()) as db:

        def act() -> None:
            actor = users.person_actor(users.get_user_by_email(db, email))
            issued = tokens.issue_token(
                db,
                actor,
                kind=kind,
                scopes=split_list(scopes),
                name=name,
                project=project,
                role=role,
                toolsets=split_list(toolsets),
            )
            emit(
                as_json,
                {**token_view(issued.token), "token": issued.secret},
                lambda: f"{issued.secret}\n(token {issued.token.id}; the secret is shown only now)",
            )

        run_guarded(act, as_json)


@token_group.command("list")
@click.option("--user", "email", default=None, metavar="EMAIL", help="Only this person's tokens.")
@click.option("--revoked", is_flag=True, help="Include revoked tokens.")
@json_option
@pass_state
def token_list(state: State, email: str | None, revoked: bool, as_json: bool) -> None:
    """List tokens (never their secrets)."""
    with open_database(state.settings()) as db:

        def act() -> None:
            if email is None:
                found = tokens.list_all_tokens(db, include_revoked=revoked)
            else:
                actor = users.person_actor(users.get_user_by_email(db, email))
                found = tokens.list_tokens(db, actor, include_revoked=revoked)
            emit(
                as_json,
                [token_view(t) for t in found],
                lambda: (
                    "\n".join(
                        f"{t.id}  {t.display_prefix}…  {t.kind}  {','.join(sorted(t.scopes))}  "
                        f"last used {t.last_used_at.isoformat() if t.last_used_at else 'never'}"
                        f"{'  REVOKED' if t.revoked_at else ''}  {t.name}"
                        for t in found
                    )
                    or "no tokens"
                ),
            )

        run_guarded(act, as_json)


@token_group.command("revoke")
@click.argument("token_id")
@json_option
@pass_state
def token_revoke(state: State, token_id: str, as_json: bool) -> None:
    """Revoke a token at once."""
    with open_database(state.settings()) as db:

        def act() -> None:
            token = tokens.revoke_token(db, token_id)
            emit(as_json, token_view(token), lambda: f"revoked {token.id}")

        run_guarded(act, as_json)


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
    with open_database(state.settings()) as db:

        def act() -> None:
            result = projects.create_project(
                db,
                acting_person(db, as_email),
                workspace_id=workspace_id,
                key=key,
                name=name,
                goal=goal,
                description=description,
            )
            project = result.body["project"]
            emit(as_json, project, lambda: f"created project {project['key']} ({project['id']})")

        run_guarded(act, as_json)


@project_group.command("list")
@as_option
@json_option
@pass_state
def project_list(state: State, as_email: str | None, as_json: bool) -> None:
    """List the projects the acting person can open."""
    with open_database(state.settings()) as db:

        def act() -> None:
            views, _total = projects.list_projects(db, acting_person(db, as_email), limit=200)
            emit(
                as_json,
                views,
                lambda: (
                    "\n".join(
                        f"{p['key']:<10} {p['id']}  {p['viewerRole']:<5}  {p['name']}"
                        f"{'  (archived)' if p['archived'] else ''}"
                        for p in views
                    )
                    or "no projects"
                ),
            )

        run_guarded(act, as_json)


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
            change = projects.set_project_member(
                db, acting_person(db, as_email), project=project, email=email, role=role
            )
            emit(as_json, change, lambda: f"{email} has {change['role']} on {project}")

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


def register(cli: click.Group) -> None:
    for group in (user_group, token_group, project_group, workspace_group):
        cli.add_command(group)
