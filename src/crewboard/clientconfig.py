"""Copy-paste MCP client configuration: each client's own format, the token where it reads it.

HTTP clients get the endpoint and the token as a bearer header (Codex reads the token from an
environment variable its file names). Clients that start a local server get a stdio entry that
runs this installation's `crewboard mcp` with the token and the database the server uses.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from crewboard.config import Settings

TOKEN_ENV = "CREWBOARD_TOKEN"  # noqa: S105 - a variable's name, not a secret
MASK = "***"
_BARE_TOML_KEY = re.compile(r"[A-Za-z0-9_-]+")


@dataclass(frozen=True)
class ClientConfig:
    """One client's configuration: what to paste, where it goes, and any step besides."""

    client: str
    where: str  # the file it goes in; empty for a command to run
    text: str
    note: str = ""


@dataclass(frozen=True)
class StdioLaunch:
    """How a client on this machine starts `crewboard mcp`: an absolute command, args, env."""

    command: str
    args: list[str]
    env: dict[str, str] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {"command": self.command, "args": self.args, "env": self.env}


def mcp_url(base_url: str) -> str:
    return f"{base_url.rstrip('/')}/mcp"


def crewboard_command() -> list[str]:
    """This installation's `crewboard`: the script beside the interpreter, else `python -m`."""
    interpreter = Path(sys.executable).absolute()  # not resolved: a venv's python is a symlink
    script = shutil.which("crewboard", path=str(interpreter.parent))
    if script:
        return [str(Path(script).absolute())]
    return [str(interpreter), "-m", "crewboard"]


def stdio_launch(settings: Settings, token: str, *, mask_password: bool = False) -> StdioLaunch:
    """The stdio entry for `settings`' database; `mask_password` hides a database password."""
    command, *args = crewboard_command()
    env = {TOKEN_ENV: token, "CREWBOARD_DATA_DIR": str(settings.data_dir.resolve())}
    if settings.database_url:
        url = _absolute_sqlite(settings.database_url)
        env["CREWBOARD_DATABASE_URL"] = _mask_password(url) if mask_password else url
    if settings.base_url:
        env["CREWBOARD_BASE_URL"] = settings.base_url
    return StdioLaunch(command=command, args=[*args, "mcp"], env=env)


def client_configs(
    settings: Settings, token: str, *, mask_password: bool = False, name: str = "crewboard"
) -> list[ClientConfig]:
    """Configuration for each common client, HTTP ones first, then those that start stdio."""
    url = mcp_url(settings.public_url)
    launch = stdio_launch(settings, token, mask_password=mask_password)
    return [*_http_configs(url, token, name), *_stdio_configs(launch, name)]


def _http_configs(url: str, token: str, name: str) -> list[ClientConfig]:
    headers = {"Authorization": f"Bearer {token}"}
    codex = "\n".join(
        [
            f"[mcp_servers.{_toml_key(name)}]",
            f"url = {_toml_string(url)}",
            f"bearer_token_env_var = {_toml_string(TOKEN_ENV)}",
        ]
    )
    return [
        ClientConfig(
            "Claude Code",
            "",
            f'claude mcp add --transport http {name} {url} --header "Authorization: Bearer {token}"',
        ),
        ClientConfig(
            "Codex CLI",
            "~/.codex/config.toml",
            codex,
            f"Codex takes the token from ${TOKEN_ENV}; set it where Codex starts: "
            f"export {TOKEN_ENV}={token}",
        ),
        ClientConfig(
            "Gemini CLI",
            "~/.gemini/settings.json",
            _json({"mcpServers": {name: {"httpUrl": url, "headers": headers}}}),
        ),
        ClientConfig(
            "Cursor",
            "~/.cursor/mcp.json",
            _json({"mcpServers": {name: {"url": url, "headers": headers}}}),
        ),
        ClientConfig(
            "VS Code",
            ".vscode/mcp.json",
            _json({"servers": {name: {"type": "http", "url": url, "headers": headers}}}),
        ),
    ]


def _stdio_configs(launch: StdioLaunch, name: str) -> list[ClientConfig]:
    local = "Runs Crewboard over stdio on the machine that holds its data."
    if MASK in launch.env.get("CREWBOARD_DATABASE_URL", ""):
        local += f" Put the database password in place of {MASK}."
    return [
        ClientConfig(
            "Claude Desktop",
            "claude_desktop_config.json",
            _json({"mcpServers": {name: launch.as_json()}}),
            f"{local} Open the file from Settings > Developer > Edit Config; restart after saving.",
        ),
        ClientConfig(
            "Any stdio client",
            "",
            _json(launch.as_json()),
            f"{local} The command, args and env for any client that starts a local server.",
        ),
    ]


def _json(value: dict[str, Any]) -> str:
    return json.dumps(value, indent=2)


def _toml_string(value: str) -> str:
    # A JSON string is a TOML basic string, but for DEL, which TOML wants escaped.
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")


def _toml_key(key: str) -> str:
    return key if _BARE_TOML_KEY.fullmatch(key) else _toml_string(key)


def _absolute_sqlite(url: str) -> str:
    """An SQLite URL with a relative file made absolute: a client starts us elsewhere."""
    scheme, sep, rest = url.partition(":///")
    path, question, query = rest.partition("?")
    if not sep or scheme.split("+")[0] != "sqlite" or path in ("", ":memory:"):
        return url
    if path.startswith("file:") or Path(path).is_absolute():
        return url
    return f"{scheme}:///{Path(path).resolve()}{question}{query}"


def _mask_password(url: str) -> str:
    parts = urlsplit(url)
    if not parts.password:
        return url
    userinfo, _, host = parts.netloc.rpartition("@")
    user = userinfo.partition(":")[0]
    return urlunsplit(parts._replace(netloc=f"{user}:{MASK}@{host}"))
