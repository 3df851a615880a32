"""Token presets: the usual kinds of token, each a kind, scopes and toolsets that work together,
so a new token starts as something useful (an agent that can work the board and hand in), not
silently read-only. The token form offers them; they are defined here once."""

from __future__ import annotations

from dataclasses import dataclass

from crewboard.domain.identity.access import Scope, TokenKind, Toolset


@dataclass(frozen=True)
class TokenPreset:
    id: str
    label: str
    hint: str
    kind: TokenKind
    scopes: frozenset[Scope]
    toolsets: tuple[Toolset, ...]

    @property
    def needs_project(self) -> bool:
        """An agent token acts in one project's team."""
        return self.kind is TokenKind.AGENT


TOKEN_PRESETS: tuple[TokenPreset, ...] = (
    TokenPreset(
        id="agent-board-review",
        label="Agent: board and review",
        hint="An AI agent that finds, claims and works tasks, comments, hands in its results "
        "for review, messages the team and reads the project's memory.",
        kind=TokenKind.AGENT,
        scopes=frozenset(
            {Scope.READ, Scope.TASKS_MANAGE, Scope.DRAFTS_CREATE, Scope.MESSAGES_WRITE}
        ),
        toolsets=(Toolset.BOARD, Toolset.MEMORY, Toolset.REVIEW),
    ),
    TokenPreset(
        id="agent-planning",
        label="Agent: planning",
        hint="An AI agent that plans: reshapes the board in bulk, proposes tasks, keeps the state "
        "page, and reads and writes spec files.",
        kind=TokenKind.AGENT,
        scopes=frozenset({Scope.READ, Scope.TASKS_MANAGE, Scope.DRAFTS_CREATE, Scope.SPECS_WRITE}),
        toolsets=(Toolset.BOARD, Toolset.MEMORY, Toolset.PLANNING, Toolset.SPECS),
    ),
    TokenPreset(
        id="agent-specs",
        label="Agent: specs and artifacts",
        hint="An AI agent that writes spec files and artifacts and comments on specs.",
        kind=TokenKind.AGENT,
        scopes=frozenset({Scope.READ, Scope.SPECS_WRITE}),
        toolsets=(Toolset.MEMORY, Toolset.SPECS, Toolset.ARTIFACTS),
    ),
    TokenPreset(
        id="personal-full",
        label="Me: my own tools",
        hint="Your own client or script acting as you: everything you can do on your projects "
        "but administering them.",
        kind=TokenKind.PERSONAL,
        scopes=frozenset(
            {
                Scope.READ,
                Scope.TASKS_MANAGE,
                Scope.DRAFTS_CREATE,
                Scope.MESSAGES_WRITE,
                Scope.SPECS_WRITE,
            }
        ),
        toolsets=(
            Toolset.BOARD,
            Toolset.MEMORY,
            Toolset.REVIEW,
            Toolset.PLANNING,
            Toolset.SPECS,
            Toolset.ARTIFACTS,
            Toolset.HANDOFFS,
        ),
    ),
    TokenPreset(
        id="read-only",
        label="Read only",
        hint="Reads tasks, specs, artifacts and memory; changes nothing.",
        kind=TokenKind.PERSONAL,
        scopes=frozenset({Scope.READ}),
        toolsets=(Toolset.BOARD, Toolset.MEMORY, Toolset.SPECS, Toolset.ARTIFACTS),
    ),
)
DEFAULT_PRESET = TOKEN_PRESETS[0]
# For a person with no project yet (an agent token needs one): their own tools.
NO_PROJECT_PRESET = TOKEN_PRESETS[3]


def preset_named(preset_id: str) -> TokenPreset | None:
    """The preset of that id, or None (the form's "custom")."""
    return next((p for p in TOKEN_PRESETS if p.id == preset_id), None)
