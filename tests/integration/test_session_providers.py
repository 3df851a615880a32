"""The model provider adapters against a real model server on loopback, for both APIs."""

from __future__ import annotations

import json
import traceback
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import Any, Literal
from urllib.parse import quote

import anyio
import pytest

from crewboard.services.sessions.providers import (
    ChatMessage,
    ModelProvider,
    ModelRequest,
    ProviderConfig,
    ProviderError,
    ToolCall,
    ToolResult,
    ToolSpec,
    Usage,
)
from crewboard.services.sessions.providers.adapters import provider_for
from crewboard.services.sessions.providers.anthropic import AnthropicProvider
from crewboard.services.sessions.providers.base import HttpProvider
from crewboard.services.sessions.providers.memory import MemoryProvider, ScriptedReply
from crewboard.services.sessions.providers.openai import OpenAIProvider
from tests.support.model_server import (
    Api,
    Broken,
    Hang,
    ModelServer,
    NoTools,
    RawBody,
    Reply,
    Status,
    StreamError,
    ToolUse,
)
from tests.support.secrets import every_form, leaks
from tests.support.server import free_port

pytestmark = pytest.mark.anyio

KEY = "sk-test-5ecret-never-shown-0123456789"
BACKOFF = 0.01
REQUEST = ModelRequest(
    model="test-model",
    system="You interview a person about the spec they want written.",
    messages=(
        ChatMessage("user", "I want a spec for a mailer."),
        ChatMessage("assistant", "Who receives the mail?"),
        ChatMessage("user", "The team."),
    ),
    max_tokens=512,
)


class Naps:
    """The adapters' sleeper: notes each back-off and returns at once."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


class Pieces:
    """An on_text callback that keeps what it was given."""

    def __init__(self) -> None:
        self.got: list[str] = []

    async def __call__(self, text: str) -> None:
        self.got.append(text)


@pytest.fixture(params=["openai", "anthropic"])
def api(request: pytest.FixtureRequest) -> Api:
    value: Api = request.param
    return value


@pytest.fixture
def server() -> Iterator[ModelServer]:
    with ModelServer() as running:
        yield running


@pytest.fixture
def naps() -> Naps:
    return Naps()


def config_for(server: ModelServer, api: Api, **how: Any) -> ProviderConfig:
    how.setdefault("api_key", KEY)
    return ProviderConfig(id=f"test-{api}", kind=api, base_url=server.base_url(api), **how)


@asynccontextmanager
async def opened(config: ProviderConfig, naps: Naps) -> AsyncIterator[ModelProvider]:
    provider = provider_for(config, backoff_base=BACKOFF, sleep=naps)
    assert isinstance(provider, HttpProvider)
    try:
        yield provider
    finally:
        await provider.aclose()


async def failure_of(provider: ModelProvider, **how: Any) -> ProviderError:
    with pytest.raises(ProviderError) as caught:
        await provider.complete(REQUEST, **how)
    return caught.value


async def test_provider_for_picks_the_adapter_of_the_configured_kind(server: ModelServer) -> None:
    adapters: dict[Api, type[HttpProvider]] = {
        "openai": OpenAIProvider,
        "anthropic": AnthropicProvider,
    }
    for kind, adapter in adapters.items():
        provider = provider_for(config_for(server, kind))
        assert type(provider) is adapter
        await provider.aclose()


async def test_streamed_reply_arrives_in_pieces_and_whole_with_usage(
    server: ModelServer, api: Api, naps: Naps
) -> None:
    server.script(Reply("The mailer sends the outbox.", chunks=4, input_tokens=42, output_tokens=6))
    pieces = Pieces()
    async with opened(config_for(server, api), naps) as provider:
        completion = await provider.complete(REQUEST, pieces)
    assert len(pieces.got) == 4
    assert "".join(pieces.got) == completion.text == "The mailer sends the outbox."
    assert completion.usage == Usage(input_tokens=42, output_tokens=6)
    assert completion.finish_reason == ("stop" if api == "openai" else "end_turn")
    assert completion.attempts == 1
    assert completion.provider_seconds > 0
    assert server.requests[0].body["stream"] is True


async def test_reply_without_streaming_comes_as_one_json_body(
    server: ModelServer, api: Api, naps: Naps
) -> None:
    server.script(Reply("Whole at once.", finish_reason="length", input_tokens=5, output_tokens=3))
    pieces = Pieces()
    async with opened(config_for(server, api, stream=False), naps) as provider:
        completion = await provider.complete(REQUEST, pieces)
    assert completion.text == "Whole at once."
    assert pieces.got == ["Whole at once."]
    assert completion.usage == Usage(5, 3)
    assert completion.finish_reason == "length"
    body = server.requests[0].body
    assert body["stream"] is False
    assert "stream_options" not in body


async def test_empty_text_with_a_finish_reason_is_a_completion(
    server: ModelServer, api: Api, naps: Naps
) -> None:
    server.script(Reply("", finish_reason="max_tokens"))
    async with opened(config_for(server, api), naps) as provider:
        completion = await provider.complete(REQUEST)
    assert completion.text == ""
    assert completion.finish_reason == "max_tokens"


async def test_openai_request_carries_system_first_then_the_turns_and_a_bearer_key(
    server: ModelServer, naps: Naps
) -> None:
    async with opened(config_for(server, "openai"), naps) as provider:
        completion = await provider.complete(REQUEST)
    assert completion.text == "You said: The team."
    (sent,) = server.requests
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    assert sent.body["model"] == "test-model"
    assert sent.body["max_tokens"] == 512
    assert sent.body["stream_options"] == {"include_usage": True}
    assert sent.body["messages"] == [
        {"role": "system", "content": REQUEST.system},
        {"role": "user", "content": "I want a spec for a mailer."},
        {"role": "assistant", "content": "Who receives the mail?"},
        {"role": "user", "content": "The team."},
    ]


async def test_anthropic_request_carries_the_system_on_top_and_the_key_in_x_api_key(
    server: ModelServer, naps: Naps
) -> None:
    request = ModelRequest("claude-test", "Be brief.", REQUEST.messages, temperature=0.2)
    async with opened(config_for(server, "anthropic"), naps) as provider:
        await provider.complete(request)
    (sent,) = server.requests
    assert sent.path == "/v1/messages"
    assert sent.headers["x-api-key"] == KEY
    assert sent.headers["anthropic-version"] == "2023-06-01"
    assert sent.headers["content-type"] == "application/json"
    assert "authorization" not in sent.headers
    assert sent.body["system"] == "Be brief."
    assert sent.body["temperature"] == 0.2
    assert [m["role"] for m in sent.body["messages"]] == ["user", "assistant", "user"]


async def test_without_a_key_no_key_header_is_sent(
    server: ModelServer, api: Api, naps: Naps
) -> None:
    async with opened(config_for(server, api, api_key=None), naps) as provider:
        await provider.complete(REQUEST)
    headers = server.requests[0].headers
    assert "authorization" not in headers
    assert "x-api-key" not in headers


async def test_rate_limited_answer_is_retried_after_its_retry_after(
    server: ModelServer, api: Api, naps: Naps
) -> None:
    server.script(Status(429, retry_after="2"), Reply("Now then."))
    async with opened(config_for(server, api), naps) as provider:
        completion = await provider.complete(REQUEST)
    assert completion.text == "Now then."
    assert completion.attempts == 2
    assert naps.waits == [2.0]
    assert len(server.requests) == 2


async def test_server_error_is_retried_after_a_back_off(
    server: ModelServer, api: Api, naps: Naps
) -> None:
    server.script(Status(500), Reply("Better."))
    async with opened(config_for(server, api), naps) as provider:
        completion = await provider.complete(REQUEST)
    assert (completion.text, completion.attempts) == ("Better.", 2)
    (wait,) = naps.waits
    assert BACKOFF <= wait <= BACKOFF * 1.25


async def test_server_error_every_time_fails_after_max_retries_with_doubling_waits(
    server: ModelServer, api: Api, naps: Naps
) -> None:
    server.script(*[Status(503)] * 4)
    async with opened(config_for(server, api, max_retries=3), naps) as provider:
        error = await failure_of(provider)
    assert (error.code, error.status) == ("server_error", 503)
    assert len(server.requests) == 4
    assert len(naps.waits) == 3
    assert naps.waits[0] < naps.waits[1] < naps.waits[2]
    assert naps.waits[2] >= BACKOFF * 4


async def test_an_error_event_before_any_text_is_retried(
    server: ModelServer, api: Api, naps: Naps
) -> None:
    server.script(StreamError("overloaded_error"), Reply("After the storm."))
    async with opened(config_for(server, api), naps) as provider:
        completion = await provider.complete(REQUEST, Pieces())
    assert (completion.text, completion.attempts) == ("After the storm.", 2)


async def test_a_refused_request_is_not_retried_and_never_shows_the_key(
    server: ModelServer, api: Api, naps: Naps
) -> None:
    server.script(Status(401, message=f"Incorrect API key provided: {KEY}. Check it."))
    config = config_for(server, api)
    async with opened(config, naps) as provider:
        error = await failure_of(provider)
        texts = [
            str(error),
            repr(error),
            error.message,
            "".join(traceback.format_exception(error)),
            repr(config),
            str(config),
            repr(provider),
        ]
    assert (error.code, error.status) == ("refused", 401)
    assert len(server.requests) == 1
    assert naps.waits == []
    assert config.id in error.message
    assert "401" in error.message
    assert "Incorrect API key provided" not in error.message  # our sentence, not theirs
    assert all(KEY not in text for text in texts)
    sent = server.requests[0].headers
    assert (sent.get("authorization") if api == "openai" else sent.get("x-api-key")) in (
        f"Bearer {KEY}",
        KEY,
    )


async def test_a_refusal_is_told_in_our_words_from_its_status_and_error_type_never_theirs(
    server: ModelServer, api: Api, naps: Naps
) -> None:
    server.script(Status(404, message="model not found " * 100))
    async with opened(config_for(server, api), naps) as provider:
        error = await failure_of(provider)
    assert (error.code, error.status) == ("refused", 404)
    assert "model not found" not in error.message
    assert "404" in error.message
    assert ("test_error" if api == "openai" else "invalid_request_error") in error.message
    assert len(error.message) < 300


async def test_a_hang_past_the_timeout_fails_with_timeout_promptly(
    server: ModelServer, api: Api, naps: Naps
) -> None:
    server.script(Hang(), Hang())
    config = config_for(server, api, timeout=0.5, max_retries=1)
    with anyio.fail_after(5):
        async with opened(config, naps) as provider:
            error = await failure_of(provider)
    assert error.code == "timeout"
    assert len(server.requests) == 2  # a timeout before any text is retried


async def test_a_body_that_is_not_json_is_a_bad_answer_without_retry(
    server: ModelServer, api: Api, naps: Naps
) -> None:
    server.script(RawBody(b"<html>gateway</html>"))
    async with opened(config_for(server, api, stream=False), naps) as provider:
        error = await failure_of(provider)
    assert error.code == "bad_answer"
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    ("ending", "code"), [("drop", "unreachable"), ("end", "bad_answer"), ("stall", "timeout")]
)
async def test_a_stream_broken_after_text_fails_without_retry(
    server: ModelServer,
    api: Api,
    naps: Naps,
    ending: Literal["drop", "end", "stall"],
    code: str,
) -> None:
    server.script(Broken("Half a sent", ending=ending))
    pieces = Pieces()
    with anyio.fail_after(5):
        async with opened(config_for(server, api, timeout=0.5), naps) as provider:
            error = await failure_of(provider, on_text=pieces)
    assert error.code == code
    assert "".join(pieces.got) == "Half a sent"
    assert len(server.requests) == 1
    assert naps.waits == []


async def test_a_broken_stream_is_retried_when_no_text_was_shown(
    server: ModelServer, api: Api, naps: Naps
) -> None:
    server.script(Broken("Lost"), Reply("Found."))
    async with opened(config_for(server, api), naps) as provider:
        completion = await provider.complete(REQUEST)  # no on_text: nothing shown yet
    assert (completion.text, completion.attempts) == ("Found.", 2)


async def test_an_unreachable_provider_fails_as_unreachable_after_retries(naps: Naps) -> None:
    config = ProviderConfig("nowhere", "openai", f"http://127.0.0.1:{free_port()}/v1")
    async with opened(config, naps) as provider:
        error = await failure_of(provider)
    assert error.code == "unreachable"
    assert "nowhere" in error.message
    assert len(naps.waits) == config.max_retries


async def test_the_deadline_cuts_a_hang_short_as_timeout(
    server: ModelServer, api: Api, naps: Naps
) -> None:
    server.script(Hang())
    async with opened(config_for(server, api, timeout=30), naps) as provider:
        started = anyio.current_time()
        with anyio.fail_after(5):
            error = await failure_of(provider, deadline=started + 0.3)
    assert error.code == "timeout"
    assert anyio.current_time() - started < 3


async def test_no_back_off_is_slept_past_the_deadline(
    server: ModelServer, api: Api, naps: Naps
) -> None:
    server.script(Status(429, retry_after="20"), Reply("Too late."))
    async with opened(config_for(server, api), naps) as provider:
        error = await failure_of(provider, deadline=anyio.current_time() + 5)
    assert error.code == "rate_limited"
    assert naps.waits == []
    assert len(server.requests) == 1


async def test_a_deadline_already_past_fails_as_timeout_without_asking(
    server: ModelServer, api: Api, naps: Naps
) -> None:
    async with opened(config_for(server, api), naps) as provider:
        error = await failure_of(provider, deadline=anyio.current_time() - 1)
    assert error.code == "timeout"
    assert server.requests == []


# The in-memory adapter, for the tests of the code above the port.


async def test_memory_provider_plays_its_script_and_records_the_requests() -> None:
    failure = ProviderError("server_error", "scripted", 503)
    model = MemoryProvider("First answer.", failure)
    model.reply("Third, long enough to cut.", finish_reason="end_turn", usage=Usage(3, 4))
    model.fail("rate_limited")
    pieces = Pieces()
    first = await model.complete(REQUEST, pieces)
    with pytest.raises(ProviderError) as second:
        await model.complete(REQUEST)
    third = await model.complete(REQUEST, pieces)
    with pytest.raises(ProviderError) as fourth:
        await model.complete(REQUEST)
    assert first.text == "First answer."
    assert second.value is failure
    assert (third.finish_reason, third.usage) == ("end_turn", Usage(3, 4))
    assert "".join(pieces.got) == "First answer.Third, long enough to cut."
    assert len(pieces.got) == 6
    assert fourth.value.code == "rate_limited"
    assert model.requests == [REQUEST] * 4
    assert model.pending == 0


async def test_memory_provider_breaks_off_after_text_and_falls_back_to_its_default() -> None:
    broken = ScriptedReply("Half", then=ProviderError("unreachable", "gone"))
    model = MemoryProvider(broken, default=lambda request: request.messages[-1].content.upper())
    pieces = Pieces()
    with pytest.raises(ProviderError) as caught:
        await model.complete(REQUEST, pieces)
    assert caught.value.code == "unreachable"
    assert "".join(pieces.got) == "Half"
    assert (await model.complete(REQUEST)).text == "THE TEAM."


async def test_memory_provider_without_script_or_default_says_so() -> None:
    with pytest.raises(LookupError):
        await MemoryProvider().complete(REQUEST)


async def test_memory_provider_held_reply_gives_up_at_the_deadline() -> None:
    model = MemoryProvider(ScriptedReply("Slow.", wait_for=anyio.Event()))
    with anyio.fail_after(5), pytest.raises(ProviderError) as caught:
        await model.complete(REQUEST, deadline=anyio.current_time() + 0.05)
    assert caught.value.code == "timeout"


async def test_a_provider_s_own_words_never_reach_the_error_mid_stream_or_in_a_refusal(
    server: ModelServer, api: Api, naps: Naps
) -> None:
    server.script(
        StreamError("invalid_request_error", message=f"echo {quote(KEY, safe='')}"),
        RawBody(json.dumps({"error": {"type": KEY, "message": repr(KEY)}}).encode(), status=400),
    )
    async with opened(config_for(server, api, max_retries=0), naps) as provider:
        mid_stream = await failure_of(provider, on_text=Pieces())
        refused = await failure_of(provider)
    assert (mid_stream.code, refused.code, refused.status) == ("refused", "refused", 400)
    assert "invalid_request_error" in mid_stream.message  # its error type, a plain identifier
    for error in (mid_stream, refused):
        assert not leaks(every_form(KEY), error.message)
        assert "echo" not in error.message


# Tool calls: offered, made by the model (whole and streamed), answered, refused.

READ_FILE = ToolSpec(
    "read_file",
    "Reads lines of a file in the person's folder.",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)
LIST_FOLDER = ToolSpec("list_folder", "Lists a folder.", {"type": "object", "properties": {}})
TOOLS_REQUEST = replace(REQUEST, tools=(READ_FILE, LIST_FOLDER))
TWO_CALLS = (("read_file", {"path": "src/app.py", "startLine": 40}), ("list_folder", {}))


@pytest.fixture(params=[True, False], ids=["streamed", "whole"])
def stream(request: pytest.FixtureRequest) -> bool:
    value: bool = request.param
    return value


async def test_offered_tools_go_in_the_api_s_shape_and_none_sends_no_tools_key(
    server: ModelServer, api: Api, naps: Naps
) -> None:
    async with opened(config_for(server, api), naps) as provider:
        await provider.complete(TOOLS_REQUEST)
        await provider.complete(REQUEST)
    with_tools, without = (sent.body for sent in server.requests)
    if api == "openai":
        assert with_tools["tools"][0] == {
            "type": "function",
            "function": {
                "name": "read_file",
                "description": READ_FILE.description,
                "parameters": READ_FILE.parameters,
            },
        }
    else:
        assert with_tools["tools"][0] == {
            "name": "read_file",
            "description": READ_FILE.description,
            "input_schema": READ_FILE.parameters,
        }
    assert [len(with_tools["tools"]), "tools" in without] == [2, False]


@pytest.mark.parametrize("text", ["Let me look at the code.", ""])
async def test_tool_calls_arrive_in_order_after_the_text_streamed_or_whole(
    server: ModelServer, api: Api, naps: Naps, stream: bool, text: str
) -> None:
    server.script(ToolUse(TWO_CALLS, text=text, chunks=4), ToolUse(TWO_CALLS[:1]))
    pieces = Pieces()
    async with opened(config_for(server, api, stream=stream), naps) as provider:
        completion = await provider.complete(TOOLS_REQUEST, pieces)
        later = await provider.complete(TOOLS_REQUEST)
    prefix = "call_" if api == "openai" else "toolu_"
    assert completion.tool_calls == (
        ToolCall(f"{prefix}1", "read_file", {"path": "src/app.py", "startLine": 40}),
        ToolCall(f"{prefix}2", "list_folder", {}),
    )
    assert [call.id for call in later.tool_calls] == [f"{prefix}3"]
    assert completion.text == "".join(pieces.got) == text
    assert completion.finish_reason == ("tool_calls" if api == "openai" else "tool_use")
    assert server.requests[0].body["stream"] is stream


@pytest.mark.parametrize("written", ['{"path": "src/app.py"', '["src/app.py"]', "path=a"])
async def test_arguments_that_are_not_a_json_object_come_as_unreadable_text(
    server: ModelServer, api: Api, naps: Naps, stream: bool, written: str
) -> None:
    server.script(ToolUse((("read_file", written), ("list_folder", {"depth": 2}))))
    async with opened(config_for(server, api, stream=stream), naps) as provider:
        completion = await provider.complete(TOOLS_REQUEST)
    broken, fine = completion.tool_calls
    assert (broken.name, broken.arguments, broken.unreadable) == ("read_file", {}, written)
    assert (fine.arguments, fine.unreadable) == ({"depth": 2}, None)


@pytest.mark.parametrize("said", ["", "And here is what I found."])
async def test_tool_results_go_back_in_the_api_s_shape_on_the_next_request(
    server: ModelServer, api: Api, naps: Naps, stream: bool, said: str
) -> None:
    server.script(ToolUse(TWO_CALLS, text="Looking."), Reply("The mailer lives in src/app.py."))
    async with opened(config_for(server, api, stream=stream), naps) as provider:
        first = await provider.complete(TOOLS_REQUEST)
        read, listed = first.tool_calls
        results = (
            ToolResult(read.id, '{"text": "def send(): ..."}'),
            ToolResult(listed.id, '{"error": {"code": "not_found"}}', is_error=True),
        )
        answered = (
            ChatMessage("assistant", first.text, tool_calls=first.tool_calls),
            ChatMessage("user", said, tool_results=results),
        )
        second = await provider.complete(
            replace(TOOLS_REQUEST, messages=TOOLS_REQUEST.messages + answered)
        )
    assert second.text == "The mailer lives in src/app.py."
    sent = server.requests[1].body["messages"]
    if api == "openai":
        expected: list[dict[str, Any]] = [
            {
                "role": "assistant",
                "content": "Looking.",
                "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {
                        "name": "read_file", "arguments": json.dumps(TWO_CALLS[0][1])}},
                    {"id": "call_2", "type": "function", "function": {
                        "name": "list_folder", "arguments": "{}"}},
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": results[0].content},
            {"role": "tool", "tool_call_id": "call_2", "content": results[1].content},
        ]  # fmt: skip
        expected += [{"role": "user", "content": said}] if said else []
    else:
        text = [{"type": "text", "text": said}] if said else []
        expected = [
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Looking."},
                    {"type": "tool_use", "id": "toolu_1", "name": "read_file",
                     "input": TWO_CALLS[0][1]},
                    {"type": "tool_use", "id": "toolu_2", "name": "list_folder", "input": {}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1",
                     "content": results[0].content},
                    {"type": "tool_result", "tool_use_id": "toolu_2",
                     "content": results[1].content, "is_error": True},
                    *text,
                ],
            },
        ]  # fmt: skip
    earlier = len(REQUEST.messages) + (1 if api == "openai" else 0)  # OpenAI's system first
    assert sent[earlier:] == expected
    assert sent[earlier - 1] == {"role": "user", "content": "The team."}


async def test_unreadable_arguments_go_back_as_the_empty_object_they_were_read_as(
    server: ModelServer, api: Api, naps: Naps
) -> None:
    broken = ToolCall("call_9", "read_file", {}, unreadable='{"path": ')
    answered = (
        ChatMessage("assistant", "", tool_calls=(broken,)),
        ChatMessage("user", "", tool_results=(ToolResult("call_9", "bad", is_error=True),)),
    )
    async with opened(config_for(server, api), naps) as provider:
        await provider.complete(replace(TOOLS_REQUEST, messages=REQUEST.messages + answered))
    assistant = server.requests[0].body["messages"][-2]  # then the result(s)
    if api == "openai":
        assert assistant["content"] is None
        assert assistant["tool_calls"][0]["function"]["arguments"] == "{}"
    else:
        assert assistant["content"] == [
            {"type": "tool_use", "id": "call_9", "name": "read_file", "input": {}}
        ]


async def test_a_tool_call_answer_is_retried_like_any_other_before_text(
    server: ModelServer, api: Api, naps: Naps
) -> None:
    server.script(Status(503), Broken(""), ToolUse(TWO_CALLS[1:]))
    async with opened(config_for(server, api), naps) as provider:
        completion = await provider.complete(TOOLS_REQUEST, Pieces())
    assert completion.attempts == 3
    assert [call.name for call in completion.tool_calls] == ["list_folder"]


async def test_openai_fragments_without_index_or_id_and_object_arguments_are_read(
    server: ModelServer, naps: Naps
) -> None:
    """Some local servers send each call whole in one chunk, without index or id, with its
    arguments as an object."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return f"data: {json.dumps({'choices': [choice]})}\n\n"

    calls = [
        {"function": {"name": "read_file", "arguments": {"path": "a.py"}}},
        {"function": {"name": "list_folder", "arguments": {}}},
    ]
    events = chunk({"tool_calls": calls[:1]}) + chunk({"tool_calls": calls[1:]})
    events += chunk({}, "tool_calls") + "data: [DONE]\n\n"
    server.script(RawBody(events.encode(), content_type="text/event-stream"))
    async with opened(config_for(server, "openai"), naps) as provider:
        completion = await provider.complete(TOOLS_REQUEST)
    assert completion.tool_calls == (
        ToolCall("call_0", "read_file", {"path": "a.py"}),
        ToolCall("call_1", "list_folder", {}),
    )


async def test_a_model_without_tools_is_tools_unsupported_in_our_words_without_retry(
    server: ModelServer, api: Api, naps: Naps
) -> None:
    server.script(NoTools())
    async with opened(config_for(server, api), naps) as provider:
        with pytest.raises(ProviderError) as caught:
            await provider.complete(TOOLS_REQUEST)
    error = caught.value
    assert (error.code, error.status) == ("tools_unsupported", 400)
    assert f"test-{api}" in error.message
    assert "does not support tools" not in error.message  # its words stay in the log
    assert len(server.requests) == 1
    assert naps.waits == []


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (400, {"error": "registry.ollama.ai/library/gemma3:1b does not support tools"}),
        (400, {"object": "error", "type": "BadRequestError", "code": 400, "param": None,
               "message": '"auto" tool choice requires --enable-auto-tool-choice and '
                          "--tool-call-parser to be set"}),
        (422, {"error": {"type": "tool_use_unsupported", "message": "no"}}),
    ],
    ids=["ollama", "vllm", "error-type"],
)  # fmt: skip
async def test_refusals_about_tools_from_other_servers_are_tools_unsupported(
    server: ModelServer, api: Api, naps: Naps, status: int, body: dict[str, Any]
) -> None:
    server.script(RawBody(json.dumps(body).encode(), status=status))
    async with opened(config_for(server, api), naps) as provider:
        with pytest.raises(ProviderError) as caught:
            await provider.complete(TOOLS_REQUEST)
    assert (caught.value.code, caught.value.status) == ("tools_unsupported", status)
    assert "enable-auto-tool-choice" not in caught.value.message


async def test_a_refusal_about_tools_is_refused_when_no_tools_were_offered_and_others_too(
    server: ModelServer, api: Api, naps: Naps
) -> None:
    server.script(NoTools(), Status(400, message="max_tokens is too large"))
    async with opened(config_for(server, api), naps) as provider:
        with pytest.raises(ProviderError) as without_tools:
            await provider.complete(REQUEST)
        with pytest.raises(ProviderError) as not_about_tools:
            await provider.complete(TOOLS_REQUEST)
    assert without_tools.value.code == not_about_tools.value.code == "refused"


async def test_memory_provider_scripts_tool_calls_and_a_refusal_of_tools() -> None:
    model = MemoryProvider()
    model.call_tools(("read_file", {"path": "a.py"}), ("list_folder", {}), text="Looking.")
    unreadable = ToolCall("mine", "read_file", {}, unreadable="{")
    model.call_tools(unreadable, ("read_file", {"path": "b.py"}))
    model.refuse_tools()
    model.reply("From the conversation only.")
    pieces = Pieces()
    first = await model.complete(TOOLS_REQUEST, pieces)
    second = await model.complete(TOOLS_REQUEST)
    with pytest.raises(ProviderError) as refused:
        await model.complete(TOOLS_REQUEST)
    last = await model.complete(REQUEST)
    assert first.tool_calls == (
        ToolCall("call_1", "read_file", {"path": "a.py"}),
        ToolCall("call_2", "list_folder", {}),
    )
    assert (first.text, "".join(pieces.got), first.finish_reason) == (
        "Looking.",
        "Looking.",
        "tool_calls",
    )
    assert second.tool_calls == (unreadable, ToolCall("call_3", "read_file", {"path": "b.py"}))
    assert second.text == ""
    assert refused.value.code == "tools_unsupported"
    assert (last.text, last.tool_calls) == ("From the conversation only.", ())
    assert [request.tools for request in model.requests] == [TOOLS_REQUEST.tools] * 3 + [()]
