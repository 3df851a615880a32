"""GitHub settings operations (project admins): show, set up or change, disconnect.

The webhook receiver itself is no operation (GitHub calls it, signed, without a token): it is
the hand-written REST route in `api/github.py`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from crewboard.contract import args as a
from crewboard.contract.operation import Area, Call, Cli, Rest
from crewboard.contract.reply import Reply
from crewboard.domain.identity.access import Scope, Toolset
from crewboard.services.github import settings as github
from crewboard.services.views import iso


class GetGithubSettings(a.Args):
    project_id: a.ProjectRef
    workspace_id: a.WorkspaceId = None


class ConfigureGithub(a.Args):
    project_id: a.ProjectRef
    workspace_id: a.WorkspaceId = None
    on_merge: Literal["review", "done", "none"] | None = Field(
        default=None,
        description="Where a merged pull request moves the tasks it names (default review).",
    )
    sync_issues: bool | None = Field(
        default=None, description="Make and update tasks from the repositories' issues."
    )
    rotate_secret: bool = Field(
        default=False, description="Make a new webhook secret (shown once); the old one stops."
    )


class DisconnectGithub(a.Args):
    project_id: a.ProjectRef
    workspace_id: a.WorkspaceId = None


OUTCOME_SHOWN = 500  # characters of a delivery's outcome shown: the newest 20 fit an answer


def setup_view(setup: github.GithubSetup, public_url: str) -> dict[str, Any]:
    """The settings as every door shows them; the secret only when it was just made."""
    saved = setup.settings
    body: dict[str, Any] = {
        "projectId": setup.project.id,
        "projectKey": setup.project.key,
        "configured": saved is not None,
        "onMerge": saved.on_merge.value if saved else None,
        "syncIssues": saved.sync_issues if saved else None,
        "webhookUrl": public_url.rstrip("/") + github.webhook_path(setup.project),
        "contentType": "application/json",
        "recentDeliveries": [
            {
                "id": d.delivery_id,
                "event": d.event,
                "action": d.action,
                "outcome": d.outcome[:OUTCOME_SHOWN],
                "receivedAt": iso(d.received_at),
            }
            for d in setup.recent
        ],
    }
    if setup.secret is not None:
        body["secret"] = setup.secret
    return body


def get_github_settings(call: Call, args: GetGithubSettings) -> Reply:
    setup = github.get_github_settings(call.db, call.actor, args.project_id)
    return Reply(setup_view(setup, call.settings.public_url))


def configure_github(call: Call, args: ConfigureGithub) -> Reply:
    setup = github.configure_github(
        call.db, call.actor, args.project_id, on_merge=args.on_merge,
        sync_issues=args.sync_issues, rotate_secret=args.rotate_secret,
    )  # fmt: skip
    note = None
    if setup.secret is not None:
        note = "The secret is shown this once: paste it into GitHub's webhook form now."
    return Reply(setup_view(setup, call.settings.public_url), note)


def disconnect_github(call: Call, args: DisconnectGithub) -> Reply:
    project = github.disconnect_github(call.db, call.actor, args.project_id)
    return Reply({"projectId": project.id, "projectKey": project.key, "configured": False})


ADMIN = Area(Toolset.ADMIN, write_scopes=(Scope.PROJECTS_ADMIN,))
P = "/api/v1/projects/{project}/github/settings"

OPERATIONS = (
    ADMIN.read(
        "get_github_settings",
        "Get GitHub settings",
        "A project's GitHub webhook: set up or not, the URL to paste into GitHub, what merges "
        "do, issue sync, the newest deliveries (project admins).",
        GetGithubSettings,
        get_github_settings,
        Rest("GET", P),
        Cli(("github", "show")),
        scopes=(Scope.PROJECTS_ADMIN,),
    ),
    ADMIN.write(
        "configure_github",
        "Set up GitHub",
        "Set up a project's GitHub webhook (a new secret, shown once) or change it; GitHub "
        "then acts for you (project admins).",
        ConfigureGithub,
        configure_github,
        Rest("PUT", P),
        Cli(("github", "configure")),
        idempotent=False,
        people_only=True,
    ),
    ADMIN.write(
        "disconnect_github",
        "Disconnect GitHub",
        "Stop taking a project's GitHub deliveries and forget its secret (project admins).",
        DisconnectGithub,
        disconnect_github,
        Rest("POST", f"{P}/disconnect"),
        Cli(("github", "disconnect")),
        destructive=True,
        people_only=True,
    ),
)
