"""The adapter for any OpenAI-compatible chat-completions endpoint, hosted or local.

`POST {base_url}/chat/completions`, the base URL given up to and including `/v1` (Ollama:
`http://127.0.0.1:11434/v1`). The key goes in `Authorization: Bearer`, and only when one is
set: local servers need none. Streamed answers are `data: {...}` events with the text in
`choices[0].delta.content`, ended by `data: [DONE]`; the usage comes in a last chunk when
the server honours `stream_options.include_usage` (and is zero when it does not).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx2

from crewboard.services.sessions.providers import ModelRequest, Usage
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
        turns = [{"role": m.role, "content": m.content} for m in request.messages]
        usage = {"stream_options": {"include_usage": True}} if self.config.stream else {}
        return self.chat_body(request, system + turns, **usage)

    def read_body(self, data: Any) -> Answer:
        body = as_dict(data)
        choices = body.get("choices")
        if not isinstance(choices, list) or not choices:
            raise self.bad_answer("answered without any choices")
        choice = as_dict(choices[0])
        text = as_str(as_dict(choice.get("message")).get("content")) or ""
        return Answer(text, _usage(body.get("usage")), as_str(choice.get("finish_reason")))

    async def read_events(
        self, events: AsyncIterator[httpx2.ServerSentEvent], sink: TextSink
    ) -> Answer:
        usage, finish = Usage(), None
        async for event in events:
            if event.data.strip() == "[DONE]":
                return Answer(sink.text, usage, finish)
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
                await sink.add(as_str(as_dict(choice.get("delta")).get("content")) or "")
                finish = as_str(choice.get("finish_reason")) or finish
        if finish is not None:  # a server that sends no [DONE] after its last chunk
            return Answer(sink.text, usage, finish)
        raise self.stopped_short()


def _usage(value: Any) -> Usage:
    usage = as_dict(value)
    return Usage(as_int(usage.get("prompt_tokens")), as_int(usage.get("completion_tokens")))
