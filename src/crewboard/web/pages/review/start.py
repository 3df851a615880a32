"""Web page: a project's first-run page. A new owner connects an agent (each common
client's configuration, the same `crewboard serve` prints on first start, with a token made
on the tokens page), adds a first task and sees where the first hand-in lands."""

from __future__ import annotations

import uuid
from dataclasses import asdict

from starlette.responses import Response
from starlette.routing import BaseRoute

from crewboard.clientconfig import client_configs, mcp_url
from crewboard.services.screens.start import start_screen
from crewboard.web.context import Page, project_routes

TOKEN_PLACEHOLDER = "YOUR_TOKEN"  # noqa: S105 - shown in place of a secret, never one


def start(page: Page) -> Response:
    """The three steps, each marked done once the project has it."""
    found = start_screen(page.db, page.actor, project=page.project_key)
    # A browser may be anyone's: the stdio entries show the database URL without its password.
    configs = client_configs(page.settings, TOKEN_PLACEHOLDER, mask_password=True)
    return page.render(
        "start.html",
        title=f"Get started · {page.project_key}",
        screen=found,
        placeholder=TOKEN_PLACEHOLDER,
        mcp_url=mcp_url(page.settings.public_url),
        configs=[{"id": f"config-{n}", **asdict(c)} for n, c in enumerate(configs, 1)],
        new_key=uuid.uuid4().hex,
    )


ROUTES: list[BaseRoute] = [*project_routes("start", get=start)]
