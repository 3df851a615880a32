"""Web page: a project's GitHub webhook (project admins) at /p/{KEY}/settings/github: whether it
is set up, the URL and secret to paste into GitHub (the secret once, right after it is made),
what a merged pull request does, issue sync, and the newest deliveries."""

from __future__ import annotations

from typing import Any

from starlette.responses import Response
from starlette.routing import BaseRoute

from crewboard.contract.github.settings import setup_view
from crewboard.domain.github import OnMerge
from crewboard.services.github import settings as github
from crewboard.web.context import Page, project_routes

HERE = "settings/github"


def _render(page_: Page, view: dict[str, Any]) -> Response:
    return page_.render(
        "settings_github.html",
        title=f"{page_.project_key} GitHub",
        github=view,
        on_merge_choices=[str(choice) for choice in OnMerge],
        here=page_.path(HERE),
    )


def github_page(page_: Page) -> Response:
    """The settings (the service refuses anyone below admin)."""
    setup = github.get_github_settings(page_.db, page_.actor, page_.project_key)
    return _render(page_, setup_view(setup, page_.settings.public_url))


def save_github(page_: Page) -> Response:
    """Set up, change, rotate the secret or disconnect; a new secret is shown on this answer
    only, never again."""
    if page_.field("do") == "disconnect":
        github.disconnect_github(page_.db, page_.actor, page_.project_key)
        return page_.redirect(page_.path(HERE), notice="GitHub disconnected.")
    setup = github.configure_github(
        page_.db, page_.actor, page_.project_key,
        on_merge=page_.field("on_merge") or None,
        sync_issues=page_.has_field("sync_issues") if page_.has_field("settings") else None,
        rotate_secret=page_.field("do") == "rotate",
    )  # fmt: skip
    if setup.secret is None:
        return page_.redirect(page_.path(HERE), notice="GitHub settings saved.")
    return _render(page_, setup_view(setup, page_.settings.public_url))


ROUTES: list[BaseRoute] = [*project_routes(HERE, get=github_page, post=save_github)]
