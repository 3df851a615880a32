"""Operator commands for a project's code repositories."""

from __future__ import annotations

import click

from crewboard.cli.common import (
    State,
    acting_person,
    as_option,
    emit,
    guarded,
    json_option,
    pass_state,
)
from crewboard.contract.board.present_notes import repo_view
from crewboard.services.board import repos
from crewboard.storage.database import Database


@click.group("repo")
def repo_group() -> None:
    """A project's code repositories (agents link task branches to them)."""


@repo_group.command("add")
@click.argument("project")
@click.argument("name")
@click.argument("url")
@click.option("--default-branch", default="main", show_default=True)
@as_option
@json_option
@pass_state
def repo_add(
    state_: State,
    project: str,
    name: str,
    url: str,
    default_branch: str,
    as_email: str | None,
    as_json: bool,
) -> None:
    """Add a repository (an https:// URL) to a project (project admins)."""

    def act(db: Database) -> None:
        added = repos.add_repo(
            db,
            acting_person(db, as_email),
            project,
            name,
            url,
            default_branch=default_branch,
        )
        emit(as_json, repo_view(added), lambda: f"added repository {added.name} ({added.id})")

    guarded(state_, as_json, act)


@repo_group.command("list")
@click.argument("project")
@as_option
@json_option
@pass_state
def repo_list(state_: State, project: str, as_email: str | None, as_json: bool) -> None:
    """List a project's repositories."""

    def act(db: Database) -> None:
        found = repos.list_task_repos(db, acting_person(db, as_email), project=project)
        emit(
            as_json,
            [repo_view(r) for r in found.repos],
            lambda: (
                "\n".join(f"{r.id}  {r.name}  {r.url}  ({r.default_branch})" for r in found.repos)
                or "no repositories"
            ),
        )

    guarded(state_, as_json, act)


def register(cli: click.Group) -> None:
    cli.add_command(repo_group)
