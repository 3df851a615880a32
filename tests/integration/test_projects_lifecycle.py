"""Updating, archiving and deleting projects."""

from __future__ import annotations

import pytest

from crewboard.contract.projects import present
from crewboard.domain.identity.access import Role
from crewboard.errors import LimitExceeded, NotFound, PermissionDenied, ValidationFailed
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support.factories import count_rows, grant, make_project, make_user, token_actor


def test_update_changes_only_the_named_fields(db: Database) -> None:
    owner = make_user(db, "owner@example.com")
    make_project(db, owner, "CRW", goal="ship it")
    updated = present.update_project(
        db, person_actor(owner), project="CRW", workspace_id=None, phase="build", status="paused"
    )
    view = updated["project"]
    assert (view["phase"], view["status"], view["goal"]) == ("build", "paused", "ship it")


def test_update_with_nothing_to_change_is_refused(db: Database) -> None:
    owner = make_user(db, "owner@example.com")
    make_project(db, owner, "CRW")
    with pytest.raises(ValidationFailed) as caught:
        present.update_project(db, person_actor(owner), project="CRW", workspace_id=None)
    assert "name" in caught.value.details["accepted"]


def test_update_names_the_wrong_workspace(db: Database) -> None:
    owner = make_user(db, "owner@example.com")
    make_project(db, owner, "CRW")
    with pytest.raises(ValidationFailed) as caught:
        present.update_project(
            db, person_actor(owner), project="CRW", workspace_id="wsp_other", name="X"
        )
    assert caught.value.details["field"] == "workspaceId"
    assert caught.value.details["expected"] is None


def test_update_needs_admin_role_and_projects_admin_scope(db: Database) -> None:
    owner = make_user(db, "owner@example.com")
    writer = make_user(db, "writer@example.com")
    make_project(db, owner, "CRW")
    grant(db, owner, "CRW", writer, Role.WRITE)
    with pytest.raises(PermissionDenied) as role_error:
        present.update_project(db, person_actor(writer), project="CRW", workspace_id=None, name="X")
    assert role_error.value.details["requiredRole"] == "admin"
    no_scope = token_actor(db, owner, ["read", "tasks.manage"])
    with pytest.raises(PermissionDenied) as scope_error:
        present.update_project(db, no_scope, project="CRW", workspace_id=None, name="X")
    assert scope_error.value.details["requiredScope"] == "projects.admin"


def test_update_enforces_limits(db: Database) -> None:
    owner = make_user(db, "owner@example.com")
    make_project(db, owner, "CRW")
    with pytest.raises(LimitExceeded) as caught:
        present.update_project(
            db, person_actor(owner), project="CRW", workspace_id=None, goal="g" * 2001
        )
    assert caught.value.details["limit"] == 2000


def test_archive_and_unarchive_are_idempotent(db: Database) -> None:
    owner = make_user(db, "owner@example.com")
    make_project(db, owner, "CRW")
    actor = person_actor(owner)
    first = present.set_project_archived(db, actor, project="CRW", workspace_id=None, archived=True)
    again = present.set_project_archived(db, actor, project="CRW", workspace_id=None, archived=True)
    assert first["changed"] is True
    assert again["changed"] is False
    assert again["project"]["archived"] is True
    back = present.set_project_archived(db, actor, project="CRW", workspace_id=None, archived=False)
    assert back["project"]["archived"] is False


def test_delete_refuses_an_active_project_and_never_archives_it(db: Database) -> None:
    owner = make_user(db, "owner@example.com")
    make_project(db, owner, "CRW")
    actor = person_actor(owner)
    with pytest.raises(ValidationFailed):
        present.delete_project(db, actor, project="CRW", workspace_id=None)
    assert present.describe_project(db, actor, "CRW")["project"]["archived"] is False
    present.set_project_archived(db, actor, project="CRW", workspace_id=None, archived=True)
    deleted = present.delete_project(db, actor, project="CRW", workspace_id=None)
    assert deleted["deleted"] is True
    with pytest.raises(NotFound):
        present.describe_project(db, actor, "CRW")
    assert count_rows(db, "project_members") == 0
