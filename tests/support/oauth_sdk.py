"""The official `mcp` SDK's OAuth client against a served Crewboard, a person approving in Chromium.

Playwright's sync API owns the test's thread, so the MCP app (the SDK client) runs in a thread
of its own (`Desk.run`). When the SDK wants a person to authorize, its redirect handler hands the
authorize URL over to the test's thread and waits; there the person (`Person`) opens it in a
signed-in page (signing in through /login first if need be) and answers the consent form. The
answer's redirect lands on the app's own loopback callback server (`CallbackServer`, RFC 8252
§7.3), where the SDK's callback handler reads code, state and iss, as a native app does.

    with CallbackServer() as callback:
        desk = Desk(Person(page, email, callback), [approving()])
        app = SdkApp(url, "My app", desk, callback)
        desk.run(lambda: app.call_once("legacy"))
"""

from __future__ import annotations

import queue
import re
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar, cast
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx2
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)
from pydantic import AnyUrl

from tests.support.factories import PASSWORD

T = TypeVar("T")

ANSWER_TIMEOUT = 60.0  # seconds the app waits for the person to answer in the browser
RUN_TIMEOUT = 180.0  # seconds a whole piece of the app's work may take, authorizations included
BROWSER_WAIT = 15_000  # ms for one navigation in the browser


class MemoryTokenStorage:
    """The SDK's TokenStorage, in memory: what the app keeps between calls."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None
        self.token_history: list[OAuthToken] = []

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens
        self.token_history.append(tokens)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


class _CallbackHandler(BaseHTTPRequestHandler):
    server: _CallbackHTTPServer

    def do_GET(self) -> None:
        if urlsplit(self.path).path != "/callback":
            self.send_error(404)
            return
        host, port = self.server.server_address[:2]
        self.server.arrived.put(f"http://{host!s}:{port}{self.path}")
        body = b"Connected to Crewboard. You may close this page."
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: the tests look at what arrived instead


class _CallbackHTTPServer(ThreadingHTTPServer):
    arrived: queue.Queue[str]


class CallbackServer:
    """The app's loopback redirect target: http://127.0.0.1:PORT/callback, noting each arrival."""

    def __init__(self) -> None:
        self._server = _CallbackHTTPServer(("127.0.0.1", 0), _CallbackHandler)
        self._server.arrived = queue.Queue()
        self.port = int(self._server.server_address[1])
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self.port}/callback"

    def __enter__(self) -> CallbackServer:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    def wait(self, timeout: float = ANSWER_TIMEOUT) -> str:
        """The next URL the browser was sent back to (its whole query)."""
        return self._server.arrived.get(timeout=timeout)


Answer = Callable[[Any], None]


def approving(*scopes: str) -> Answer:
    """The person approves; with scopes named, exactly those are left ticked (reading is
    always on), else the page's own ticks (what the app asked for)."""

    def answer(page: Any) -> None:
        if scopes:
            for box in page.locator("input[name=scopes]:not([disabled])").all():
                box.set_checked(box.get_attribute("value") in scopes)
        page.get_by_role("button", name="Approve").click()

    return answer


def denying(page: Any) -> None:
    """The person declines."""
    page.get_by_role("button", name="Deny").click()


@dataclass
class Consent:
    """What one consent page showed the person."""

    heading: str
    ticked: list[str]
    offered: list[str]


@dataclass
class Person:
    """The signed-in person at a Chromium page (the test's thread only)."""

    page: Any
    email: str
    callback: CallbackServer
    consents: list[Consent] = field(default_factory=list)
    sign_ins: int = 0
    seconds: list[float] = field(default_factory=list)  # each authorization, in the browser

    def authorize(self, url: str, answer: Answer) -> None:
        """Open the app's authorize URL, sign in if asked, answer the consent page; return once
        the browser is back at the app's callback."""
        start = time.perf_counter()
        page = self.page
        page.goto(url)
        page.wait_for_url(re.compile(r".*/(login\?next=|oauth/consent\?request=)"))
        if "/login" in urlsplit(page.url).path:
            page.fill("#email", self.email)
            page.fill("#password", PASSWORD)
            page.click("button[type=submit]")
            page.wait_for_url(re.compile(r".*/oauth/consent\?request="))
            self.sign_ins += 1
        boxes = page.locator("input[name=scopes]")
        self.consents.append(
            Consent(
                heading=page.locator("h1").inner_text(),
                ticked=[b.get_attribute("value") for b in boxes.all() if b.is_checked()],
                offered=[b.get_attribute("value") for b in boxes.all()],
            )
        )
        answer(page)
        page.wait_for_url(f"{self.callback.redirect_uri}?**", timeout=BROWSER_WAIT)
        self.seconds.append(time.perf_counter() - start)


class Declined(Exception):
    """The authorization server sent the person back with an error (e.g. access_denied)."""


class Desk:
    """Where the app's thread hands work for the browser over to the test's thread.

    The SDK's redirect handler hands over each authorization; `answers` says how the person
    answers them, in order (one more than given fails the test). The app's own code may hand
    over other errands too (`in_browser`), e.g. the person revoking it meanwhile.
    """

    def __init__(self, person: Person, answers: list[Answer]) -> None:
        self.person = person
        self.answers = list(answers)
        self.asked: list[str] = []  # authorize URLs, as the SDK built them
        self.returned: list[str] = []  # callback URLs the app read
        self._errands: queue.Queue[tuple[Errand, queue.Queue[Reply]] | None] = queue.Queue()

    # --- the app's side (its own thread) ---

    async def in_browser(self, errand: Callable[[Person], T]) -> T:
        """Have the test's thread do `errand` with the person's browser; its result.

        Raises:
            ErrandFailed: it failed there (the test's thread fails the test with the cause).
        """
        return cast(T, await anyio.to_thread.run_sync(self._hand_over, errand))

    def _hand_over(self, errand: Errand) -> object:
        reply: queue.Queue[Reply] = queue.Queue(maxsize=1)
        self._errands.put((errand, reply))
        done, value = reply.get(timeout=ANSWER_TIMEOUT)
        if not done:
            raise ErrandFailed(repr(value))
        return value

    async def redirect_handler(self, url: str) -> None:
        self.asked.append(url)
        await self.in_browser(lambda person: person.authorize(url, self._next_answer(url)))

    def _next_answer(self, url: str) -> Answer:
        if not self.answers:
            raise AssertionError(f"the app asked for one authorization more than expected: {url}")
        return self.answers.pop(0)

    async def callback_handler(self) -> AuthorizationCodeResult:
        url = await anyio.to_thread.run_sync(self.person.callback.wait)
        self.returned.append(url)
        query = {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}
        if "error" in query:
            raise Declined(query["error"])
        return AuthorizationCodeResult(
            code=query["code"], state=query.get("state"), iss=query.get("iss")
        )

    # --- the test's side ---

    def run(self, work: Callable[[], Awaitable[T]]) -> T:
        """Run the app's `work` in its own thread (bounded by RUN_TIMEOUT there), doing its
        errands here meanwhile; its result."""

        async def bounded() -> T:
            with anyio.fail_after(RUN_TIMEOUT):
                return await work()

        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="mcp-app") as pool:
            future: Future[T] = pool.submit(anyio.run, bounded)
            future.add_done_callback(lambda _done: self._errands.put(None))
            while (item := self._next_errand()) is not None:
                errand, reply = item
                try:
                    value = errand(self.person)
                except BaseException as error:
                    reply.put((False, error))  # the app stops waiting; the test fails with this
                    raise
                reply.put((True, value))
            return future.result(timeout=10)

    def _next_errand(self) -> tuple[Errand, queue.Queue[Reply]] | None:
        try:
            return self._errands.get(timeout=RUN_TIMEOUT + ANSWER_TIMEOUT)
        except queue.Empty:
            raise AssertionError("the app neither finished nor asked for anything") from None


Errand = Callable[["Person"], object]
Reply = tuple[bool, object]


class ErrandFailed(Exception):
    """An errand handed to the test's thread failed there."""


@dataclass(frozen=True)
class Sent:
    """A request as it left (the auth flow sends the same request object again, changed)."""

    path: str
    headers: dict[str, str]
    content: bytes

    @classmethod
    def of(cls, request: httpx2.Request) -> Sent:
        return cls(request.url.path, dict(request.headers), bytes(request.content))


@dataclass(frozen=True)
class Answered:
    request: Sent
    status: int
    headers: dict[str, str]


@dataclass
class SdkApp:
    """An MCP app built on the SDK's OAuth client, as the tests drive it: a public native
    client (no secret) redirecting to its loopback callback; what it stored and sent."""

    url: str
    name: str
    desk: Desk
    storage: MemoryTokenStorage = field(default_factory=MemoryTokenStorage)
    sent: list[Sent] = field(default_factory=list)
    answered: list[Answered] = field(default_factory=list)
    provider: OAuthClientProvider = field(init=False)

    def __post_init__(self) -> None:
        metadata = OAuthClientMetadata(
            client_name=self.name,
            redirect_uris=[AnyUrl(self.desk.person.callback.redirect_uri)],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        )
        self.provider = OAuthClientProvider(
            server_url=f"{self.url}/mcp",
            client_metadata=metadata,
            storage=self.storage,
            redirect_handler=self.desk.redirect_handler,
            callback_handler=self.desk.callback_handler,
        )

    @asynccontextmanager
    async def connect(self, mode: str) -> AsyncIterator[Client]:
        """The SDK client over HTTP with the OAuth provider; nothing is sent before a call."""

        async def note_request(request: httpx2.Request) -> None:
            self.sent.append(Sent.of(request))

        async def note_response(response: httpx2.Response) -> None:
            self.answered.append(
                Answered(Sent.of(response.request), response.status_code, dict(response.headers))
            )

        async with (
            httpx2.AsyncClient(
                auth=self.provider,
                timeout=30,
                event_hooks={"request": [note_request], "response": [note_response]},
            ) as http,
            Client(
                streamable_http_client(f"{self.url}/mcp", http_client=http), mode=mode, cache=None
            ) as client,
        ):
            yield client

    def expire_access_token(self) -> None:
        """Make the SDK think its access token expired (its own clock), so that its next
        request refreshes first."""
        self.provider.context.token_expiry_time = time.time() - 1

    def bearer_tokens_sent(self, path: str = "/mcp") -> list[str]:
        """The access tokens the app put on its requests to `path`, in order."""
        found = [
            r.headers.get("authorization", "").removeprefix("Bearer ")
            for r in self.sent
            if r.path == path
        ]
        return [token for token in found if token]

    def token_requests(self) -> list[dict[str, str]]:
        """The forms the app posted to the token endpoint, in order."""
        return [
            {k: v[0] for k, v in parse_qs(r.content.decode()).items()}
            for r in self.sent
            if r.path == "/oauth/token"
        ]
