"""Schema-driven fuzzing of every MCP tool: invalid arguments are refused naming the field,
and nothing is written.

The suite walks the tools the served app lists, so a tool added later is fuzzed with no new
test code. Each call changes one place of an otherwise valid argument set (tests/support/fuzz.py
builds the changes from the tool's inputSchema) and goes as raw JSON-RPC over real HTTP, the
body written by hand so that 1e309, NaN and 10,000-deep arrays reach the server as they are; a
smaller share goes through the official SDK client in both protocol eras. Every answer must be
an error result naming the field (`isError`, `{code, message, details}`) or a JSON-RPC
-32602/-32600/-32700 error: never -32603, never HTTP 5xx, never a dropped connection, always
strict JSON. The database (row counts, newest event, revisions) is the same after every call.

Bad answers are collected, not raised, so one run lists them all (and Hypothesis never shrinks).
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
import hypothesis
import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, Phase
from hypothesis.configuration import set_hypothesis_home_dir, storage_directory
from mcp import MCPError
from pydantic import ValidationError

from crewboard.config import Settings
from crewboard.contract.args import Args
from crewboard.contract.catalogue import default_catalogue
from crewboard.contract.sessions.present import started_answer
from crewboard.domain.identity.access import ALL_SCOPES
from crewboard.domain.sessions import Mode
from crewboard.services.board import tasks
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.services.sessions import sessions
from crewboard.storage.database import Database
from tests.conftest import ONLY_POSTGRESQL, POSTGRESQL_IN_THE_SLOW_RUN
from tests.support.factories import make_project, make_user
from tests.support.fuzz import (
    ACCEPTED_RPC_ERRORS,
    DOMAIN_KINDS,
    INVALID_KINDS,
    Fingerprint,
    Mutation,
    Schema,
    encode,
    judge_http,
    judge_result,
    respelled,
    short,
)
from tests.support.mcp_client import MODES, RAW_HEADERS, mcp_client, rpc
from tests.support.server import free_port, running_server

VERSIONS = ("2025-03-26", "2025-11-25")  # handshake era, stateless: no initialize needed
EXAMPLES = 10  # random cases per tool in the quick run; the slow run makes ten times as many
SDK_SHARE = 15  # every 15th plain mutation of the quick sweep also goes through the SDK client
SHOWN = 60  # bad answers printed in a failure


@dataclass(frozen=True)
class Tool:
    """A served tool, the real things its arguments point at, and its mutations."""

    name: str
    schema: Schema
    model: type[Args]
    targets: dict[str, Any]
    minimal: dict[str, Any]  # valid arguments with only the required properties
    mutations: list[Mutation]
    # Schema-valid arguments the tool's own model crashed on (not refused: raised).
    crashes: dict[str, str] = field(default_factory=dict)

    def accepts(self, arguments: Any) -> bool:
        """Whether the tool's own model takes these arguments as JSON, without coercion."""
        try:
            self.model.model_validate_json(json.dumps(arguments), strict=True)
        except ValidationError:
            return False
        except Exception as error:  # reported as a bad answer, not raised
            self.crashes.setdefault(f"{type(error).__name__}: {error}", short(arguments))
            return False
        return True


@dataclass
class Tally:
    tools: set[str] = field(default_factory=set)
    calls: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    bad: list[str] = field(default_factory=list)

    def summary(self) -> str:
        return (
            f"MCP fuzz: {len(self.tools)} tools fuzzed, {self.calls} calls, "
            f"{len(self.bad)} bad answers ({', '.join(f'{k} {n}' for k, n in sorted(self.kinds.items()))})"
        )

    def verdict(self) -> str:
        shown = "\n".join(self.bad[:SHOWN])
        more = f"\n… and {len(self.bad) - SHOWN} more" if len(self.bad) > SHOWN else ""
        return f"{self.summary()}\n{shown}{more}"


@dataclass
class World:
    db: Database
    url: str
    secret: str
    tools: list[Tool]


def aimed(arguments: Any, targets: dict[str, Any]) -> Any:
    """The arguments with every projectId, taskId and workspaceId pointing at real things."""
    if isinstance(arguments, dict):
        return {k: targets[k] if k in targets else aimed(v, targets) for k, v in arguments.items()}
    if isinstance(arguments, list):
        return [aimed(v, targets) for v in arguments]
    return arguments


def _targets(key: str) -> dict[str, Any]:
    return {"projectId": key, "taskId": f"{key}-1", "workspaceId": None}


def _board(db: Database, owner: Any, key: str, count: int) -> None:
    make_project(db, owner, key)
    for number in range(1, count + 1):
        tasks.create_task(
            db,
            person_actor(owner),
            project=key,
            workspace_id=None,
            idempotency_key=f"{key}-{number}",
            title=f"Task {number} of {key}",
        )


def _session(db: Database, owner: Any, key: str, *, archived: bool = False) -> str:
    """A spec session on project `key` (archived: the one a delete takes); its id."""
    made = sessions.start_session(
        db, person_actor(owner), project=key, workspace_id=None, mode=Mode.GENERATE,
        prompt="Spec the export.", answer=started_answer,
    ).body["sessionId"]  # fmt: skip
    if archived:
        sessions.set_archived(
            db, person_actor(owner), project=key, workspace_id=None, ref=made, archived=True
        )
    return str(made)


def _listed_schemas(url: str, secret: str) -> dict[str, dict[str, Any]]:
    headers = {**RAW_HEADERS, "Authorization": f"Bearer {secret}", "X-MCP-Toolsets": "all"}
    response = httpx2.post(f"{url}/mcp", json=rpc("tools/list", {}), headers=headers, timeout=30)
    assert response.status_code == 200, response.text
    return {t["name"]: t["inputSchema"] for t in response.json()["result"]["tools"]}


def _tool(definition: Any, schema_json: dict[str, Any], targets: dict[str, Any]) -> Tool:
    schema = Schema(schema_json)
    minimal = aimed(schema.minimal(schema_json, "object"), targets)
    assert schema.valid(minimal), (
        f"{definition.name}: the harness's base {minimal} breaks its schema"
    )
    mutations = [
        m
        for m in schema.mutations()
        if m.kind in DOMAIN_KINDS | INVALID_KINDS or not schema.valid(m.apply(minimal))
    ]
    tool = Tool(definition.name, schema, definition.args, targets, minimal, mutations)
    assert tool.accepts(minimal), f"{tool.name} refuses the harness's base {minimal}"
    return tool


@pytest.fixture(scope="module", autouse=True)
def _hypothesis_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Hypothesis caches what it learns under .hypothesis/; keep that out of the repository."""
    before = storage_directory(intent_to_write=False).home_directory
    set_hypothesis_home_dir(tmp_path_factory.mktemp("hypothesis"))
    yield
    set_hypothesis_home_dir(before)


@pytest.fixture
def world(db: Database, tmp_path: Path) -> Iterator[World]:
    """One owner with a token holding every scope; reads aim at project CRW, each write tool
    at a project of its own, so a write wrongly let through spoils no other tool's run."""
    owner = make_user(db, "owner@example.com")
    catalogue = default_catalogue()
    _board(db, owner, "CRW", 3)
    targets: dict[str, dict[str, Any]] = {}
    read_session = _session(db, owner, "CRW")
    for index, definition in enumerate(catalogue):
        key = "CRW" if definition.read_only else f"W{index}"
        if not definition.read_only:
            _board(db, owner, key, 2)
        targets[definition.name] = _targets(key)
        if definition.name.endswith("_spec_session") and definition.name != "start_spec_session":
            deleting = definition.name == "delete_spec_session"
            session = read_session if key == "CRW" else _session(db, owner, key, archived=deleting)
            targets[definition.name]["sessionId"] = session
    secret = tokens.issue_token(
        db, person_actor(owner), kind="personal", scopes=sorted(ALL_SCOPES)
    ).secret
    # No session runner: the sessions' first turns stay queued, so nothing writes between two
    # fingerprints; and a start wrongly let through answers at once, its session counted.
    settings = Settings(
        data_dir=tmp_path, port=free_port(), session_runners=0, session_first_turn_wait=0
    )
    with running_server(settings, db, catalogue) as url:
        listed = _listed_schemas(url, secret)
        # A tool working with the caller's disk is served on stdio only (its refusal over
        # HTTP is tested in tests/e2e/test_mcp_specs.py).
        served = [d for d in catalogue if not d.stdio_only]
        assert sorted(listed) == sorted(d.name for d in served)
        tools = [_tool(d, listed[d.name], targets[d.name]) for d in served]
        yield World(db, url, secret, tools)


@pytest.fixture
def tally(request: pytest.FixtureRequest) -> Iterator[Tally]:
    """The test's counts, printed as one line for the closing note."""
    counts = Tally()
    yield counts
    reporter = request.config.pluginmanager.getplugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(f"\n{request.node.name}: {counts.summary()}")


class Fuzzer:
    """Sends mutated calls as raw JSON-RPC and judges each answer and the database after it."""

    def __init__(self, world: World, tally: Tally) -> None:
        self.world = world
        self.tally = tally
        self.http = httpx2.Client(
            headers={**RAW_HEADERS, "Authorization": f"Bearer {world.secret}"}, timeout=60
        )
        self.fingerprint = Fingerprint(world.db)
        self.before = self.fingerprint.take()
        self.sent = 0

    def close(self) -> None:
        self.http.close()
        self.fingerprint.close()

    def arguments(self, mutation: Mutation, base: dict[str, Any]) -> Any:
        self.sent += 1
        if "idempotencyKey" in base and mutation.path != ("idempotencyKey",):
            base = {**base, "idempotencyKey": f"fuzz-{self.sent}"}  # no replay of an earlier call
        return mutation.apply(base)

    def send(self, tool: Tool, mutation: Mutation, base: dict[str, Any]) -> None:
        arguments = self.arguments(mutation, base)
        id_ = self.sent
        body = (
            f'{{"jsonrpc":"2.0","id":{id_},"method":"tools/call",'
            f'"params":{{"name":{json.dumps(tool.name)},"arguments":{encode(arguments)}}}}}'
        )
        headers = {"MCP-Protocol-Version": VERSIONS[id_ % len(VERSIONS)]}
        try:
            response = self.http.post(
                f"{self.world.url}/mcp", content=body.encode(), headers=headers
            )
        except httpx2.HTTPError as error:
            problem: str | None = f"no answer: {type(error).__name__}: {error}"
        else:
            content_type = response.headers.get("content-type", "")
            problem = judge_http(response.status_code, content_type, response.text, mutation, id_)
        self.record(tool, mutation, arguments, problem)

    def record(self, tool: Tool, mutation: Mutation, arguments: Any, problem: str | None) -> None:
        after = self.fingerprint.take()
        changed = self.fingerprint.changed(self.before, after)
        self.before = after
        if changed:
            problem = f"{problem + '; ' if problem else ''}the database changed: {changed}"
        self.tally.tools.add(tool.name)
        self.tally.calls += 1
        self.tally.kinds[mutation.kind] += 1
        if problem:
            self.tally.bad.append(
                f"{tool.name} {mutation.describe()} -> {problem}\n    arguments: {short(arguments)}"
            )


def sweep(world: World, tally: Tally, *, everything: bool) -> None:
    """Every mutation of every tool (only the quick ones unless `everything`) on its minimal base."""
    fuzzer = Fuzzer(world, tally)
    try:
        for tool in world.tools:
            for mutation in tool.mutations:
                if everything or mutation.quick:
                    fuzzer.send(tool, mutation, tool.minimal)
    finally:
        fuzzer.close()


def random_cases(world: World, tally: Tally, *, examples: int) -> None:
    """Hypothesis: random valid arguments (hypothesis-jsonschema), one random mutation each."""
    fuzzer = Fuzzer(world, tally)
    try:
        for tool in world.tools:
            _random_cases_of(tool, fuzzer, examples)
    finally:
        fuzzer.close()


def _random_cases_of(tool: Tool, fuzzer: Fuzzer, examples: int) -> None:
    bases = tool.schema.valid_arguments().map(lambda a: aimed(a, tool.targets)).filter(tool.accepts)
    # Hypothesis favours the first elements of a list: shuffled (the same way every run), the
    # favoured ones differ from tool to tool. A non-object argument ignores the base: left out.
    candidates = [m for m in tool.mutations if m.path]
    random.Random(tool.name).shuffle(candidates)  # noqa: S311 - an order, not a secret
    mutations = st.sampled_from(candidates).flatmap(respelled)

    @hypothesis.settings(
        max_examples=examples,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @hypothesis.given(base=bases, mutation=mutations)
    def case(base: dict[str, Any], mutation: Mutation) -> None:
        if mutation.kind in DOMAIN_KINDS and tool.schema.valid(mutation.apply(base)):
            # The schema lets it pass, so a service refuses it: one whose other arguments
            # are all real, or the refusal would rightly be about them.
            base = tool.minimal
        fuzzer.send(tool, mutation, base)

    case()
    fuzzer.tally.bad.extend(
        f"{tool.name}: its argument model raises {error} on the schema-valid {arguments}"
        for error, arguments in tool.crashes.items()
    )


SESSION_TABLES = ("spec_sessions", "spec_session_messages", "spec_session_turns",
                  "spec_session_proposals")  # fmt: skip


def test_the_fingerprint_counts_the_spec_session_tables(db: Database) -> None:
    fingerprint = Fingerprint(db)
    try:
        assert {f"{name} rows" for name in SESSION_TABLES} <= set(fingerprint.labels)
        owner = make_user(db, "owner@example.com")
        make_project(db, owner, "SES")
        before = fingerprint.take()
        _session(db, owner, "SES")
        changed = fingerprint.changed(before, fingerprint.take())
    finally:
        fingerprint.close()
    for name in ("spec_sessions", "spec_session_messages", "spec_session_turns"):
        assert f"{name} rows 0 -> 1" in changed


@POSTGRESQL_IN_THE_SLOW_RUN  # its slow PostgreSQL run sends every mutation
def test_every_tool_refuses_each_invalid_argument_naming_it_and_writes_nothing(
    world: World, tally: Tally
) -> None:
    sweep(world, tally, everything=False)
    assert not tally.bad, tally.verdict()


def test_random_invalid_arguments_among_random_valid_ones_are_refused_naming_the_field(
    world: World, tally: Tally
) -> None:
    random_cases(world, tally, examples=EXAMPLES)
    assert not tally.bad, tally.verdict()


@pytest.mark.anyio
async def test_the_sdk_client_gets_the_same_refusals_in_both_eras(
    world: World, tally: Tally
) -> None:
    fuzzer = Fuzzer(world, tally)  # for the arguments and the bookkeeping; calls go by the SDK
    share = [
        (tool, mutation)
        for tool in world.tools
        for index, mutation in enumerate(m for m in tool.mutations if m.quick and m.plain)
        if index % SDK_SHARE == 0
    ]
    try:
        for mode in MODES:
            async with mcp_client(world.url, world.secret, mode) as client:
                for tool, mutation in share:
                    arguments = fuzzer.arguments(mutation, tool.minimal)
                    try:
                        result = await client.call_tool(tool.name, arguments)
                    except MCPError as error:
                        problem = (
                            None
                            if error.code in ACCEPTED_RPC_ERRORS
                            else f"{mode}: JSON-RPC error {error.code}: {error.message}"
                        )
                    else:
                        answer = {
                            "isError": result.is_error,
                            "structuredContent": result.structured_content,
                        }
                        problem = judge_result(answer, mutation)
                        problem = problem and f"{mode}: {problem}"
                    fuzzer.record(tool, mutation, arguments, problem)
    finally:
        fuzzer.close()
    assert not tally.bad, tally.verdict()


@pytest.mark.slow
@ONLY_POSTGRESQL  # the quick run covers SQLite; PostgreSQL's column types are the stricter
def test_every_mutation_and_ten_times_the_random_cases_are_refused(
    world: World, tally: Tally
) -> None:
    sweep(world, tally, everything=True)
    random_cases(world, tally, examples=10 * EXAMPLES)
    assert not tally.bad, tally.verdict()
