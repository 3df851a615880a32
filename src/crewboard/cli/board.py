"""Operator commands for a project's code repositories."""

from __future__ import annotations

import click

from crewboard.cli.common import Shown, as_person
from crewboard.contract.board.present_notes import repo_view
from crewboard.domain.identity.records import Actor
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
@as_person
def repo_add(
    db: Database, actor: Actor, project: str, name: str, url: str, default_branch: str
) -> Shown:
    """Add a repository (an https:// URL) to a project (project admins)."""
    added = repos.add_repo(db, actor, project, name, url, default_branch=default_branch)
    return repo_view(added), lambda: f"added repository {added.name} ({added.id})"


@repo_group.command("list")
@click.argument("project")
@as_person
def repo_list(db: Database, actor: Actor, project: str) -> Shown:
    """List a project's repositories."""
    found = repos.list_task_repos(db, actor, project=project)
    return (
        [repo_view(r) for r in found.repos],
        lambda: (
            "\n".join(f"{r.id}  {r.name}  {r.url}  ({r.default_branch})" for r in found.repos)
            or "no repositories"
        ),
    )


def register(cli: click.Group) -> None:
    cli.add_command(repo_group)
