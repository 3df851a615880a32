"""The adapter for any OpenAI-compatible chat-completions endpoint, hosted or local.

`POST {base_url}/chat/completions`, the base URL given up to and including `/v1` (Ollama:
`http://127.0.0.1:11434/v1`). The key goes in `Authorization: Bearer`, and only when one is
set: local servers need none. Streamed answers are `data: {...}` events with the text in
`choices[0].delta.content`, ended by `data: [DONE]`; the usage comes in a last chunk when
the server honours `stream_options.include_usage` (and is zero when it does not).

Tools go in `tools` as functions. The model's calls come in `message.tool_calls`, their
arguments as JSON text; streamed, in `delta.tool_calls` fragments keyed by `index` - the id and
name first, the arguments in pieces after - with the finish reason "tool_calls". The answers
go back as one `tool` message per call, before the user's own text.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx2

from crewboard.services.sessions.providers import (
    ChatMessage,
    ModelRequest,
    ToolCall,
    ToolSpec,
    Usage,
)
from crewboard.services.sessions.providers.base import (
    Answer,
    HttpProvider,
    TextSink,
    as_dict,
    as_int,
    as_str,
    error_message,
    event_json,
    tool_call,
)


class OpenAIProvider(HttpProvider):
    """Chat completions in the OpenAI wire format."""

    @property
    def url(self) -> str:
        return self.config.base_url.rstrip("/") + "/chat/completions"

    def headers(self) -> dict[str, str]:
        headers = self.accept()
        if self.config.api_key:
            headers["authorization"] = f"Bearer {self.config.api_key}"
        return headers

    def body(self, request: ModelRequest) -> dict[str, Any]:
        system = [{"role": "system", "content": request.system}] if request.system else []
        turns = [turn for message in request.messages for turn in _turns(message)]
        extra: dict[str, Any] = {}
        if request.tools:
            extra["tools"] = [_tool(spec) for spec in request.tools]
        if self.config.stream:
            extra["stream_options"] = {"include_usage": True}
        return self.chat_body(request, system + turns, **extra)

    def read_body(self, data: Any) -> Answer:
        body = as_dict(data)
        choices = body.get("choices")
        if not isinstance(choices, list) or not choices:
            raise self.bad_answer("answered without any choices")
        choice = as_dict(choices[0])
        message = as_dict(choice.get("message"))
        text = as_str(message.get("content")) or ""
        calls = message.get("tool_calls")
        fragments = _Fragments()
        for index, call in enumerate(calls if isinstance(calls, list) else []):
            fragments.add(as_dict(call), index)
        return Answer(
            text,
            _usage(body.get("usage")),
            as_str(choice.get("finish_reason")),
            fragments.calls(),
        )

    async def read_events(
        self, events: AsyncIterator[httpx2.ServerSentEvent], sink: TextSink
    ) -> Answer:
        usage, finish, fragments = Usage(), None, _Fragments()
        async for event in events:
            if event.data.strip() == "[DONE]":
                return Answer(sink.text, usage, finish, fragments.calls())
            if not event.data.strip():
                continue
            chunk = event_json(event, self)
            if "error" in chunk:  # vLLM, Ollama and proxies report failures inside the stream
                error = as_dict(chunk["error"])
                kind = as_str(error.get("type")) or as_str(error.get("code")) or ""
                raise self.stream_error(kind, error_message(chunk))
            if chunk.get("usage"):
                usage = _usage(chunk["usage"])
            choices = chunk.get("choices")
            if isinstance(choices, list) and choices:
                choice = as_dict(choices[0])
                delta = as_dict(choice.get("delta"))
                await sink.add(as_str(delta.get("content")) or "")
                fragments.extend(delta.get("tool_calls"))
                finish = as_str(choice.get("finish_reason")) or finish
        if finish is not None:  # a server that sends no [DONE] after its last chunk
            return Answer(sink.text, usage, finish, fragments.calls())
        raise self.stopped_short()


def _turns(message: ChatMessage) -> list[dict[str, Any]]:
    """One message of ours as the API's: a user's answers to tool calls are `tool` messages
    of their own, before the user's text (left out when there is none)."""
    if message.role == "assistant" and message.tool_calls:
        calls = [_call(call) for call in message.tool_calls]
        return [{"role": "assistant", "content": message.content or None, "tool_calls": calls}]
    results = [
        {"role": "tool", "tool_call_id": result.call_id, "content": result.content}
        for result in message.tool_results
    ]
    if message.tool_results and not message.content:
        return results
    return [*results, {"role": message.role, "content": message.content}]


def _call(call: ToolCall) -> dict[str, Any]:
    # Unreadable arguments go back as the `{}` they were read as: some servers (Ollama) parse
    # the history's arguments and refuse the whole request when they are not JSON.
    function = {"name": call.name, "arguments": json.dumps(call.arguments)}
    return {"id": call.id, "type": "function", "function": function}


def _tool(spec: ToolSpec) -> dict[str, Any]:
    function = {"name": spec.name, "description": spec.description, "parameters": spec.parameters}
    return {"type": "function", "function": function}


@dataclass
class _Fragment:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)
    whole: dict[str, Any] | None = None  # arguments sent as an object (some local servers)


class _Fragments:
    """Tool calls gathered from pieces: streamed fragments keyed by `index`, or whole calls."""

    def __init__(self) -> None:
        self._by_index: dict[int, _Fragment] = {}

    def extend(self, value: Any) -> None:
        """A streamed chunk's `delta.tool_calls`."""
        for fragment in map(as_dict, value if isinstance(value, list) else []):
            index = fragment.get("index")
            if not isinstance(index, int) or isinstance(index, bool):
                index = self._index_without_one(fragment)
            self.add(fragment, index)

    def add(self, data: dict[str, Any], index: int) -> None:
        part = self._by_index.setdefault(index, _Fragment())
        part.id = as_str(data.get("id")) or part.id
        function = as_dict(data.get("function"))
        part.name = as_str(function.get("name")) or part.name
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            part.arguments.append(arguments)
        elif isinstance(arguments, dict):
            part.whole = arguments

    def _index_without_one(self, fragment: dict[str, Any]) -> int:
        """A fragment without an index (some local servers): the call it names by id, or a new
        call when it brings a new id or a name; else more of the last call."""
        call_id = as_str(fragment.get("id"))
        for index, part in self._by_index.items():
            if call_id and part.id == call_id:
                return index
        last = max(self._by_index, default=-1)
        named = as_str(as_dict(fragment.get("function")).get("name"))
        if last < 0 or call_id or (named and self._by_index[last].name):
            return last + 1
        return last

    def calls(self) -> tuple[ToolCall, ...]:
        return tuple(
            tool_call(
                part.id or f"call_{index}",
                part.name,
                part.whole if part.whole is not None else "".join(part.arguments),
            )
            for index, part in sorted(self._by_index.items())
        )


def _usage(value: Any) -> Usage:
    usage = as_dict(value)
    return Usage(as_int(usage.get("prompt_tokens")), as_int(usage.get("completion_tokens")))
