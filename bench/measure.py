"""The workloads: what the benchmark asks a running server, through the official MCP client.

Every request goes over real HTTP to the server process with `mcp.Client` on the SDK's
Streamable HTTP transport, in one protocol era at a time: "legacy" (initialize handshake,
2025-era versions) or "2026-07-28" (no handshake; each request carries its version).
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult

from bench.noop import NOOP_NAME

ERAS = ("legacy", "2026-07-28")
REAL_TOOL = "get_project_state"
HTTP_TIMEOUT = httpx2.Timeout(60.0)
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")

ResponseHook = Callable[[httpx2.Response], Awaitable[None]]


@dataclass(frozen=True)
class Target:
    """Where the server is and who the benchmark acts as."""

    mcp_url: str
    token: str
    project: str
    pid: int  # the server process, for its CPU time


def answer_of(result: CallToolResult) -> dict[str, Any]:
    """What a tool answered: the JSON of its first text part on success (Crewboard sends no
    structured copy), the structured `{code, message, details}` of an error."""
    if result.is_error:
        return dict(result.structured_content or {})
    first = result.content[0] if result.content else None
    text = getattr(first, "text", "")
    try:
        body = json.loads(text)
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


@asynccontextmanager
async def connect(
    target: Target,
    era: str,
    *,
    headers: dict[str, str] | None = None,
    on_response: ResponseHook | None = None,
) -> AsyncIterator[Client]:
    """An MCP client connected in `era`, with the bearer token (and any extra headers).

    The client's response cache is off: every `tools/list` reaches the server. With no
    `headers` it asks for every toolset (`X-MCP-Toolsets: all`): the workloads call planning
    tools too, and the SDK client lists the tools again before every call of a tool it was not
    shown (to find its output schema), which would add a round trip to each such call.
    """
    hooks: dict[str, list[ResponseHook]] = {"response": [on_response]} if on_response else {}
    chosen = headers if headers is not None else {"X-MCP-Toolsets": "all"}
    async with httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {target.token}", **chosen},
        timeout=HTTP_TIMEOUT,
        event_hooks=hooks,
    ) as http:
        transport = streamable_http_client(target.mcp_url, http_client=http)
        async with Client(transport, mode=era, cache=None) as client:
            yield client


# --- tools/list sizes ---------------------------------------------------------------------


@dataclass(frozen=True)
class Listing:
    """One `tools/list` answer as the server sent it."""

    toolset: str  # "all" or a toolset name
    tools: int
    result_bytes: int  # the JSON of the JSON-RPC `result` member, byte for byte as sent
    body_bytes: int  # the whole HTTP response body (the JSON-RPC envelope around it)
    names: list[str]


def raw_member(body: bytes, key: str) -> bytes:
    """The bytes of top-level member `key` of the JSON object `body`, exactly as written."""
    text = body.decode("utf-8")
    decoder = json.JSONDecoder()
    at = _skip_space(text, 0)
    if text[at : at + 1] != "{":
        raise ValueError("the body is not a JSON object")
    at += 1
    while True:
        at = _skip_space(text, at)
        name, at = decoder.raw_decode(text, at)
        at = _skip_space(text, at)
        if text[at : at + 1] != ":":
            raise ValueError("malformed JSON object")
        start = _skip_space(text, at + 1)
        _, end = decoder.raw_decode(text, start)
        if name == key:
            return text[start:end].encode("utf-8")
        at = _skip_space(text, end)
        if text[at : at + 1] != ",":
            raise KeyError(key)
        at += 1


def _skip_space(text: str, at: int) -> int:
    while at < len(text) and text[at] in " \t\r\n":
        at += 1
    return at


async def measure_listing(
    target: Target, era: str, *, label: str, headers: dict[str, str]
) -> Listing:
    """Ask for `tools/list` with `headers` and measure the response the server sent."""
    captured: list[bytes] = []

    async def keep_tools_list(response: httpx2.Response) -> None:
        try:
            method = json.loads(response.request.content).get("method")
        except ValueError:
            return
        if method == "tools/list":
            captured.append(await response.aread())  # the transport reads the cached body

    async with connect(target, era, headers=headers, on_response=keep_tools_list) as client:
        listed = await client.list_tools(cache_mode="bypass")
    if len(captured) != 1:
        raise RuntimeError(f"expected one tools/list response, saw {len(captured)}")
    body = captured[0]
    result = raw_member(body, "result")
    names = [tool["name"] for tool in json.loads(result)["tools"]]
    if names != [tool.name for tool in listed.tools]:
        raise RuntimeError("the client shows other tools than the server sent")
    return Listing(
        toolset=label,
        tools=len(names),
        result_bytes=len(result),
        body_bytes=len(body),
        names=names,
    )


# --- call latency and throughput ----------------------------------------------------------


def server_cpu_seconds(pid: int) -> float:
    """User + system CPU time the process `pid` has used (from /proc, 10 ms resolution)."""
    stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii")
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


@dataclass(frozen=True)
class Summary:
    """Client-observed figures for one tool in one workload, and the CPU it cost each side."""

    calls: int
    calls_per_second: float
    median_ms: float
    p95_ms: float
    p99_ms: float
    mean_ms: float
    min_ms: float
    max_ms: float
    server_cpu_ms_per_call: float
    client_cpu_ms_per_call: float


@dataclass(frozen=True)
class Comparison:
    """The real read against the no-op, measured side by side in alternating blocks."""

    workload: str  # "sequential" (one client) or "concurrent"
    clients: int
    block_calls: int
    noop: Summary
    real: Summary
    median_ratio: float  # real median / no-op median
    p95_ratio: float
    throughput_ratio: float  # no-op calls/s / real calls/s (how many times slower the real is)
    server_cpu_ratio: float | None  # real / no-op server CPU per call (None: too few ticks)


def percentile(sorted_values: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile of already sorted values."""
    rank = max(1, math.ceil(fraction * len(sorted_values)))
    return sorted_values[rank - 1]


@dataclass
class Tally:
    """What one tool's blocks added up to."""

    latencies_ns: list[int] = field(default_factory=list)
    wall_seconds: float = 0.0
    server_cpu_seconds: float = 0.0
    client_cpu_seconds: float = 0.0

    def summary(self) -> Summary:
        ms = sorted(value / 1e6 for value in self.latencies_ns)
        count = len(ms)
        return Summary(
            calls=count,
            calls_per_second=count / self.wall_seconds,
            median_ms=percentile(ms, 0.5),
            p95_ms=percentile(ms, 0.95),
            p99_ms=percentile(ms, 0.99),
            mean_ms=sum(ms) / count,
            min_ms=ms[0],
            max_ms=ms[-1],
            server_cpu_ms_per_call=self.server_cpu_seconds * 1000 / count,
            client_cpu_ms_per_call=self.client_cpu_seconds * 1000 / count,
        )


def _arguments(target: Target) -> dict[str, dict[str, Any]]:
    return {NOOP_NAME: {}, REAL_TOOL: {"projectId": target.project}}


async def _call(client: Client, tool: str, arguments: dict[str, Any]) -> int:
    """One call; its client-observed latency in ns. A failed call ends the run."""
    started = time.perf_counter_ns()
    result = await client.call_tool(tool, arguments)
    elapsed = time.perf_counter_ns() - started
    if result.is_error:
        raise RuntimeError(f"{tool} failed: {result.content}")
    return elapsed


async def warm_up(target: Target, era: str, calls: int) -> str:
    """List tools (as a real client does first), call each tool `calls` times, alternating.

    Returns the protocol version the client negotiated.
    """
    arguments = _arguments(target)
    async with connect(target, era) as client:
        await client.list_tools()
        for _ in range(calls):
            for tool, args in arguments.items():
                await _call(client, tool, args)
        return client.protocol_version


async def compare(
    target: Target, era: str, *, workload: str, calls: int, clients: int, block_calls: int
) -> Comparison:
    """`calls` of each tool from `clients` clients, in blocks that alternate between the tools.

    A block is `block_calls` calls of one tool spread evenly over the clients, all running at
    once (one after another with one client). Blocks go no-op, real, real, no-op, … so drift
    hits both tools alike. A tool's throughput is its calls over the wall time of its blocks;
    its CPU per call is the server's (and this process's) CPU time during those blocks.
    """
    arguments = _arguments(target)
    per_client = max(1, min(block_calls, calls) // clients)
    rounds = max(1, math.ceil(calls / (per_client * clients)))
    tallies = {NOOP_NAME: Tally(), REAL_TOOL: Tally()}
    async with _clients(target, era, clients) as connected:

        async def worker(client: Client, tool: str, tally: Tally) -> None:
            for _ in range(per_client):
                tally.latencies_ns.append(await _call(client, tool, arguments[tool]))

        async def block(tool: str) -> None:
            tally = tallies[tool]
            server_before, client_before = server_cpu_seconds(target.pid), time.process_time()
            started = time.perf_counter()
            async with anyio.create_task_group() as group:
                for client in connected:
                    group.start_soon(worker, client, tool, tally)
            tally.wall_seconds += time.perf_counter() - started
            tally.server_cpu_seconds += server_cpu_seconds(target.pid) - server_before
            tally.client_cpu_seconds += time.process_time() - client_before

        for tool in (NOOP_NAME, REAL_TOOL):  # one uncounted call per connection and tool
            for client in connected:
                await _call(client, tool, arguments[tool])
        for index in range(rounds):
            for tool in (NOOP_NAME, REAL_TOOL) if index % 2 == 0 else (REAL_TOOL, NOOP_NAME):
                await block(tool)
    noop, real = tallies[NOOP_NAME].summary(), tallies[REAL_TOOL].summary()
    return Comparison(
        workload=workload,
        clients=clients,
        block_calls=per_client * clients,
        noop=noop,
        real=real,
        median_ratio=real.median_ms / noop.median_ms,
        p95_ratio=real.p95_ms / noop.p95_ms,
        throughput_ratio=noop.calls_per_second / real.calls_per_second,
        server_cpu_ratio=(
            real.server_cpu_ms_per_call / noop.server_cpu_ms_per_call
            if noop.server_cpu_ms_per_call
            else None
        ),
    )


@asynccontextmanager
async def _clients(target: Target, era: str, count: int) -> AsyncIterator[list[Client]]:
    """`count` clients, each on its own HTTP connection pool, each having listed the tools."""
    async with AsyncExitStack() as stack:
        connected = [await stack.enter_async_context(connect(target, era)) for _ in range(count)]
        for client in connected:
            await client.list_tools()
        yield connected
