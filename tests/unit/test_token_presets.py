"""Token presets (issue 38): each is a kind, scopes and toolsets that work together, and the
form's hint on toolsets is drawn from the catalogue, so it stays true."""

from __future__ import annotations

from crewboard.contract.catalogue import default_catalogue, toolset_hints
from crewboard.domain.identity.access import Scope, TokenKind, Toolset
from crewboard.domain.identity.presets import DEFAULT_PRESET, TOKEN_PRESETS, preset_named


def test_the_default_preset_is_the_board_and_review_agent_and_can_hand_in() -> None:
    assert DEFAULT_PRESET.label == "Agent: board and review"
    assert DEFAULT_PRESET.kind is TokenKind.AGENT
    assert {Scope.TASKS_MANAGE, Scope.DRAFTS_CREATE} <= DEFAULT_PRESET.scopes
    tools = {t.name for t in default_catalogue() if t.toolset in DEFAULT_PRESET.toolsets}
    assert {"claim_next_task", "submit_result", "create_draft", "get_project_memory"} <= tools


def test_every_preset_can_use_every_toolset_it_names_and_each_changing_tool_of_its_scopes() -> None:
    catalogue = list(default_catalogue())
    labels = {p.label for p in TOKEN_PRESETS}
    assert {"Agent: board and review", "Agent: planning", "Read only"} <= labels
    for preset in TOKEN_PRESETS:
        assert Scope.READ in preset.scopes, preset.id
        for toolset in preset.toolsets:
            usable = [
                t for t in catalogue
                if t.toolset is toolset and t.needs <= preset.scopes
                and not (t.people_only and preset.kind is TokenKind.AGENT)
            ]  # fmt: skip
            assert usable, f"{preset.id} names {toolset} but could use none of its tools"
        # Each scope a preset grants is needed by some tool it shows (no idle scopes).
        for scope in preset.scopes - {Scope.READ}:
            assert any(scope in t.needs for t in catalogue if t.toolset in preset.toolsets), (
                f"{preset.id} grants {scope} that none of its toolsets use"
            )


def test_read_only_changes_nothing_and_unknown_preset_is_custom() -> None:
    read_only = preset_named("read-only")
    assert read_only is not None
    assert read_only.scopes == {Scope.READ}
    assert preset_named("custom") is None


def test_toolset_hints_say_how_many_tools_and_what_scopes_changes_need() -> None:
    hints = toolset_hints(default_catalogue())
    assert set(hints) == set(Toolset)
    board = [t for t in default_catalogue() if t.toolset is Toolset.BOARD]
    assert hints[Toolset.BOARD].startswith(f"{len(board)} tools; changes need ")
    assert "drafts.create" in hints[Toolset.BOARD]
    assert hints[Toolset.MEMORY] == "1 tool"
    assert "people's tokens only" in hints[Toolset.HANDOFFS]
