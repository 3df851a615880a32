"""Debian's Chromium for the browser suite, driven by Playwright (no downloaded browser)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

REQUIRE_BROWSER_ENV = "CREWBOARD_REQUIRE_BROWSER"
CHROMIUM_ENV = "CREWBOARD_CHROMIUM"
# Flags for a headless run on a machine with no outside network (and as root in CI).
CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-output" / "screenshots"


def chromium_path() -> str | None:
    named = os.environ.get(CHROMIUM_ENV)
    if named:
        return named if Path(named).exists() else None
    return shutil.which("chromium") or (
        "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None
    )


def browser_unavailable_reason() -> str | None:
    if chromium_path() is None:
        return (
            "Chromium is not installed (Debian: apt-get install chromium; or set "
            f"{CHROMIUM_ENV} to its path)"
        )
    try:
        import playwright  # noqa: F401, PLC0415 - only to say whether it is there
    except ImportError:
        return "the playwright package is not installed (make test installs it)"
    return None


def browser_required() -> bool:
    return os.environ.get(REQUIRE_BROWSER_ENV) == "1"
