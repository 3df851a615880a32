"""The OAuth workload: `python -m bench oauth [--database postgresql] [--calls N]`.

What checking an OAuth access token costs on `/mcp` against an API token. Both tokens belong
to the same person on the same served instance (`bench.server`); the OAuth one comes from a
real grant (a registered client, an authorization request, the person's approval, the code
exchanged for tokens: the services the consent page and the token endpoint call).

- The check alone: `authenticate_token` against `authenticate_access_token` in this process
  on the server's database, alternating in blocks of 50 after a warm-up.
- A whole call: `tools/call bench_noop` over HTTP through `mcp.Client`, one client per token,
  alternating in blocks of 20, so the token check is the only difference.

Target: each OAuth median within 1.1x the API token's.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

from bench.measure import Target, connect
from bench.noop import NOOP_NAME
from bench.process import ServerProcess, throwaway_postgres
from bench.runner import add_database_options, progress
from crewboard.domain.identity.access import Scope
from crewboard.domain.identity.records import Actor
from crewboard.services.identity.tokens import authenticate_token
from crewboard.services.oauth import grants
from crewboard.services.oauth.clients import ClientPolicy, register_client
from crewboard.storage.database import Database

TARGET = 1.1


def oauth_token(db: Database, base_url: str) -> str:
    """An access token from a real grant of the instance's owner, with every scope."""
    owner = db.read(lambda uow: uow.users.get_by_email("owner@crewboard.local"))
    assert owner is not None
    person = Actor(user_id=owner.id, scopes=frozenset(Scope))
    redirect = "http://127.0.0.1:9/callback"
    client = register_client(
        db,
        ClientPolicy(),
        {"client_name": "bench", "redirect_uris": [redirect], "token_endpoint_auth_method": "none"},
    )
    pending = grants.start_authorization(
        db,
        client,
        redirect_uri=redirect,
        redirect_explicit=True,
        scopes=[s.value for s in Scope],
        resource=f"{base_url}/mcp",
        code_challenge="x" * 43,
        state=None,
    )
    _grant, answer = grants.approve(
        db, person, pending.id, issuer=base_url, scopes=[s.value for s in Scope]
    )
    code = answer.split("code=", 1)[1].split("&", 1)[0]
    return grants.exchange_code(db, code).access_token


def alternate(
    first: Callable[[], object], second: Callable[[], object], rounds: int, block: int
) -> tuple[list[float], list[float]]:
    a: list[float] = []
    b: list[float] = []
    for _ in range(rounds // block):
        for run, into in ((first, a), (second, b)):
            for _ in range(block):
                started = time.perf_counter()
                run()
                into.append(time.perf_counter() - started)
    return a, b


async def alternate_async(
    first: Callable[[], Awaitable[Any]],
    second: Callable[[], Awaitable[Any]],
    rounds: int,
    block: int,
) -> tuple[list[float], list[float]]:
    a: list[float] = []
    b: list[float] = []
    for _ in range(rounds // block):
        for run, into in ((first, a), (second, b)):
            for _ in range(block):
                started = time.perf_counter()
                await run()
                into.append(time.perf_counter() - started)
    return a, b


def row(name: str, api: list[float], oauth: list[float]) -> dict[str, Any]:
    api_ms = statistics.median(api) * 1000
    oauth_ms = statistics.median(oauth) * 1000
    return {
        "measure": name,
        "api_ms": round(api_ms, 3),
        "oauth_ms": round(oauth_ms, 3),
        "ratio": round(oauth_ms / api_ms, 3),
        "met": oauth_ms / api_ms <= TARGET,
    }


async def calls(base_url: str, api: str, oauth: str, rounds: int, project: str) -> dict[str, Any]:
    async with (
        connect(Target(f"{base_url}/mcp", api, project, 0), "legacy") as with_api,
        connect(Target(f"{base_url}/mcp", oauth, project, 0), "legacy") as with_oauth,
    ):
        for client in (with_api, with_oauth):  # warm-up
            for _ in range(20):
                await client.call_tool(NOOP_NAME, {})
        a, b = await alternate_async(
            lambda: with_api.call_tool(NOOP_NAME, {}),
            lambda: with_oauth.call_tool(NOOP_NAME, {}),
            rounds,
            20,
        )
    return row("tools/call bench_noop over HTTP", a, b)


def run(args: argparse.Namespace, database_url: str | None) -> list[dict[str, Any]]:
    server = ServerProcess(database_url)
    with server as info:
        url = database_url or f"sqlite:///{Path(server.folder) / 'data' / 'crewboard.db'}"
        db = Database(url)
        try:
            oauth = oauth_token(db, info.base_url)
            audience = f"{info.base_url}/mcp"
            progress(f"{info.database}: the check alone, {args.checks} of each")
            for _ in range(100):
                authenticate_token(db, info.token)
                grants.authenticate_access_token(db, oauth, audience)
            check = row(
                "the token check alone",
                *alternate(
                    lambda: authenticate_token(db, info.token),
                    lambda: grants.authenticate_access_token(db, oauth, audience),
                    args.checks,
                    50,
                ),
            )
            progress(f"{info.database}: whole calls, {args.calls} of each")
            call = anyio.run(calls, info.base_url, info.token, oauth, args.calls, info.project)
        finally:
            db.dispose()
    return [check, call]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench oauth", description=__doc__)
    add_database_options(parser)
    parser.add_argument("--checks", type=int, default=4000)
    parser.add_argument("--calls", type=int, default=1000)
    args = parser.parse_args(argv)
    if args.database == "postgresql":
        with throwaway_postgres(args.postgres_url) as url:
            rows = run(args, url)
    else:
        rows = run(args, None)
    print(f"| measure | API token | OAuth token | ratio (target <= {TARGET}x) |")
    print("| --- | ---: | ---: | ---: |")
    for r in rows:
        met = "" if r["met"] else " (missed)"
        print(
            f"| {r['measure']} | {r['api_ms']} ms | {r['oauth_ms']} ms | **{r['ratio']}x**{met} |"
        )
