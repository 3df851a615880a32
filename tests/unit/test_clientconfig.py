"""The copy-paste client configurations: each parses in its client's format, token and URL in place.

Formats as each client documents them: Codex `[mcp_servers.<name>]` with `url` and
`bearer_token_env_var` (developers.openai.com/codex/mcp), Gemini CLI `mcpServers` with `httpUrl`
and `headers` (google-gemini/gemini-cli docs/tools/mcp-server.md), Claude Desktop `mcpServers`
with `command`, `args`, `env` (modelcontextprotocol.io, "Connect to local MCP servers").
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from crewboard.clientconfig import (
    TOKEN_ENV,
    ClientConfig,
    client_configs,
    crewboard_command,
    stdio_launch,
)
from crewboard.config import Settings

TOKEN = "cb_" + "x" * 38
URL = "http://127.0.0.1:8787/mcp"
BEARER = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("CREWBOARD_"):
            monkeypatch.delenv(name)


def settings_in(tmp_path: Path, **values: Any) -> Settings:
    return Settings(data_dir=tmp_path / "data", **values)


def by_client(configs: list[ClientConfig]) -> dict[str, ClientConfig]:
    return {config.client: config for config in configs}


def test_every_client_is_configured_once() -> None:
    configs = client_configs(Settings(), TOKEN)
    assert [c.client for c in configs] == [
        "Claude Code",
        "Codex CLI",
        "Gemini CLI",
        "Cursor",
        "VS Code",
        "Claude Desktop",
        "Any stdio client",
    ]


def test_claude_code_command_adds_the_http_server_with_the_bearer_header() -> None:
    config = by_client(client_configs(Settings(), TOKEN))["Claude Code"]
    assert shlex.split(config.text) == [
        *("claude", "mcp", "add", "--transport", "http", "crewboard", URL),
        *("--header", f"Authorization: Bearer {TOKEN}"),
    ]


def test_codex_toml_names_the_url_and_the_variable_its_note_sets_to_the_token() -> None:
    config = by_client(client_configs(Settings(), TOKEN))["Codex CLI"]
    assert config.where == "~/.codex/config.toml"
    parsed = tomllib.loads(config.text)
    assert parsed == {"mcp_servers": {"crewboard": {"url": URL, "bearer_token_env_var": TOKEN_ENV}}}
    assert TOKEN not in config.text  # the file keeps no secret
    assert f"export {TOKEN_ENV}={TOKEN}" in config.note


def test_codex_toml_quotes_a_server_name_toml_would_misread() -> None:
    name = 'crew.board "two"'
    config = by_client(client_configs(Settings(), TOKEN, name=name))["Codex CLI"]
    assert tomllib.loads(config.text)["mcp_servers"] == {
        name: {"url": URL, "bearer_token_env_var": TOKEN_ENV}
    }


def test_gemini_settings_use_http_url_for_streamable_http_with_the_header() -> None:
    config = by_client(client_configs(Settings(), TOKEN))["Gemini CLI"]
    assert config.where == "~/.gemini/settings.json"
    # Gemini reads `url` as an SSE endpoint; Streamable HTTP is `httpUrl`.
    assert json.loads(config.text) == {
        "mcpServers": {"crewboard": {"httpUrl": URL, "headers": BEARER}}
    }


def test_cursor_and_vs_code_json_carry_the_url_and_the_header() -> None:
    configs = by_client(client_configs(Settings(), TOKEN))
    assert json.loads(configs["Cursor"].text) == {
        "mcpServers": {"crewboard": {"url": URL, "headers": BEARER}}
    }
    assert json.loads(configs["VS Code"].text) == {
        "servers": {"crewboard": {"type": "http", "url": URL, "headers": BEARER}}
    }


def test_http_clients_use_the_public_base_url() -> None:
    settings = Settings(base_url="https://crew.example.com/")
    for config in client_configs(settings, TOKEN)[:5]:
        assert "https://crew.example.com/mcp" in config.text, config.client


def test_claude_desktop_starts_this_crewboard_over_stdio_with_token_and_data_folder(
    tmp_path: Path,
) -> None:
    config = by_client(client_configs(settings_in(tmp_path), TOKEN))["Claude Desktop"]
    assert config.where == "claude_desktop_config.json"
    entry = json.loads(config.text)["mcpServers"]["crewboard"]
    assert set(entry) == {"command", "args", "env"}
    command = Path(entry["command"])
    assert command.is_absolute()
    assert os.access(command, os.X_OK)
    assert entry["args"][-1] == "mcp"
    assert entry["env"] == {
        TOKEN_ENV: TOKEN,
        "CREWBOARD_DATA_DIR": str((tmp_path / "data").resolve()),
    }


def test_the_generic_stdio_entry_is_the_claude_desktop_entry_alone(tmp_path: Path) -> None:
    configs = by_client(client_configs(settings_in(tmp_path), TOKEN))
    generic = json.loads(configs["Any stdio client"].text)
    assert generic == json.loads(configs["Claude Desktop"].text)["mcpServers"]["crewboard"]


def test_a_relative_data_folder_becomes_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    launch = stdio_launch(Settings(data_dir=Path("here")), TOKEN)
    assert launch.env["CREWBOARD_DATA_DIR"] == str(tmp_path.resolve() / "here")


def test_a_configured_database_url_goes_into_the_stdio_environment(tmp_path: Path) -> None:
    url = "postgresql+psycopg://crew:s3cret@db.example.com:5432/crew"
    launch = stdio_launch(settings_in(tmp_path, database_url=url), TOKEN)
    assert launch.env["CREWBOARD_DATABASE_URL"] == url


def test_a_masked_entry_hides_only_the_database_password_and_says_so(tmp_path: Path) -> None:
    url = "postgresql+psycopg://crew:s3cret@db.example.com:5432/crew?sslmode=require"
    settings = settings_in(tmp_path, database_url=url)
    configs = by_client(client_configs(settings, TOKEN, mask_password=True))
    for client in ("Claude Desktop", "Any stdio client"):
        assert "s3cret" not in configs[client].text
        assert "***" in configs[client].note
    env = json.loads(configs["Any stdio client"].text)["env"]
    assert env["CREWBOARD_DATABASE_URL"] == (
        "postgresql+psycopg://crew:***@db.example.com:5432/crew?sslmode=require"
    )
    assert env[TOKEN_ENV] == TOKEN


def test_masking_leaves_a_url_without_a_password_alone(tmp_path: Path) -> None:
    url = "postgresql+psycopg://crew@db.example.com/crew"
    launch = stdio_launch(settings_in(tmp_path, database_url=url), TOKEN, mask_password=True)
    assert launch.env["CREWBOARD_DATABASE_URL"] == url
    config = by_client(client_configs(settings_in(tmp_path, database_url=url), TOKEN))
    assert "***" not in config["Claude Desktop"].note


def test_a_relative_sqlite_file_becomes_absolute_an_absolute_one_stays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    relative = stdio_launch(settings_in(tmp_path, database_url="sqlite:///crew.db"), TOKEN)
    assert relative.env["CREWBOARD_DATABASE_URL"] == f"sqlite:///{tmp_path.resolve()}/crew.db"
    absolute = f"sqlite+pysqlite:///{tmp_path}/crew.db?timeout=5"
    kept = stdio_launch(settings_in(tmp_path, database_url=absolute), TOKEN)
    assert kept.env["CREWBOARD_DATABASE_URL"] == absolute


def test_a_base_url_goes_into_the_stdio_environment(tmp_path: Path) -> None:
    launch = stdio_launch(settings_in(tmp_path, base_url="https://crew.example.com"), TOKEN)
    assert launch.env["CREWBOARD_BASE_URL"] == "https://crew.example.com"


def test_without_a_script_beside_the_interpreter_the_command_is_python_dash_m(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python3"))
    assert crewboard_command() == [str(tmp_path / "python3"), "-m", "crewboard"]
    launch = stdio_launch(settings_in(tmp_path), TOKEN)
    assert (launch.command, launch.args) == (str(tmp_path / "python3"), ["-m", "crewboard", "mcp"])


def test_the_script_beside_the_interpreter_is_preferred(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / "crewboard"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python3"))
    assert crewboard_command() == [str(script)]
