"""The tool catalogue: each tool's name, arguments, scope, toolset, annotations and handler.

The order here is the order `tools/list` shows. A door asks `visible_tools(actor, ...)` for
what a caller may see, and `find_tool(name)` to run one.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from crewboard.contract import memory, stream_tokens
from crewboard.contract.artifacts import artifacts
from crewboard.contract.board import batch as task_batch
from crewboard.contract.board import claims as task_claims
from crewboard.contract.board import notes as task_notes
from crewboard.contract.board import repos, summary, tasks, updates, week
from crewboard.contract.github import settings as github
from crewboard.contract.handoffs import handoffs
from crewboard.contract.operation import Operation
from crewboard.contract.projects import projects, state, team
from crewboard.contract.review import activity, proposals
from crewboard.contract.review import drafts as review
from crewboard.contract.sessions import sessions as spec_sessions
from crewboard.contract.specs import attachments
from crewboard.contract.specs import comments as spec_comments
from crewboard.contract.specs import files as spec_files
from crewboard.contract.webhooks import webhooks
from crewboard.domain.identity.access import Role, Toolset
from crewboard.domain.identity.records import Actor
from crewboard.services.identity.access import limit_of

# Names the reference products give a tool we serve under another name. A call by one of them
# runs our tool; `tools/list` shows only our name (docs/agents.md, "Arguments every tool shares", lists these).
TOOL_ALIASES: dict[str, str] = {
    "list_spec_file": "list_spec_files",  # MySpec
    "list_task_assignees": "list_team",  # MySpec: list_team answers the people and roles
    "get_task_context": "get_task",  # Pencil: get_task carries the plan and checklist
}


class Catalogue:
    """An ordered set of tools; the order is the order `tools/list` shows."""

    def __init__(self, tools: Iterable[Operation], aliases: dict[str, str] | None = None) -> None:
        self._tools: dict[str, Operation] = {}
        for tool in tools:
            if tool.name in self._tools:
                raise ValueError(f"tool {tool.name} is in the catalogue twice")
            self._tools[tool.name] = tool
        # An alias of a tool this catalogue does not hold (a test's smaller catalogue) is left
        # out; an alias shadowing a real name would hide that tool.
        self.aliases = {
            alias: name
            for alias, name in (TOOL_ALIASES if aliases is None else aliases).items()
            if name in self._tools and alias not in self._tools
        }

    def __iter__(self) -> Iterator[Operation]:
        return iter(self._tools.values())

    @property
    def names(self) -> frozenset[str]:
        return frozenset(self._tools)

    def find(self, name: str) -> Operation | None:
        """The tool called `name`, or the tool a reference product's name for it stands for."""
        return self._tools.get(name) or self._tools.get(self.aliases.get(name, ""))

    def visible(
        self,
        actor: Actor,
        role: Role | None,
        *,
        toolsets: Iterable[Toolset] | None = None,
        names: Iterable[str] | None = None,
    ) -> list[Operation]:
        """The tools a caller is shown: what its scopes and its highest project role (`role`,
        None when it has no project) let it use, in the toolsets it asked for.

        `toolsets` None means the token's own list, or DEFAULT_TOOLSETS when it names none.
        `names` narrows further to those tools.
        """
        chosen = set(toolsets) if toolsets is not None else set(default_toolsets(actor))
        wanted = set(names) if names is not None else None
        return [
            tool
            for tool in self
            if tool.toolset in chosen
            and (wanted is None or tool.name in wanted)
            and usable(tool, actor, role)
        ]


# An agent's whole loop: find, claim, read, plan, note and hand in a task, and read the
# project's memory. Others (review, planning, repos, specs, team, admin, ...) are asked for
# by toolset (token setting or X-MCP-Toolsets).
DEFAULT_TOOLSETS: tuple[Toolset, ...] = (Toolset.BOARD, Toolset.MEMORY)
# What a token naming no toolsets gets, as the token form, the CLI and docs/clients.md say it.
DEFAULT_SET_WORDS = (
    f"the default set, the {' and '.join(DEFAULT_TOOLSETS)} toolsets: find, claim, read, plan, "
    "note and hand in tasks, check in for what changed, and read the project's memory"
)


def toolset_hints(catalogue: Catalogue) -> dict[Toolset, str]:
    """What each toolset holds, in a few true words from the catalogue: how many tools, the
    scopes its changing tools need, and whether agent tokens may use it."""
    hints: dict[Toolset, str] = {}
    for toolset in Toolset:
        tools = [t for t in catalogue if t.toolset is toolset]
        needs = sorted({str(s) for t in tools for s in t.needs} - {"read"})
        words = f"{len(tools)} tool{'s' if len(tools) != 1 else ''}"
        if needs:
            words += f"; changes need {', '.join(needs)}"
        if tools and all(t.people_only for t in tools):
            words += "; people's tokens only"
        hints[toolset] = words
    return hints


def default_toolsets(actor: Actor) -> tuple[Toolset, ...]:
    """The toolsets a caller sees when its request names none: its token's, else the default."""
    if actor.token is not None and actor.token.toolsets:
        return actor.token.toolsets
    return DEFAULT_TOOLSETS


def usable(tool: Operation, actor: Actor, role: Role | None) -> bool:
    """Whether the caller could use `tool` at all: its scopes, who it is (a tool speaking in a
    person's name refuses agent tokens), and its role on some project (a write that reaches
    past every project, creating one, needs an unlimited person)."""
    if not tool.needs <= actor.scopes or (tool.people_only and actor.is_agent):
        return False
    least = tool.least_role
    if least is None:
        return tool.read_only or limit_of(actor) is None
    return role is not None and role.includes(least)


def default_catalogue() -> Catalogue:
    """Every tool Crewboard serves, in catalogue order."""

    return Catalogue(
        [
            *projects.OPERATIONS,
            *state.OPERATIONS,
            *team.OPERATIONS,
            *tasks.OPERATIONS,
            *task_claims.OPERATIONS,
            *updates.OPERATIONS,
            *task_batch.OPERATIONS,
            *week.OPERATIONS,
            *summary.OPERATIONS,
            *task_notes.OPERATIONS,
            *repos.OPERATIONS,
            *review.OPERATIONS,
            *proposals.OPERATIONS,
            *memory.OPERATIONS,
            *activity.OPERATIONS,
            *spec_files.OPERATIONS,
            *attachments.OPERATIONS,
            *spec_comments.OPERATIONS,
            *spec_sessions.OPERATIONS,
            *artifacts.OPERATIONS,
            *handoffs.OPERATIONS,
            *stream_tokens.OPERATIONS,
            *webhooks.OPERATIONS,
            *github.OPERATIONS,
        ]
    )
