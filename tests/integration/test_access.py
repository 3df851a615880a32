"""The access module through the services: roles, scopes, token caps, and not-found for no role."""

from __future__ import annotations

import itertools

import pytest

from crewboard.contract.projects import present
from crewboard.domain.identity.access import Role, Scope
from crewboard.errors import NotFound, PermissionDenied, ValidationFailed
from crewboard.services.identity.access import access_project
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support.factories import grant, make_project, make_user, token_actor


@pytest.mark.parametrize(
    ("role", "need_role", "scope", "need_scope"),
    list(
        itertools.product(Role, Role, [Scope.TASKS_MANAGE, Scope.SPECS_WRITE], [Scope.TASKS_MANAGE])
    ),
)
def test_effective_permission_is_token_scopes_intersected_with_project_role(
    db: Database, role: Role, need_role: Role, scope: Scope, need_scope: Scope
) -> None:
    owner = make_user(db, "owner@example.com")
    member = make_user(db, "member@example.com")
    project = make_project(db, owner, "CRW")
    grant(db, owner, project, member, role)
    actor = token_actor(db, member, ["read", scope.value])

    def check() -> None:
        db.read(lambda uow: access_project(uow, actor, "CRW", scope=need_scope, role=need_role))

    if scope is need_scope and role.includes(need_role):
        check()
        return
    with pytest.raises(PermissionDenied) as caught:
        check()
    if scope is not need_scope:
        assert caught.value.details["requiredScope"] == str(need_scope)
        assert f"needs the {need_scope} scope" in caught.value.message
    else:
        assert f"needs the {need_role} role on the project; you have {role}" in caught.value.message


def test_a_project_without_a_role_is_not_found_like_one_that_does_not_exist(db: Database) -> None:
    owner = make_user(db, "owner@example.com")
    stranger = make_user(db, "stranger@example.com")
    project_id = make_project(db, owner, "CRW")
    actor = token_actor(db, stranger, ["read", "projects.admin"])
    errors = []
    for ref in (project_id, "CRW", "prj_doesnotexist", "NOPE"):
        with pytest.raises(NotFound) as caught:
            db.read(lambda uow, ref=ref: access_project(uow, actor, ref))
        errors.append(caught.value)
    assert {type(e) for e in errors} == {NotFound}
    assert all(e.details["resource"] == "project" for e in errors)
    assert present.list_projects(db, actor) == ([], 0)


def test_token_role_cap_lowers_the_effective_role(db: Database) -> None:
    owner = make_user(db, "owner@example.com")
    make_project(db, owner, "CRW")
    capped = token_actor(db, owner, ["read", "tasks.manage"], project="CRW", role="read")
    with pytest.raises(PermissionDenied) as caught:
        db.read(
            lambda uow: access_project(
                uow, capped, "CRW", scope=Scope.TASKS_MANAGE, role=Role.WRITE
            )
        )
    assert caught.value.details["role"] == "read"
    views, _ = present.list_projects(db, capped)
    assert [v["viewerRole"] for v in views] == ["read"]


def test_a_token_bound_to_one_project_cannot_see_the_others(db: Database) -> None:
    owner = make_user(db, "owner@example.com")
    make_project(db, owner, "CRW")
    make_project(db, owner, "OTHER")
    bound = token_actor(db, owner, ["read"], project="CRW")
    with pytest.raises(NotFound):
        db.read(lambda uow: access_project(uow, bound, "OTHER"))
    views, total = present.list_projects(db, bound)
    assert total == 1
    assert [v["key"] for v in views] == ["CRW"]


def test_creating_a_project_needs_projects_admin_and_makes_the_creator_admin(db: Database) -> None:
    user = make_user(db, "ada@example.com")
    reader = token_actor(db, user, ["read", "tasks.manage"])
    with pytest.raises(PermissionDenied) as caught:
        present.create_project(db, reader, workspace_id=None, key="CRW", name="Crew")
    assert caught.value.details["requiredScope"] == "projects.admin"
    admin = token_actor(db, user, ["read", "projects.admin"])
    created = present.create_project(db, admin, workspace_id=None, key="crw", name="Crew")
    assert created.body["project"]["key"] == "CRW"
    assert created.body["project"]["viewerRole"] == "admin"
    assert created.body["project"]["workspaceId"] is None


def test_project_fields_are_checked_with_the_accepted_values(db: Database) -> None:
    actor = person_actor(make_user(db, "ada@example.com"))
    with pytest.raises(ValidationFailed) as caught:
        present.create_project(db, actor, workspace_id=None, key="CRW", name="C", type="bluefield")
    assert caught.value.details == {
        "field": "type",
        "accepted": ["greenfield", "brownfield", "auto"],
    }
    with pytest.raises(ValidationFailed) as status_error:
        present.create_project(db, actor, workspace_id=None, key="CRW", name="C", status="gone")
    assert status_error.value.details["field"] == "status"


def test_member_management_needs_admin_on_the_project(db: Database) -> None:
    owner = make_user(db, "owner@example.com")
    writer = make_user(db, "writer@example.com")
    third = make_user(db, "third@example.com")
    make_project(db, owner, "CRW")
    grant(db, owner, "CRW", writer, Role.WRITE)
    with pytest.raises(PermissionDenied) as caught:
        grant(db, writer, "CRW", third, Role.READ)
    assert "needs the admin role on the project; you have write" in caught.value.message
