"""The official MCP conformance suite's authorization-server scenarios against Crewboard's own
authorization server, at every spec version the suite applies them to.

`conformance authorization` runs its two scenarios in order: `authorization-server-metadata-endpoint`
(RFC 8414 metadata at the issuer's well-known path) and `authorization-code-grant`, which needs
the first one's metadata, so the two run together (asked for alone, the second fails for want of
it). For the second the suite starts its own callback server on 127.0.0.1:PORT, prints an
authorize URL and waits for a browser to come back; here a public client is registered with that
redirect URI (POST /oauth/register), and the owner, signed in over HTTP, follows the URL and
posts the consent form as its page would. The suite then exchanges the code (PKCE, resource) and
checks the token response.

Each run leaves the suite's output and its checks.json files under
test-output/conformance-oauth/<backend>@<version>/. The suite is found and required as in
test_conformance.py (scripts/conformance-setup; CREWBOARD_REQUIRE_CONFORMANCE=1).
"""

from __future__ import annotations

import json
import queue
import re
import shutil
import subprocess
import threading
import time
from contextlib import closing
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest

from tests.e2e.test_conformance import ANSI, ROOT, RUN_TIMEOUT, suite
from tests.support.oauth import App, register_public
from tests.support.oauth_module import app, backend, module_db, owner
from tests.support.server import free_port
from tests.support.web import sign_in

pytestmark = pytest.mark.conformance
__all__ = ["app", "backend", "module_db", "owner", "suite"]  # fixtures used by name

OUTPUT = ROOT / "test-output" / "conformance-oauth"
SCENARIOS = ("authorization-server-metadata-endpoint", "authorization-code-grant")
# Every spec version the suite knows applies both scenarios (`list --authorization`).
VERSIONS = ("2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
# The metadata scenario's checks at each version: from 2025-11-25 it also asks for Client ID
# Metadata Document support (client_id_metadata_document_supported: true).
METADATA_CHECKS = {
    version: ["authorization-server-metadata"]
    + (["authorization-server-metadata-cimd"] if version >= "2025-11-25" else [])
    for version in VERSIONS
}
AUTHORIZE_URL_WAIT = 60.0  # seconds for the suite to print the authorize URL
_CSRF = re.compile(r'name="csrf" value="([^"]+)"')
_SCOPE_BOX = re.compile(r'<input type="checkbox"[^>]*name="scopes" value="([^"]+)"([^>]*)>')

Check = dict[str, Any]


def test_the_suite_applies_both_authorization_scenarios_at_each_version(
    suite: list[str],
) -> None:
    for version in VERSIONS:
        listed = subprocess.run(
            [*suite, "list", "--authorization", "--spec-version", version],
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT,
            check=True,
        ).stdout
        names = set(re.findall(r"^\s+- (\S+)", listed, flags=re.MULTILINE))
        assert names == set(SCENARIOS), f"update SCENARIOS / VERSIONS:\n{listed}"


@pytest.mark.parametrize("version", VERSIONS)
def test_authorization_scenarios_pass(
    suite: list[str], app: App, backend: str, version: str
) -> None:
    out = OUTPUT / f"{backend}@{version}"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    port = free_port()
    client_id = register_public(app.url, [f"http://127.0.0.1:{port}/callback"])
    command = [
        *suite,
        "authorization",
        "--url",
        app.issuer,
        "--client-id",
        client_id,
        "--port",
        str(port),
        "--resource",
        app.resource,
        "--spec-version",
        version,
        "-o",
        str(out / "results"),
    ]
    run = _Run(command, out)
    try:
        authorize_url = run.wait_for_line(f"{app.issuer}/oauth/authorize?")
        callback = _consent_as_the_owner(app, authorize_url)
        assert callback.startswith(f"http://127.0.0.1:{port}/callback?code=cbc_")
        run.wait_for_line(f"Callback server started: http://127.0.0.1:{port}")
        arrived = httpx2.get(callback, timeout=30)  # the browser lands on the suite's server
        assert arrived.status_code == 200, arrived.text
        returncode = run.finish()
    finally:
        run.stop()
    where = f"(see {out.relative_to(ROOT)}/)"

    by_scenario = _checks(out / "results")
    assert sorted(by_scenario) == sorted(SCENARIOS), f"scenarios run: {sorted(by_scenario)} {where}"
    ids = {
        scenario: sorted(str(c.get("id")) for c in checks)
        for scenario, checks in by_scenario.items()
    }
    assert ids == {
        "authorization-server-metadata-endpoint": METADATA_CHECKS[version],
        "authorization-code-grant": ["authorization-code-grant"],
    }, where
    for scenario, checks in by_scenario.items():
        bad = [c for c in checks if c.get("status") != "SUCCESS"]
        assert not bad, f"{scenario}@{version} {where}:\n" + "\n".join(map(_describe, bad))
    assert returncode == 0, f"the suite exited {returncode} {where}"
    [grant_check] = by_scenario["authorization-code-grant"]
    details = grant_check["details"]
    assert details["body"]["token_type"] == "Bearer"
    assert "state=" in details["authorizationResponseUrl"]
    assert f"iss={app.issuer}" in _unquoted(details["authorizationResponseUrl"])


def _consent_as_the_owner(app: App, authorize_url: str) -> str:
    """The owner, signed in, follows the authorize URL and approves what the page ticks;
    the URL the consent answer sends the browser back to."""
    with closing(sign_in(app.url, app.owner.email)) as person:
        asked = person.get(authorize_url)
        assert asked.status_code == 302, asked.text
        consent = asked.headers["location"]
        assert consent.startswith(f"{app.issuer}/oauth/consent?request=")
        page = person.get(consent)
        assert page.status_code == 200, page.text
        found = _CSRF.search(page.text)
        assert found is not None, page.text
        ticked = [
            name
            for name, rest in _SCOPE_BOX.findall(page.text)
            if " checked" in rest and " disabled" not in rest
        ]
        answer = person.post(
            "/oauth/consent",
            data={
                "csrf": found.group(1),
                "request": parse_qs(urlsplit(consent).query)["request"][0],
                "decision": "approve",
                "scopes": ticked,
                "project": "",
                "role": "",
            },
        )
        assert answer.status_code == 303, answer.text
        return str(answer.headers["location"])


class _Run:
    """The suite as a subprocess, its output read line by line as it comes."""

    def __init__(self, command: list[str], out: Path) -> None:
        self.command = command
        self.out = out
        self.lines: list[str] = []
        self._arrivals: queue.Queue[str | None] = queue.Queue()
        self.process = subprocess.Popen(
            command,
            cwd=out,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        assert self.process.stdout is not None
        self._reader = threading.Thread(target=self._read, args=(self.process.stdout,), daemon=True)
        self._reader.start()

    def _read(self, stream: TextIO) -> None:
        for line in stream:
            clean = ANSI.sub("", line.rstrip("\n"))
            self.lines.append(clean)
            self._arrivals.put(clean)
        self._arrivals.put(None)

    def wait_for_line(self, prefix: str) -> str:
        """The first output line starting with `prefix` (stripped)."""
        deadline = time.monotonic() + AUTHORIZE_URL_WAIT
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self._arrivals.get(timeout=left)
            except queue.Empty:
                break
            if line is None:
                break
            if line.strip().startswith(prefix):
                return line.strip()
        raise AssertionError(f"the suite printed no line starting {prefix!r}:\n{self.text()}")

    def finish(self) -> int | None:
        """Its exit code once it ends (None if it did not within RUN_TIMEOUT)."""
        try:
            return self.process.wait(timeout=RUN_TIMEOUT)
        except subprocess.TimeoutExpired:
            return None

    def stop(self) -> None:
        """End it if it still runs; keep its output beside the results."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=15)
        self._reader.join(timeout=15)
        if self.process.stdout is not None:
            self.process.stdout.close()
        command = " ".join(self.command)
        (self.out / "output.txt").write_text(
            f"$ {command}\n# exit {self.process.returncode}\n\n{self.text()}\n"
        )

    def text(self) -> str:
        return "\n".join(self.lines)


def _checks(results: Path) -> dict[str, list[Check]]:
    """Each scenario's checks, from the checks.json the suite wrote for it."""
    found: dict[str, list[Check]] = {}
    for path in sorted(results.glob("*/checks.json")):
        scenario = next((s for s in SCENARIOS if f"-{s}-" in path.parent.name), path.parent.name)
        found[scenario] = json.loads(path.read_text())
    return found


def _describe(check: Check) -> str:
    details = json.dumps(check.get("details"), ensure_ascii=False)[:1500]
    return (
        f"- {check.get('id')} [{check.get('status')}]: "
        f"{check.get('errorMessage') or check.get('description')}\n  details: {details}"
    )


def _unquoted(url: str) -> str:
    return "&".join(f"{k}={v[0]}" for k, v in parse_qs(urlsplit(url).query).items())
