"""A live stream lives as long as its credential, on both databases and over real HTTP: revoking
an API token, signing out, removing a person's project role, revoking the token or the OAuth
approval that made a stream token each end the streams they cover within a second, with an
`event: end` naming why, and nobody else's; the ended credential is refused afterwards. On
PostgreSQL the same holds with the stream on another node than the change."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy.engine import URL

from crewboard.config import Settings
from crewboard.contract.projects import present
from crewboard.domain.clock import ManualClock
from crewboard.domain.identity.records import Actor, User
from crewboard.http.cookies import SESSION_COOKIE
from crewboard.http.sse import CHECK
from crewboard.services.identity import stream_tokens, tokens
from crewboard.services.identity.users import person_actor
from crewboard.services.oauth import grants
from crewboard.storage.database import Database
from tests.conftest import ONLY_POSTGRESQL
from tests.support.factories import make_project, make_user
from tests.support.oauth import connect, served_app
from tests.support.server import free_port, running_server
from tests.support.sse import Reader
from tests.support.web import post_form, sign_in

AT_ONCE = 1.0  # seconds: how soon a credential's end reaches its streams


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    make_project(db, user, "OTH")
    return user


@pytest.fixture
def me(owner: User) -> Actor:
    return person_actor(owner)


@pytest.fixture
def member(db: Database, me: Actor) -> User:
    """A person with the read role on CRW only."""
    user = make_user(db, "member@example.com")
    present.set_project_member(db, me, project="CRW", email=user.email, role="read")
    return user


@pytest.fixture
def base(db: Database, tmp_path: Path, owner: User) -> Iterator[str]:
    with running_server(Settings(data_dir=tmp_path, port=free_port()), db) as url:
        yield url


def events_url(base: str, key: str = "CRW") -> str:
    return f"{base}/api/v1/projects/{key}/events"


def tick(db: Database, key: str = "CRW") -> None:
    found = db.read(lambda uow: uow.projects.get_by_key(key))
    assert found is not None
    db.write(lambda uow: uow.record_event("test.tick", actor={}, payload={}, project_id=found.id))


def opened(reader: Reader) -> Reader:
    assert reader.ready.wait(10)
    assert reader.status == 200, reader.error
    return reader


def ended(reader: Reader, *words: str) -> str:
    """The reason of the `event: end` the stream got within AT_ONCE (it must have got one)."""
    reader.join(AT_ONCE)
    assert reader.controls, "the stream did not end"
    kind, body = reader.controls[-1]
    assert kind == "end"
    reason = str(body["reason"]).lower()
    for word in words:
        assert word in reason, reason
    return reason


def browser_stream(base: str, cookie: str, path: str = "/events") -> Reader:
    return opened(Reader(f"{base}{path}", None, cookies={SESSION_COOKIE: cookie}))


def test_revoking_an_api_token_ends_its_stream_at_once_naming_why(
    db: Database, me: Actor, base: str
) -> None:
    issued = tokens.issue_token(db, me, kind="personal", scopes=["read"])
    another = tokens.issue_token(db, me, kind="personal", scopes=["read"]).secret
    reader = opened(Reader(events_url(base), issued.secret))
    other = opened(Reader(events_url(base), another, want=2))
    tick(db)
    tokens.revoke_token(db, issued.token.id, actor=me)
    ended(reader, "token", "revoked")
    assert len(reader.events) == 1  # what came before the revocation, and nothing after
    tick(db)
    other.join(10)
    assert len(other.events) == 2
    assert not other.controls
    again = Reader(events_url(base), issued.secret)
    again.join()
    assert again.status == 401


def test_signing_out_ends_the_browsers_streams_at_once(
    db: Database, owner: User, base: str
) -> None:
    browser = sign_in(base, owner.email)
    try:
        cookie = browser.cookies[SESSION_COOKIE]
        web = browser_stream(base, cookie)
        rest = browser_stream(base, cookie, "/api/v1/projects/CRW/events")
        elsewhere = sign_in(base, owner.email)  # the same person's other browser
        kept = browser_stream(base, elsewhere.cookies[SESSION_COOKIE])
        assert post_form(browser, "/logout", {}).status_code == 303
        ended(web, "signed out")
        ended(rest, "signed out")
        tick(db)
        kept.want = 1
        kept.join(10)
        assert kept.events
        assert not kept.controls
        elsewhere.close()
    finally:
        browser.close()


def test_removing_a_persons_role_ends_their_streams_of_that_project_and_no_one_elses(
    db: Database, me: Actor, member: User, base: str
) -> None:
    theirs = tokens.issue_token(db, person_actor(member), kind="personal", scopes=["read"]).secret
    by_token = opened(Reader(events_url(base), theirs))
    browser = sign_in(base, member.email)
    try:
        by_browser = browser_stream(base, browser.cookies[SESSION_COOKIE])
        mine = tokens.issue_token(db, me, kind="personal", scopes=["read"]).secret
        owners = opened(Reader(events_url(base), mine, want=1))
        present.remove_project_member(db, me, project="CRW", email=member.email)
        ended(by_token, "role", "removed")
        ended(by_browser, "role", "removed")
        owners.join(10)
        assert len(owners.events) == 1
        assert not owners.controls
        again = Reader(events_url(base), theirs)
        again.join()
        assert again.status == 404
    finally:
        browser.close()


def test_revoking_the_token_that_made_a_stream_token_ends_its_streams_and_refuses_it(
    db: Database, me: Actor, base: str
) -> None:
    maker = tokens.issue_token(db, me, kind="personal", scopes=["read"])
    through_token = tokens.authenticate_token(db, maker.secret)
    made = stream_tokens.create_stream_token(db, through_token, projects=["CRW"])
    own = stream_tokens.create_stream_token(db, me, projects=["CRW"])  # the person's own
    reader = opened(Reader(events_url(base), made["secret"]))
    kept = opened(Reader(events_url(base), own["secret"], want=1))
    tokens.revoke_token(db, maker.token.id, actor=me)
    ended(reader, "token that made this stream token", "revoked")
    again = Reader(events_url(base), made["secret"])
    again.join()
    assert again.status == 401
    listed = stream_tokens.list_stream_tokens(db, me)["streamTokens"]
    assert {t["id"]: t["valid"] for t in listed} == {
        made["streamToken"]["id"]: False,
        own["streamToken"]["id"]: True,
    }
    tick(db)
    kept.join(10)
    assert kept.events
    assert not kept.controls


def test_revoking_the_oauth_approval_that_made_a_stream_token_ends_its_streams_and_refuses_it(
    db: Database, me: Actor, owner: User, tmp_path: Path
) -> None:
    with served_app(db, owner, tmp_path) as app:
        connection = connect(app, scopes=["read"])
        app_actor = grants.authenticate_access_token(db, connection.access_token, app.resource)
        made = stream_tokens.create_stream_token(db, app_actor, projects=["CRW"])
        reader = opened(Reader(events_url(app.url), made["secret"]))
        grants.revoke_connection(db, me, connection.grant_id)
        ended(reader, "approval", "revoked")
        again = Reader(events_url(app.url), made["secret"])
        again.join()
        assert again.status == 401


def test_a_stream_token_that_expires_ends_its_stream_at_the_next_check(
    db: Database, me: Actor, base: str
) -> None:
    """An expiry writes no event: every stream asks again whether its credential works, every
    CHECK seconds."""
    made = stream_tokens.create_stream_token(db, me, projects=["CRW"], lifetime_seconds=60)
    reader = opened(Reader(events_url(base), made["secret"]))
    assert isinstance(db.clock, ManualClock)
    db.clock.advance(timedelta(seconds=61))
    reader.join(CHECK + 5)
    assert reader.controls[-1][0] == "end"
    assert "expired" in reader.controls[-1][1]["reason"]


@ONLY_POSTGRESQL
def test_each_credentials_end_reaches_a_stream_on_another_node_within_a_second(  # noqa: PLR0917 - fixtures
    db: Database, database_url: URL, me: Actor, member: User, owner: User, tmp_path: Path
) -> None:
    other_db = Database(database_url, clock=db.clock)
    try:
        with (
            running_server(Settings(data_dir=tmp_path / "a", port=free_port()), db) as node_a,
            running_server(Settings(data_dir=tmp_path / "b", port=free_port()), other_db) as node_b,
        ):
            issued = tokens.issue_token(db, me, kind="personal", scopes=["read"])
            maker = tokens.issue_token(db, me, kind="personal", scopes=["read"])
            made = stream_tokens.create_stream_token(
                db, tokens.authenticate_token(db, maker.secret), projects=["CRW"]
            )
            members = tokens.issue_token(db, person_actor(member), kind="personal", scopes=["read"])
            browser = sign_in(node_a, owner.email)
            try:
                by_token = opened(Reader(events_url(node_b), issued.secret))
                by_stream_token = opened(Reader(events_url(node_b), made["secret"]))
                by_member = opened(Reader(events_url(node_b), members.secret))
                by_browser = browser_stream(node_b, browser.cookies[SESSION_COOKIE])
                tokens.revoke_token(db, issued.token.id, actor=me)
                ended(by_token, "token", "revoked")
                tokens.revoke_token(db, maker.token.id, actor=me)
                ended(by_stream_token, "token that made this stream token")
                present.remove_project_member(db, me, project="CRW", email=member.email)
                ended(by_member, "role", "removed")
                assert post_form(browser, "/logout", {}).status_code == 303  # on node A
                ended(by_browser, "signed out")
            finally:
                browser.close()
    finally:
        other_db.dispose()
