"""Web pages: settings. API tokens, a project's settings and acceptance rules, workspaces.

Tokens and workspaces belong to the person, not to a project: they live under /settings/….
A project's settings live under /p/{KEY}/settings/project. A new token's secret is rendered in
the answer to the form that made it (never redirected to, so never in a URL or a cookie).
"""

from __future__ import annotations

from typing import Any

from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from crewboard.clientconfig import client_configs, mcp_url
from crewboard.domain.identity.access import Role, Scope, TokenKind, Toolset
from crewboard.domain.models import ApiToken, ProjectStatus, ProjectType, WorkspaceRole
from crewboard.domain.review import RuleMatch
from crewboard.services.identity import tokens as token_service
from crewboard.services.projects import projects as project_service
from crewboard.services.projects import workspaces as workspace_service
from crewboard.services.review import rules as rule_service
from crewboard.services.screens.settings import project_settings
from crewboard.web.context import Page, action, page, project_routes

TOKENS = "/settings/tokens"
WORKSPACES = "/settings/workspaces"

# What each scope lets a token do, in the words the form shows.
SCOPE_HINTS = {
    Scope.READ: "read everything the person can see (always on)",
    Scope.TASKS_MANAGE: "create and change tasks",
    Scope.DRAFTS_CREATE: "hand in drafts for review",
    Scope.MESSAGES_WRITE: "post messages, questions and updates",
    Scope.TEAM_MANAGE: "change the team's roles",
    Scope.SPECS_WRITE: "write spec files and artifacts",
    Scope.PROJECTS_ADMIN: "change project settings",
}


# ---------------------------------------------------------------- tokens


def _token_row(token: ApiToken, keys: dict[str, str]) -> dict[str, Any]:
    """One token as the list shows it (the project by key when it is still open)."""
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
    }


def _token_form_choices(page_: Page) -> dict[str, Any]:
    return {
        "scopes": [(str(s), SCOPE_HINTS[s]) for s in Scope],
        "toolsets": [str(t) for t in Toolset],
        "kinds": [str(k) for k in TokenKind],
        "roles": [str(r) for r in Role],
        "choices_projects": page_.projects,
    }


def tokens_page(page_: Page) -> Response:
    """The person's tokens, newest state first, and the form that makes a new one."""
    tokens = token_service.list_tokens(page_.db, page_.actor, include_revoked=True)
    keys = {str(p["id"]): str(p["key"]) for p in page_.projects}
    rows = [_token_row(t, keys) for t in tokens]
    rows.sort(key=lambda r: r["created"], reverse=True)
    rows.sort(key=lambda r: r["revoked"] is not None)  # stable: active ones first, newest first
    return page_.render(
        "settings_tokens.html",
        title="API tokens",
        tokens=rows,
        **_token_form_choices(page_),
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
    )
    base = page_.settings.public_url
    configs = [
        {"client": client, "id": f"config-{index}", "text": text}
        for index, (client, text) in enumerate(client_configs(base, issued.secret).items(), 1)
    ]
    return page_.render(
        "settings_token_created.html",
        title="Token created",
        token=_token_row(issued.token, {str(p["id"]): str(p["key"]) for p in page_.projects}),
        secret=issued.secret,
        mcp_url=mcp_url(base),
        configs=configs,
    )


def revoke_token(page_: Page) -> Response:
    """Revoke one of the person's tokens at once."""
    token_id = page_.request.path_params["token_id"]
    token = token_service.revoke_token(page_.db, token_id, actor=page_.actor)
    return page_.redirect(TOKENS, notice=f"Token {token.name!r} is revoked.")


# ---------------------------------------------------------------- project settings


def project_page(page_: Page) -> Response:
    """A project's settings (a form for admins, read-only for others) and its rules."""
    view = project_settings(page_.db, page_.actor, page_.project_key)
    project = view["project"]
    return page_.render(
        "settings_project.html",
        title=f"{project['name']} settings",
        settings_view=view,
        details=project,
        is_admin=project.get("viewerRole") == str(Role.ADMIN),
        statuses=[str(s) for s in ProjectStatus],
        types=[str(t) for t in ProjectType],
        matches=[str(m) for m in RuleMatch],
        here=page_.path("settings/project"),
    )


def _given(page_: Page, name: str) -> str | None:
    """A field the form sent (None when it left it out: that setting stays as it is)."""
    return page_.field(name) if page_.form is not None and name in page_.form else None


def _collections(text: str) -> list[str]:
    return [name.strip() for name in text.split(",") if name.strip()]


def save_project(page_: Page) -> Response:
    """Save the settings form (the service refuses anyone below admin)."""
    assert page_.project is not None  # noqa: S101 - a project route
    collections = _given(page_, "collections")
    project_service.update_project(
        page_.db,
        page_.actor,
        project=page_.project_key,
        workspace_id=page_.project.get("workspaceId"),
        name=_given(page_, "name"),
        goal=_given(page_, "goal"),
        phase=_given(page_, "phase"),
        status=_given(page_, "status"),
        description=_given(page_, "description"),
        type=_given(page_, "type"),
        collections=_collections(collections) if collections is not None else None,
    )
    return page_.redirect(page_.path("settings/project"), notice="Project settings saved.")


def add_rule(page_: Page) -> Response:
    """Turn on an acceptance rule; a rule matching every hand-in takes no value."""
    match = page_.field("match")
    rule = rule_service.add_rule(
        page_.db,
        page_.actor,
        page_.project_key,
        match=match,
        value=None if match == str(RuleMatch.ALL) else (page_.field("value") or None),
        collection=page_.field("collection") or None,
        document=page_.field("document") or None,
    )
    what = rule["match"] + (f" {rule['value']}" if rule["value"] else "")
    return page_.redirect(page_.path("settings/project"), notice=f"Acceptance rule on: {what}.")


def remove_rule(page_: Page) -> Response:
    """Turn an acceptance rule off."""
    rule_service.remove_rule(page_.db, page_.actor, page_.request.path_params["rule_id"])
    return page_.redirect(page_.path("settings/project"), notice="Acceptance rule off.")


# ---------------------------------------------------------------- workspaces


def workspaces_page(page_: Page) -> Response:
    """The person's workspaces, a form for a new one, and adding members (workspace admins)."""
    rows = workspace_service.workspaces_with_members(page_.db, page_.actor)
    return page_.render(
        "settings_workspaces.html",
        title="Workspaces",
        workspaces=rows,
        admin=str(WorkspaceRole.ADMIN),
        workspace_roles=[str(r) for r in WorkspaceRole],
    )


def create_workspace(page_: Page) -> Response:
    """Create a workspace; its creator is its admin."""
    made = workspace_service.create_workspace(page_.db, page_.actor, name=page_.field("name"))
    return page_.redirect(WORKSPACES, notice=f"Workspace {made.name!r} created.")


def add_member(page_: Page) -> Response:
    """Add a person (by email) to a workspace, or change their role there."""
    email = page_.field("email").strip()
    role = workspace_service.add_workspace_member(
        page_.db,
        page_.actor,
        workspace_id=page_.request.path_params["workspace_id"],
        email=email,
        role=page_.field("role", str(WorkspaceRole.MEMBER)),
    )
    return page_.redirect(WORKSPACES, notice=f"{email} is a {role} of the workspace.")


ROUTES: list[BaseRoute] = [
    Route(TOKENS, page(tokens_page), methods=["GET"]),
    Route(TOKENS, action(create_token), methods=["POST"]),
    Route(TOKENS + "/{token_id}/revoke", action(revoke_token), methods=["POST"]),
    Route(WORKSPACES, page(workspaces_page), methods=["GET"]),
    Route(WORKSPACES, action(create_workspace), methods=["POST"]),
    Route(WORKSPACES + "/{workspace_id}/members", action(add_member), methods=["POST"]),
    *project_routes("settings/project", get=project_page, post=save_project),
    *project_routes("settings/project/rules", post=add_rule),
    *project_routes("settings/project/rules/{rule_id}/remove", post=remove_rule),
]
