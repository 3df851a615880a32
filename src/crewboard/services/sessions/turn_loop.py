"""One turn's rounds with the model: for a session that reads code, the model is offered the
code tools, and each call it makes is answered through the person's `crewboard reverse`
bridge and handed back to it, round after round, until it writes a reply without calls.

A turn reads within bounds: so many calls and so many characters of answers
(`session_code_calls`, `session_code_chars`). Once spent, the calls still asked for are
answered with a refusal, the model is told the budget is used up, and one last round without
tools has it write from what it read. The text of every round streams into the reply so far,
and the whole of it is the reply stored.

A model (or server) that takes no tools answers the first round with `tools_unsupported`: the
round is asked again without them, and the session says so once (`on_no_tools`).

A round without tools carries the earlier rounds' calls and answers written out as text: a
request that offers no tools may not hold tool blocks (Anthropic refuses it).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any, Protocol

from crewboard.services.sessions.code import CodeAnswer
from crewboard.services.sessions.providers import (
    ChatMessage,
    Completion,
    ModelProvider,
    ModelRequest,
    ProviderError,
    ToolCall,
    ToolResult,
    ToolSpec,
    Usage,
)

BUDGET_NOTE = (
    "The reading budget of this turn is used up: write your reply now from what you have read, "
    "without calling tools."
)
SEPARATOR = "\n\n"  # between the texts of two rounds


def _refusal(code: str, message: str) -> str:
    return json.dumps({"error": {"code": code, "message": message}})


SPENT = _refusal("budget_spent", "The reading budget of this turn is used up; not read.")


class CodeTools(Protocol):
    """The code bridge as a turn uses it (`crewboard.services.sessions.code.CodeBridges`)."""

    async def wait_for_bridge(
        self, *, project_id: str, user_id: str, deadline: float
    ) -> object | None:
        """The person's live bridge in the project, waiting for one up to `deadline`."""
        ...

    async def call(
        self,
        *,
        session_id: str,
        project_id: str,
        user_id: str,
        turn_id: str,
        tool: str,
        arguments: dict[str, Any],
        deadline: float,
    ) -> CodeAnswer:
        """One call answered by the bridge.

        Raises:
            BridgeGone: no live bridge took and answered it in time.
        """
        ...


@dataclass(frozen=True)
class Reading:
    """Whose bridge a turn's code calls go to, and how much the turn may read."""

    code: CodeTools
    tools: tuple[ToolSpec, ...]  # offered to the model (`code.CODE_TOOLS`)
    session_id: str
    project_id: str
    user_id: str
    turn_id: str
    calls: int  # settings.session_code_calls
    chars: int  # settings.session_code_chars


class Reply:
    """The text of every round so far: what the session page shows while the turn runs."""

    def __init__(self) -> None:
        self.pieces: list[str] = []
        self.changes = 0  # counts every change, for the saver to notice one
        self._separate = False

    @property
    def text(self) -> str:
        return "".join(self.pieces)

    async def add(self, piece: str) -> None:
        if not piece:
            return
        if self._separate:
            self.pieces.append(SEPARATOR)
            self._separate = False
        self.pieces.append(piece)
        self.changes += 1

    def begin_round(self) -> int:
        """A new round starts; its text will follow the earlier ones' after a blank line."""
        self._separate = bool(self.pieces)
        return len(self.pieces)

    def take_back(self, mark: int) -> None:
        """Forget what a round that is asked again streamed (from its `begin_round` mark)."""
        del self.pieces[mark:]
        self._separate = bool(self.pieces)
        self.changes += 1


class Rounds:
    """The completions of one turn, with the code calls between them."""

    def __init__(
        self,
        provider: ModelProvider,
        request: ModelRequest,
        reply: Reply,
        *,
        deadline: float,
        reading: Reading | None,
        on_no_tools: Callable[[], Awaitable[None]],
    ) -> None:
        self.provider = provider
        self.request = request
        self.reply = reply
        self.deadline = deadline
        self.reading = reading
        self.on_no_tools = on_no_tools
        self.tools = reading.tools if reading is not None else ()
        self.messages = list(request.messages)
        self.done: list[Completion] = []
        self.calls = 0
        self.chars = 0

    async def run(self) -> Completion:
        """The turn's whole reply, its usage summed over the rounds.

        Raises:
            ProviderError: a round failed (but for `tools_unsupported`, which is handled).
            BridgeGone: a code call found no bridge to answer it.
        """
        while True:
            said = await self._complete(self.tools)
            if not said.tool_calls or not self.tools or self.reading is None:
                return self._whole()
            results = await self._answer(self.reading, said.tool_calls)
            self.messages.append(ChatMessage("assistant", said.text, tool_calls=said.tool_calls))
            if self._spent(self.reading):
                self.messages.append(ChatMessage("user", BUDGET_NOTE, tool_results=results))
                await self._complete(())
                return self._whole()
            self.messages.append(ChatMessage("user", "", tool_results=results))

    async def _complete(self, tools: tuple[ToolSpec, ...]) -> Completion:
        mark = self.reply.begin_round()
        messages = self.messages if tools else as_text(self.messages)
        request = replace(self.request, messages=tuple(messages), tools=tools)
        try:
            said = await self.provider.complete(request, self.reply.add, deadline=self.deadline)
        except ProviderError as error:
            if error.code != "tools_unsupported" or not tools:
                raise
            self.reply.take_back(mark)
            self.tools = ()
            await self.on_no_tools()
            request = replace(request, messages=tuple(as_text(self.messages)), tools=())
            said = await self.provider.complete(request, self.reply.add, deadline=self.deadline)
        self.done.append(said)
        return said

    async def _answer(
        self, reading: Reading, calls: tuple[ToolCall, ...]
    ) -> tuple[ToolResult, ...]:
        """An answer to each call, in order: from the bridge while the budget lasts."""
        results: list[ToolResult] = []
        for call in calls:
            if self._spent(reading):
                results.append(ToolResult(call.id, SPENT, is_error=True))
                continue
            self.calls += 1
            if call.unreadable is not None:  # never sent on: the bridge takes JSON objects
                message = f"The arguments of {call.name} are not a JSON object; write them again."
                results.append(ToolResult(call.id, _refusal("bad_arguments", message), True))
                continue
            answer = await reading.code.call(
                session_id=reading.session_id, project_id=reading.project_id,
                user_id=reading.user_id, turn_id=reading.turn_id, tool=call.name,
                arguments=call.arguments, deadline=self.deadline,
            )  # fmt: skip
            self.chars += answer.size
            results.append(ToolResult(call.id, answer.content, answer.is_error))
        return tuple(results)

    def _spent(self, reading: Reading) -> bool:
        return self.calls >= reading.calls or self.chars >= reading.chars

    def _whole(self) -> Completion:
        """The rounds as one completion: every round's text, the usage and time of all."""
        last = self.done[-1]
        return Completion(
            text=SEPARATOR.join(c.text for c in self.done if c.text),
            usage=Usage(
                input_tokens=sum(c.usage.input_tokens for c in self.done),
                output_tokens=sum(c.usage.output_tokens for c in self.done),
            ),
            finish_reason=last.finish_reason,
            attempts=sum(c.attempts for c in self.done),
            provider_seconds=sum(c.provider_seconds for c in self.done),
        )


def as_text(messages: list[ChatMessage]) -> list[ChatMessage]:
    """The messages with their tool calls and answers written out in their text, for a request
    that offers no tools."""
    named: dict[str, str] = {}
    written: list[ChatMessage] = []
    for message in messages:
        if message.tool_calls:
            for call in message.tool_calls:
                named[call.id] = f"{call.name} {json.dumps(call.arguments, ensure_ascii=False)}"
            calls = "\n".join(f"[I called {named[c.id]}]" for c in message.tool_calls)
            written.append(ChatMessage(message.role, f"{message.content}\n\n{calls}".strip()))
        elif message.tool_results:
            answers = "\n\n".join(
                f"[{named.get(r.call_id, r.call_id)} answered]\n{r.content}"
                for r in message.tool_results
            )
            written.append(ChatMessage(message.role, f"{answers}\n\n{message.content}".strip()))
        else:
            written.append(message)
    return written
