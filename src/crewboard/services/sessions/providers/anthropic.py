"""The adapter for the Anthropic Messages API.

`POST {base_url}/v1/messages` (the base URL `https://api.anthropic.com` when none is given),
the key in `x-api-key`, `anthropic-version: 2023-06-01`, the system prompt in the top-level
`system` field. A streamed answer is a run of named events: `message_start` (input tokens),
`content_block_delta` (text), `message_delta` (output tokens, stop reason), `message_stop`,
and `error` when the API fails mid-stream (an overloaded one does so with a 200).

Tools go in `tools` with their `input_schema`. The model's calls are `tool_use` content blocks
(id, name, input); streamed, a `content_block_start` of that type brings the id and name, its
`input_json_delta` events the input's JSON in pieces, and the stop reason is "tool_use". The
answers go back as `tool_result` blocks at the start of the next user message.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx2

from crewboard.services.sessions.providers import (
    ANTHROPIC_BASE_URL,
    ChatMessage,
    ModelRequest,
    ToolCall,
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

API_VERSION = "2023-06-01"


class AnthropicProvider(HttpProvider):
    """Messages in the Anthropic wire format."""

    @property
    def url(self) -> str:
        return (self.config.base_url or ANTHROPIC_BASE_URL).rstrip("/") + "/v1/messages"

    def headers(self) -> dict[str, str]:
        headers = {**self.accept(), "anthropic-version": API_VERSION}
        if self.config.api_key:
            headers["x-api-key"] = self.config.api_key
        return headers

    def body(self, request: ModelRequest) -> dict[str, Any]:
        turns = [_turn(message) for message in request.messages]
        extra: dict[str, Any] = {"system": request.system} if request.system else {}
        if request.tools:
            extra["tools"] = [
                {
                    "name": spec.name,
                    "description": spec.description,
                    "input_schema": spec.parameters,
                }
                for spec in request.tools
            ]
        return self.chat_body(request, turns, **extra)

    def read_body(self, data: Any) -> Answer:
        body = as_dict(data)
        if body.get("type") == "error":
            raise self.stream_error(_error_kind(body), error_message(body))
        content = body.get("content")
        if not isinstance(content, list):
            raise self.bad_answer("answered without any content")
        blocks = list(map(as_dict, content))
        text = "".join(as_str(b.get("text")) or "" for b in blocks if b.get("type") == "text")
        uses = [b for b in blocks if b.get("type") == "tool_use"]
        calls = tuple(
            tool_call(_id(b, n), as_str(b.get("name")) or "", b.get("input"))
            for n, b in enumerate(uses)
        )
        usage = as_dict(body.get("usage"))
        return Answer(
            text,
            Usage(as_int(usage.get("input_tokens")), as_int(usage.get("output_tokens"))),
            as_str(body.get("stop_reason")),
            calls,
        )

    async def read_events(
        self, events: AsyncIterator[httpx2.ServerSentEvent], sink: TextSink
    ) -> Answer:
        input_tokens = output_tokens = 0
        stop_reason: str | None = None
        uses = _ToolUses()
        async for event in events:
            if not event.data.strip():
                continue
            data = event_json(event, self)
            kind = as_str(data.get("type")) or event.event
            if kind == "message_start":
                usage = as_dict(as_dict(data.get("message")).get("usage"))
                input_tokens = as_int(usage.get("input_tokens"))
                output_tokens = as_int(usage.get("output_tokens"))
            elif kind == "content_block_start":
                uses.start(data)
            elif kind == "content_block_delta":
                delta = as_dict(data.get("delta"))
                if delta.get("type") == "text_delta":
                    await sink.add(as_str(delta.get("text")) or "")
                elif delta.get("type") == "input_json_delta":
                    uses.add(data.get("index"), as_str(delta.get("partial_json")) or "")
            elif kind == "message_delta":
                output_tokens = (
                    as_int(as_dict(data.get("usage")).get("output_tokens")) or output_tokens
                )
                stop_reason = as_str(as_dict(data.get("delta")).get("stop_reason")) or stop_reason
            elif kind == "message_stop":
                used = Usage(input_tokens, output_tokens)
                return Answer(sink.text, used, stop_reason, uses.calls())
            elif kind == "error":
                raise self.stream_error(_error_kind(data), error_message(data))
        if stop_reason is not None:  # the stop reason came; only the closing event is missing
            return Answer(sink.text, Usage(input_tokens, output_tokens), stop_reason, uses.calls())
        raise self.stopped_short()


def _turn(message: ChatMessage) -> dict[str, Any]:
    """One message of ours as the API's: plain text, or content blocks when it carries tool
    calls (the assistant's) or their results (the user's, before the user's text)."""
    if not message.tool_calls and not message.tool_results:
        return {"role": message.role, "content": message.content}
    text = [{"type": "text", "text": message.content}] if message.content else []
    if message.role == "assistant":
        uses = [
            {"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments}
            for call in message.tool_calls
        ]
        return {"role": "assistant", "content": text + uses}
    results = [_result(result.call_id, result.content, result.is_error)
               for result in message.tool_results]  # fmt: skip
    return {"role": "user", "content": results + text}


def _result(call_id: str, content: str, is_error: bool) -> dict[str, Any]:
    result: dict[str, Any] = {"type": "tool_result", "tool_use_id": call_id, "content": content}
    if is_error:
        result["is_error"] = True
    return result


class _ToolUses:
    """The tool_use blocks of a stream: started with their id and name, then their input's
    JSON in pieces, each keyed by the block's index."""

    def __init__(self) -> None:
        self._started: dict[int, tuple[str, str]] = {}
        self._json: dict[int, list[str]] = {}

    def start(self, data: dict[str, Any]) -> None:
        block = as_dict(data.get("content_block"))
        index = data.get("index")
        if block.get("type") == "tool_use" and isinstance(index, int):
            self._started[index] = (_id(block, index), as_str(block.get("name")) or "")
            self._json[index] = []

    def add(self, index: Any, piece: str) -> None:
        if isinstance(index, int) and index in self._json:
            self._json[index].append(piece)

    def calls(self) -> tuple[ToolCall, ...]:
        return tuple(
            tool_call(call_id, name, "".join(self._json[index]))
            for index, (call_id, name) in sorted(self._started.items())
        )


def _id(block: dict[str, Any], n: int) -> str:
    # The API always names its calls; one that does not still needs an id its result can cite.
    return as_str(block.get("id")) or f"toolu_{n}"


def _error_kind(data: dict[str, Any]) -> str:
    return as_str(as_dict(data.get("error")).get("type")) or ""
