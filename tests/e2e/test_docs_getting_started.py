"""A newcomer's walk through docs/getting-started.md: the page's command blocks marked
`<!-- walk -->` run in order on a fresh data folder, and each must succeed and print what the
page shows under it.

How a block reads: a line starting with `$ ` is a command; the lines after it, up to the next
command, are what it prints. A shown line matches an output line (spaces collapsed) where `…`
stands for anything; a line that is only `…` stands for lines left out; shown lines are found
in order. In a command, `cb_…`, `rol_…`, `drf_…` (any `PREFIX_…`) stand for the last such id
the walk has printed, as the page tells the reader to paste their own. `crewboard serve` runs
as a real process on a free port (the page's 8787 becomes that port everywhere); other
`crewboard` commands run in-process through click's runner, and `curl` as itself.
"""

from __future__ import annotations

import re
import shlex
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from crewboard.cli.main import cli
from tests.support.cli import crewboard_env
from tests.support.serve import start_serve, stop_serve, wait_healthy
from tests.support.server import free_port

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "getting-started.md"
WALK = re.compile(r"<!-- walk -->\n```(?:console|bash)\n(?P<body>.*?)^```", re.S | re.M)
PLACEHOLDER = re.compile(r"\b([a-z]+_)…")
PAGE_PORT = "8787"


@dataclass
class Step:
    command: str
    shown: list[str] = field(default_factory=list)


def walk_steps(text: str) -> list[Step]:
    """The commands of the page's walk blocks, in order, each with the lines shown under it."""
    steps: list[Step] = []
    for block in WALK.finditer(text):
        for line in block["body"].splitlines():
            if line.startswith("$ "):
                steps.append(Step(line[2:]))
            elif not steps:
                raise AssertionError(f"a walk block starts with output, not a command: {line!r}")
            else:
                steps[-1].shown.append(line)
    return steps


def filled(command: str, printed: str) -> str:
    """`command` with each `PREFIX_…` replaced by the last id of that prefix printed so far."""

    def last(match: re.Match[str]) -> str:
        found = re.findall(rf"\b{match[1]}[A-Za-z0-9_-]+", printed)
        assert found, f"the walk printed no {match[1]}… id before `{command}`"
        return str(found[-1])

    return PLACEHOLDER.sub(last, command)


def shows(output: str, shown: list[str]) -> str | None:
    """None when every shown line matches an output line, in order; else the first that does
    not."""
    lines = iter(" ".join(line.split()) for line in output.splitlines())
    for expected in (" ".join(line.split()) for line in shown):
        if expected in ("", "…"):
            continue
        pattern = re.compile(".*?".join(re.escape(part) for part in expected.split("…")))
        if not any(pattern.fullmatch(line) for line in lines):
            return expected
    return None


def test_the_page_has_a_walk_from_init_to_an_approved_hand_in() -> None:
    commands = [shlex.split(step.command)[:3] for step in walk_steps(PAGE.read_text())]
    assert commands[0] == ["crewboard", "init"]
    assert ["crewboard", "serve"] in commands
    assert ["crewboard", "review", "approve"] in commands


def test_the_matcher_finds_shown_lines_in_order_with_gaps() -> None:
    output = "first line\n  key:   SHOP-1\nid drf_12ab done\nlast"
    assert shows(output, ["key: SHOP-1", "…", "id drf_… done"]) is None
    assert shows(output, ["id drf_… done", "key: SHOP-1"]) == "key: SHOP-1"
    assert shows(output, ["key: SHOP-2"]) == "key: SHOP-2"
    assert filled("approve drf_…", "drf_old then drf_new2") == "approve drf_new2"


def _mentioned_commands(text: str) -> Iterator[list[str]]:
    """The words after each `crewboard` that starts a command in the page's code (a span, a
    line, after `$ `): not the server's name in a client's command line."""
    code = re.findall(r"```[^\n]*\n(.*?)```|`([^`\n]+)`", text, re.S)
    for block, span in code:
        for match in re.finditer(r"^(?:\$ )?\s*crewboard((?: [a-z][a-z-]*)*)", block or span, re.M):
            yield match[1].split()


@pytest.mark.parametrize("page", ["docs/getting-started.md", "docs/index.md", "README.md"])
def test_every_command_the_page_names_exists(page: str) -> None:
    for words in _mentioned_commands((REPO / page).read_text(encoding="utf-8")):
        command: click.Command = cli
        for word in words:
            if not isinstance(command, click.Group):
                break  # the rest are arguments
            assert word in command.commands, f"{page}: no command `crewboard {' '.join(words)}`"
            command = command.commands[word]
        assert not isinstance(command, click.Group) or not words, (
            f"{page}: `crewboard {' '.join(words)}` names a group, not a command"
        )


def test_the_getting_started_walk_runs_as_the_page_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    port = str(free_port())
    data_dir = tmp_path / ".crewboard"  # the folder's name, as the page shows it
    env = crewboard_env(data_dir, port=port)
    for name in [n for n in env if n.startswith("CREWBOARD_")]:
        monkeypatch.setenv(name, env[name])
    for name in ("CREWBOARD_DATABASE_URL", "CREWBOARD_CONFIG_FILE", "CREWBOARD_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    printed = ""
    server = None
    try:
        for step in walk_steps(PAGE.read_text(encoding="utf-8")):
            command = filled(step.command, printed).replace(PAGE_PORT, port)
            words = shlex.split(command)
            if words[:2] == ["crewboard", "serve"]:
                log = tmp_path / "serve.log"
                server = start_serve(env, log)
                wait_healthy(f"http://127.0.0.1:{port}", server, log)
                output = log.read_text()
            elif words[0] == "crewboard":
                result = CliRunner().invoke(cli, words[1:], catch_exceptions=False)
                assert result.exit_code == 0, f"`{command}` failed:\n{result.output}"
                output = result.output
            elif words[0] == "curl":
                ran = subprocess.run(words, capture_output=True, text=True, timeout=60, check=False)
                assert ran.returncode == 0, f"`{command}` failed:\n{ran.stderr}"
                output = ran.stdout
            else:
                pytest.fail(f"the walk runs crewboard and curl only, not `{command}`")
            missing = shows(output, [line.replace(PAGE_PORT, port) for line in step.shown])
            assert missing is None, f"`{command}` did not print {missing!r}; it printed:\n{output}"
            printed += output
    finally:
        if server is not None:
            assert stop_serve(server) == 0
