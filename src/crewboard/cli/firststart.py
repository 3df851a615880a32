"""What `serve` and `init` print: secrets once on first start, none afterwards."""

from __future__ import annotations

import click

from crewboard.clientconfig import client_configs, mcp_url
from crewboard.config import Settings
from crewboard.services.projects.bootstrap import FirstStart


def print_first_start(settings: Settings, first: FirstStart) -> None:
    url = settings.public_url
    secret = first.token.secret
    lines = [
        "",
        f"Crewboard is set up in {settings.data_dir.resolve()} and will serve at {url}",
        "",
        f"Sign in to the web app at {url}/login as the owner (the CLI's --as acts as it too):",
        f"  email:    {first.owner.email}",
        f"  password: {first.password}",
        "  (shown once; change it in the web app under your name, or with",
        f"   crewboard user set-password {first.owner.email})",
        "",
        f"A private demo project {first.project.key} is ready.",
        "",
        "Your first API token (personal, every scope; shown once, store it now):",
        f"  {secret}",
        "",
        f"Connect an MCP client to {mcp_url(url)}:",
    ]
    for config in client_configs(settings, secret):
        lines.append(
            f"\n{config.client} ({config.where}):" if config.where else f"\n{config.client}:"
        )
        lines.extend(f"  {line}" for line in config.text.splitlines())
        if config.note:
            lines.append(f"  Note: {config.note}")
    if settings.oauth_enabled:
        lines += [
            "",
            f"Or give a client that signs in by OAuth just {mcp_url(url)}, with no token:",
            "it opens your browser, you sign in and approve it (Settings → Connected apps).",
        ]
    lines.append("")
    click.echo("\n".join(lines))


def print_reuse(settings: Settings) -> None:
    url = settings.public_url
    click.echo(
        f"\nCrewboard serves the data in {settings.data_dir.resolve()} at {url}"
        f"\nWeb app: {url}/login"
        f"\nMCP endpoint: {mcp_url(url)}"
        "\nNo secret is printed again: make a token with `crewboard token create`"
        + (", or connect a client by OAuth with the URL alone." if settings.oauth_enabled else ".")
        + "\n"
    )
