"""REST fuzzed from its own OpenAPI document with schemathesis, over real HTTP, on both databases.

Every operation in /api/v1/openapi.json gets generated requests, valid (positive) and invalid
(negative), with a personal token holding every scope of a user who owns a project with tasks,
a draft, a memory record, comments, outputs, state versions, spec files (a text and a
binary one) with a comment thread, and attachments (a text and an image). Path parameters
mostly name those real rows, so the handlers are reached and not only their 404s. Each answer must be:

- not a server error (schemathesis' `not_a_server_error`), and as the document says: a status,
  media type, headers and (for an error) a body it declares (the `*_conformance` checks);
- strict JSON (no NaN or Infinity), but for a download whose media type the route declares;
- for every 4xx, exactly `{"error": {"code", "message", "details"}}` with a known code;
- for invalid data, a refusal (schemathesis' `negative_data_rejection`);
- after any refusal, a database that has the same row count in every table as before.

Beside the fuzzing, schemathesis' coverage phase runs over the whole document with every
check that applies to one answer (CONFORMANCE_CHECKS: required headers and bodies enforced,
405 with the path's `Allow`, 401 before any other answer), on both databases.

Bad answers are collected (not raised at the first one) so that one run names all of them,
with the exact request and answer. The default run is deterministic and small (a few hundred
calls per mode and database); the `slow` one generates far more.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass, field
from itertools import product
from pathlib import Path
from typing import Any

import httpx2
import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir
from schemathesis import GenerationMode
from schemathesis.core.failures import FailureGroup

from crewboard.api.openapi import LIVE_PATH
from crewboard.config import Settings
from crewboard.contract.board import present_notes
from crewboard.contract.projects import present
from crewboard.contract.review.present import hand_in_view
from crewboard.contract.sessions.present import started_answer
from crewboard.domain.handoffs import Bodies
from crewboard.domain.identity.access import Scope
from crewboard.domain.identity.records import Actor
from crewboard.domain.sessions import Mode
from crewboard.errors import ERROR_TYPES
from crewboard.services.artifacts.artifacts import FileInput
from crewboard.services.board import notes as task_notes
from crewboard.services.board import repos, tasks
from crewboard.services.identity import stream_tokens, tokens
from crewboard.services.identity.users import person_actor
from crewboard.services.review import drafts
from crewboard.services.sessions import bridges, sessions
from crewboard.services.specs import file_lookup
from crewboard.services.webhooks import deliveries as webhook_deliveries
from crewboard.services.webhooks import subscriptions
from crewboard.services.webhooks.sending import configure, policy_from
from crewboard.storage.database import Database
from crewboard.storage.tables import metadata
from tests.conftest import ONLY_POSTGRESQL, POSTGRESQL_IN_THE_SLOW_RUN
from tests.support import artifact_calls, handoff_calls, spec_calls
from tests.support.databases import Reader
from tests.support.factories import make_project, make_user
from tests.support.review import review_world
from tests.support.server import free_port, running_server

CODES = frozenset(str(e.code) for e in ERROR_TYPES)
# What an invalid request may be answered with: a refusal, never a success or a server error.
REFUSALS = ["400", "404", "409", "412", "413", "422"]
CONFIG = schemathesis.Config.from_dict(
    {
        # The token is sent by the test; generated Authorization headers would only test 401.
        "generation": {"with-security-parameters": False},
        "checks": {"negative_data_rejection": {"expected-statuses": REFUSALS}},
    }
)
MODES = [pytest.param(m, id=m.value) for m in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)]
PROJECT = "/api/v1/projects/{project}"
PNG = b"\x89PNG\r\n\x1a\n\x00"
SESSION = f"{PROJECT}/sessions/{{session}}"


@dataclass
class World:
    """The rows the path parameters point at."""

    secret: str
    pools: dict[str, list[Any]]
    # Deleting and archiving act on projects kept for that, not on the board being fuzzed.
    deletable: list[str]
    archivable: list[str]
    # Archived spec sessions a delete takes, so the others stay for the rest of the run.
    deletable_sessions: list[str] = field(default_factory=list)

    def pools_for(self, method: str, path: str) -> dict[str, list[Any]]:
        if path == PROJECT and method == "DELETE":
            return {**self.pools, "project": self.deletable}
        if path in (f"{PROJECT}/archive", f"{PROJECT}/unarchive"):
            return {**self.pools, "project": self.archivable}
        if path == SESSION and method == "DELETE":
            return {**self.pools, "session": self.deletable_sessions}
        return self.pools


@dataclass
class Tally:
    """What the run did: calls per operation, and every bad answer in full."""

    fuzzed: list[str] = field(default_factory=list)
    calls: Counter[str] = field(default_factory=Counter)
    answers: Counter[tuple[str, int]] = field(default_factory=Counter)
    bad: list[str] = field(default_factory=list)
    # (operation, problem) -> how often; the first request of each is kept in `bad`.
    kinds: Counter[tuple[str, str]] = field(default_factory=Counter)

    def add(self, label: str, problems: list[str], example: str) -> None:
        for problem in problems:
            self.kinds[label, problem] += 1
            if self.kinds[label, problem] == 1:
                self.bad.append(f"{label}: {problem}\n    e.g. {example}")

    def bad_answers(self) -> int:
        return sum(self.kinds.values())


def build_world(db: Database) -> World:
    owner = make_user(db, "owner@example.com")
    made = review_world(db, owner)
    secret = tokens.issue_token(
        db, person_actor(owner), kind="personal", scopes=[str(s) for s in Scope]
    ).secret
    actor = tokens.authenticate_token(db, secret)
    task_ids = [made["task"], *(_task(db, actor, n) for n in range(2, 5))]
    draft = drafts.create_draft(
        db,
        actor,
        task=made["task"],
        title="A first cut",
        summary="",
        content="The fix.",
        via="rest",
        answer=hand_in_view,
    ).body
    task_notes.post_comment(
        db,
        actor,
        task=made["task"],
        workspace_id=None,
        content="On it.",
        idempotency_key="c1",
        answer=present_notes.comment_answer,
    )
    output = task_notes.save_output(
        db,
        actor,
        task=made["task"],
        workspace_id=None,
        name="notes",
        content="x",
        idempotency_key="o1",
        answer=present_notes.output_answer,
    ).body["output"]["id"]
    for revision, text in enumerate(("First state.", "Second state.")):
        present.update_project_state(
            db, actor, project="CRW", workspace_id=None, content=text, expected_revision=revision
        )
    crw = present.describe_project(db, actor, "CRW")["project"]["id"]
    specs = [
        spec_calls.upload_spec_file(
            db,
            actor,
            project="CRW",
            workspace_id=None,
            path=path,
            content=content,
            idempotency_key=f"spec-{path}",
        ).body["file"]["id"]
        for path, content in (("docs/spec.md", b"# Spec\nline 2\n"), ("logo.png", PNG))
    ]
    thread = spec_calls.create_spec_file_comment_thread(
        db, actor, project="CRW", workspace_id=None, ref=file_lookup.FileRef(file_id=specs[0]),
        anchor_quote="line 2", anchor_prefix=None, anchor_suffix=None, body="Why?",
        idempotency_key="thread",
    ).body["thread"]  # fmt: skip
    answer = spec_calls.reply_spec_file_comment_thread(
        db, actor, project="CRW", workspace_id=None, thread_id=thread["id"], body="Because.",
        idempotency_key="reply",
    ).body["comment"]  # fmt: skip
    attached = [
        spec_calls.upload_attachment(
            db,
            actor,
            project="CRW",
            workspace_id=None,
            name=name,
            content=content,
            override=False,
            idempotency_key=f"attachment-{name}",
        ).body["attachment"]["id"]
        for name, content in (("notes.txt", b"one\ntwo\n"), ("shot.png", PNG))
    ]
    mockup = artifact_calls.create_artifact(
        db, actor, project="CRW", workspace_id=None, slug="login", title=None, description=None,
        files=[FileInput("index.html", b"<h1>Login</h1>\n"), FileInput("logo.png", PNG)],
        idempotency_key="artifact",
    ).body["artifact"]  # fmt: skip
    handoff = handoff_calls.create_handoff(
        db, actor, project="CRW", workspace_id=None, bodies=Bodies("Shipped."), day="2026-03-01",
        linked_task_ids=task_ids[:2], idempotency_key="handoff",
    ).body["handoff"]  # fmt: skip
    item = handoff_calls.create_handoff_action_item(
        db, actor, handoff_id=handoff["id"], text="Follow up", idempotency_key="item"
    ).body["actionItem"]
    session_ids = [_session(db, actor, n, archived=n > 0) for n in range(4)]
    # A closed bridge (410) and a replaced one (409): an exchange with a live bridge would
    # wait up to 25 s for a call, which no fuzzed request queues.
    closed = _bridge(db, actor, "closed")
    bridges.close_bridge(db, actor, closed)
    replaced = _bridge(db, actor, "replaced")
    _bridge(db, actor, "current")
    repo = repos.add_repo(db, actor, "CRW", "app", "https://github.com/a/app").id
    stream_token = stream_tokens.create_stream_token(db, actor, projects=["CRW"])
    # Made on loopback, allowed here only: the served app's settings refuse it at send time,
    # so nothing fuzzed reaches anything.
    configure(db, policy_from("127.0.0.1/32", 10, 262_144, 24))
    webhook = subscriptions.create_webhook(
        db, actor, "CRW", url="http://127.0.0.1:9/hook", events=["handoff.created"]
    ).webhook.id
    ping = webhook_deliveries.ping_webhook(db, actor, webhook).id
    old = make_project(db, owner, "OLD")
    present.set_project_archived(db, actor, project=old, workspace_id=None, archived=True)
    arc = make_project(db, owner, "ARC")
    stranger = make_user(db, "stranger@example.com")
    make_project(db, stranger, "HID")
    return World(
        secret=secret,
        pools={
            "project": ["CRW", crw, "HID"],
            "task": [*task_ids, "CRW-1", "CRW-3"],
            "draft": [draft["draft"]["id"]],
            "record_id": [made["record"]],
            "revision": [1, 2],
            "file": specs,
            "thread": [thread["id"]],
            "comment": [thread["comments"][0]["id"], answer["id"]],
            "attachment": attached,
            "output": [output],
            "artifact": [mockup["id"], "login"],
            "handoff": [handoff["id"]],
            "item": [item["id"]],
            "session": session_ids[:2],
            "assignee": [owner.id],
            "repo": [repo],
            "streamToken": [stream_token["streamToken"]["id"]],
            "webhook": [webhook],
            "delivery": [ping],
            "bridge": [closed, replaced],
        },
        deletable=["OLD", old],
        archivable=["ARC", arc],
        deletable_sessions=session_ids[2:],
    )


def _session(db: Database, actor: Actor, n: int, *, archived: bool) -> str:
    """A spec session of CRW (archived: one archive, unarchive or delete may take); its id."""
    made = sessions.start_session(
        db, actor, project="CRW", workspace_id=None, mode=Mode.GENERATE,
        prompt=f"Spec number {n}.", idempotency_key=f"session-{n}", answer=started_answer,
    ).body["sessionId"]  # fmt: skip
    if archived:
        sessions.set_archived(db, actor, project="CRW", workspace_id=None, ref=made, archived=True)
    return str(made)


def _bridge(db: Database, actor: Actor, folder: str) -> str:
    """A code bridge of CRW (replacing the one before); its id."""
    made = bridges.register_bridge(db, actor, project="CRW", folder=folder, client=None, node=None)
    return made.bridge.id


def _task(db: Database, actor: Actor, n: int) -> str:
    statuses = ("backlog", "done", "blocked")
    result = tasks.create_task(
        db,
        actor,
        project="CRW",
        workspace_id=None,
        idempotency_key=f"task-{n}",
        title=f"Task {n}",
        status=statuses[n % 3],
        tags=["docs"],
    )
    return str(result.body["task"]["id"])


def fingerprint(reader: Reader) -> dict[str, int]:
    """The row count of every table, in one query (on the run's own connection). The webhook
    loop logs its deliveries of earlier calls' events in the background, at any moment: its
    log is left out."""
    names = [t.name for t in metadata.sorted_tables if t.name != "webhook_deliveries"]
    sql = " UNION ALL ".join(f"SELECT '{n}', count(*) FROM {n}" for n in names)
    return {str(name): int(count) for name, count in reader.all(sql)}


@pytest.fixture(scope="module", autouse=True)
def hypothesis_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Hypothesis keeps caches (constants, Unicode tables) even without a database: not here."""
    set_hypothesis_home_dir(tmp_path_factory.mktemp("hypothesis"))
    yield
    set_hypothesis_home_dir(None)


@pytest.fixture
def served(db: Database, tmp_path: Path) -> Iterator[tuple[str, World]]:
    world = build_world(db)
    # No session runner: the sessions' first turns stay queued, so nothing writes between two
    # fingerprints; and a start answers at once instead of waiting for a first reply.
    settings = Settings(
        data_dir=tmp_path, port=free_port(), session_runners=0, session_first_turn_wait=0
    )
    with running_server(settings, db) as base:
        yield base, world


def path_choices(operation: Any, world: World, mode: GenerationMode) -> list[dict[str, Any]]:
    """Real rows for the path parameters. In negative mode only the plain strings are fixed
    (no string is invalid there); the others are left to the generator to break."""
    types = {
        p["name"]: p["schema"].get("type")
        for p in operation.definition.raw.get("parameters", [])
        if p["in"] == "path"
    }
    names = [n for n in types if not mode.is_negative or types[n] == "string"]
    if not names:
        return []
    pools = world.pools_for(operation.method.upper(), operation.path)
    return [dict(zip(names, values, strict=True)) for values in product(*(pools[n] for n in names))]


def negatable(operation: Any) -> bool:
    """Whether schemathesis can make an invalid request for it (plain strings cannot be)."""
    raw = operation.definition.raw
    return bool(raw.get("requestBody")) or any(
        p["in"] == "query" or p["schema"].get("type") != "string" for p in raw.get("parameters", [])
    )


def strict_json(content: bytes) -> Any:
    def refuse(constant: str) -> None:
        raise ValueError(f"{constant} is not JSON")

    return json.loads(content, parse_constant=refuse)


def problems_of(
    response: Any, before: dict[str, int], after: dict[str, int], declared: set[str]
) -> list[str]:
    """What is wrong with one answer, apart from the schemathesis checks. A success may be
    other than JSON when the route declares that media type (a spec file's bytes)."""
    found = []
    if response.status_code == 204:  # No Content: no body, so no media type (closing a bridge)
        return [] if not response.content else ["a 204 with a body"]
    media = ",".join(response.headers.get("content-type", []))  # schemathesis: name -> values
    if response.status_code < 300 and media != "application/json":
        if media in declared or "*/*" in declared:  # */*: a file served as its own type
            return []
        return [f"a success as {media!r}, which it does not declare"]
    try:
        body = strict_json(response.content)
    except ValueError as not_json:
        return [f"not strict JSON ({not_json})"]
    if 400 <= response.status_code < 500:
        error = body.get("error") if isinstance(body, dict) else None
        if not (
            isinstance(error, dict)
            and set(body) == {"error"}
            and set(error) == {"code", "message", "details"}
            and error["code"] in CODES
            and isinstance(error["message"], str)
            and error["message"]
            and isinstance(error["details"], dict)
        ):
            found.append("a 4xx body not in the error shape")
        if after != before:
            changed = {k: (before.get(k), v) for k, v in after.items() if before.get(k) != v}
            found.append(f"a refused call changed rows: {changed}")
    return found


def media_types(operation: Any) -> set[str]:
    """The media types the operation declares for its answers."""
    responses = operation.definition.raw.get("responses", {}).values()
    return {media for answer in responses for media in answer.get("content", {})}


def describe(response: Any) -> str:
    request = response.request
    body = (
        request.body.decode(errors="replace") if isinstance(request.body, bytes) else request.body
    )
    return (
        f"{request.method} {request.url} body={str(body)[:400]!r}"
        f" -> {response.status_code} {response.text[:400]!r}"
    )


@dataclass
class Fuzzer:
    """Sends generated cases to the served app and judges each answer."""

    reader: Reader
    world: World
    mode: GenerationMode
    tally: Tally = field(default_factory=Tally)
    session: requests.Session = field(default_factory=requests.Session)
    rows: dict[str, int] = field(default_factory=dict)

    def send(self, case: Any, nudge: bool) -> None:
        headers = {"Authorization": f"Bearer {self.world.secret}"}
        body = case.body if isinstance(case.body, dict) else {}
        # The header would replace a key the body carries, and so hide a bad one; a generated
        # header (declared in OpenAPI) is sent as generated.
        if "idempotencyKey" not in body and "Idempotency-Key" not in (case.headers or {}):
            headers["Idempotency-Key"] = f"fuzz-{sum(self.tally.calls.values())}"
        if nudge and self.mode.is_positive:
            # Every project here is private: a valid request that names one reaches the
            # handler's work only with workspaceId null (in a body) or none (in a query).
            if "workspaceId" in body:
                body["workspaceId"] = None
            if isinstance(case.query, dict):
                case.query.pop("workspaceId", None)
        response = case.call(session=self.session, headers=headers, timeout=30)
        self.tally.calls[case.operation.label] += 1
        self.tally.answers[case.operation.label, response.status_code] += 1
        after = fingerprint(self.reader)
        problems = problems_of(response, self.rows, after, media_types(case.operation))
        self.rows = after
        checks = [
            schemathesis.checks.not_a_server_error,
            schemathesis.checks.status_code_conformance,
            schemathesis.checks.content_type_conformance,
            schemathesis.checks.response_headers_conformance,
            schemathesis.checks.response_schema_conformance,
        ]
        if self.mode.is_negative:
            checks.append(schemathesis.checks.negative_data_rejection)
        try:
            case.validate_response(response, checks=checks, headers=headers)
        except FailureGroup as group:
            problems.extend(str(f.title) for f in group.exceptions)
        if problems:
            self.tally.add(case.operation.label, problems, describe(response))

    def run(self, strategy: st.SearchStrategy[Any], examples: int, *, seeded: bool) -> None:
        @settings(
            max_examples=examples,
            derandomize=seeded,
            database=None,
            deadline=None,
            phases=[Phase.generate],
            suppress_health_check=[
                HealthCheck.too_slow,
                HealthCheck.filter_too_much,
                HealthCheck.data_too_large,
                HealthCheck.large_base_example,
            ],
        )
        @given(case=strategy, nudge=st.booleans())
        def each(case: Any, nudge: bool) -> None:
            self.send(case, nudge)

        each()


def fuzz(
    db: Database, base: str, world: World, mode: GenerationMode, examples: int, *, seeded: bool
) -> Tally:
    """Fuzz every operation of the served document; return the calls made and bad answers."""
    schema = schemathesis.openapi.from_url(f"{base}/api/v1/openapi.json", config=CONFIG)
    reader = Reader(db)
    fuzzer = Fuzzer(reader, world, mode, rows=fingerprint(reader))
    with fuzzer.session, closing(reader):
        for result in schema.get_all_operations():
            operation = result.ok()
            if operation.path == LIVE_PATH:
                continue  # a stream never ends: test_live_events.py, test_rest_document.py
            if mode.is_negative and not negatable(operation):
                continue
            fuzzer.tally.fuzzed.append(operation.label)
            choices = path_choices(operation, world, mode)
            strategy = st.one_of(
                *(operation.as_strategy(mode, path_parameters=c) for c in choices),
                operation.as_strategy(mode),
            )
            fuzzer.run(strategy, examples, seeded=seeded)
    return fuzzer.tally


# Examples per operation in the long run (about 70 s a mode on PostgreSQL). Deterministic, so
# CI does not change its verdict from run to run; raise it here to search further by hand.
LONG_EXAMPLES = 60


def report(tally: Tally, request: pytest.FixtureRequest) -> None:
    """The counts the closing note needs, on the test's report (`pytest -rP` shows them)."""
    counts = {
        "routes_fuzzed": len(tally.calls),
        "calls": sum(tally.calls.values()),
        "bad_answers": tally.bad_answers(),
    }
    request.node.user_properties.extend(counts.items())
    text = ", ".join(f"{k} {v}" for k, v in counts.items())
    answers = [f"{label}: {status} x{n}" for (label, status), n in sorted(tally.answers.items())]
    kinds = [f"{n} x {label}: {problem}" for (label, problem), n in sorted(tally.kinds.items())]
    request.node.add_report_section("call", "fuzz counts", "\n".join([text, *kinds, *answers]))


# The coverage phase's checks: every one schemathesis has for an answer on its own, but
# - positive_data_acceptance: a schema-valid request may still be refused for what JSON Schema
#   cannot say: a cursor the server never gave, a date range whose end is before its start,
#   `ids` or `all`, a window of one record or one document, a revision that must come in the
#   body or in If-Match, a time zone or workflow that must exist; each is refused with
#   VALIDATION naming the field. (Some values a schema could state more tightly are still
#   checked only by the server: YYYY-MM-DD in a body, a project key's letters, 255 characters
#   per path segment, an https link.)
# - use_after_free, ensure_resource_availability: they follow links between operations, which
#   the document does not declare (the stateful phase is off);
# - object_level_authorization: it needs a second identity's credentials to compare;
#   tests/e2e/test_token_matrix.py and the access suites probe other people's rows.
CONFORMANCE_CHECKS = {
    "not_a_server_error": True,
    "status_code_conformance": True,
    "content_type_conformance": True,
    "response_headers_conformance": True,
    "response_schema_conformance": True,
    "negative_data_rejection": True,
    "missing_required_header": True,
    "unsupported_method": True,
    "allow_header_conformance": True,
    "ignored_auth": True,
    "positive_data_acceptance": False,
    "use_after_free": False,
    "ensure_resource_availability": False,
    "object_level_authorization": False,
}


# Cases of one kind per operation in the coverage run (it makes about 5,600 without a bound;
# most are one body field after another of the wrong type, which the fuzz runs cover).
PER_SCENARIO = 2


def conformance_config(world: World) -> schemathesis.Config:
    """Path parameters pinned to real rows (so the handlers are reached, not only their
    404s); the operations that end a row pinned to rows kept for that, and the artifact
    file route to a file that exists."""
    pinned = {f"path.{name}": pool[0] for name, pool in world.pools.items()}
    special = [
        (PROJECT, "DELETE", {"path.project": world.deletable[0]}),
        (f"{PROJECT}/archive", "POST", {"path.project": world.archivable[0]}),
        (f"{PROJECT}/unarchive", "POST", {"path.project": world.archivable[0]}),
        (SESSION, "DELETE", {"path.session": world.deletable_sessions[0], "path.project": "CRW"}),
        # A real file, so the answer is its bytes, served as its own media type.
        (f"{PROJECT}/artifacts/{{artifact}}/file", "GET", {"query.path": "index.html"}),
    ]
    return schemathesis.Config.from_dict(
        {
            "headers": {"Authorization": f"Bearer {world.secret}"},
            # No state kept between runs (.schemathesis/ in the working folder): each run the same.
            "cache": {"enabled": False},
            "workers": 1,
            "seed": 1,
            "continue-on-failure": True,
            "generation": {"deterministic": True},
            "parameters": pinned,
            "phases": {
                "examples": {"enabled": False},
                "coverage": {"enabled": True},
                "fuzzing": {"enabled": False},
                "stateful": {"enabled": False},
            },
            "checks": {
                **{name: {"enabled": on} for name, on in CONFORMANCE_CHECKS.items()},
                "negative_data_rejection": {"expected-statuses": REFUSALS},
                "missing_required_header": {"expected-statuses": ["400", "401", "422"]},
            },
            "operations": [
                {"include-name": f"{method} {path}", "parameters": {**pinned, **over}}
                for path, method, over in special
            ],
        }
    )


def conformance_failures(base: str, world: World) -> tuple[Counter[str], list[str]]:
    """Run schemathesis' coverage phase over the whole served document with CONFORMANCE_CHECKS:
    how often each check ran, and each distinct failure with one request that shows it."""
    config = conformance_config(world)
    schema = schemathesis.openapi.from_url(f"{base}/api/v1/openapi.json", config=config)
    schema = schema.exclude(path=LIVE_PATH)  # a stream never ends: test_rest_document.py
    kept: Counter[tuple[Any, ...]] = Counter()

    @schema.hook
    def filter_case(_context: Any, case: Any) -> bool:
        """At most PER_SCENARIO cases of each kind (scenario, place, mode) per operation: a
        mismatch is a rule of the operation, which the first few show (the coverage phase
        makes them in a fixed order, so the run stays deterministic)."""
        data = case.meta.phase.data if case.meta else None
        mode = case.meta.generation.mode if case.meta else None
        where = getattr(data, "parameter_location", None)
        key = (case.operation.label, getattr(data, "scenario", None), where, mode)
        kept[key] += 1
        return kept[key] <= PER_SCENARIO

    found: dict[tuple[str, str], str] = {}
    ran: Counter[str] = Counter()
    for event in schemathesis.engine.from_schema(schema).execute():
        if isinstance(event, schemathesis.engine.events.ScenarioFinished):
            recorder = event.recorder
            ran["requests"] += len(recorder.interactions)
            for case_id, checks in recorder.checks.items():
                for check in checks:
                    ran[check.name] += 1
                    if check.failure_info is None:
                        continue
                    failure = check.failure_info.failure
                    key = (recorder.label, f"{check.name}: {failure.title}")
                    found.setdefault(key, _shown(failure.message, recorder, case_id))
        elif isinstance(event, schemathesis.engine.events.FatalError):
            raise event.exception
    return ran, [
        f"{label}: {title}\n    {shown}" for (label, title), shown in sorted(found.items())
    ]


def _shown(message: str, recorder: Any, case_id: str) -> str:
    interaction = recorder.interactions.get(case_id)
    if interaction is None or interaction.response is None:
        return message.replace("\n", " | ")
    request, response = interaction.request, interaction.response
    body = request.body.decode(errors="replace") if isinstance(request.body, bytes) else ""
    answer = response.content.decode(errors="replace") if response.content else ""
    return (
        f"{message.strip()} | {request.method} {request.uri} {body[:300]!r}"
        f" -> {response.status_code} {answer[:300]!r}"
    ).replace("\n", " | ")


def test_every_rest_route_agrees_with_its_openapi_document(
    served: tuple[str, World], request: pytest.FixtureRequest
) -> None:
    """schemathesis' coverage phase (deterministic: each parameter, header and body field
    missing, at its bounds, of the wrong type; methods the path does not take) over every
    operation, every answer held to the document: status codes, media types, headers, the
    error schema, required headers and bodies enforced, 405 with an `Allow` naming the path's
    methods, 401 without a token."""
    base, world = served
    ran, failures = conformance_failures(base, world)
    request.node.add_report_section("call", "conformance", str(dict(ran)))
    assert ran["requests"] > 1000
    assert not failures, "\n".join(failures)


@POSTGRESQL_IN_THE_SLOW_RUN  # the long PostgreSQL run is slow too
@pytest.mark.parametrize("mode", MODES)
def test_every_rest_route_answers_fuzzed_requests_with_json_and_refuses_bad_data_unchanged(
    served: tuple[str, World], db: Database, mode: GenerationMode, request: pytest.FixtureRequest
) -> None:
    base, world = served
    tally = fuzz(db, base, world, mode, examples=20, seeded=True)
    report(tally, request)
    assert len(tally.fuzzed) >= (32 if mode.is_positive else 22)
    assert set(tally.calls) == set(tally.fuzzed)
    assert not tally.bad, "\n".join(tally.bad)


@pytest.mark.slow
@ONLY_POSTGRESQL  # where the long run found what SQLite lets pass (NUL, 32-bit columns)
@pytest.mark.parametrize("mode", MODES)
def test_every_rest_route_survives_a_long_fuzz_run(
    served: tuple[str, World], db: Database, mode: GenerationMode, request: pytest.FixtureRequest
) -> None:
    base, world = served
    tally = fuzz(db, base, world, mode, examples=LONG_EXAMPLES, seeded=True)
    report(tally, request)
    assert not tally.bad, "\n".join(tally.bad)


def test_the_openapi_document_is_valid_and_declares_each_routes_query_with_its_bounds(
    served: tuple[str, World],
) -> None:
    base, _ = served
    document = httpx2.get(f"{base}/api/v1/openapi.json").json()
    schema = schemathesis.openapi.from_dict(document, config=CONFIG)
    schema.validate()
    assert schema.iter_schema_warnings() == []
    assert "$defs" not in json.dumps(document)
    live = document["paths"][LIVE_PATH]["get"]  # served beside the table, described by hand
    assert "text/event-stream" in live["responses"]["200"]["content"]
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) == sum(len(ops) for ops in document["paths"].values())
    query = {
        (path, method): {p["name"]: p for p in op["parameters"] if p["in"] == "query"}
        for path, ops in document["paths"].items()
        for method, op in ops.items()
    }
    limits = {
        "/api/v1/projects": 200,
        f"{PROJECT}/tasks": 500,  # the board projection's; the others refuse over 200
        f"{PROJECT}/state/versions": 100,
        f"{PROJECT}/activity": 100,
        "/api/v1/tasks/{task}/events": 100,
    }
    for path, maximum in limits.items():
        limit = query[path, "get"]["limit"]["schema"]
        assert (limit["type"], limit["minimum"], limit["maximum"]) == ("integer", 1, maximum)
    tasks_query = query[f"{PROJECT}/tasks", "get"]
    assert {n for n, p in tasks_query.items() if p.get("explode")} == {"status", "number", "fields"}
    assert tasks_query["updatedSince"]["schema"] == {"type": "string", "format": "date-time"}
    assert set(query["/api/v1/tasks/{task}", "get"]) == {
        "includeContextPack",
        "format",
        "workspaceId",
        "textField",
        "textOffset",
        "textLimit",
    }
    assert not any(query[path, method] for path, method in query if method != "get")
    patch = document["paths"][PROJECT]["patch"]["requestBody"]["content"]["application/json"]
    assert "projectId" not in patch["schema"]["properties"]
