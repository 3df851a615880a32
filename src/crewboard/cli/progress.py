"""Progress bars for long commands (export, import, backup, restore, the benchmark seeders).

A bar is drawn on standard error, and only when standard error is a terminal and the command
was not asked for `--json`: a script reading the output, a pipe or a log file sees none of it.
Services report what they did through a plain callback (`advance(step, count)`) and know
nothing of terminals; this module turns those calls into click's progress bars, one per step.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import click

Advance = Callable[[str, int], None]
"""`advance(step, count)`: `count` more items of `step` (a short label, e.g. "tasks") done."""


def wanted(as_json: bool) -> bool:
    """Whether to draw bars: never for `--json`, never when standard error is not a terminal."""
    return not as_json and sys.stderr.isatty()


@contextmanager
def bars(enabled: bool, totals: dict[str, int] | None = None) -> Iterator[Advance]:
    """An `advance` callback drawing one bar per step, each closed when the next one starts
    and the last when the block ends. `totals` gives a step's length when it is known ahead;
    a step without one shows a running count."""
    if not enabled:
        yield _ignore
        return
    known = totals or {}
    current: dict[str, Any] = {}

    def advance(step: str, count: int) -> None:
        if current.get("step") != step:
            _close(current)
            length = known.get(step)
            bar = click.progressbar(
                _running() if length is None else None,  # no known length: a running count
                length=length,
                label=f"{step:<24}",
                file=sys.stderr,
                show_pos=True,
                show_eta=step in known,
            )
            bar.__enter__()
            current.update(step=step, bar=bar)
        current["bar"].update(count)

    try:
        yield advance
    finally:
        _close(current)


def _close(current: dict[str, Any]) -> None:
    bar = current.pop("bar", None)
    current.pop("step", None)
    if bar is not None:
        bar.__exit__(None, None, None)


def _running() -> Iterator[int]:
    """Nothing to iterate and no length hint: click then shows a count, not a bar of 0."""
    yield from ()


def _ignore(step: str, count: int) -> None:
    """No bar: the callback does nothing."""
