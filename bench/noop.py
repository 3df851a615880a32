"""The no-op tool the benchmark measures real tools against, and the catalogue that adds it."""

from __future__ import annotations

from crewboard.contract.args import Args
from crewboard.contract.catalogue import Catalogue, default_catalogue
from crewboard.contract.operation import Call, Operation
from crewboard.contract.reply import Reply
from crewboard.domain.identity.access import Toolset

NOOP_NAME = "bench_noop"


class NoopArgs(Args):
    """No arguments at all."""


def run_noop(_call: Call, _args: NoopArgs) -> Reply:
    """Touch nothing: no database, no service; just the MCP path around a tool."""
    return Reply({})


NOOP = Operation(
    name=NOOP_NAME,
    title="Benchmark no-op",
    description="Does nothing and answers {}. Served only by the benchmark server.",
    args=NoopArgs,
    toolset=Toolset.BOARD,
    run=run_noop,
)


def bench_catalogue() -> Catalogue:
    """Every tool Crewboard serves, then the no-op."""
    return Catalogue([*default_catalogue(), NOOP])


def production_tool_names() -> list[str]:
    """The names of the tools a real server serves, in catalogue order (no no-op)."""
    return [tool.name for tool in default_catalogue()]
