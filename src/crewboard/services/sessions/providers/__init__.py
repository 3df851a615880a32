"""The model provider port: what a spec session asks of an AI model, and what comes back.

A session sends a system prompt and the conversation so far, and gets the model's next turn
as text, streamed piece by piece to a callback while it arrives. Two real adapters speak HTTP
(`openai`: any OpenAI-compatible chat-completions endpoint, hosted or local such as Ollama,
llama.cpp or vLLM; `anthropic`: the Anthropic Messages API); `memory` is a scripted fake for
tests of the code above the port.

Every failure is a `ProviderError` with a stable code and a sentence fit to show a person,
written by us from what the provider answered (its status and error type, never its words);
the API key and a password in the base URL are never in a repr, a message or an error text
(`redactor_for` finds them in any encoding).
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from crewboard.domain.redaction import Redactor, url_secrets

ProviderErrorCode = Literal[
    "timeout",  # the provider went silent for longer than allowed, or the deadline passed
    "unreachable",  # no connection, or it broke before the answer was complete
    "rate_limited",  # 429 (or the provider's own rate-limit error mid-stream)
    "server_error",  # 5xx, or an overloaded/api error mid-stream
    "refused",  # any other 4xx: a bad key, an unknown model, a request it will not take
    "bad_answer",  # a body or stream that could not be read as an answer
    "tools_unsupported",  # the request offered tools, and the model or server takes none
]

OnText = Callable[[str], Awaitable[None]]  # called with each piece of text as it streams in
Sleep = Callable[[float], Awaitable[None]]  # how the adapters wait between attempts

BACKOFF_BASE = 0.5  # seconds before the first retry; it doubles on each one after


@dataclass(frozen=True)
class ToolSpec:
    """A tool the model may call: its name, what it does, its arguments as a JSON Schema."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True)
class ToolCall:
    """One call the model made: the provider's id for it, the tool, the arguments it wrote.
    Arguments that are not a JSON object arrive as `{}` with `unreadable` set to their text."""

    id: str
    name: str
    arguments: dict[str, Any]
    unreadable: str | None = None


@dataclass(frozen=True)
class ToolResult:
    """What the caller answers to one ToolCall (by its id): text for the model to read."""

    call_id: str
    content: str
    is_error: bool = False


@dataclass(frozen=True)
class ChatMessage:
    role: Literal["user", "assistant"]
    content: str
    # An assistant message: the calls it made after its text (the next message answers them).
    tool_calls: tuple[ToolCall, ...] = ()
    # A user message: the answers to the previous assistant message's calls, before its text.
    tool_results: tuple[ToolResult, ...] = ()


@dataclass(frozen=True)
class ModelRequest:
    model: str  # the provider's model name, e.g. "llama3.1:8b", "claude-sonnet-4-5"
    system: str
    messages: tuple[ChatMessage, ...]
    max_tokens: int = 4096
    temperature: float | None = None
    tools: tuple[ToolSpec, ...] = ()  # none: the request offers no tools


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(frozen=True)
class Completion:
    text: str
    usage: Usage
    finish_reason: str | None  # as the provider said it ("stop", "end_turn", "length"...)
    attempts: int  # 1 + retries taken
    provider_seconds: float  # wall time spent on the provider (all attempts and back-off)
    tool_calls: tuple[ToolCall, ...] = ()  # the tools the model asked for, in its order


@dataclass(frozen=True)
class ProviderConfig:
    id: str  # the operator's name for it, e.g. "local-ollama"
    kind: Literal["openai", "anthropic"]
    base_url: str  # openai: up to and including /v1; anthropic: the host (default below)
    api_key: str | None = field(default=None, repr=False)  # never in a repr, log or message
    timeout: float = 60.0  # seconds of silence allowed: to connect, between streamed chunks
    max_retries: int = 3
    stream: bool = True


ANTHROPIC_BASE_URL = "https://api.anthropic.com"


def redactor_for(config: ProviderConfig) -> Redactor:
    """What finds this provider's secrets in text: its key and its base URL's password."""
    return _redactor(config.api_key, config.base_url)


@functools.lru_cache(maxsize=64)
def _redactor(api_key: str | None, base_url: str) -> Redactor:
    # Its patterns take milliseconds to build, and each turn asks twice (adapter and runner).
    return Redactor([api_key, *url_secrets(base_url)])


class ProviderError(Exception):
    """Why a completion failed, in a sentence fit to show a person (never the key)."""

    def __init__(self, code: ProviderErrorCode, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.code: ProviderErrorCode = code
        self.message = message
        self.status = status

    def __repr__(self) -> str:
        return f"ProviderError({self.code!r}, {self.message!r}, status={self.status!r})"


class ModelProvider(Protocol):
    async def complete(
        self, request: ModelRequest, on_text: OnText | None = None, *, deadline: float | None = None
    ) -> Completion:
        """The model's next turn; `deadline` is an absolute `anyio.current_time()` to give up at.

        Raises:
            ProviderError: the provider could not be reached, refused, failed or timed out.
        """
        ...
