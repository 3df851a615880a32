"""The docs site builds with `mkdocs build --strict` (a broken link or anchor, a page outside
the nav, a link out of docs/ fails it), and README.md stays a short front page whose relative
links all land on files of the repository (issue 39)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from crewboard.config import Settings

REPO = Path(__file__).resolve().parents[2]
README_LIMIT = 12 * 1024  # bytes
PICTURE_LIMIT = 150 * 1024  # bytes, each
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def test_the_docs_site_builds_strictly(tmp_path: Path) -> None:
    """About a second: it runs with the unit tests (make docs and .ci/run build it too)."""
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=REPO,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert built.returncode == 0, built.stderr
    assert (tmp_path / "reference" / "settings" / "index.html").is_file()


def test_the_readme_is_at_most_12_kib() -> None:
    size = len((REPO / "README.md").read_bytes())
    assert size <= README_LIMIT, f"README.md is {size} bytes; move detail into docs/"


def test_every_relative_link_in_the_readme_lands_on_a_file() -> None:
    targets = LINK.findall((REPO / "README.md").read_text(encoding="utf-8"))
    local = [t.split("#", 1)[0] for t in targets if not re.match(r"[a-z]+:|#", t)]
    assert "docs/getting-started.md" in local
    missing = [t for t in local if not (REPO / t).is_file()]
    assert missing == []


@pytest.mark.parametrize("name", ["inbox", "board"])
def test_the_readme_pictures_are_small_pngs(name: str) -> None:
    picture = (REPO / "docs" / "images" / f"{name}.png").read_bytes()
    assert picture.startswith(b"\x89PNG\r\n\x1a\n")
    assert len(picture) <= PICTURE_LIMIT


def test_the_settings_page_s_example_file_is_taken_as_it_stands() -> None:
    page = (REPO / "docs" / "reference" / "settings.md").read_text(encoding="utf-8")
    example = re.search(r"```toml\n(.*?)```", page, re.S)
    assert example is not None
    settings = Settings(**tomllib.loads(example[1]))
    assert settings.base_url == "https://crew.example.com"


def test_the_agents_guide_names_every_other_name_a_tool_answers_to() -> None:
    """TOOL_ALIASES is the code's list of the reference products' tool names Crewboard answers
    to; the agents' guide names each with the tool it runs (tools/list shows neither)."""
    from crewboard.contract.catalogue import TOOL_ALIASES  # noqa: PLC0415 - one test's import

    guide = " ".join((REPO / "docs" / "agents.md").read_text(encoding="utf-8").split())
    for other, ours in TOOL_ALIASES.items():
        assert f"`{other}` runs `{ours}`" in guide, f"docs/agents.md: say that {other} runs {ours}"
