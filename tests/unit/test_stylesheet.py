"""The stylesheet's colours against WCAG: the focus ring stands out from every surface it is
drawn on (non-text contrast ≥3:1), body and muted text read on them (≥4.5:1)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

CSS = (Path(__file__).parents[2] / "src/crewboard/web/static/app.css").read_text()
SURFACES = ("--bg", "--panel")


def variable(name: str) -> str:
    found = re.search(rf"{name}:\s*(#[0-9a-fA-F]{{6}})", CSS)
    assert found is not None, name
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


@pytest.mark.parametrize("surface", SURFACES)
def test_the_focus_ring_has_3_to_1_against_the_surfaces(surface: str) -> None:
    assert contrast(variable("--focus"), variable(surface)) >= 3.0


@pytest.mark.parametrize("ink", ["--ink", "--muted", "--accent"])
@pytest.mark.parametrize("surface", SURFACES)
def test_text_colours_have_4_5_to_1_against_the_surfaces(ink: str, surface: str) -> None:
    assert contrast(variable(ink), variable(surface)) >= 4.5
