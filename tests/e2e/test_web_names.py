"""The right names everywhere (issue 38): work a person did through their own token is theirs
("owner via laptop"), an agent's is the agent's, for its person ("night agent (for owner)").
One rule (domain/identity/naming.py) for every page, notification and message; this walks
the pages and notifications where such work shows, over real HTTP."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator

import httpx2
import pytest

from crewboard.contract.board import present_notes
from crewboard.contract.handoffs import present as handoffs_present
from crewboard.domain.handoffs import Bodies
from crewboard.domain.identity.access import Role
from crewboard.domain.identity.naming import name_of, name_parts
from crewboard.domain.identity.records import Actor, User
from crewboard.services.board import notes
from crewboard.services.handoffs import commands as handoffs
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.services.notifications import inbox
from crewboard.services.projects import state
from crewboard.storage.database import Database
from tests.support import spec_calls
from tests.support.factories import grant, make_project, make_task, make_user, token_actor
from tests.support.web import sign_in

PERSON = "owner via laptop"
AGENT = "night agent (for owner)"


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    make_task(db, user, "CRW", "Fix the cart")
    return user


@pytest.fixture
def bo(db: Database, owner: User) -> User:
    user = make_user(db, "bo@example.com")
    grant(db, owner, "CRW", user, Role.WRITE)
    return user


def text_of(page: httpx2.Response) -> str:
    """The page as a person reads it: tags dropped, entities decoded, spaces squeezed."""
    assert page.status_code == 200, page.text[:500]
    body = re.sub(r"<script.*?</script>|<style.*?</style>", " ", page.text, flags=re.S)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", body)).split())


@pytest.fixture
def laptop(db: Database, owner: User) -> Actor:
    return token_actor(db, owner, ["read", "specs.write", "tasks.manage"], name="laptop")


@pytest.fixture
def agent(db: Database, owner: User) -> Actor:
    issued = tokens.issue_token(
        db, person_actor(owner), kind="agent", project="CRW", name="night agent",
        scopes=["read", "specs.write", "tasks.manage", "drafts.create"],
    )  # fmt: skip
    return tokens.authenticate_token(db, issued.secret)


@pytest.fixture
def client(url: str, owner: User) -> Iterator[httpx2.Client]:
    signed_in = sign_in(url, owner.email)
    try:
        yield signed_in
    finally:
        signed_in.close()


def comment(db: Database, actor: Actor, text: str, key: str) -> None:
    notes.post_comment(
        db, actor, task="CRW-1", workspace_id=None, idempotency_key=key, content=text,
        answer=present_notes.comment_answer,
    )  # fmt: skip


def test_the_naming_rule_names_people_their_tokens_and_agents_for_their_person() -> None:
    person = {"kind": "person", "userId": "u1", "displayName": "Ada"}
    assert name_of(person) == "Ada"
    assert name_of({**person, "kind": "personal_token", "tokenName": "laptop"}) == (
        "Ada via laptop"
    )
    agent = {**person, "kind": "agent_token", "tokenName": "night agent"}
    assert name_of(agent) == "night agent (for Ada)"
    assert name_of({**agent, "roleName": "Builder"}) == "Builder (for Ada)"
    assert name_of({"kind": "person", "userId": "u1"}, {"u1": "Ada"}) == "Ada"
    assert name_of(None) == "someone"
    assert name_of({"kind": "system"}) == "Crewboard"
    assert name_parts({**agent, "roleKind": "human"}).human_seat


def test_pages_and_notifications_credit_token_work_to_the_person_or_the_agent(  # noqa: PLR0917 - fixtures
    db: Database, url: str, bo: User, laptop: Actor, agent: Actor, client: httpx2.Client
) -> None:
    for actor, path in ((laptop, "docs/mine.md"), (agent, "docs/its.md")):
        spec_calls.upload_spec_file(
            db, actor, project="CRW", workspace_id=None, path=path, content=b"# Cart\n",
            idempotency_key=None,
        )  # fmt: skip
    comment(db, laptop, "@bo the cart is next", "c1")
    comment(db, agent, "@bo the cart is fixed", "c2")
    made = handoffs.create_handoff(
        db, laptop, project="CRW", workspace_id=None, bodies=Bodies(completed="The cart"),
        recipients=["bo@example.com"], send_notification=True,
        answer=lambda made: handoffs_present.handoff_view(made.read, laptop),
    )  # fmt: skip
    day = made.body["date"]
    state.update_project_state(
        db, laptop, project="CRW", workspace_id=None, content="Cart first.", expected_revision=0
    )
    for path in ("/p/CRW/specs", "/p/CRW/tasks/CRW-1", "/p/CRW/activity"):
        shown = text_of(client.get(path))
        assert PERSON in shown, path
        assert AGENT in shown, path
    assert PERSON in text_of(client.get(f"/p/CRW/handoffs?date={day}"))
    assert f"by {PERSON}" in text_of(client.get("/p/CRW/state"))
    for path in ("/p/CRW/specs", "/p/CRW/tasks/CRW-1", "/p/CRW/state"):
        assert "by laptop" not in text_of(client.get(path)), path

    titles = {n["title"] for n in inbox.list_notifications(db, person_actor(bo))["notifications"]}
    assert f"{PERSON} mentioned you on CRW-1" in titles
    assert f"{AGENT} mentioned you on CRW-1" in titles
    assert f"{PERSON} handed over CRW for {day}" in titles
    as_bo = sign_in(url, bo.email)
    try:
        listed = text_of(as_bo.get("/notifications"))
    finally:
        as_bo.close()
    assert f"{AGENT} mentioned you on CRW-1" in listed
    assert f"{PERSON} handed over CRW" in listed
