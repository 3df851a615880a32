"""The stylesheet's colours against WCAG, in the light scheme and in dark mode: the focus ring
stands out from every surface it is drawn on (non-text contrast ≥3:1), body, muted and link
text read on them (≥4.5:1)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

CSS = (Path(__file__).parents[2] / "src/crewboard/web/static/app.css").read_text()
DARK_AT = CSS.index("@media (prefers-color-scheme: dark)")
SCHEMES = {"light": CSS[:DARK_AT], "dark": CSS[DARK_AT:]}
SURFACES = ("--bg", "--panel", "--column-bg", "--field-bg")


def variable(name: str, scheme: str = "light") -> str:
    """A colour variable as the scheme sets it (dark mode sets every one the light one does)."""
    found = re.search(rf"{name}:\s*(#[0-9a-fA-F]{{6}})", SCHEMES[scheme])
    assert found is not None, f"{name} in {scheme}"
    return found.group(1)


def luminance(hex_colour: str) -> float:
    def channel(value: int) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast(a: str, b: str) -> float:
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_the_focus_ring_is_drawn_in_the_focus_colour() -> None:
    rule = re.search(r":focus-visible\s*\{([^}]*)\}", CSS)
    assert rule is not None
    assert "var(--focus)" in rule.group(1)


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("surface", SURFACES)
def test_the_focus_ring_has_3_to_1_against_the_surfaces(surface: str, scheme: str) -> None:
    assert contrast(variable("--focus", scheme), variable(surface, scheme)) >= 3.0


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("ink", ["--ink", "--muted", "--accent"])
@pytest.mark.parametrize("surface", SURFACES)
def test_text_colours_have_4_5_to_1_against_the_surfaces(
    ink: str, surface: str, scheme: str
) -> None:
    assert contrast(variable(ink, scheme), variable(surface, scheme)) >= 4.5


@pytest.mark.parametrize(
    ("ink", "ground"),
    [
        ("--accent-ink", "--accent"),  # primary buttons, "new" badges
        ("--ok", "--ok-bg"),
        ("--bad", "--bad-bg"),
        ("--warn", "--warn-bg"),
        ("--muted", "--badge-bg"),
        ("--mark-ink", "--mark-bg"),
        ("--config-ink", "--config-bg"),
        ("--accent", "--current"),  # the current page in the header
    ],
)
@pytest.mark.parametrize("scheme", SCHEMES)
def test_paired_colours_read_in_both_schemes(ink: str, ground: str, scheme: str) -> None:
    assert contrast(variable(ink, scheme), variable(ground, scheme)) >= 4.5


def test_dark_mode_sets_every_colour_the_light_scheme_sets() -> None:
    light = set(re.findall(r"(--[a-z-]+):\s*(?:#|rgba)", SCHEMES["light"]))
    dark = set(re.findall(r"(--[a-z-]+):\s*(?:#|rgba)", SCHEMES["dark"]))
    assert light - dark == set()
