"""The consent page: an app (an MCP client) asks to act for the signed-in person.

The app sends the person here with `?request=ID` (from /oauth/authorize). The page says which
app it is, where approving sends the person back to and what it may do; the person approves a
subset (reading is always on), optionally limited to one project and a role, or denies. Either
answer is a 303 back to the app. The page is never framed and never cached (see `_render`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from crewboard.domain.identity.access import Role, Scope
from crewboard.domain.oauth import OAuthClient, PendingAuthorization, is_loopback_redirect
from crewboard.errors import CrewboardError, NotFound
from crewboard.services.oauth import grants
from crewboard.web.context import Page, action, page
from crewboard.web.security import policy_sending_forms_to
from crewboard.web.wording import SCOPE_HINTS, human_message

CONSENT = "/oauth/consent"
NO_STORE = {"cache-control": "no-store"}
DECISIONS = ("approve", "deny")


@dataclass(frozen=True)
class Choices:
    """What the person chose on the form (kept when the page comes back with an error)."""

    scopes: tuple[str, ...]
    project: str = ""
    role: str = ""

    @classmethod
    def asked_by(cls, pending: PendingAuthorization) -> Choices:
        """The first showing: everything the app asked for, every project, no role cap."""
        return cls(scopes=pending.scopes)

    @classmethod
    def from_form(cls, page_: Page) -> Choices:
        return cls(
            scopes=tuple(page_.fields("scopes")),
            project=page_.field("project"),
            role=page_.field("role"),
        )


def _scope_rows(pending: PendingAuthorization, ticked: tuple[str, ...]) -> list[dict[str, Any]]:
    """The scopes the app asked for, in the usual order; reading is always on."""
    shown = [s for s in Scope if s is Scope.READ or s.value in pending.scopes]
    return [
        {
            "name": s.value,
            "hint": SCOPE_HINTS[s],
            "fixed": s is Scope.READ,
            "ticked": s is Scope.READ or s.value in ticked,
        }
        for s in shown
    ]


def _return_to(redirect_uri: str) -> dict[str, Any]:
    """Where approving (or denying) sends the person: a host, or a native app's scheme."""
    parts = urlsplit(redirect_uri)
    return {
        "place": parts.hostname or f"{parts.scheme}:",
        "loopback": is_loopback_redirect(redirect_uri),
        "private_scheme": parts.scheme not in ("http", "https"),
    }


def _app(client: OAuthClient) -> dict[str, Any]:
    """The app as the page names it. Its logo is never loaded; its home page is plain text."""
    home = client.metadata.get("client_uri")
    shown_home = home if isinstance(home, str) and home.startswith(("https://", "http://")) else ""
    return {
        "name": client.name,
        "id": client.id,
        "document": client.kind == "document",
        "home": shown_home[:300],
    }


def _render(
    page_: Page,
    pending: PendingAuthorization,
    client: OAuthClient,
    choices: Choices,
    *,
    error: str | None = None,
    status: int = 200,
) -> Response:
    response = page_.render(
        "oauth_consent.html",
        status_code=status,
        title=f"Connect {client.name}",
        request_id=pending.id,
        app=_app(client),
        return_to=_return_to(pending.redirect_uri),
        expires_at=pending.expires_at,
        scopes=_scope_rows(pending, choices.scopes),
        choices=choices,
        choices_projects=page_.projects,
        roles=[str(r) for r in Role],
        error=error,
    )
    # Approving redirects to the app: the strict policy (never framed) names the app's origin
    # as a place this page's form may lead to.
    response.headers["content-security-policy"] = policy_sending_forms_to(pending.redirect_uri)
    return response


def _ended(page_: Page, status: int = 404) -> Response:
    """The request is unknown, expired or already answered: say how to start again."""
    return page_.render(
        "message.html",
        status_code=status,
        title="This connection request has ended",
        text="This request to connect an app is unknown, has expired or was already answered. "
        "Go back to the app and start connecting to Crewboard again.",
        way_back=[("/settings/connections", "Your connected apps"), ("/inbox", "Your inbox")],
    )


def _back_to_app(url: str) -> Response:
    return RedirectResponse(url, status_code=303, headers=NO_STORE)


def consent_page(page_: Page) -> Response:
    """The app, where it sends the person back to, and the form to approve or deny it."""
    try:
        pending, client = grants.pending_authorization(page_.db, page_.param("request"))
    except NotFound:
        return _ended(page_)
    return _render(page_, pending, client, Choices.asked_by(pending))


def answer(page_: Page) -> Response:
    """Approve (with the scopes, project and role chosen) or deny; back to the app either way.
    A refusal shows the page again with the person's choices and the reason."""
    request_id = page_.field("request")
    decision = page_.field("decision")
    issuer = page_.settings.public_url
    try:
        if decision == "deny":
            return _back_to_app(grants.deny(page_.db, page_.actor, request_id, issuer=issuer))
        if decision == "approve":
            choices = Choices.from_form(page_)
            _grant, url = grants.approve(
                page_.db,
                page_.actor,
                request_id,
                issuer=issuer,
                scopes=list(choices.scopes),
                project=choices.project or None,
                role=choices.role or None,
            )
            return _back_to_app(url)
        problem, status = "Choose Approve or Deny.", 422
    except CrewboardError as error:
        problem, status = human_message(error), error.http_status
    return _again(page_, request_id, problem, status)


def _again(page_: Page, request_id: str, problem: str, status: int) -> Response:
    """The consent page once more with the refusal, or the ended page when the request is
    gone (answered meanwhile, or expired)."""
    try:
        pending, client = grants.pending_authorization(page_.db, request_id)
    except NotFound:
        return _ended(page_)
    return _render(page_, pending, client, Choices.from_form(page_), error=problem, status=status)


ROUTES: list[BaseRoute] = [
    Route(CONSENT, page(consent_page), methods=["GET"]),
    Route(CONSENT, action(answer), methods=["POST"]),
]
