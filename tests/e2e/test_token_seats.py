"""An agent token's seat through the doors: chosen in the web form and with the CLI's --seat,
shown wherever tokens are listed (web, CLI, REST /me), and stamped on an agent's hand-in over
MCP when the seat's name differs from the token's."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from contextlib import closing

import httpx2
import pytest

from crewboard.contract.projects import present
from crewboard.contract.review.present import draft_read_view
from crewboard.domain.identity.records import User
from crewboard.services.board import tasks
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.services.review import drafts
from crewboard.storage.database import Database
from tests.support.factories import make_project, make_user
from tests.support.mcp_client import body_of, mcp_client
from tests.support.web import post_form, sign_in

SCOPES = ["read", "tasks.manage", "drafts.create"]
SECRET = re.compile(r'<pre class="config" id="token-secret">(cb_[^<]+)</pre>')


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    make_project(db, user, "OPS")
    return user


@pytest.fixture
def seats(db: Database, owner: User) -> dict[str, str]:
    """Two AI seats of CRW and one of OPS, by name."""
    person = person_actor(owner)
    made = [
        present.add_team_role(db, person, project=key, name=name, kind="ai")
        for key, name in (("CRW", "Coder"), ("CRW", "Writer"), ("OPS", "Ops bot"))
    ]
    return {str(m["name"]): str(m["id"]) for m in made}


@pytest.fixture
def client(url: str, owner: User) -> Iterator[httpx2.Client]:
    with closing(sign_in(url, owner.email)) as signed_in:
        yield signed_in


def create_token(client: httpx2.Client, **fields: object) -> httpx2.Response:
    data = {"next": "/settings/tokens", "name": "laptop", "kind": "agent", **fields}
    return post_form(client, "/settings/tokens", data)


def row_of(page: str, token_id: str) -> str:
    found = re.search(rf'<tr data-item tabindex="-1" id="token-{token_id}">(.*?)</tr>', page, re.S)
    assert found is not None, page
    return html.unescape(found.group(1))


def test_the_token_form_offers_each_projects_ai_seats_and_stores_the_chosen_one(
    db: Database, client: httpx2.Client, owner: User, seats: dict[str, str]
) -> None:
    form = client.get("/settings/tokens").text
    for key, name in (("CRW", "Coder"), ("CRW", "Writer"), ("OPS", "Ops bot")):
        assert f'<option value="{seats[name]}" data-project="{key}">{key} · {name}</option>' in (
            form
        )
    made = create_token(client, name="Coder", project="CRW", seat=seats["Writer"])
    assert made.status_code == 200, made.text
    assert "seat Writer" in made.text
    (listed,) = tokens.list_tokens(db, person_actor(owner))
    assert listed.token.seat_id == seats["Writer"]
    assert "Writer" in row_of(client.get("/settings/tokens").text, listed.token.id)


def test_the_form_refuses_a_seat_of_another_project_with_a_flash_naming_seat(
    db: Database, client: httpx2.Client, owner: User, seats: dict[str, str]
) -> None:
    answer = create_token(client, project="CRW", seat=seats["Ops bot"])
    assert answer.status_code == 303
    page = client.get(answer.headers["location"]).text
    flash = re.search(r'<div class="flash error" role="alert">([^<]*)</div>', page)
    assert flash is not None
    assert "seat" in html.unescape(flash.group(1))
    assert tokens.list_tokens(db, person_actor(owner)) == []


def test_the_tokens_page_says_when_a_token_has_no_seat_or_lost_it(
    db: Database, client: httpx2.Client, owner: User, seats: dict[str, str]
) -> None:
    person = person_actor(owner)
    present.add_team_role(db, person, project="CRW", name="Tester", kind="ai")  # two stay
    none = tokens.issue_token(db, person, kind="agent", scopes=["read"], project="CRW")
    only = tokens.issue_token(db, person, kind="agent", scopes=["read"], project="OPS")
    chosen = tokens.issue_token(
        db, person, kind="agent", scopes=["read"], project="CRW", seat="Coder"
    )
    present.archive_team_role(db, person, project="CRW", role_id=seats["Coder"])
    page = client.get("/settings/tokens").text
    assert "no seat: the project has no single AI seat" in row_of(page, none.token.id)
    assert "acts as Ops bot, the project's only AI seat" in row_of(page, only.token.id)
    assert "its seat Coder was removed" in row_of(page, chosen.token.id)


def test_the_cli_takes_a_seat_by_name_lists_it_and_refuses_an_unknown_one(run) -> None:  # type: ignore[no-untyped-def]
    run("init")
    for name in ("Backend dev", "Docs"):
        assert run("team", "add-role", "DEMO", "--name", name, "--json").exit_code == 0
    base = ("token", "create", "--user", "owner@crewboard.local", "--scopes", "read")
    agent = (*base, "--kind", "agent", "--project", "DEMO", "--name", "Backend dev")
    made = run(*agent, "--seat", "docs", "--json")
    assert made.exit_code == 0, made.output
    token = json.loads(made.output)
    assert token["seat"]["name"] == "Docs"
    assert token["seatId"] == token["seat"]["id"]
    listed = json.loads(run("token", "list", "--json").output)
    assert [t["seat"]["state"] for t in listed if t["kind"] == "agent"] == ["chosen"]
    assert f"{token['id']}" in run("token", "list").output
    assert "(seat Docs)" in run("token", "list").output
    unknown = run(*agent, "--seat", "Frontend", "--json")
    assert unknown.exit_code == 1
    error = json.loads(unknown.output)["error"]
    assert (error["code"], error["details"]["field"]) == ("VALIDATION", "seat")
    assert [a.split(" (")[0] for a in error["details"]["accepted"]] == ["Backend dev", "Docs"]
    no_project = run(*base, "--seat", "Docs", "--json")
    assert json.loads(no_project.output)["error"]["details"]["field"] == "seat"


@pytest.mark.anyio
async def test_an_agents_hand_in_shows_its_chosen_seat_not_the_seat_named_like_it(
    url: str, db: Database, owner: User, seats: dict[str, str], mode: str
) -> None:
    person = person_actor(owner)
    tasks.create_task(
        db, person, project="CRW", workspace_id=None, idempotency_key="t-1",
        title="Write the guide", status="ready_for_ai", assignee_id=seats["Writer"],
    )  # fmt: skip
    secret = tokens.issue_token(
        db, person, kind="agent", scopes=SCOPES, project="CRW", name="Coder", seat="Writer"
    ).secret
    hand_in = {
        "projectId": "CRW", "workspaceId": None, "taskId": "CRW-1", "idempotencyKey": "h-1",
        "expectedRevision": 1, "contextReceiptId": None, "title": "Guide written",
        "content": "Done.", "references": [],
    }  # fmt: skip
    async with mcp_client(url, secret, mode) as client:
        result = await client.call_tool("submit_result", hand_in)
    assert not result.is_error, result.content
    draft = draft_read_view(drafts.get_draft(db, person, body_of(result)["draft"]["id"]))
    assert (draft["author"]["roleId"], draft["author"]["roleName"]) == (seats["Writer"], "Writer")
    assert draft["author"]["tokenName"] == "Coder"
    me = httpx2.get(f"{url}/api/v1/me", headers={"Authorization": f"Bearer {secret}"})
    assert me.status_code == 200
    assert me.json()["token"]["seat"] == {
        "state": "chosen",
        "id": seats["Writer"],
        "name": "Writer",
    }


def test_the_boards_mine_filter_shows_what_the_person_is_assigned_or_owns(
    db: Database, client: httpx2.Client, owner: User, seats: dict[str, str]
) -> None:
    person = person_actor(owner)
    for title, fields in (
        ("Assigned", {"assignee_id": owner.id, "assignee_type": "human"}),
        ("Owned", {"assignee_id": seats["Coder"], "human_owner_id": owner.id}),
        ("The seat's", {"assignee_id": seats["Coder"]}),
        ("Nobody's", {}),
    ):
        tasks.create_task(
            db, person, project="CRW", workspace_id=None, idempotency_key=title, title=title,
            **fields,
        )  # fmt: skip
    page = client.get("/p/CRW/board?assignee=me").text
    assert sorted(re.findall(r'data-key="(CRW-\d+)"', page)) == ["CRW-1", "CRW-2"]
    assert '<option value="me" selected>Mine (assigned to or owned by me)</option>' in page
