"""The shape of the `run` fixture: the `crewboard` command run in-process."""

from __future__ import annotations

from collections.abc import Callable

from click.testing import Result

RunCli = Callable[..., Result]
