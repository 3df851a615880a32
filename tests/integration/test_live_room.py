"""How the broker shares a node's streams (on both databases): a person over their share is
refused with the limit named, never someone else; the last slots of a project are kept for
its admins, and the node's last slots for the web app. And which streams each
credential-ending event of the log ends (`ended_by`), and which it leaves."""

from __future__ import annotations

import pytest

from crewboard.services.live import SESSION, Broker, Claim, StreamRefused, Subscription, ended_by
from crewboard.storage.database import Database


def claim(
    person: str, holder: str | None = None, *, web: bool = False, admin_of: str = ""
) -> Claim:
    return Claim(
        holder=holder or f"tok_{person}",
        person=person,
        web=web,
        admin_of=frozenset({admin_of} if admin_of else ()),
        per_holder=20 if web else None,
    )


def refusal(broker: Broker, projects: set[str], who: Claim) -> StreamRefused:
    with pytest.raises(StreamRefused) as refused:
        broker.subscribe(projects, who)
    return refused.value


def test_a_person_over_their_share_is_refused_naming_the_limit_and_others_still_get_in(
    db: Database,
) -> None:
    broker = Broker(db)
    broker.per_person = 6
    for n in range(6):  # two streams on each of three tokens
        broker.subscribe({"prj_a"}, claim("usr_m", f"tok_m{n // 2}"))
    over = refusal(broker, {"prj_a"}, claim("usr_m", "tok_fresh"))
    assert (over.status, over.limit, over.cap) == (429, "streamsPerPerson", 6)
    broker.subscribe({"prj_a"}, claim("usr_owner"))
    broker.subscribe({"prj_a"}, claim("usr_m", "ses:tab", web=True))  # the web app is counted apart


def test_the_last_slots_of_a_project_are_kept_for_its_admins(db: Database) -> None:
    broker = Broker(db)
    broker.per_project, broker.admin_kept = 4, 1
    for n in range(3):
        broker.subscribe({"prj_a"}, claim(f"usr_{n}"))
    full = refusal(broker, {"prj_a"}, claim("usr_reader"))
    assert (full.status, full.limit, full.cap) == (429, "streamsPerProject", 3)
    broker.subscribe({"prj_a"}, claim("usr_admin", admin_of="prj_a"))
    assert refusal(broker, {"prj_a"}, claim("usr_admin2", admin_of="prj_a")).cap == 4
    broker.subscribe({"prj_b"}, claim("usr_reader"))  # another project has its own room


def test_the_last_slots_of_a_node_are_kept_for_the_web_app(db: Database) -> None:
    broker = Broker(db, max_streams=6)
    broker.web_kept = 2
    for n in range(4):
        broker.subscribe({"prj_a"}, claim(f"usr_{n}"))
    busy = refusal(broker, {"prj_a"}, claim("usr_late"))
    assert (busy.status, busy.limit) == (503, "streamsPerNode")
    broker.subscribe({"prj_a"}, claim("usr_late", "ses:1", web=True))
    broker.subscribe({"prj_a"}, claim("usr_other", "ses:2", web=True))
    assert refusal(broker, {"prj_a"}, claim("usr_more", "ses:3", web=True)).status == 503


def _sub(claim: Claim, *projects: str) -> Subscription:
    return Subscription(frozenset(projects), claim, 0)


def _row(type_: str, **payload: str) -> dict[str, object]:
    return {"type": type_, "payload": payload, "project_id": payload.get("projectId")}


def test_a_password_change_ends_the_persons_other_sessions_streams_only() -> None:
    def browser(person: str, session: str) -> Subscription:
        key = SESSION + session
        return _sub(Claim(key, person, {key: "your browser session"}, web=True), "prj_a")

    change = _row("user.password_changed", userId="usr_a", keptSessionRef="kept")
    assert "password" in str(ended_by(change, browser("usr_a", "other")))
    assert ended_by(change, browser("usr_a", "kept")) is None
    assert ended_by(change, browser("usr_b", "other")) is None
    token = _sub(Claim("tok_1", "usr_a", {"tok_1": "the token"}), "prj_a")
    assert ended_by(change, token) is None  # a token is not a session


def test_an_admin_made_reader_loses_streams_that_may_hold_an_admins_slot_only() -> None:
    admin = _sub(claim("usr_a", admin_of="prj_a"), "prj_a")
    reader = _sub(claim("usr_a"), "prj_a")
    demoted = _row("project.member_set", projectId="prj_a", userId="usr_a", role="read")
    assert "changed to read" in str(ended_by(demoted, admin))
    assert ended_by(demoted, reader) is None
    promoted = _row("project.member_set", projectId="prj_a", userId="usr_a", role="admin")
    assert ended_by(promoted, admin) is None
    removed = _row("project.member_removed", projectId="prj_a", userId="usr_a")
    assert "removed" in str(ended_by(removed, reader))
    assert ended_by(removed, _sub(claim("usr_a"), "prj_b")) is None
    assert ended_by(removed, _sub(claim("usr_b"), "prj_a")) is None
