"""The benchmark's server process: a fresh Crewboard instance with the no-op tool added.

    python -m bench.server --port 8799 --data-dir /tmp/x --info-file /tmp/x/info.json
    python -m bench.server ... --database-url postgresql+psycopg://postgres@127.0.0.1:5432/db

It migrates an empty database (SQLite in the data folder unless --database-url names one),
initialises it (owner, DEMO project, a first token with every scope), with --seed-board adds
one project per count filled with that many tasks (bench/seed.py), writes what the runner
needs (the token among it) to --info-file, and serves with uvicorn until SIGTERM or SIGINT,
after which it shuts down gracefully and exits 0. The token is a throw-away instance's: it is
written to the info file (mode 0600), never printed.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from dataclasses import asdict
from pathlib import Path
from types import FrameType

import uvicorn

from bench.noop import bench_catalogue
from bench.seed import seed_board
from crewboard.app import create_app
from crewboard.config import Settings
from crewboard.services.identity.tokens import issue_token
from crewboard.services.identity.users import person_actor
from crewboard.services.projects.bootstrap import DEMO_PROJECT_KEY, initialise
from crewboard.storage import migrate
from crewboard.storage.database import Database


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.server", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--data-dir", type=Path, required=True, help="an empty folder")
    parser.add_argument(
        "--database-url",
        default=None,
        help="SQLAlchemy URL of an EMPTY database (default: SQLite in the data folder)",
    )
    parser.add_argument(
        "--info-file",
        type=Path,
        default=None,
        help="where to write the token and project as JSON (default: DATA_DIR/bench-info.json)",
    )
    parser.add_argument("--log-level", default="warning", help="uvicorn log level")
    parser.add_argument(
        "--seed-board",
        default="",
        help="comma-separated task counts: one project per count, filled before serving "
        "(e.g. 100000,1000; see bench/seed.py)",
    )
    parser.add_argument(
        "--agent-tokens",
        type=int,
        default=0,
        help="agent tokens to issue on the DEMO project (board scopes), listed as `agents`",
    )
    parser.add_argument(
        "--analyze",
        action="store_true",
        help="run ANALYZE after seeding on SQLite too (PostgreSQL always is)",
    )
    return parser.parse_args(argv)


def write_private(path: Path, data: dict[str, object]) -> None:
    """Write JSON readable by this user only, in one rename (a reader never sees half)."""
    partial = path.with_name(f".{path.name}.partial")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(data, handle)
    partial.replace(path)


def _exit_after_graceful_shutdown(_signum: int, _frame: FrameType | None) -> None:
    # uvicorn shuts down on SIGTERM/SIGINT, then re-raises the signal to the handler that was
    # there before it: that handler ends the process with status 0 (as `crewboard serve` does).
    raise SystemExit(0)


def serve(args: argparse.Namespace) -> int:
    settings = Settings(
        data_dir=args.data_dir,
        database_url=args.database_url,
        host=args.host,
        port=args.port,
        log_level=args.log_level,
    )
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    db = Database(settings.resolved_database_url)
    try:
        migrate.upgrade(db)
        first = initialise(db, owner_email=settings.owner_email)
        if first is None:
            sys.stderr.write("bench.server: the database is not empty; give it a fresh one\n")
            return 2
        sizes = [int(size) for size in args.seed_board.split(",") if size.strip()]
        owner = person_actor(first.owner)
        board = seed_board(db, owner, sizes, analyze=args.analyze) if sizes else []
        agents = [
            issue_token(
                db, owner, kind="agent", scopes=["read", "tasks.manage"],
                project=DEMO_PROJECT_KEY, name=f"bench agent {n}",
            ).secret
            for n in range(args.agent_tokens)
        ]  # fmt: skip
        write_private(
            args.info_file or settings.data_dir / "bench-info.json",
            {
                "token": first.token.secret,
                "project": DEMO_PROJECT_KEY,
                "projectId": first.project.id,
                "database": db.dialect,
                "pid": os.getpid(),
                "board": [asdict(project) for project in board],
                "agents": agents,
            },
        )
        app = create_app(settings, database=db, catalogue=bench_catalogue())
        config = uvicorn.Config(
            app,
            host=settings.host,
            port=settings.port,
            log_level=settings.log_level,
            access_log=False,
            lifespan="on",
            server_header=False,
        )
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, _exit_after_graceful_shutdown)
        uvicorn.Server(config).run()
    finally:
        db.dispose()
    return 0


def main(argv: list[str] | None = None) -> None:
    sys.exit(serve(parse_args(argv)))


if __name__ == "__main__":
    main()
