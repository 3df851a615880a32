"""Who sees which stream tokens, over real HTTP: a person their own, a project's admins every one
that follows the project (with its maker), named projects only those the viewer may read;
paged 50 at a time, at most 200; never a secret nor its hash in any answer. The CLI's list is
the tool's answer and takes the same arguments."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx2
import pytest
from sqlalchemy.engine import URL

from crewboard.domain.clock import ManualClock
from crewboard.domain.identity.access import Role
from crewboard.domain.identity.records import StreamToken
from crewboard.domain.identity.tokens import hash_token_secret
from crewboard.errors import ValidationFailed
from crewboard.services.identity import stream_tokens, tokens
from crewboard.services.identity.users import person_actor
from crewboard.storage import migrate
from crewboard.storage.database import Database
from tests.support.cli import RunCli, cli_on
from tests.support.factories import grant, make_project, make_user, token_actor

ALL = ["read", "tasks.manage", "messages.write", "specs.write", "projects.admin"]


@dataclass
class Team:
    """Alice administers CRW; Bob writes on CRW and administers BOB; Dave reads CRW. Each
    holds an API token (`keys`); `made` holds each stream token's id and secret by label."""

    url: str
    keys: dict[str, str]
    made: dict[str, tuple[str, str]]

    def get(self, who: str, **params: Any) -> httpx2.Response:
        headers = {"Authorization": f"Bearer {self.keys[who]}"}
        return httpx2.get(f"{self.url}/api/v1/stream-tokens", params=params, headers=headers)

    def listed(self, who: str, **params: Any) -> dict[str, Any]:
        answer = self.get(who, **params)
        assert answer.status_code == 200, answer.text
        self.assert_no_secret(answer.text)
        body: dict[str, Any] = answer.json()
        return body

    def ids(self, who: str, **params: Any) -> list[str]:
        return [t["id"] for t in self.listed(who, **params)["streamTokens"]]

    def id_of(self, label: str) -> str:
        return self.made[label][0]

    def assert_no_secret(self, text: str) -> None:
        for _, secret in self.made.values():
            assert secret not in text
            assert hash_token_secret(secret) not in text
        assert '"secret' not in text


def _make(db: Database, actor: Any, projects: list[str], name: str) -> tuple[str, str]:
    made = stream_tokens.create_stream_token(db, actor, projects=projects, name=name)
    return str(made["streamToken"]["id"]), str(made["secret"])


@pytest.fixture
def team(db: Database, url: str, clock: ManualClock) -> Team:
    alice, bob, dave = (make_user(db, f"{n}@example.com") for n in ("alice", "bob", "dave"))
    make_project(db, alice, "CRW")
    make_project(db, bob, "BOB")
    grant(db, alice, "CRW", bob, Role.WRITE)
    grant(db, alice, "CRW", dave, Role.READ)
    keys = {}
    for person, name in ((alice, "alice"), (bob, "bob"), (dave, "dave")):
        issued = tokens.issue_token(
            db, person_actor(person), kind="personal", scopes=ALL, name=f"{name} laptop"
        )
        keys[name] = issued.secret
    read_only = tokens.issue_token(db, person_actor(alice), kind="personal", scopes=["read"])
    keys["alice read only"] = read_only.secret
    bob_laptop = tokens.authenticate_token(db, keys["bob"])
    made = {}
    made["alice"] = _make(db, person_actor(alice), ["CRW"], "alice board")
    clock.advance(timedelta(seconds=1))
    made["bob crw"] = _make(db, bob_laptop, ["CRW"], "bob dashboard")
    clock.advance(timedelta(seconds=1))
    made["bob both"] = _make(db, bob_laptop, ["BOB", "CRW"], "bob both")
    clock.advance(timedelta(seconds=1))
    made["bob own"] = _make(db, person_actor(bob), ["BOB"], "bob alone")
    return Team(url, keys, made)


def test_an_admin_sees_every_token_following_their_project_with_its_maker(team: Team) -> None:
    body = team.listed("alice")
    shown = {t["name"]: t for t in body["streamTokens"]}
    assert [t["name"] for t in body["streamTokens"]] == ["bob both", "bob dashboard", "alice board"]
    assert (body["total"], body["nextOffset"]) == (3, None)
    assert shown["bob dashboard"]["madeBy"] == {
        "userId": shown["bob dashboard"]["madeBy"]["userId"],
        "name": "bob",
        "via": {"kind": "apiToken", "name": "bob laptop"},
    }
    assert shown["alice board"]["madeBy"]["via"] is None
    assert (shown["alice board"]["yours"], shown["bob dashboard"]["yours"]) == (True, False)
    # BOB is Bob's project, which Alice cannot read: counted, never named.
    both = shown["bob both"]
    assert ([p["key"] for p in both["projects"]], both["otherProjects"]) == (["CRW"], 1)
    assert "BOB" not in json.dumps(both)
    assert all(t["valid"] and t["revokedAt"] is None for t in body["streamTokens"])


def test_a_writer_sees_only_their_own_tokens_and_a_reader_none(team: Team) -> None:
    own = team.listed("bob")["streamTokens"]
    assert [t["name"] for t in own] == ["bob alone", "bob both", "bob dashboard"]
    both = next(t for t in own if t["name"] == "bob both")
    assert ([p["key"] for p in both["projects"]], both["otherProjects"]) == (["BOB", "CRW"], 0)
    assert team.listed("dave") == {"streamTokens": [], "total": 0, "nextOffset": None}
    # A Read only token acts as read on every project: its person's own tokens only.
    assert team.ids("alice read only") == [team.id_of("alice")]


def test_the_project_filter_keeps_the_tokens_that_follow_it(team: Team) -> None:
    assert team.ids("bob", projectId="BOB") == [team.id_of("bob own"), team.id_of("bob both")]
    assert team.ids("alice", projectId="CRW") == team.ids("alice")
    hidden = team.get("alice", projectId="BOB")
    assert (hidden.status_code, hidden.json()["error"]["code"]) == (404, "NOT_FOUND")


def test_expired_and_revoked_tokens_are_listed_unless_left_out(
    team: Team, db: Database, clock: ManualClock
) -> None:
    revoked = team.made["bob crw"][0]
    answer = httpx2.delete(
        f"{team.url}/api/v1/stream-tokens/{revoked}",
        headers={"Authorization": f"Bearer {team.keys['alice']}"},
    )
    assert answer.status_code == 200, answer.text
    assert answer.json()["changed"] is True
    team.assert_no_secret(answer.text)
    listed = {t["id"]: t for t in team.listed("bob")["streamTokens"]}
    assert (listed[revoked]["valid"], listed[revoked]["revokedAt"] is not None) == (False, True)
    assert revoked not in team.ids("bob", includeRevoked="false")
    clock.advance(timedelta(hours=2))  # past every token's hour
    assert len(team.ids("alice")) == 3
    assert not any(t["valid"] for t in team.listed("alice")["streamTokens"])
    assert team.ids("alice", includeExpired="false") == []
    fresh, _ = _make(db, tokens.authenticate_token(db, team.keys["alice"]), ["CRW"], "fresh")
    assert team.ids("alice", includeExpired="false", includeRevoked="false") == [fresh]


def test_an_admin_revokes_a_token_on_their_project_and_no_one_else_can(team: Team) -> None:
    def revoke(who: str, label: str) -> httpx2.Response:
        return httpx2.delete(
            f"{team.url}/api/v1/stream-tokens/{team.id_of(label)}",
            headers={"Authorization": f"Bearer {team.keys[who]}"},
        )

    for who, label in (("dave", "alice"), ("bob", "alice"), ("alice", "bob own")):
        refused = revoke(who, label)
        assert (refused.status_code, refused.json()["error"]["code"]) == (404, "NOT_FOUND")
    refused = revoke("alice read only", "bob crw")
    assert refused.status_code == 404
    done = revoke("alice", "bob both")
    assert done.status_code == 200, done.text
    shown = done.json()["streamToken"]
    assert ([p["key"] for p in shown["projects"]], shown["otherProjects"]) == (["CRW"], 1)


# --- paging ------------------------------------------------------------------------------


def _many(db: Database, owner_email: str, project: str, count: int) -> list[str]:
    """`count` stream tokens of one person on one project, two made in each second (so equal
    times are ordered by id); their ids, newest first as the list orders them."""

    def work(uow: Any) -> list[StreamToken]:
        user = uow.users.get_by_email(owner_email)
        project_id = uow.projects.get_by_key(project).id
        made = []
        for n in range(count):
            at = uow.now + timedelta(seconds=n // 2)
            token = StreamToken(
                id=f"stk_{n:04d}", user_id=user.id, name=f"bulk {n}", display_prefix="cbs_bulk",
                project_ids=(project_id,), created_by={"kind": "person", "userId": user.id},
                created_at=at, expires_at=at + timedelta(hours=1), revoked_at=None,
            )  # fmt: skip
            stream_tokens.tokens_of(uow).add(token, hash_token_secret(f"cbs_bulk_{n}"))
            made.append(token)
        return made

    made = db.write(work)
    return [t.id for t in sorted(made, key=lambda t: (t.created_at, t.id), reverse=True)]


def test_a_page_holds_50_by_default_and_at_most_200(db: Database, url: str) -> None:
    owner = make_user(db, "owner@example.com")
    make_project(db, owner, "CRW")
    expected = _many(db, "owner@example.com", "CRW", 205)
    secret = tokens.issue_token(db, person_actor(owner), kind="personal", scopes=ALL).secret
    team = Team(url, {"owner": secret}, {})
    first = team.listed("owner")
    assert (len(first["streamTokens"]), first["total"], first["nextOffset"]) == (50, 205, 50)
    assert [t["id"] for t in first["streamTokens"]] == expected[:50]
    # 200 rows are more than one answer holds (48 KiB): the page stops early, and its
    # nextOffset goes on right after its last row.
    most = team.listed("owner", limit=200, offset=5)
    shown = len(most["streamTokens"])
    assert 50 < shown <= 200
    assert most["nextOffset"] == 5 + shown
    pages = [team.ids("owner", limit=60, offset=o) for o in range(0, 205, 60)]
    assert [i for page in pages for i in page] == expected
    whole = stream_tokens.list_stream_tokens(
        db, tokens.authenticate_token(db, secret), limit=200, offset=5
    )
    assert [t["id"] for t in whole["streamTokens"]] == expected[5:]
    over = team.get("owner", limit=201)
    assert over.status_code == 422, over.text
    assert over.json()["error"]["details"]["field"] == "limit"
    assert over.json()["error"]["details"]["maximum"] == 200
    assert "200" in over.json()["error"]["message"]
    negative = team.get("owner", offset=-1)
    assert negative.json()["error"]["details"]["field"] == "offset"


def test_the_service_refuses_a_page_past_its_bound_naming_the_field(db: Database) -> None:
    owner = make_user(db, "owner@example.com")
    actor = token_actor(db, owner, ALL)
    with pytest.raises(ValidationFailed) as refused:
        stream_tokens.list_stream_tokens(db, actor, limit=201)
    assert refused.value.details["field"] == "limit"


# --- the CLI -----------------------------------------------------------------------------

OWNER = "owner@crewboard.local"


@pytest.fixture
def run(database_url: URL, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> RunCli:
    """The CLI on the test's database, set up by `crewboard init`."""
    invoke = cli_on(database_url, tmp_path / "data", monkeypatch)
    assert invoke("init").exit_code == 0
    return invoke


def test_the_cli_lists_a_page_and_refuses_a_limit_past_200(run: RunCli) -> None:
    secrets = []
    for n in range(3):
        made = run("stream-token", "create", "--project-ids", "DEMO", "--name", f"s{n}", "--json")
        assert made.exit_code == 0, made.output
        secrets.append(json.loads(made.output)["secret"])
    shown = run("stream-token", "list", "--limit", "2", "--project-id", "DEMO", "--json")
    assert shown.exit_code == 0, shown.output
    body = json.loads(shown.output)
    assert ([t["name"] for t in body["streamTokens"]], body["total"]) == (["s2", "s1"], 3)
    assert body["nextOffset"] == 2
    assert not any(secret in shown.output for secret in secrets)
    rest = json.loads(run("stream-token", "list", "--offset", "2", "--json").output)
    assert [t["name"] for t in rest["streamTokens"]] == ["s0"]
    over = run("stream-token", "list", "--limit", "201", "--json")
    assert over.exit_code == 1
    refusal = json.loads(over.output)["error"]
    assert (refusal["code"], refusal["details"]["option"]) == ("VALIDATION", "--limit")
    assert (refusal["details"]["field"], refusal["details"]["maximum"]) == ("limit", 200)


# --- the migration -----------------------------------------------------------------------


def test_the_migration_fills_in_the_projects_of_tokens_made_before_it(db: Database) -> None:
    alice, bob = make_user(db, "alice@example.com"), make_user(db, "bob@example.com")
    make_project(db, alice, "CRW")
    make_project(db, bob, "BOB")
    grant(db, alice, "CRW", bob, Role.WRITE)
    made, _ = _make(db, person_actor(bob), ["CRW", "BOB"], "older")
    migrate.downgrade(db, "0027_board_views")
    migrate.upgrade(db)
    assert migrate.schema_differences(db) == []
    seen = stream_tokens.list_stream_tokens(db, token_actor(db, alice, ALL), project="CRW")
    assert [(t["id"], t["otherProjects"]) for t in seen["streamTokens"]] == [(made, 1)]
