"""The tool catalogue: each tool's name, arguments, scope, toolset, annotations and handler.

The order here is the order `tools/list` shows. A door asks `visible_tools(actor, ...)` for
what a caller may see, and `find_tool(name)` to run one.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from crewboard.domain.identity.access import Toolset
from crewboard.domain.models import Actor
from crewboard.mcp.tooldef import ToolDef
from crewboard.mcp.tools import memory
from crewboard.mcp.tools.board import batch as task_batch
from crewboard.mcp.tools.board import notes as task_notes
from crewboard.mcp.tools.board import repos, tasks, week
from crewboard.mcp.tools.projects import projects, state, team
from crewboard.mcp.tools.review import activity, proposals
from crewboard.mcp.tools.review import drafts as review


class Catalogue:
    """An ordered set of tools; the order is the order `tools/list` shows."""

    def __init__(self, tools: Iterable[ToolDef]) -> None:
        self._tools: dict[str, ToolDef] = {}
        for tool in tools:
            if tool.name in self._tools:
                raise ValueError(f"tool {tool.name} is in the catalogue twice")
            self._tools[tool.name] = tool

    def __iter__(self) -> Iterator[ToolDef]:
        return iter(self._tools.values())

    @property
    def names(self) -> frozenset[str]:
        return frozenset(self._tools)

    def find(self, name: str) -> ToolDef | None:
        return self._tools.get(name)

    def visible(
        self,
        actor: Actor,
        *,
        toolsets: Iterable[Toolset] | None = None,
        names: Iterable[str] | None = None,
    ) -> list[ToolDef]:
        """The tools a caller is shown: those its scopes allow, narrowed by toolsets and names.

        `toolsets` None means the token's own default list (or every toolset when it has none).
        """
        chosen = set(toolsets) if toolsets is not None else set(_token_toolsets(actor))
        wanted = set(names) if names is not None else None
        return [
            tool
            for tool in self
            if tool.needs <= actor.scopes
            and (not chosen or tool.toolset in chosen)
            and (wanted is None or tool.name in wanted)
        ]


def _token_toolsets(actor: Actor) -> tuple[Toolset, ...]:
    return actor.token.toolsets if actor.token is not None else ()


def default_catalogue() -> Catalogue:
    """Every tool Crewboard serves, in catalogue order."""

    return Catalogue(
        [
            *projects.TOOLS,
            *state.TOOLS,
            *team.TOOLS,
            *tasks.TOOLS,
            *task_batch.TOOLS,
            *week.TOOLS,
            *task_notes.TOOLS,
            *repos.TOOLS,
            *review.TOOLS,
            *proposals.TOOLS,
            *memory.TOOLS,
            *activity.TOOLS,
        ]
    )
