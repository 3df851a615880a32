"""The scope × role matrix, on the pure rule every service uses."""

from __future__ import annotations

import itertools

import pytest

from crewboard.domain.identity.access import (
    ALL_SCOPES,
    Role,
    Scope,
    lower_role,
    missing_permission,
    parse_enum_list,
)
from crewboard.errors import ValidationFailed


@pytest.mark.parametrize(
    ("held", "needed", "allowed"),
    [(h, n, h.rank >= n.rank) for h, n in itertools.product(Role, Role)],
)
def test_role_includes_every_lower_role(held: Role, needed: Role, allowed: bool) -> None:
    assert held.includes(needed) is allowed


@pytest.mark.parametrize(
    ("need_scope", "need_role", "scope_held", "role_held"),
    list(itertools.product(Scope, Role, Scope, Role)),
)
def test_permission_needs_read_plus_the_scope_and_at_least_the_role(
    need_scope: Scope, need_role: Role, scope_held: Scope, role_held: Role
) -> None:
    scopes = frozenset({Scope.READ, scope_held})
    missing = missing_permission(scopes, role_held, need_scope, need_role)
    expected_allowed = need_scope in scopes and role_held.includes(need_role)
    assert (missing is None) is expected_allowed
    if need_scope not in scopes:
        assert missing is not None
        assert f"needs the {need_scope} scope" in missing
    elif not role_held.includes(need_role):
        assert missing == f"needs the {need_role} role on the project; you have {role_held}"


def test_every_action_needs_read_even_with_its_own_scope() -> None:
    missing = missing_permission(
        frozenset({Scope.TASKS_MANAGE}), Role.ADMIN, Scope.TASKS_MANAGE, Role.WRITE
    )
    assert missing is not None
    assert "read scope" in missing


def test_all_scopes_and_admin_allow_everything() -> None:
    for scope, role in itertools.product(Scope, Role):
        assert missing_permission(ALL_SCOPES, Role.ADMIN, scope, role) is None


def test_token_role_cap_lowers_but_never_raises_the_member_role() -> None:
    assert lower_role(Role.ADMIN, Role.READ) is Role.READ
    assert lower_role(Role.READ, Role.ADMIN) is Role.READ
    assert lower_role(Role.WRITE, None) is Role.WRITE


def test_unknown_scope_is_refused_with_the_accepted_ones() -> None:
    with pytest.raises(ValidationFailed) as caught:
        parse_enum_list(["read", "tasks.write"], Scope, "scopes")
    assert caught.value.details["field"] == "scopes"
    assert caught.value.details["accepted"] == [s.value for s in Scope]
    assert "tasks.write" in caught.value.message
