"""Web pages: the person's API tokens. The list, a form that issues one, and revoking.

Tokens belong to the person, not to a project: they live under /settings/tokens. A new token's
secret is rendered in the answer to the form that made it (never redirected to, so never in a URL
or a cookie).
"""

from __future__ import annotations

import functools
from dataclasses import asdict
from typing import Any

from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from crewboard.clientconfig import client_configs, mcp_url
from crewboard.contract.catalogue import DEFAULT_SET_WORDS, default_catalogue, toolset_hints
from crewboard.domain.identity.access import Role, Scope, TokenKind, Toolset
from crewboard.domain.identity.presets import (
    DEFAULT_PRESET,
    NO_PROJECT_PRESET,
    TOKEN_PRESETS,
    TokenPreset,
)
from crewboard.domain.identity.records import ListedToken, SeatState
from crewboard.services.identity import tokens as token_service
from crewboard.services.views import seat_note
from crewboard.web.context import Page, action, page
from crewboard.web.wording import SCOPE_HINTS

TOKENS = "/settings/tokens"


def _token_row(listed: ListedToken, keys: dict[str, str]) -> dict[str, Any]:
    """One token as the list shows it (the project by key when it is still open; an agent
    token's seat, or why it has none)."""
    token, seat = listed.token, listed.seat
    return {
        "id": token.id,
        "name": token.name,
        "kind": str(token.kind),
        "prefix": token.display_prefix,
        "scopes": sorted(str(s) for s in token.scopes),
        "toolsets": [str(t) for t in token.toolsets],
        "project": keys.get(token.project_id, token.project_id) if token.project_id else None,
        "role": str(token.role) if token.role else None,
        "created": token.created_at,
        "last_used": token.last_used_at,
        "revoked": token.revoked_at,
        "seat": seat.name if seat is not None and seat.acting else None,
        "seat_chosen": seat is not None and seat.state is SeatState.CHOSEN,
        "seat_note": seat_note(seat) if seat is not None else None,
    }


@functools.cache
def _toolset_hints() -> dict[Toolset, str]:
    return toolset_hints(default_catalogue())


def _preset_view(preset: TokenPreset) -> dict[str, Any]:
    return {
        "id": preset.id,
        "label": preset.label,
        "hint": preset.hint,
        "kind": str(preset.kind),
        "scopes": sorted(str(s) for s in preset.scopes),
        "toolsets": [str(t) for t in preset.toolsets],
    }


def _token_form_choices(page_: Page, screen: token_service.TokenScreen) -> dict[str, Any]:
    """The form's choices, filled from a preset: the board-and-review agent for a person with a
    project (an agent token needs one), else their own tools through a personal token."""
    chosen = DEFAULT_PRESET if page_.projects else NO_PROJECT_PRESET
    hints = _toolset_hints()
    return {
        "presets": [_preset_view(p) for p in TOKEN_PRESETS],
        "preset": _preset_view(chosen),
        "scopes": [(str(s), SCOPE_HINTS[s]) for s in Scope],
        "toolsets": [(str(t), hints[t]) for t in Toolset],
        "default_toolsets": DEFAULT_SET_WORDS,
        "kinds": [str(k) for k in TokenKind],
        "roles": [str(r) for r in Role],
        "choices_projects": page_.projects,
        "choices_seats": screen.seats,
    }


def tokens_page(page_: Page) -> Response:
    """The person's tokens, newest state first, and the form that makes a new one."""
    screen = token_service.token_screen(page_.db, page_.actor)
    keys = {str(p["id"]): str(p["key"]) for p in page_.projects}
    rows = [_token_row(t, keys) for t in screen.tokens]
    rows.sort(key=lambda r: r["created"], reverse=True)
    rows.sort(key=lambda r: r["revoked"] is not None)  # stable: active ones first, newest first
    return page_.render(
        "settings_tokens.html",
        title="API tokens",
        tokens=rows,
        **_token_form_choices(page_, screen),
    )


def create_token(page_: Page) -> Response:
    """Issue a token and show its secret once, with ready-to-paste client configuration."""
    scopes = list(dict.fromkeys([str(Scope.READ), *page_.fields("scopes")]))
    issued = token_service.issue_token(
        page_.db,
        page_.actor,
        kind=page_.field("kind", str(TokenKind.PERSONAL)),
        scopes=scopes,
        name=page_.field("name").strip() or None,
        project=page_.field("project") or None,
        role=page_.field("role") or None,
        toolsets=page_.fields("toolsets"),
        seat=page_.field("seat") or None,
    )
    base = page_.settings.public_url
    # A browser may be anyone's: the stdio entries show the database URL without its password.
    found = client_configs(page_.settings, issued.secret, mask_password=True)
    configs = [{"id": f"config-{index}", **asdict(c)} for index, c in enumerate(found, 1)]
    return page_.render(
        "settings_token_created.html",
        title="Token created",
        token=_token_row(
            ListedToken(issued.token, issued.seat),
            {str(p["id"]): str(p["key"]) for p in page_.projects},
        ),
        secret=issued.secret,
        mcp_url=mcp_url(base),
        configs=configs,
    )


def revoke_token(page_: Page) -> Response:
    """Revoke one of the person's tokens at once."""
    token_id = page_.request.path_params["token_id"]
    token = token_service.revoke_token(page_.db, token_id, actor=page_.actor)
    return page_.redirect(TOKENS, notice=f"Token {token.name!r} is revoked.")


ROUTES: list[BaseRoute] = [
    Route(TOKENS, page(tokens_page), methods=["GET"]),
    Route(TOKENS, action(create_token), methods=["POST"]),
    Route(TOKENS + "/{token_id}/revoke", action(revoke_token), methods=["POST"]),
]
