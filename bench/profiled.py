"""`python -m bench.profiled OUT.prof serve|mcp ...`: a `crewboard` command under cProfile.

cProfile sees only the thread that enables it, and Crewboard runs its tools and token checks
in anyio's worker threads: so each function handed to `anyio.to_thread.run_sync` is profiled
too, on its own thread's profiler, and every profile is merged into OUT when the command
ends (SIGTERM for `serve`, stdin closing for `mcp`). `python -m bench doors --profile DIR`
runs both servers this way. The figures are inflated by cProfile's own cost per call; read
them as shares, not as milliseconds.
"""

from __future__ import annotations

import cProfile
import pstats
import sys
import threading
from typing import Any

from anyio import to_thread

PROFILES: list[cProfile.Profile] = []
_OWN = threading.local()


def _thread_profile() -> cProfile.Profile:
    found: cProfile.Profile | None = getattr(_OWN, "profile", None)
    if found is None:
        found = _OWN.profile = cProfile.Profile()
        PROFILES.append(found)
    return found


def _install() -> None:
    original = to_thread.run_sync

    async def run_sync(func: Any, *args: Any, **kwargs: Any) -> Any:
        def profiled(*inner: Any) -> Any:
            profile = _thread_profile()
            profile.enable()
            try:
                return func(*inner)
            finally:
                profile.disable()

        return await original(profiled, *args, **kwargs)

    to_thread.run_sync = run_sync  # type: ignore[assignment]


def main() -> None:
    out, command = sys.argv[1], sys.argv[2:]
    _install()
    from crewboard.cli.main import cli  # noqa: PLC0415 - after the patch

    main_profile = cProfile.Profile()
    PROFILES.append(main_profile)
    main_profile.enable()
    try:
        cli.main(args=command, prog_name="crewboard", standalone_mode=False)
    except SystemExit:
        pass
    finally:
        main_profile.disable()
        stats = pstats.Stats(main_profile)
        for profile in PROFILES[1:]:
            stats.add(profile)
        stats.dump_stats(out)


if __name__ == "__main__":
    main()
