"""axe-core's automated accessibility checks, run inside a page from the pinned copy in
tests/support/vendor/ (no download, no CDN).

The script goes in through the DevTools protocol (Playwright's `evaluate`), which the page's
Content-Security-Policy does not govern: the page keeps its strict policy while it is checked.
"""

from __future__ import annotations

import base64
import hashlib
from functools import cache
from pathlib import Path
from typing import Any

AXE_FILE = Path(__file__).parent / "vendor" / "axe-core-4.14.1.min.js"
AXE_SHA256 = "KTSJmUUM3yhJqOcLeRL8LahahJ2jnA0NU5T1HUqe2Vw="  # the package's sri-history.json
BLOCKING = ("serious", "critical")
# The WCAG 2.x A and AA rules and axe's best practices.
RUN_OPTIONS = {
    "runOnly": {
        "type": "tag",
        "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"],
    },
    "resultTypes": ["violations"],
}


@cache
def axe_source() -> str:
    raw = AXE_FILE.read_bytes()
    digest = base64.b64encode(hashlib.sha256(raw).digest()).decode()
    if digest != AXE_SHA256:
        raise AssertionError(f"{AXE_FILE.name} is not the pinned axe-core build ({digest})")
    return raw.decode()


def preload(context: Any) -> None:
    """Have axe-core in every top-level document the browser context opens, from the start.

    `violations` then finds it there instead of sending the 650 KB script over the DevTools
    protocol after each navigation, which cost a tenth of a second a page in a test that
    checks 87 of them. Like the copy `violations` sends, this one is outside the page's
    Content-Security-Policy, and frames get none (the top document's run looks into them).
    """
    context.add_init_script(script=f"if (window === window.top) {{\n{axe_source()}\n}}")


def violations(page: Any, impacts: tuple[str, ...] = BLOCKING) -> list[dict[str, Any]]:
    """The page's axe-core violations of these impacts (serious and critical by default)."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.evaluate(axe_source())
    found = page.evaluate("options => axe.run(document, options)", RUN_OPTIONS)
    return [v for v in found["violations"] if v.get("impact") in impacts]


def describe(found: list[dict[str, Any]]) -> str:
    """Violations as lines a person can act on: rule, impact, help, the first few elements."""
    lines = []
    for v in found:
        targets = ", ".join(" ".join(node["target"]) for node in v["nodes"][:4])
        lines.append(f"{v['id']} ({v['impact']}): {v['help']} — {targets}")
    return "\n".join(lines)
