"""How a page handler is written: `@page` for GET, `@action` for POST, one `Page` per request.

A handler is a plain (synchronous) function of a `Page`; it calls one service and returns
`page.render(...)` or `page.redirect(...)`. The decorators do the rest: the signed-in person
(else a redirect to /login), the current project (from /p/{KEY}/… or the one last opened), the
form of a POST after its CSRF checks, a service error turned into a flash message, and running
the handler in a worker thread so the event loop never waits on the database.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlsplit

from anyio import to_thread
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from crewboard.config import Settings
from crewboard.contract.projects import present
from crewboard.domain.identity.records import Actor
from crewboard.errors import BodyTooLarge, CrewboardError
from crewboard.http.cookies import SESSION_COOKIE
from crewboard.jsonbody import MAX_BODY, read_request_body
from crewboard.services.identity.web_sessions import SignedIn, session_of
from crewboard.services.notifications import inbox as notification_inbox
from crewboard.services.review import reads as inbox_reads
from crewboard.storage.database import Database
from crewboard.web.render import render
from crewboard.web.security import cross_site, same_token
from crewboard.web.wording import human_message

PROJECT_COOKIE = "crewboard_project"
FLASH_COOKIE = "crewboard_flash"

Handler = Callable[["Page"], Response]
Endpoint = Callable[[Request], Awaitable[Response]]


@dataclass
class Page:
    """One request to the web app, as its handler sees it."""

    request: Request
    db: Database
    settings: Settings
    signed_in: SignedIn
    projects: list[dict[str, Any]]
    project: dict[str, Any] | None
    form: FormData | None = None
    flash: dict[str, str] | None = None
    cookies: dict[str, str] = field(default_factory=dict)

    @property
    def actor(self) -> Actor:
        return self.signed_in.actor

    @property
    def project_key(self) -> str:
        """The current project's key (handlers under /p/{KEY}/ always have one)."""
        assert self.project is not None  # noqa: S101 - project_route guarantees it
        return str(self.project["key"])

    def field(self, name: str, default: str = "") -> str:
        """A form field as text ('' when absent), its line ends made plain newlines (browsers
        send a textarea's as CRLF)."""
        value = self.form.get(name) if self.form is not None else None
        return _plain_lines(value) if isinstance(value, str) else default

    def has_field(self, name: str) -> bool:
        return self.form is not None and name in self.form

    def fields(self, name: str) -> list[str]:
        """Every value of a repeated form field (checkboxes, multi-selects)."""
        if self.form is None:
            return []
        return [_plain_lines(v) for v in self.form.getlist(name) if isinstance(v, str)]

    def upload(self, name: str) -> tuple[str, bytes] | None:
        """A file chosen in a multipart form's file field: its name and bytes (None when the
        field is absent or no file was chosen)."""
        value = self.form.get(name) if self.form is not None else None
        if value is None or isinstance(value, str) or not value.filename:
            return None
        value.file.seek(0)
        return value.filename, value.file.read()

    def param(self, name: str, default: str = "") -> str:
        return self.request.query_params.get(name, default)

    def path(self, rest: str) -> str:
        """A path under the current project: page.path('board') → /p/CRW/board."""
        return f"/p/{quote(self.project_key)}/{rest.lstrip('/')}"

    def render(self, template: str, status_code: int = 200, **context: Any) -> HTMLResponse:
        response = HTMLResponse(
            render(
                template,
                {
                    "page": self,
                    "user": self.signed_in.user,
                    "csrf_token": self.signed_in.csrf_token,
                    "projects": self.projects,
                    "project": self.project,
                    "flash": self.flash,
                    "unread_count": self.unread_count(),
                    "notification_count": self.notification_count(),
                    "request": self.request,
                    **context,
                },
            ),
            status_code=status_code,
            headers={"cache-control": "no-store"},
        )
        self._set_cookies(response)
        return response

    def unread_count(self) -> int | None:
        """How much of the current project's inbox this person has not read (one COUNT), for
        the header's badge and the tab title; None without a project."""
        if self.project is None:
            return None
        try:
            return inbox_reads.unread_count(self.db, self.actor, str(self.project["id"]))
        except CrewboardError:  # the page still renders when its project just went away
            return None

    def notification_count(self) -> int:
        """How many of this person's notifications are unread (one COUNT), for the header's
        bell; 0 when it cannot be told, so the count never fails a page."""
        try:
            return notification_inbox.unread_count(self.db, self.actor)
        except CrewboardError:
            return 0

    def redirect(self, url: str, notice: str | None = None, error: str | None = None) -> Response:
        response = RedirectResponse(local(url), status_code=303)
        if notice or error:
            set_flash(response, self.request, "error" if error else "notice", error or notice or "")
        self._set_cookies(response)
        return response

    def _set_cookies(self, response: Response) -> None:
        for name, value in self.cookies.items():
            response.set_cookie(
                name, value, httponly=True, samesite="lax", secure=secure(self.request)
            )
        if self.flash is not None:
            response.delete_cookie(FLASH_COOKIE)


def local(url: str) -> str:
    """Only paths on this server: anything else (//evil, https://…) becomes /."""
    parts = urlsplit(url)
    if parts.scheme or parts.netloc or not url.startswith("/") or url.startswith("//"):
        return "/"
    return url


def secure(request: Request) -> bool:
    """Secure cookies when people reach the server over https: the configured base URL says
    so, or the request came over https (directly, or through a proxy uvicorn trusts)."""
    base_url = request.app.state.settings.base_url
    return request.url.scheme == "https" or bool(base_url and base_url.startswith("https://"))


def set_flash(response: Response, request: Request, kind: str, text: str) -> None:
    response.set_cookie(
        FLASH_COOKIE,
        quote(f"{kind}:{text[:300]}"),
        httponly=True,
        samesite="lax",
        secure=secure(request),
        max_age=60,
    )


def read_flash(request: Request) -> dict[str, str] | None:
    from urllib.parse import unquote  # noqa: PLC0415 - only here

    raw = request.cookies.get(FLASH_COOKIE)
    if not raw:
        return None
    kind, _, text = unquote(raw).partition(":")
    return {"kind": kind if kind in ("notice", "error") else "notice", "text": text}


def _signed_in(request: Request) -> SignedIn | None:
    db: Database = request.app.state.db
    return session_of(db, request.cookies.get(SESSION_COOKIE))


def _projects(db: Database, actor: Actor) -> list[dict[str, Any]]:
    # The switcher lists them by key, so they stay put as projects change.
    rows, _ = present.list_projects(
        db, actor, include_archived=False, sort="key", limit=200, offset=0
    )
    return rows


def _current(
    request: Request, projects: list[dict[str, Any]]
) -> tuple[dict[str, Any] | None, dict[str, str]]:
    named = request.path_params.get("key")
    wanted = named or request.cookies.get(PROJECT_COOKIE)
    chosen = next((p for p in projects if wanted and p["key"] == str(wanted).upper()), None)
    if named is not None and chosen is None:
        return None, {}
    chosen = chosen or (projects[0] if projects else None)
    remember = {PROJECT_COOKIE: chosen["key"]} if named is not None and chosen else {}
    return chosen, remember


async def _build(request: Request, signed_in: SignedIn, form: FormData | None) -> Page:
    db: Database = request.app.state.db
    projects = await to_thread.run_sync(_projects, db, signed_in.actor)
    project, remember = _current(request, projects)
    return Page(
        request=request,
        db=db,
        settings=request.app.state.settings,
        signed_in=signed_in,
        projects=projects,
        project=project,
        form=form,
        flash=read_flash(request),
        cookies=remember,
    )


def public_error_page(
    status_code: int, title: str, text: str, *, back: str = "/login", back_label: str = "Sign in"
) -> HTMLResponse:
    """A styled error page that needs no session or database (a 500 may be the database)."""
    context = {"title": title, "text": text, "back": back, "back_label": back_label}
    return HTMLResponse(
        render("error_public.html", context),
        status_code=status_code,
        headers={"cache-control": "no-store"},
    )


async def error_page(request: Request, status_code: int, title: str, text: str) -> Response:
    """A styled error page: with the header and a way back for a signed-in person, else a
    card pointing at the sign-in page."""
    signed_in = await to_thread.run_sync(_signed_in, request)
    if signed_in is None:
        return public_error_page(status_code, title, text)
    built = await _build(request, signed_in, None)
    way_back = [("/inbox", "Your inbox")]
    if built.project is not None:
        way_back.append((built.path("board"), f"The {built.project_key} board"))
    return built.render(
        "message.html", status_code=status_code, title=title, text=text, way_back=way_back
    )


def _to_login(request: Request) -> Response:
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return RedirectResponse(f"/login?next={quote(target)}", status_code=303)


def _no_project(page: Page) -> Response:
    key = page.request.path_params.get("key")
    return page.render(
        "message.html",
        status_code=404 if key else 200,
        title="No project" if key else "No projects yet",
        text=f"No project {key!r} is open to you."
        if key
        else "You are not on any project yet. "
        "Ask an admin to add you, or create one with `crewboard project create`.",
    )


def page(handler: Handler, *, needs_project: bool = False) -> Endpoint:
    """A GET page for a signed-in person."""

    @functools.wraps(handler)
    async def endpoint(request: Request) -> Response:
        signed_in = await to_thread.run_sync(_signed_in, request)
        if signed_in is None:
            return _to_login(request)
        built = await _build(request, signed_in, None)
        if needs_project and built.project is None:
            return _no_project(built)
        return await to_thread.run_sync(_guarded, handler, built)

    return endpoint


def action(handler: Handler, *, needs_project: bool = False, limit: int = MAX_BODY) -> Endpoint:
    """A POST form handler: same-site, carrying the session's CSRF token, never a GET. A
    form that uploads or saves a file takes a body of up to `limit` bytes."""

    @functools.wraps(handler)
    async def endpoint(request: Request) -> Response:
        signed_in = await to_thread.run_sync(_signed_in, request)
        if signed_in is None:
            return _to_login(request)
        try:
            await read_request_body(request, limit)
        except BodyTooLarge as error:
            return HTMLResponse(error.message, status_code=413)
        # A text field may take the whole body (a spec file typed or pasted in a textarea).
        form = await request.form(max_files=1, max_part_size=limit)
        try:
            return await _act(request, signed_in, form, handler, needs_project=needs_project)
        finally:
            await form.close()  # a chosen file is spooled to a temporary file until here

    return endpoint


async def _act(
    request: Request, signed_in: SignedIn, form: FormData, handler: Handler, *, needs_project: bool
) -> Response:
    """The form's checks (same site, the session's CSRF token), then the handler."""
    token = form.get("csrf")
    if cross_site(request) or not same_token(
        signed_in.csrf_token, token if isinstance(token, str) else None
    ):
        return public_error_page(
            403,
            "Form not accepted",
            "This form was not sent from a Crewboard page, or the page was too old. "
            "Go back, reload the page and send it again.",
            back="/inbox",
            back_label="Back to your inbox",
        )
    built = await _build(request, signed_in, form)
    if needs_project and built.project is None:
        return _no_project(built)
    return await to_thread.run_sync(_guarded, handler, built)


def _plain_lines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _guarded(handler: Handler, built: Page) -> Response:
    """Run the handler; a refusal from a service becomes a flash on the page sent from."""
    try:
        return handler(built)
    except CrewboardError as error:
        if built.request.method == "GET":
            return built.render(
                "message.html",
                status_code=error.http_status,
                title="Not possible",
                text=human_message(error),
            )
        back = built.field("next") or built.request.headers.get("referer", "/")
        back_path = urlsplit(back).path + (
            f"?{urlsplit(back).query}" if urlsplit(back).query else ""
        )
        return built.redirect(back_path or "/", error=human_message(error))


def project_routes(
    path: str,
    get: Handler | None = None,
    post: Handler | None = None,
    *,
    body_limit: int = MAX_BODY,
) -> list[Route]:
    """`/p/{key}/{path}` for the handlers, and `/{path}` redirecting to the current project's.
    `body_limit`: the bytes the POST form may send (raised where it carries a file)."""
    routes = []
    if get is not None:
        routes.append(Route(f"/p/{{key}}/{path}", page(get, needs_project=True), methods=["GET"]))
    if post is not None:
        routes.append(
            Route(
                f"/p/{{key}}/{path}",
                action(post, needs_project=True, limit=body_limit),
                methods=["POST"],
            )
        )
    if get is not None and "{" not in path:
        routes.append(
            Route(f"/{path}", page(_to_current(path), needs_project=True), methods=["GET"])
        )
    return routes


def _to_current(path: str) -> Handler:
    def go(page_: Page) -> Response:
        query = page_.request.url.query
        return page_.redirect(page_.path(path) + (f"?{query}" if query else ""))

    return go
