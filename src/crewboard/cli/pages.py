"""Operator commands for a project's state page and team."""

from __future__ import annotations

import click

from crewboard.cli.admin import acting_person, as_option, json_option
from crewboard.cli.common import (
    WHOLE,
    State,
    emit,
    open_database,
    pass_state,
    run_guarded,
)
from crewboard.services.projects import state, team


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
            page = state.get_project_state(db, acting_person(db, as_email), project=project)
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
            page = state.list_state_versions(
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
            current = state.get_project_state(db, actor, project=project)["revision"]
            page = state.restore_state_version(
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
    with open_database(state_.settings()) as db:

        def act() -> None:
            (found,) = team.list_team(db, acting_person(db, as_email), project=project)
            emit(
                as_json,
                found,
                lambda: "\n".join(
                    [
                        f"{r['id']}  {r['kind']:<5}  {r['name']}  {r['model'] or ''}"
                        for r in found["roles"]
                    ]
                    + [
                        f"{p['userId']}  {p['projectRole']:<5}  {p['displayName']}"
                        for p in found["people"]
                    ]
                ),
            )

        run_guarded(act, as_json)


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
            added = team.add_team_role(
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
    cli.add_command(state_group)
    cli.add_command(team_group)
