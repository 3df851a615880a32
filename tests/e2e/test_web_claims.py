"""Breaking a claim from the task page over real HTTP: a page read before the claim changed
breaks nothing, a reader may not break one, and the history says each step."""

from __future__ import annotations

import pytest

from crewboard.domain.identity.records import User
from crewboard.services.board import claims, tasks
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.services.projects.projects import set_project_member
from crewboard.storage.database import Database
from tests.e2e.test_web_task_edit import flash_after, history
from tests.support.factories import make_project, make_user
from tests.support.web import post_form, sign_in

PAGE = "/p/CRW/tasks/CRW-1"
BREAK = "/p/CRW/tasks/CRW-1/claim/break"


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "owner@example.com", is_owner=True)
    make_project(db, user, "CRW")
    tasks.create_task(
        db, person_actor(user), project="CRW", workspace_id=None, idempotency_key="one",
        title="One", status="ready_for_ai",
    )  # fmt: skip
    return user


def claim_as_agent(db: Database, owner: User) -> int:
    """An agent token named "builder" claims CRW-1; the fence."""
    issued = tokens.issue_token(
        db, person_actor(owner), kind="agent", scopes=["read", "tasks.manage"], project="CRW",
        name="builder",
    )  # fmt: skip
    agent = tokens.authenticate_token(db, issued.secret)
    return claims.claim_task(db, agent, task="CRW-1", workspace_id=None).claim.fence


def test_a_stale_fence_breaks_nothing_a_reader_is_refused_and_the_history_says_it(
    db: Database, url: str, owner: User
) -> None:
    fence = claim_as_agent(db, owner)
    reader = make_user(db, "reader@example.com")
    set_project_member(db, person_actor(owner), project="CRW", email=reader.email, role="read")
    client, other = sign_in(url, owner.email), sign_in(url, reader.email)
    try:
        assert "Break claim" not in other.get(PAGE).text
        refused = flash_after(other, post_form(other, BREAK, {"fence": str(fence)}))
        assert refused.startswith("error: The claim on CRW-1 was not broken:")

        page = client.get(PAGE)
        assert "builder" in page.text
        assert "Break claim" in page.text
        stale = flash_after(client, post_form(client, BREAK, {"fence": str(fence + 1)}))
        assert stale.startswith("error: The claim on CRW-1 was not broken:")
        assert "with that fence" in stale

        done = flash_after(client, post_form(client, BREAK, {"fence": str(fence)}))
        assert done.startswith("notice: Claim on CRW-1 broken")
        said = " ".join(history(client.get(PAGE)).split())
        assert "Claimed until" in said
        assert "Broke the claim of builder; the task is free again" in said
        again = flash_after(client, post_form(client, BREAK, {"fence": str(fence)}))
        assert again.startswith("error: The claim on CRW-1 was not broken:")
    finally:
        client.close()
        other.close()
