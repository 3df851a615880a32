"""The in-memory model provider: a scripted fake at the port, for tests of the code above it.

Each `complete` takes the next step of the script - a reply (streamed to `on_text` in a few
pieces), an error to raise, or a reply that breaks off with an error after its text - and
records the request it got. With the script empty it answers with `default(request)`.

    model = MemoryProvider()
    model.reply("What is the spec for?")
    model.call_tools(("read_file", {"path": "src/app.py"}), text="Let me look.")
    model.fail("rate_limited")
    model.refuse_tools()  # the failure "tools_unsupported": a model that takes no tools
    ...  # model.requests[0].system, model.requests[0].messages, model.requests[1].tools

A scripted step is played whatever the request offers: a reply answers a request with or
without tools alike, and scripted calls come back even for a tool that was not offered (a model
may call one it was never given; the code above the port answers that as the model's mistake).
"""

from __future__ import annotations

import itertools
import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio

from crewboard.services.sessions.providers import (
    Completion,
    ModelRequest,
    OnText,
    ProviderError,
    ProviderErrorCode,
    ToolCall,
    Usage,
)


@dataclass(frozen=True)
class ScriptedReply:
    """One scripted answer."""

    text: str
    finish_reason: str | None = "stop"
    usage: Usage = field(default_factory=Usage)
    pieces: int = 3  # how many calls of on_text the text is cut into (at most)
    then: ProviderError | None = None  # raised after the text: a stream that broke off
    wait_for: anyio.Event | None = None  # held back until this is set (a slow model)
    tool_calls: tuple[ToolCall, ...] = ()  # the tools it asks for, after its text


Step = ScriptedReply | ProviderError


class MemoryProvider:
    """A ModelProvider that answers from a script and remembers what it was asked."""

    def __init__(
        self, *steps: str | Step, default: Callable[[ModelRequest], str] | None = None
    ) -> None:
        self.requests: list[ModelRequest] = []
        self.default = default
        self._call_ids = itertools.count(1)
        self._script: deque[Step] = deque(
            ScriptedReply(step) if isinstance(step, str) else step for step in steps
        )

    def reply(
        self,
        text: str,
        *,
        finish_reason: str | None = "stop",
        usage: Usage | None = None,
        then: ProviderError | None = None,
        wait_for: anyio.Event | None = None,
    ) -> None:
        """Script a reply (see ScriptedReply)."""
        step = ScriptedReply(text, finish_reason, usage or Usage(), then=then, wait_for=wait_for)
        self._script.append(step)

    def call_tools(
        self,
        *calls: ToolCall | tuple[str, dict[str, Any]],
        text: str = "",
        usage: Usage | None = None,
    ) -> None:
        """Script a reply that calls tools: each a ToolCall, or (name, arguments) given the id
        "call_<n>" (n counting this provider's calls from 1); finish reason "tool_calls"."""
        made = tuple(
            call if isinstance(call, ToolCall) else ToolCall(f"call_{next(self._call_ids)}", *call)
            for call in calls
        )
        step = ScriptedReply(text, "tool_calls", usage or Usage(), tool_calls=made)
        self._script.append(step)

    def refuse_tools(self) -> None:
        """Script the failure of a model or server that takes no tool calls."""
        self.fail("tools_unsupported", "the scripted model takes no tool calls", 400)

    def fail(
        self, code: ProviderErrorCode, message: str | None = None, status: int | None = None
    ) -> None:
        """Script a failure."""
        self._script.append(ProviderError(code, message or f"scripted failure: {code}", status))

    @property
    def pending(self) -> int:
        """Steps of the script not yet taken."""
        return len(self._script)

    async def aclose(self) -> None:
        """Nothing to close; here so that it stands wherever a real adapter does."""

    async def complete(
        self, request: ModelRequest, on_text: OnText | None = None, *, deadline: float | None = None
    ) -> Completion:
        """The next scripted step for `request`.

        Raises:
            ProviderError: a scripted failure, or "timeout" when the deadline passes first.
            LookupError: the script is used up and there is no default.
        """
        self.requests.append(request)
        step = self._next(request)
        if isinstance(step, ProviderError):
            raise step
        with anyio.CancelScope(deadline=math.inf if deadline is None else deadline):
            return await self._play(step, on_text)
        raise ProviderError("timeout", "the scripted model did not answer before the deadline")

    def _next(self, request: ModelRequest) -> Step:
        if self._script:
            return self._script.popleft()
        if self.default is None:
            raise LookupError(
                f"MemoryProvider has no reply scripted for request {len(self.requests)}"
            )
        return ScriptedReply(self.default(request))

    async def _play(self, step: ScriptedReply, on_text: OnText | None) -> Completion:
        await anyio.lowlevel.checkpoint()  # a deadline already past is noticed here
        if step.wait_for is not None:
            await step.wait_for.wait()
        if on_text is not None:
            for piece in pieces_of(step.text, step.pieces):
                await on_text(piece)
        if step.then is not None:
            raise step.then
        return Completion(
            step.text, step.usage, step.finish_reason, 1, 0.0, tool_calls=step.tool_calls
        )


def pieces_of(text: str, count: int) -> list[str]:
    """`text` cut into at most `count` non-empty pieces that join back to it."""
    size = max(1, -(-len(text) // max(1, count)))
    return [text[start : start + size] for start in range(0, len(text), size)]
