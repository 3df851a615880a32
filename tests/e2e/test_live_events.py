"""Live events for outside clients over real HTTP (Server-Sent Events), on both databases:
20 subscribers see every one of 1,000 events once, in order, with no gap; a stream resumed
from Last-Event-ID misses nothing and repeats nothing; an id the server cannot resume after
gets a reset; a revoked stream token's open stream ends; the caps per token and per person (one
read member with many stream tokens cannot take the owner's, an admin's or the web app's
streams); who may follow what (stream token, API token, nobody)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from crewboard.config import Settings
from crewboard.contract.projects import present
from crewboard.domain.identity.records import Actor, User
from crewboard.errors import LimitExceeded
from crewboard.http.cookies import SESSION_COOKIE
from crewboard.services.identity import stream_tokens, tokens
from crewboard.services.identity.users import person_actor
from crewboard.services.live import PER_PERSON, PER_TOKEN
from crewboard.storage.database import Database
from tests.support.factories import make_project, make_user
from tests.support.mcp_client import body_of, mcp_client
from tests.support.server import free_port, running_server
from tests.support.sse import Reader
from tests.support.web import sign_in

WRITES = 1000
SUBSCRIBERS = 20


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
def base(db: Database, tmp_path: Path, owner: User) -> Iterator[str]:
    with running_server(Settings(data_dir=tmp_path, port=free_port()), db) as url:
        yield url


def stream_secret(db: Database, me: Actor, *projects: str) -> str:
    made = stream_tokens.create_stream_token(db, me, projects=list(projects or ("CRW",)))
    return str(made["secret"])


def project_id(db: Database, key: str) -> str:
    found = db.read(lambda uow: uow.projects.get_by_key(key))
    assert found is not None
    return str(found.id)


def write_events(db: Database, key: str, count: int, start: int = 0) -> None:
    project = project_id(db, key)
    for n in range(start, start + count):
        db.write(
            lambda uow, n=n: uow.record_event(
                "test.tick", actor={}, payload={"n": n}, project_id=project
            )
        )


def events_url(base: str, key: str = "CRW") -> str:
    return f"{base}/api/v1/projects/{key}/events"


def test_twenty_subscribers_each_see_every_event_once_in_order(
    db: Database, me: Actor, base: str
) -> None:
    secrets = [stream_secret(db, me) for _ in range(SUBSCRIBERS)]
    readers = [Reader(events_url(base), s, want=WRITES) for s in secrets]
    for reader in readers:
        assert reader.ready.wait(10)
    writers = [
        threading.Thread(target=write_events, args=(db, "CRW", WRITES // 2, half * WRITES // 2))
        for half in range(2)
    ]
    write_events(db, "OTH", 5)  # another project's events never reach these streams
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join()
    for reader in readers:
        reader.join()
        ids = [i for i, _n in reader.events]
        assert len(ids) == WRITES
        assert ids == sorted(ids)  # in order
        assert len(set(ids)) == WRITES  # once each
        assert sorted(n for _i, n in reader.events) == list(range(WRITES))  # none missing


def test_a_stream_resumed_from_last_event_id_misses_and_repeats_nothing(
    db: Database, me: Actor, base: str
) -> None:
    secret = stream_secret(db, me)
    first = Reader(events_url(base), secret, want=10)
    assert first.ready.wait(10)
    write_events(db, "CRW", 10)
    first.join()
    write_events(db, "CRW", 15, start=10)  # while nobody listens
    resumed = Reader(events_url(base), secret, want=25, last_id=str(first.events[-1][0]))
    assert resumed.ready.wait(10)
    write_events(db, "CRW", 10, start=25)
    resumed.join()
    assert [n for _i, n in first.events + resumed.events] == list(range(35))


def test_an_id_the_server_cannot_resume_after_gets_a_reset(
    db: Database, me: Actor, base: str
) -> None:
    secret = stream_secret(db, me)
    for bad in ("99999999", "not-a-number"):
        reader = Reader(events_url(base), secret, want=1, last_id=bad)
        assert reader.ready.wait(10)
        write_events(db, "CRW", 1)
        reader.join()
        assert reader.controls[0][0] == "reset"
        assert "resume" in reader.controls[0][1]["reason"]
        assert len(reader.events) == 1


def test_a_revoked_stream_token_ends_its_open_stream(db: Database, me: Actor, base: str) -> None:
    made = stream_tokens.create_stream_token(db, me, projects=["CRW"])
    reader = Reader(events_url(base), made["secret"], want=10_000)
    assert reader.ready.wait(10)
    write_events(db, "CRW", 2)
    stream_tokens.revoke_stream_token(db, me, token_id=made["streamToken"]["id"])
    reader.join(1.5)  # at once: the broker reads the revocation from the log
    assert reader.controls[-1][0] == "end"
    assert "revoked" in reader.controls[-1][1]["reason"]
    again = Reader(events_url(base), made["secret"], want=1)
    again.join()
    assert again.status == 401


def test_who_may_follow_what(db: Database, me: Actor, owner: User, base: str) -> None:
    only_crw = stream_secret(db, me, "CRW")
    other = Reader(events_url(base, "OTH"), only_crw, want=1)
    other.join()
    assert other.status == 404
    api = tokens.issue_token(db, me, kind="personal", scopes=["read"]).secret
    by_api = Reader(events_url(base, "OTH"), api, want=1)
    assert by_api.ready.wait(10)
    write_events(db, "OTH", 1)
    by_api.join()
    assert by_api.events
    assert httpx2.get(events_url(base)).status_code == 401
    for bad in ("cbs_unknown", "not-a-token"):
        refused = httpx2.get(events_url(base), headers={"authorization": f"Bearer {bad}"})
        assert refused.status_code == 401
        assert refused.json()["error"]["code"] == "UNAUTHENTICATED"
    nul = httpx2.get(events_url(base, "C%00W"), headers={"authorization": f"Bearer {only_crw}"})
    assert nul.status_code == 404
    stranger = make_user(db, "stranger@example.com")
    with pytest.raises(Exception, match="No project"):
        stream_tokens.create_stream_token(db, person_actor(stranger), projects=["CRW"])


def test_a_token_holds_at_most_five_streams_on_a_node(db: Database, me: Actor, base: str) -> None:
    secret = stream_secret(db, me)
    open_ = [Reader(events_url(base), secret, want=1) for _ in range(5)]
    for reader in open_:
        assert reader.ready.wait(10)
    sixth = Reader(events_url(base), secret, want=1)
    sixth.join()
    assert sixth.status == 429
    write_events(db, "CRW", 1)
    for reader in open_:
        reader.join()


def test_one_read_member_with_many_stream_tokens_cannot_take_the_owners_or_the_web_apps_streams(
    db: Database, me: Actor, owner: User, base: str
) -> None:
    reader, admin = make_user(db, "reader@example.com"), make_user(db, "admin@example.com")
    present.set_project_member(db, me, project="CRW", email=reader.email, role="read")
    present.set_project_member(db, me, project="CRW", email=admin.email, role="admin")
    theirs = person_actor(reader)
    secrets = [
        stream_tokens.create_stream_token(db, theirs, projects=["CRW"])["secret"]
        for _ in range(stream_tokens.MAX_LIVE)
    ]
    with pytest.raises(LimitExceeded) as too_many:
        stream_tokens.create_stream_token(db, theirs, projects=["CRW"])
    assert too_many.value.details["limit"] == "liveStreamTokensPerPerson"
    taken = [Reader(events_url(base), secrets[n // PER_TOKEN], want=1) for n in range(PER_PERSON)]
    for stream in taken:
        assert stream.ready.wait(10)
        assert stream.status == 200
    api = tokens.issue_token(db, theirs, kind="personal", scopes=["read"]).secret
    for secret in (secrets[-1], api):  # a fresh stream token, an API token: the same person
        refused = Reader(events_url(base), secret, want=1)
        refused.join()
        assert refused.status == 429
        assert refused.error is not None
        assert refused.error["code"] == "LIMIT_EXCEEDED"
        assert refused.error["details"] == {"limit": "streamsPerPerson", "max": PER_PERSON}
    others = [
        Reader(events_url(base), stream_secret(db, me), want=1),
        Reader(events_url(base), stream_secret(db, person_actor(admin)), want=1),
    ]
    browser = sign_in(base, owner.email)
    try:
        cookie = {SESSION_COOKIE: browser.cookies[SESSION_COOKIE]}
        others.append(Reader(f"{base}/events", None, want=1, cookies=cookie))
        for stream in others:
            assert stream.ready.wait(10)
            assert stream.status == 200
        write_events(db, "CRW", 1)
        for stream in taken + others:
            stream.join()
            assert len(stream.events) == 1
    finally:
        browser.close()


@pytest.mark.anyio
async def test_an_agent_makes_lists_and_revokes_a_stream_token_over_mcp(
    db: Database, me: Actor, base: str
) -> None:
    reader_secret = tokens.issue_token(db, me, kind="personal", scopes=["read"]).secret
    async with mcp_client(base, reader_secret, "legacy", {"X-MCP-Toolsets": "admin"}) as client:
        made = await client.call_tool(
            "create_stream_token", {"projectIds": ["CRW"], "lifetimeSeconds": 600, "name": "ci"}
        )
        assert not made.is_error
        body = body_of(made)
        secret = body["secret"]
        assert secret.startswith("cbs_")
        assert "/api/v1/projects/" in made.content[1].text  # type: ignore[union-attr]
        listed = body_of(await client.call_tool("list_stream_tokens", {}))["streamTokens"]
        assert [(t["name"], t["valid"]) for t in listed] == [("ci", True)]
        assert secret not in json.dumps(listed)  # never the secret again
        too_long = await client.call_tool(
            "create_stream_token", {"projectIds": ["CRW"], "lifetimeSeconds": 86_401}
        )
        assert too_long.is_error
        reader = Reader(events_url(base), secret, want=1)
        assert reader.ready.wait(10)
        write_events(db, "CRW", 1)
        reader.join()
        assert len(reader.events) == 1
        revoked = body_of(
            await client.call_tool(
                "revoke_stream_token", {"streamTokenId": body["streamToken"]["id"]}
            )
        )
        assert revoked["streamToken"]["valid"] is False
