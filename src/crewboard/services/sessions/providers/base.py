"""What the two HTTP adapters share: the client, the retry loop, and reading failures.

An adapter says how to build its request and how to read its answers (a JSON body, or a
stream of server-sent events); this base sends it, turns every failure into a
`ProviderError`, and retries what is worth retrying - 429, 500, 502, 503, 504, 529, a lost
connection, a timeout - but only while no text has reached the caller's `on_text`: text shown
to a person is never shown twice.

A failure's message is our own sentence, chosen by the HTTP status and the error type or code
the provider names (when it is a plain identifier); the provider's own words, which may echo
the key or the request in any encoding, go only to the server's log, scrubbed. Every message
is scrubbed of the key and of the base URL's password (`redactor_for`), in any encoding.
One refusal is told apart: a request that offered tools, refused (400, 422) in words or an
error type about tools, is "tools_unsupported" - the model or the server takes no tool calls
(an Ollama model without tool support, vLLM started without `--enable-auto-tool-choice`), and
the caller may ask again without them.
"""

from __future__ import annotations

import functools
import itertools
import json
import logging
import math
import random
import re
import ssl
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import anyio
import httpx2

from crewboard.domain.redaction import display_url
from crewboard.services.sessions.providers import (
    BACKOFF_BASE,
    Completion,
    ModelRequest,
    OnText,
    ProviderConfig,
    ProviderError,
    ProviderErrorCode,
    Sleep,
    ToolCall,
    Usage,
    redactor_for,
)

log = logging.getLogger(__name__)
# Jitter from a generator of our own: the process-wide `random` is left to whoever seeds it
# (a test framework that replays draws notices a background thread moving it).
_JITTER = random.Random()  # noqa: S311 - spreading retries, not a secret

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504, 529})
BACKOFF_CAP = 20.0  # seconds: the longest back-off between two attempts
RETRY_AFTER_CAP = 30.0  # seconds: the longest a Retry-After header makes us wait
EXCERPT = 200  # characters of a provider's own error message quoted in the server's log
ERROR_BODY_MAX = 64 * 1024  # bytes of an error body read to find that message


@dataclass(frozen=True)
class Answer:
    """What one successful attempt produced."""

    text: str
    usage: Usage
    finish_reason: str | None
    tool_calls: tuple[ToolCall, ...] = ()


class Failure(Exception):
    """One attempt failed: the error to raise, and whether (and after how long) to try again."""

    def __init__(
        self, error: ProviderError, *, retry: bool, retry_after: float | None = None
    ) -> None:
        super().__init__(error.message)
        self.error = error
        self.retry = retry
        self.retry_after = retry_after


class TextSink:
    """Gathers the text of one attempt and hands each piece to the caller's `on_text`."""

    def __init__(self, on_text: OnText | None) -> None:
        self.on_text = on_text
        self.pieces: list[str] = []
        self.shown = False  # some text reached on_text: this attempt may no longer be retried

    async def add(self, text: str) -> None:
        if not text:
            return
        self.pieces.append(text)
        if self.on_text is not None:
            self.shown = True  # before the call: the caller may show part of it and then fail
            await self.on_text(text)

    @property
    def text(self) -> str:
        return "".join(self.pieces)


@functools.cache
def tls_context() -> ssl.SSLContext:
    """One verifying TLS context for every provider client: loading the system's CA
    certificates took 70 ms, paid on each turn when every client made its own."""
    return httpx2.create_ssl_context(trust_env=False)


class HttpProvider(ABC):
    """A model provider over HTTP; the subclass knows the API's wire format."""

    api_name: str  # how the messages name the API ("OpenAI-compatible", "Anthropic")

    def __init__(
        self,
        config: ProviderConfig,
        *,
        transport: httpx2.AsyncBaseTransport | None = None,
        backoff_base: float = BACKOFF_BASE,
        sleep: Sleep = anyio.sleep,
    ) -> None:
        self.config = config
        self.redactor = redactor_for(config)
        self.backoff_base = backoff_base
        self._sleep = sleep
        self._client = httpx2.AsyncClient(
            transport=transport,
            verify=tls_context(),
            trust_env=False,
            follow_redirects=False,
            timeout=httpx2.Timeout(config.timeout),
        )

    def __repr__(self) -> str:
        shown = display_url(self.config.base_url)
        return f"{type(self).__name__}(id={self.config.id!r}, base_url={shown!r})"

    async def aclose(self) -> None:
        await self._client.aclose()

    async def __aenter__(self) -> HttpProvider:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.aclose()

    @property
    @abstractmethod
    def url(self) -> str:
        """Where completions are POSTed."""

    @abstractmethod
    def headers(self) -> dict[str, str]:
        """The request's headers, the key among them when one is set."""

    @abstractmethod
    def body(self, request: ModelRequest) -> dict[str, Any]:
        """The request's JSON body."""

    def accept(self) -> dict[str, str]:
        """The Accept header: an event stream when streaming, else JSON."""
        return {"accept": "text/event-stream" if self.config.stream else "application/json"}

    def chat_body(
        self, request: ModelRequest, messages: list[dict[str, Any]], **extra: Any
    ) -> dict[str, Any]:
        """The fields both wire formats share, `extra` before the optional temperature."""
        body: dict[str, Any] = {
            "model": request.model,
            "messages": messages,
            "max_tokens": request.max_tokens,
            "stream": self.config.stream,
            **extra,
        }
        if request.temperature is not None:
            body["temperature"] = request.temperature
        return body

    @abstractmethod
    def read_body(self, data: Any) -> Answer:
        """The answer in a whole (non-streamed) JSON body.

        Raises:
            Failure: the body is not an answer.
        """

    @abstractmethod
    async def read_events(
        self, events: AsyncIterator[httpx2.ServerSentEvent], sink: TextSink
    ) -> Answer:
        """The answer in a stream of server-sent events, its text passed to `sink` as it comes.

        Raises:
            Failure: the stream carried an error, could not be read or stopped short.
        """

    async def complete(
        self, request: ModelRequest, on_text: OnText | None = None, *, deadline: float | None = None
    ) -> Completion:
        """The model's next turn, retried on passing failures before any text was shown.

        Raises:
            ProviderError: the last attempt's failure, or "timeout" when the deadline passed.
        """
        started = anyio.current_time()
        with anyio.CancelScope(deadline=math.inf if deadline is None else deadline):
            return await self._attempts(request, on_text, deadline, started)
        raise self.error(
            "timeout", f"{self.config.id} did not finish answering in the time allowed"
        )

    async def _attempts(
        self, request: ModelRequest, on_text: OnText | None, deadline: float | None, started: float
    ) -> Completion:
        for attempt in itertools.count(1):
            sink = TextSink(on_text)
            try:
                answer = await self._attempt(request, sink)
            except Failure as failure:
                if not failure.retry or sink.shown or attempt > self.config.max_retries:
                    raise failure.error from failure.__cause__
                await self._pause(attempt, failure, deadline)
                continue
            return Completion(
                text=answer.text,
                usage=answer.usage,
                finish_reason=answer.finish_reason,
                attempts=attempt,
                provider_seconds=anyio.current_time() - started,
                tool_calls=answer.tool_calls,
            )
        raise AssertionError("unreachable: itertools.count does not end")  # pragma: no cover

    async def _pause(self, attempt: int, failure: Failure, deadline: float | None) -> None:
        """Wait before the next attempt; give up now if the wait would outlast the deadline."""
        if failure.retry_after is not None:
            wait = min(failure.retry_after, RETRY_AFTER_CAP)
        else:
            # Jitter keeps several sessions that failed together from retrying together.
            jitter = 1 + _JITTER.random() / 4
            wait = min(self.backoff_base * 2 ** (attempt - 1) * jitter, BACKOFF_CAP)
        if deadline is not None and anyio.current_time() + wait >= deadline:
            raise failure.error from failure.__cause__
        await self._sleep(wait)

    async def _attempt(self, request: ModelRequest, sink: TextSink) -> Answer:
        try:
            async with self._client.stream(
                "POST", self.url, json=self.body(request), headers=self.headers()
            ) as response:
                if response.status_code != 200:
                    raise await self._refusal(response, offered_tools=bool(request.tools))
                if _is_event_stream(response):
                    return await self.read_events(httpx2.EventSource(response).__aiter__(), sink)
                # Not a stream (asked for none, or a server that ignores `stream`): one body.
                answer = self.read_body(_json(await response.aread(), self))
                await sink.add(answer.text)
                return answer
        except httpx2.HTTPError as error:
            raise self._transport_failure(error, sink) from error

    async def _refusal(self, response: httpx2.Response, *, offered_tools: bool) -> Failure:
        status = response.status_code
        body = await _read_capped(response)
        said, kind_said = _said(body), _error_kind(body)
        log.warning("model provider %s answered %s: %s", self.config.id, status,
                    self.excerpt(said))  # fmt: skip
        kind = self.kind(kind_said)
        named = f" ({kind})" if kind else ""
        if offered_tools and status in {400, 422} and _about_tools(said, kind_said):
            message = (
                f"{self.config.id} answered HTTP {status}{named}: the model or the server takes "
                "no tool calls (a model without tool support, or a server not started with them)"
            )
            return Failure(self.error("tools_unsupported", message, status), retry=False)
        message = f"{self.config.id} answered HTTP {status}{named}: {_status_says(status)}."
        code: ProviderErrorCode = (
            "rate_limited"
            if status == 429
            else "server_error"
            if status >= 500
            else "refused"
            if status >= 400
            else "bad_answer"
        )
        return Failure(
            self.error(code, message, status),
            retry=status in RETRY_STATUSES,
            retry_after=_retry_after(response.headers.get("retry-after")),
        )

    def _transport_failure(self, error: httpx2.HTTPError, sink: TextSink) -> Failure:
        name = self.config.id
        detail = self.excerpt(str(error)) or type(error).__name__
        if isinstance(error, httpx2.TimeoutException):
            what = "went silent mid-answer" if sink.pieces else "did not answer"
            message = f"{name} {what} for more than {self.config.timeout:g} s"
            return Failure(self.error("timeout", message), retry=True)
        if isinstance(error, httpx2.UnsupportedProtocol):
            shown = display_url(self.config.base_url)
            message = f"{name} has a base URL that is not http or https ({shown})"
            return Failure(self.error("unreachable", message), retry=False)
        if isinstance(error, httpx2.DecodingError):
            return Failure(
                self.error("bad_answer", f"{name} sent an unreadable body: {detail}"), retry=False
            )
        if isinstance(error, httpx2.ConnectError):
            message = (
                f"{name} could not be reached at {display_url(self.config.base_url)}: {detail}"
            )
            return Failure(self.error("unreachable", message), retry=True)
        message = f"the connection to {name} broke before the answer was complete: {detail}"
        return Failure(self.error("unreachable", message), retry=True)

    def error(
        self, code: ProviderErrorCode, message: str, status: int | None = None
    ) -> ProviderError:
        """A ProviderError whose message cannot carry a secret, whoever wrote the text in it."""
        return ProviderError(code, self.redactor.text(message), status)

    def excerpt(self, text: str) -> str:
        """A text on one line, scrubbed of the secrets (before it is cut), cut short."""
        flat = re.sub(r"\s+", " ", self.redactor.text(text)).strip()
        return flat if len(flat) <= EXCERPT else flat[: EXCERPT - 1] + "…"

    def kind(self, value: Any) -> str:
        """A provider's error type or code when it is a plain identifier holding no secret."""
        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, str) or not _IDENTIFIER.fullmatch(value):
            return ""
        return value if self.redactor.text(value) == value else ""

    def bad_answer(self, what: str) -> Failure:
        return Failure(self.error("bad_answer", f"{self.config.id} {what}"), retry=False)

    def stopped_short(self) -> Failure:
        """The stream ended cleanly but before its end: like a lost connection."""
        message = f"{self.config.id}'s answer stopped before it was complete"
        return Failure(self.error("bad_answer", message), retry=True)

    def stream_error(self, kind: str, message: str) -> Failure:
        """An error the provider sent inside a 200 stream (overloaded, rate-limited...): our
        sentence from its type; its own `message` goes to the log only."""
        log.warning("model provider %s reported an error mid-answer (%s): %s", self.config.id,
                    self.excerpt(kind), self.excerpt(message))  # fmt: skip
        shown = self.kind(kind)
        named = f" ({shown})" if shown else ""
        said = f"{self.config.id} reported an error mid-answer{named}"
        if "rate" in kind:
            return Failure(self.error("rate_limited", f"{said}: {_status_says(429)}."), retry=True)
        if kind in {"overloaded_error", "api_error", "server_error", ""}:
            says = _status_says(529 if kind.startswith("overloaded") else 500)
            return Failure(self.error("server_error", f"{said}: {says}."), retry=True)
        return Failure(self.error("refused", f"{said}: {_status_says(400)}."), retry=False)


_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9_.:-]{0,63}")
_STATUS_SAYS = {
    400: "it refused the request (check the model name and the settings it takes)",
    401: "it did not accept the key; check the provider's key in Settings, Models",
    403: "the key may not use this model or endpoint",
    404: "it knows no such model or endpoint; check the model name and the base URL",
    408: "it gave up waiting for the request",
    413: "the conversation was too large for it",
    422: "it refused the request (check the model name and the settings it takes)",
    429: "too many requests, or the account's quota is used up; try again later",
    529: "it is overloaded; try again later",
}


def _status_says(status: int) -> str:
    """What an HTTP status from a model provider means, in our words."""
    if status in _STATUS_SAYS:
        return _STATUS_SAYS[status]
    if status >= 500:
        return "it failed on its side; try again later"
    if status >= 400:
        return "it refused the request"
    return "it answered with a status that is not an answer"


def event_json(event: httpx2.ServerSentEvent, provider: HttpProvider) -> dict[str, Any]:
    """An event's data as a JSON object.

    Raises:
        Failure: the data is not a JSON object ("bad_answer").
    """
    data = _json(event.data.encode(), provider)
    if not isinstance(data, dict):
        raise provider.bad_answer("sent a stream event that is not a JSON object")
    return data


def as_dict(value: Any) -> dict[str, Any]:
    """`value` when it is a JSON object, else an empty one: for reading optional parts."""
    return value if isinstance(value, dict) else {}


def as_int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def as_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def error_message(data: Any) -> str:
    """The provider's own words in an error body, in each API's shape (or Ollama's)."""
    body = as_dict(data)
    error = body.get("error")
    if isinstance(error, str):
        return error
    return as_str(as_dict(error).get("message")) or as_str(body.get("message")) or ""


def tool_call(call_id: str, name: str, arguments: Any) -> ToolCall:
    """A call as the model wrote it; `arguments` is JSON text (OpenAI's, and Anthropic's when
    streamed) or already an object (Anthropic's whole input, some local servers). Anything but a
    JSON object becomes `{}` with its text in `unreadable`, for the caller to answer as an error:
    the model wrote it, so it is the model's to correct, not a failure of the provider."""
    if isinstance(arguments, dict):
        return ToolCall(call_id, name, arguments)
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    if not text.strip():  # a tool without arguments, streamed as nothing at all
        return ToolCall(call_id, name, {})
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        return ToolCall(call_id, name, parsed)
    return ToolCall(call_id, name, {}, unreadable=text)


def _about_tools(said: str, kind: Any) -> bool:
    """Whether a refusal's own words or error type/code are about tools: Ollama's "... does
    not support tools", vLLM's "\"auto\" tool choice requires --enable-auto-tool-choice"."""
    return "tool" in said.lower() or (isinstance(kind, str) and "tool" in kind.lower())


def _json(raw: bytes, provider: HttpProvider) -> Any:
    try:
        return json.loads(raw)
    except ValueError as error:
        raise provider.bad_answer("sent a body that is not JSON") from error


def _is_event_stream(response: httpx2.Response) -> bool:
    kind = response.headers.get("content-type", "").partition(";")[0]
    return kind.strip().lower() == "text/event-stream"


async def _read_capped(response: httpx2.Response) -> str:
    """The start of an error body: enough to find the provider's error type in."""
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body.extend(chunk)
        if len(body) >= ERROR_BODY_MAX:
            break
    return body.decode("utf-8", "replace")


def _parsed(body: str) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return None


def _said(body: str) -> str:
    """The provider's own words in an error body (for the log), or the body itself."""
    return error_message(_parsed(body)) or body


def _error_kind(body: str) -> Any:
    """The error type or code an error body names, in either API's shape (Anthropic's and
    OpenAI's `error.type`, OpenAI's `error.code`), or None."""
    error = as_dict(as_dict(_parsed(body)).get("error"))
    kind = error.get("type")
    return kind if isinstance(kind, str) and kind else error.get("code")


def _retry_after(value: str | None) -> float | None:
    """Retry-After in seconds (the HTTP-date form is rare from APIs: back-off then)."""
    if value is None:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None
