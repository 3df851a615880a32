"""Signing in and out, and changing one's password."""

from __future__ import annotations

import secrets

from anyio import to_thread
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from crewboard.errors import BodyTooLarge, CrewboardError, Unauthenticated
from crewboard.http.cookies import SESSION_COOKIE
from crewboard.http.throttle import LoginThrottle
from crewboard.jsonbody import read_request_body
from crewboard.services.identity import web_sessions
from crewboard.web.context import (
    Page,
    action,
    local,
    page,
    read_flash,
    secure,
)
from crewboard.web.render import render
from crewboard.web.security import cross_site, same_token

LOGIN_COOKIE = "crewboard_login"  # double-submit token of the sign-in form (no session yet)


def _login_page(
    request: Request, *, error: str | None = None, email: str = "", status: int = 200
) -> Response:
    token = secrets.token_urlsafe(24)
    response = HTMLResponse(
        render(
            "login.html",
            {
                "login_token": token,
                "next": local(request.query_params.get("next", "/inbox")),
                "error": error,
                "email": email,
                "flash": read_flash(request),
            },
        ),
        status_code=status,
        headers={"cache-control": "no-store"},
    )
    response.set_cookie(
        LOGIN_COOKIE, token, httponly=True, samesite="strict", secure=secure(request)
    )
    return response


async def login_form(request: Request) -> Response:
    return _login_page(request)


LOGIN_BODY_LIMIT = 16 * 1024  # an email, a password and a token; more is not a sign-in


def _throttle(request: Request) -> LoginThrottle:
    state = request.app.state
    if not hasattr(state, "login_throttle"):
        state.login_throttle = LoginThrottle()
    throttle: LoginThrottle = state.login_throttle
    return throttle


async def login(request: Request) -> Response:
    try:
        await read_request_body(request, limit=LOGIN_BODY_LIMIT)
    except BodyTooLarge:
        return _login_page(request, error="The sign-in form was too large.", status=413)
    form = await request.form()
    email = str(form.get("email") or "").strip().lower()
    password = str(form.get("password") or "")
    token = form.get("login_token")
    if cross_site(request) or not same_token(
        request.cookies.get(LOGIN_COOKIE, ""), token if isinstance(token, str) else None
    ):
        return _login_page(request, error="The sign-in form expired; try again.", status=403)
    throttle = _throttle(request)
    client = request.client.host if request.client else "unknown"
    keys = (f"email:{email}", f"client:{client}")
    wait = throttle.retry_after(*keys)
    if wait:
        response = _login_page(
            request,
            error=f"Too many failed sign-ins. Try again in {wait // 60 + 1} minutes.",
            email=email,
            status=429,
        )
        response.headers["retry-after"] = str(wait)
        return response
    try:
        signed = await to_thread.run_sync(
            lambda: web_sessions.sign_in(
                request.app.state.db,
                email=email,
                password=password,
                replacing=request.cookies.get(SESSION_COOKIE),
            )
        )
    except Unauthenticated as error:
        throttle.failed(*keys)
        return _login_page(request, error=error.message, email=email, status=401)
    throttle.succeeded(keys[0])
    response = RedirectResponse(local(str(form.get("next") or "/inbox")), status_code=303)
    response.set_cookie(
        SESSION_COOKIE,
        signed.secret,
        max_age=int(web_sessions.SESSION_LIFETIME.total_seconds()),
        httponly=True,
        samesite="lax",
        secure=secure(request),
    )
    response.delete_cookie(LOGIN_COOKIE)
    return response


def logout(page_: Page) -> Response:
    web_sessions.sign_out(page_.db, page_.signed_in.secret)
    response = RedirectResponse("/login", status_code=303)
    response.delete_cookie(SESSION_COOKIE)
    return response


def password_form(page_: Page) -> Response:
    return page_.render("password.html", title="Change password")


def change_password(page_: Page) -> Response:
    if page_.field("new") != page_.field("repeat"):
        return page_.redirect("/settings/password", error="The two new passwords differ.")
    try:
        web_sessions.change_password(
            page_.db, page_.signed_in, current=page_.field("current"), new=page_.field("new")
        )
    except CrewboardError as error:
        return page_.redirect("/settings/password", error=error.message)
    return page_.redirect(
        "/settings/password", notice="Password changed; your other sessions ended."
    )


def home(page_: Page) -> Response:
    return page_.redirect("/inbox")


ROUTES = [
    Route("/", page(home), methods=["GET"]),
    Route("/login", login_form, methods=["GET"]),
    Route("/login", login, methods=["POST"]),
    Route("/logout", action(logout), methods=["POST"]),
    Route("/settings/password", page(password_form), methods=["GET"]),
    Route("/settings/password", action(change_password), methods=["POST"]),
]
