"""A real model server on loopback for the provider tests: both APIs, scripted per test.

It speaks the OpenAI chat-completions API (`POST /v1/chat/completions`) and the Anthropic
Messages API (`POST /v1/messages`) in their real wire formats - SSE chunks when the request
asks for a stream, one JSON body when not - and answers each request with the next behaviour
queued by the test, or with `default(api, request_json)` as a reply once the queue is empty:

    with ModelServer() as server:
        server.script(Status(429, retry_after="1"), Reply("Hello there"))
        server.script(ToolUse((("read_file", {"path": "a.py"}),), text="Let me look."))
        ...  # provider at server.base_url("openai"); then server.requests

A hang (and a stalled stream) is released when the server stops, so it never holds up the
end of a test. uvicorn and Starlette run it in a thread, as tests/support/server.py does.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio
import uvicorn
from anyio import to_thread
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tests.support.server import _listening_socket, _Server

Api = Literal["openai", "anthropic"]
Responder = Callable[[Api, dict[str, Any]], str]
HOST = "127.0.0.1"


@dataclass(frozen=True)
class Reply:
    """An answer: streamed in `chunks` pieces, or whole when the request asked for no stream."""

    text: str
    finish_reason: str | None = None  # None: the API's usual one ("stop" / "end_turn")
    input_tokens: int = 10
    output_tokens: int | None = None  # None: one per word
    chunks: int = 3
    pause: float = 0.0  # seconds between streamed chunks (a model writing at its own pace)


@dataclass(frozen=True)
class Status:
    """An error answer in the API's own error shape (429 and 5xx take a Retry-After)."""

    status: int
    retry_after: str | None = None
    message: str = "the test server says no"


@dataclass(frozen=True)
class Hang:
    """No answer at all for `seconds` (or until the server stops), then a 504."""

    seconds: float = 60.0


@dataclass(frozen=True)
class Broken:
    """A stream that starts, sends `text`, then breaks: the connection dropped, the body
    ended without the API's closing event, or a stall until the server stops."""

    text: str
    ending: Literal["drop", "end", "stall"] = "drop"
    chunks: int = 2


@dataclass(frozen=True)
class StreamError:
    """A 200 stream carrying an error event (as Anthropic does when overloaded)."""

    kind: str = "overloaded_error"
    message: str = "Overloaded"


@dataclass(frozen=True)
class RawBody:
    """Bytes as they are, for answers that cannot be read."""

    body: bytes
    status: int = 200
    content_type: str = "application/json"


@dataclass(frozen=True)
class Echo:
    """An error answer made from the request itself (a provider that echoes what it was sent,
    its credentials among it): `render` gets the request and returns the body."""

    render: Callable[[Recorded], str]
    status: int = 401
    content_type: str = "application/json"


@dataclass(frozen=True)
class ToolUse:
    """A reply that calls tools, in the API's own shape, after `text` (none: no text at all).

    Each call is (tool name, arguments); arguments given as a string are sent as that text
    (a model that wrote broken JSON). Ids are "call_<n>" (OpenAI) or "toolu_<n>" (Anthropic),
    n counting this server's calls from 1. Streamed, each call's arguments JSON comes split
    over `chunks` events; whole, the stop reason is "tool_calls" / "tool_use" either way.
    """

    calls: tuple[tuple[str, dict[str, Any] | str], ...]
    text: str = ""
    chunks: int = 3
    input_tokens: int = 10
    output_tokens: int = 5


@dataclass(frozen=True)
class NoTools:
    """Ollama's 400 for a request with tools to a model without tool support: "<model> does
    not support tools", in the API's error shape (whether the request offered tools or not)."""


Behaviour = Reply | Status | Hang | Broken | StreamError | RawBody | Echo | ToolUse | NoTools


@dataclass(frozen=True)
class Recorded:
    """One request as the server got it."""

    path: str
    headers: dict[str, str]  # names in lower case
    body: dict[str, Any]


def echo(api: Api, body: dict[str, Any]) -> str:
    """The default answer: the last thing the user said, said back."""
    messages = body.get("messages") or [{}]
    return f"You said: {messages[-1].get('content', '')}"


class _Dropped(Exception):
    """Raised inside a streamed body: uvicorn then closes the connection mid-response."""


@dataclass
class _State:
    default: Responder
    queue: deque[Behaviour] = field(default_factory=deque)
    requests: list[Recorded] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    released: threading.Event = field(default_factory=threading.Event)
    call_ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))


class ModelServer:
    """Both model APIs on 127.0.0.1 (a free port) from `start()` (or `with`) until `stop()`."""

    def __init__(self, default: Responder = echo) -> None:
        self._state = _State(default)
        self._sock = _listening_socket(HOST, 0)
        self.port = int(self._sock.getsockname()[1])
        app = Starlette(
            routes=[
                Route("/v1/chat/completions", _endpoint(self._state, "openai"), methods=["POST"]),
                Route("/v1/messages", _endpoint(self._state, "anthropic"), methods=["POST"]),
            ]
        )
        # "critical": a dropped stream is an exception in the app, which uvicorn would log.
        self._server = _Server(uvicorn.Config(app, log_level="critical", lifespan="off"))
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def base_url(self, api: Api) -> str:
        """What a provider config takes: OpenAI's includes /v1, Anthropic's does not."""
        return f"{self.url}/v1" if api == "openai" else self.url

    def script(self, *behaviours: Behaviour) -> None:
        """Queue answers for the next requests, in order."""
        with self._state.lock:
            self._state.queue.extend(behaviours)

    @property
    def requests(self) -> list[Recorded]:
        with self._state.lock:
            return list(self._state.requests)

    def start(self) -> ModelServer:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._server.run, kwargs={"sockets": [self._sock]}, daemon=True
            )
            self._thread.start()
            deadline = time.monotonic() + 10
            while not self._server.started:
                if time.monotonic() > deadline or not self._thread.is_alive():
                    raise RuntimeError("the model server did not start within 10 s")
                time.sleep(0.005)
        return self

    def stop(self) -> None:
        self._state.released.set()  # first: uvicorn waits for the hanging answers to end
        if self._thread is not None:
            self._server.stop()
            self._thread.join(timeout=10)
            self._thread = None
        self._sock.close()

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.stop()


def _endpoint(state: _State, api: Api) -> Callable[[Request], Any]:
    async def endpoint(request: Request) -> Response:
        try:
            body = json.loads(await request.body())
        except ValueError:
            body = {}
        body = body if isinstance(body, dict) else {}
        recorded = Recorded(request.url.path, dict(request.headers), body)
        with state.lock:
            state.requests.append(recorded)
            behaviour = state.queue.popleft() if state.queue else None
        if behaviour is None:
            behaviour = Reply(state.default(api, body))
        if isinstance(behaviour, Echo):
            text = behaviour.render(recorded)
            return Response(text, behaviour.status, media_type=behaviour.content_type)
        return await _answer(state, api, body, behaviour)

    return endpoint


async def _answer(state: _State, api: Api, body: dict[str, Any], how: Behaviour) -> Response:
    if isinstance(how, Hang):
        await to_thread.run_sync(state.released.wait, how.seconds)
        return _status(api, Status(504, message="hung"))
    if isinstance(how, Status | RawBody | NoTools):
        return _refusal(api, body, how)
    wire = _Wire(api, body)
    if isinstance(how, ToolUse):
        return _tool_use(state, wire, how, stream=bool(body.get("stream")))
    if isinstance(how, Reply) and not body.get("stream"):
        return JSONResponse(wire.whole(how))
    if isinstance(how, Reply):
        events = _events(wire.stream(how), how.pause)
    elif isinstance(how, StreamError):
        events = _events(wire.error(how))
    elif isinstance(how, Broken):
        events = _broken(state, wire, how)
    else:  # an Echo is answered by the endpoint, which has the request
        raise TypeError(f"no answer for {how!r}")
    return StreamingResponse(events, media_type="text/event-stream")


def _refusal(api: Api, body: dict[str, Any], how: Status | RawBody | NoTools) -> Response:
    """An answer that is not a reply: an error, or bytes as they are."""
    if isinstance(how, Status):
        return _status(api, how)
    if isinstance(how, NoTools):
        return _no_tools(api, str(body.get("model", "")))
    return Response(how.body, how.status, media_type=how.content_type)


async def _events(events: list[bytes], pause: float = 0.0) -> AsyncIterator[bytes]:
    for event in events:
        yield event
        if pause:
            await anyio.sleep(pause)


async def _broken(state: _State, wire: _Wire, how: Broken) -> AsyncIterator[bytes]:
    for event in wire.start() + wire.deltas(how.text, how.chunks):
        yield event
    if how.ending == "drop":
        raise _Dropped("the test server drops the connection mid-stream")
    if how.ending == "stall":
        await to_thread.run_sync(state.released.wait, 60.0)


def _status(api: Api, how: Status) -> Response:
    headers = {} if how.retry_after is None else {"retry-after": how.retry_after}
    if api == "openai":
        error = {"message": how.message, "type": "test_error", "param": None, "code": None}
        return JSONResponse({"error": error}, how.status, headers=headers)
    kinds = {401: "authentication_error", 429: "rate_limit_error", 529: "overloaded_error"}
    kind = kinds.get(how.status, "api_error" if how.status >= 500 else "invalid_request_error")
    content = {"type": "error", "error": {"type": kind, "message": how.message}}
    return JSONResponse(content, how.status, headers=headers)


def _tool_use(state: _State, wire: _Wire, how: ToolUse, *, stream: bool) -> Response:
    with state.lock:
        ids = [next(state.call_ids) for _ in how.calls]
    calls = _ToolCalls(wire.api, how, ids)
    if not stream:
        return JSONResponse(calls.whole(wire))
    return StreamingResponse(_events(calls.stream(wire)), media_type="text/event-stream")


def _no_tools(api: Api, model: str) -> Response:
    message = f"registry.ollama.ai/library/{model} does not support tools"
    if api == "openai":
        error = {"message": message, "type": "invalid_request_error", "param": None, "code": None}
        return JSONResponse({"error": error}, 400)
    content = {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
    return JSONResponse(content, 400)


def _pieces(text: str, count: int) -> list[str]:
    size = max(1, -(-len(text) // max(1, count)))
    return [text[start : start + size] for start in range(0, len(text), size)]


class _Wire:
    """One API's wire format for one request."""

    def __init__(self, api: Api, body: dict[str, Any]) -> None:
        self.api = api
        self.model = str(body.get("model", ""))
        options = body.get("stream_options")
        self.include_usage = isinstance(options, dict) and bool(options.get("include_usage"))

    def whole(self, reply: Reply) -> dict[str, Any]:
        output = _output_tokens(reply)
        if self.api == "openai":
            return {
                "id": "chatcmpl-test",
                "object": "chat.completion",
                "created": 0,
                "model": self.model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": reply.text},
                        "finish_reason": reply.finish_reason or "stop",
                    }
                ],
                "usage": _openai_usage(reply.input_tokens, output),
            }
        return {
            "id": "msg_test",
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": [{"type": "text", "text": reply.text}],
            "stop_reason": reply.finish_reason or "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": reply.input_tokens, "output_tokens": output},
        }

    def stream(self, reply: Reply) -> list[bytes]:
        return (
            self.start(reply.input_tokens) + self.deltas(reply.text, reply.chunks) + self.end(reply)
        )

    def start(self, input_tokens: int = 10) -> list[bytes]:
        if self.api == "openai":
            return [self.chunk({"role": "assistant", "content": ""}, None)]
        message: dict[str, Any] = {
            "id": "msg_test",
            "type": "message",
            "role": "assistant",
            "content": [],
            "model": self.model,
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": input_tokens, "output_tokens": 1},
        }
        block = {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "text", "text": ""},
        }
        return [
            _event("message_start", {"type": "message_start", "message": message}),
            _event("content_block_start", block),
            _event("ping", {"type": "ping"}),
        ]

    def deltas(self, text: str, chunks: int) -> list[bytes]:
        if self.api == "openai":
            return [self.chunk({"content": piece}, None) for piece in _pieces(text, chunks)]
        return [
            _event(
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": piece},
                },
            )
            for piece in _pieces(text, chunks)
        ]

    def end(self, reply: Reply) -> list[bytes]:
        output = _output_tokens(reply)
        if self.api == "openai":
            events = [self.chunk({}, reply.finish_reason or "stop")]
            if self.include_usage:
                usage = {"choices": [], "usage": _openai_usage(reply.input_tokens, output)}
                events.append(_data({**self._envelope(), **usage}))
            return [*events, b"data: [DONE]\n\n"]
        delta = {"stop_reason": reply.finish_reason or "end_turn", "stop_sequence": None}
        return [
            _event("content_block_stop", {"type": "content_block_stop", "index": 0}),
            _event(
                "message_delta",
                {"type": "message_delta", "delta": delta, "usage": {"output_tokens": output}},
            ),
            _event("message_stop", {"type": "message_stop"}),
        ]

    def error(self, how: StreamError) -> list[bytes]:
        if self.api == "openai":
            return [_data({"error": {"message": how.message, "type": how.kind}})]
        error = {"type": "error", "error": {"type": how.kind, "message": how.message}}
        return [*self.start(), _event("error", error)]

    def _envelope(self) -> dict[str, Any]:
        return {
            "id": "chatcmpl-test",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": self.model,
        }

    def chunk(self, delta: dict[str, Any], finish: str | None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return _data({**self._envelope(), "choices": [choice]})


def _output_tokens(reply: Reply) -> int:
    return len(reply.text.split()) if reply.output_tokens is None else reply.output_tokens


def _openai_usage(prompt: int, completion: int) -> dict[str, int]:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def _data(payload: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(payload)}\n\n".encode()


def _event(name: str, payload: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(payload)}\n\n".encode()


class _ToolCalls:
    """A ToolUse answer in one API's shape, its calls numbered by the server."""

    def __init__(self, api: Api, how: ToolUse, ids: list[int]) -> None:
        self.api = api
        self.how = how
        prefix = "call_" if api == "openai" else "toolu_"
        self.calls = [
            (
                f"{prefix}{n}",
                name,
                arguments if isinstance(arguments, str) else json.dumps(arguments),
            )
            for n, (name, arguments) in zip(ids, how.calls, strict=True)
        ]

    def whole(self, wire: _Wire) -> dict[str, Any]:
        reply = Reply(self.how.text, "tool_calls" if self.api == "openai" else "tool_use",
                      self.how.input_tokens, self.how.output_tokens)  # fmt: skip
        body = wire.whole(reply)
        if self.api == "openai":
            body["choices"][0]["message"] = {
                "role": "assistant",
                "content": self.how.text or None,
                "tool_calls": [
                    {"id": id_, "type": "function", "function": {"name": name, "arguments": args}}
                    for id_, name, args in self.calls
                ],
            }
            return body
        text = [{"type": "text", "text": self.how.text}] if self.how.text else []
        body["content"] = text + [
            {"type": "tool_use", "id": id_, "name": name, "input": _input(args)}
            for id_, name, args in self.calls
        ]
        return body

    def stream(self, wire: _Wire) -> list[bytes]:
        if self.api == "openai":
            return self._openai_stream(wire)
        return self._anthropic_stream(wire)

    def _openai_stream(self, wire: _Wire) -> list[bytes]:
        events = [wire.chunk({"role": "assistant", "content": ""}, None)]
        if self.how.text:
            events += wire.deltas(self.how.text, self.how.chunks)
        for index, (id_, name, args) in enumerate(self.calls):
            first = {"index": index, "id": id_, "type": "function",
                     "function": {"name": name, "arguments": ""}}  # fmt: skip
            events.append(wire.chunk({"tool_calls": [first]}, None))
            events += [
                wire.chunk(
                    {"tool_calls": [{"index": index, "function": {"arguments": piece}}]}, None
                )
                for piece in _pieces(args, self.how.chunks)
            ]
        end = Reply("", "tool_calls", self.how.input_tokens, self.how.output_tokens)
        return events + wire.end(end)

    def _anthropic_stream(self, wire: _Wire) -> list[bytes]:
        start = wire.start(self.how.input_tokens)[:1]  # message_start, no text block yet
        blocks: list[bytes] = []
        index = 0
        if self.how.text:
            blocks += [
                _block_start(0, {"type": "text", "text": ""}),
                *wire.deltas(self.how.text, self.how.chunks),
                _block_stop(0),
            ]
            index = 1
        for id_, name, args in self.calls:
            use = {"type": "tool_use", "id": id_, "name": name, "input": {}}
            blocks.append(_block_start(index, use))
            blocks += [_json_delta(index, piece) for piece in _pieces(args, self.how.chunks)]
            blocks.append(_block_stop(index))
            index += 1
        delta = {"stop_reason": "tool_use", "stop_sequence": None}
        usage = {"output_tokens": self.how.output_tokens}
        end = [
            _event("message_delta", {"type": "message_delta", "delta": delta, "usage": usage}),
            _event("message_stop", {"type": "message_stop"}),
        ]
        return start + blocks + end


def _input(arguments: str) -> Any:
    """Anthropic's whole answer carries the input as an object; broken JSON as its text."""
    try:
        return json.loads(arguments)
    except ValueError:
        return arguments


def _block_start(index: int, block: dict[str, Any]) -> bytes:
    data = {"type": "content_block_start", "index": index, "content_block": block}
    return _event("content_block_start", data)


def _json_delta(index: int, piece: str) -> bytes:
    delta = {"type": "input_json_delta", "partial_json": piece}
    data = {"type": "content_block_delta", "index": index, "delta": delta}
    return _event("content_block_delta", data)


def _block_stop(index: int) -> bytes:
    return _event("content_block_stop", {"type": "content_block_stop", "index": index})
