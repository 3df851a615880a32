"""Settings → Connected apps: the apps the person approved on the consent page, and revoking.

An approval (a grant) acts like one of the person's personal tokens; revoking it stops the
app's tokens on their next message.
"""

from __future__ import annotations

from typing import Any

from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from crewboard.domain.oauth import Grant
from crewboard.services.oauth import grants
from crewboard.web.context import Page, action, page

CONNECTIONS = "/settings/connections"


def _connection_row(grant: Grant, keys: dict[str, str]) -> dict[str, Any]:
    """One approval as the list shows it (the project by key when it is still open)."""
    return {
        "id": grant.id,
        "name": grant.client_name,
        "client_id": grant.client_id,
        "scopes": sorted(s.value for s in grant.scopes),
        "project": keys.get(grant.project_id, grant.project_id) if grant.project_id else None,
        "role": grant.role.value if grant.role else None,
        "created": grant.created_at,
        "last_used": grant.last_used_at,
    }


def connections_page(page_: Page) -> Response:
    """The person's connected apps, newest first."""
    keys = {str(p["id"]): str(p["key"]) for p in page_.projects}
    found = grants.list_connections(page_.db, page_.actor)
    rows = sorted((_connection_row(g, keys) for g in found), key=lambda r: r["created"])
    return page_.render("settings_connections.html", title="Connected apps", connections=rows[::-1])


def revoke(page_: Page) -> Response:
    """Revoke an app's access at once."""
    grant = grants.revoke_connection(page_.db, page_.actor, page_.request.path_params["grant_id"])
    return page_.redirect(
        CONNECTIONS, notice=f"{grant.client_name} can no longer act for you: its access is revoked."
    )


ROUTES: list[BaseRoute] = [
    Route(CONNECTIONS, page(connections_page), methods=["GET"]),
    Route(CONNECTIONS + "/{grant_id}/revoke", action(revoke), methods=["POST"]),
]
