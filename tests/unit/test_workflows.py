"""The workflows shipped as data (services/sessions/workflows/*.toml): each loads with its
fields, aliases (the reference's ids) name their workflow, a wrong mode is refused naming what
the mode accepts, and the layouts' paths and next feature number."""

from __future__ import annotations

import pytest

from crewboard.domain.files import normalise_path
from crewboard.domain.sessions import Language, Mode
from crewboard.errors import ErrorCode
from crewboard.services.sessions.context import next_feature_number
from crewboard.services.sessions.workflows import check_workflow, find_workflow, workflows
from tests.support.errors import refused

# id → (mode, default, reads_code, aliases)
SHIPPED = {
    "crewboard-greenfield-v1": (Mode.GENERATE, True, False, ("myspec-greenfield-v1",)),
    "crewboard-quick-v1": (Mode.GENERATE, False, False, ()),
    "crewboard-brownfield-v1": (Mode.GENERATE, False, True, ("myspec-brownfield-v1",)),
    "speckit-greenfield-v1": (Mode.GENERATE, False, False, ()),
    "openspec-brownfield-v1": (Mode.GENERATE, False, True, ()),
    "crewboard-edit-v1": (Mode.EDIT, True, False, ("myspec-edit-v1",)),
    "crewboard-edit-brownfield-v1": (Mode.EDIT, False, True, ("myspec-edit-brownfield-v1",)),
}


def test_every_shipped_workflow_loads_with_its_fields() -> None:
    found = workflows()
    assert set(found) == set(SHIPPED)
    for ident, (mode, default, reads_code, aliases) in SHIPPED.items():
        flow = found[ident]
        assert (flow.mode, flow.default, flow.reads_code, flow.aliases) == (
            mode, default, reads_code, aliases,
        )  # fmt: skip
        assert flow.name
        assert flow.description
        assert flow.steps.strip()
        view = flow.view()
        assert view["readsCode"] is reads_code
        assert view["aliases"] == list(aliases)
        prompt = flow.system_prompt(Language.EN)
        assert flow.steps.strip() in prompt
        assert "<spec-file path=" in prompt


def test_each_mode_has_exactly_one_default_and_no_name_is_taken_twice() -> None:
    for mode in Mode:
        assert sum(w.default for w in workflows().values() if w.mode is mode) == 1
    names = [name for w in workflows().values() for name in (w.id, *w.aliases)]
    assert len(names) == len(set(names))


def test_the_layout_workflows_carry_their_context_keys() -> None:
    assert workflows()["speckit-greenfield-v1"].next_number_in == "specs"
    assert workflows()["openspec-brownfield-v1"].context_folders == ("openspec/specs",)
    assert all(
        w.next_number_in is None for w in workflows().values() if w.id != "speckit-greenfield-v1"
    )


@pytest.mark.parametrize(
    ("alias", "mode", "ident"),
    [
        ("myspec-greenfield-v1", Mode.GENERATE, "crewboard-greenfield-v1"),
        ("myspec-brownfield-v1", Mode.GENERATE, "crewboard-brownfield-v1"),
        ("myspec-edit-v1", Mode.EDIT, "crewboard-edit-v1"),
        ("myspec-edit-brownfield-v1", Mode.EDIT, "crewboard-edit-brownfield-v1"),
    ],
)
def test_an_alias_names_its_workflow_whose_own_id_is_kept(
    alias: str, mode: Mode, ident: str
) -> None:
    assert check_workflow(alias, mode).id == ident
    found = find_workflow(alias)
    assert found is not None
    assert found.id == ident
    assert check_workflow(ident, mode).id == ident


def test_an_alias_of_the_other_mode_is_refused_naming_the_ids_and_aliases_of_the_mode() -> None:
    error = refused(ErrorCode.VALIDATION, check_workflow, "myspec-edit-v1", Mode.GENERATE)
    assert error.details["field"] == "workflowId"
    accepted = error.details["accepted"]
    assert "myspec-greenfield-v1" in accepted
    assert "crewboard-brownfield-v1" in accepted
    assert "speckit-greenfield-v1" in accepted
    assert "openspec-brownfield-v1" in accepted
    assert "myspec-edit-v1" not in accepted
    assert "crewboard-edit-v1" not in accepted
    assert "myspec-edit-v1" in error.message


def test_an_unknown_id_is_refused_naming_the_ids_and_aliases_of_the_mode() -> None:
    error = refused(ErrorCode.VALIDATION, check_workflow, "nope-v1", Mode.EDIT)
    assert error.details["field"] == "workflowId"
    assert sorted(error.details["accepted"]) == [
        "crewboard-edit-brownfield-v1", "crewboard-edit-v1",
        "myspec-edit-brownfield-v1", "myspec-edit-v1",
    ]  # fmt: skip


def test_no_workflow_named_gives_the_mode_s_default() -> None:
    assert check_workflow(None, Mode.GENERATE).id == "crewboard-greenfield-v1"
    assert check_workflow(None, Mode.EDIT).id == "crewboard-edit-v1"


@pytest.mark.parametrize(
    "path",
    [
        "specs/001-user-login/spec.md",
        "specs/012-invoice-export/plan.md",
        "specs/012-invoice-export/tasks.md",
        "openspec/changes/add-two-factor-auth/proposal.md",
        "openspec/changes/add-two-factor-auth/tasks.md",
        "openspec/changes/add-two-factor-auth/specs/auth/spec.md",
    ],
)
def test_the_layouts_paths_are_stored_as_written(path: str) -> None:
    assert normalise_path(path) == path


@pytest.mark.parametrize(
    ("paths", "number"),
    [
        ([], 1),
        (["specs/001-x/spec.md"], 2),
        (["specs/001-x/spec.md", "specs/009-y/plan.md", "specs/003-z/tasks.md"], 10),
        (["specs/0999-big/spec.md"], 1000),
        # not a numbered feature folder right under specs/
        (["specs/export/spec.md", "specs/42-short/spec.md", "specs/007.md"], 1),
        (["specs/a/004-deeper/spec.md", "docs/005-other/spec.md", "specs/006-x"], 1),
    ],
)
def test_the_next_feature_number_is_one_past_the_highest_numbered_folder(
    paths: list[str], number: int
) -> None:
    assert next_feature_number(paths, "specs") == number
