"""The adapter for the Anthropic Messages API.

`POST {base_url}/v1/messages` (the base URL `https://api.anthropic.com` when none is given),
the key in `x-api-key`, `anthropic-version: 2023-06-01`, the system prompt in the top-level
`system` field. A streamed answer is a run of named events: `message_start` (input tokens),
`content_block_delta` (text), `message_delta` (output tokens, stop reason), `message_stop`,
and `error` when the API fails mid-stream (an overloaded one does so with a 200).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx2

from crewboard.services.sessions.providers import ANTHROPIC_BASE_URL, ModelRequest, Usage
from crewboard.services.sessions.providers.base import (
    Answer,
    HttpProvider,
    TextSink,
    as_dict,
    as_int,
    as_str,
    error_message,
    event_json,
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
        turns = [{"role": m.role, "content": m.content} for m in request.messages]
        system = {"system": request.system} if request.system else {}
        return self.chat_body(request, turns, **system)

    def read_body(self, data: Any) -> Answer:
        body = as_dict(data)
        if body.get("type") == "error":
            raise self.stream_error(_error_kind(body), error_message(body))
        content = body.get("content")
        if not isinstance(content, list):
            raise self.bad_answer("answered without any content")
        text = "".join(
            as_str(block.get("text")) or ""
            for block in map(as_dict, content)
            if block.get("type") == "text"
        )
        usage = as_dict(body.get("usage"))
        return Answer(
            text,
            Usage(as_int(usage.get("input_tokens")), as_int(usage.get("output_tokens"))),
            as_str(body.get("stop_reason")),
        )

    async def read_events(
        self, events: AsyncIterator[httpx2.ServerSentEvent], sink: TextSink
    ) -> Answer:
        input_tokens = output_tokens = 0
        stop_reason: str | None = None
        async for event in events:
            if not event.data.strip():
                continue
            data = event_json(event, self)
            kind = as_str(data.get("type")) or event.event
            if kind == "message_start":
                usage = as_dict(as_dict(data.get("message")).get("usage"))
                input_tokens = as_int(usage.get("input_tokens"))
                output_tokens = as_int(usage.get("output_tokens"))
            elif kind == "content_block_delta":
                delta = as_dict(data.get("delta"))
                if delta.get("type") == "text_delta":
                    await sink.add(as_str(delta.get("text")) or "")
            elif kind == "message_delta":
                output_tokens = (
                    as_int(as_dict(data.get("usage")).get("output_tokens")) or output_tokens
                )
                stop_reason = as_str(as_dict(data.get("delta")).get("stop_reason")) or stop_reason
            elif kind == "message_stop":
                return Answer(sink.text, Usage(input_tokens, output_tokens), stop_reason)
            elif kind == "error":
                raise self.stream_error(_error_kind(data), error_message(data))
        if stop_reason is not None:  # the stop reason came; only the closing event is missing
            return Answer(sink.text, Usage(input_tokens, output_tokens), stop_reason)
        raise self.stopped_short()


def _error_kind(data: dict[str, Any]) -> str:
    return as_str(as_dict(data.get("error")).get("type")) or ""
