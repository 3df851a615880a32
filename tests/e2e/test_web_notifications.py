"""Notifications in the web app over real HTTP as a signed-in person: the bell's count in the
header (hidden at 0), the JSON count the bell refreshes from, the list (newest first, unread
marked, paged), opening one marks it read and goes to its link, "Mark all read", and the
settings page (saved; a refused field named; email disabled without SMTP)."""

from __future__ import annotations

import html
import re
from contextlib import closing
from datetime import timedelta

import httpx2

from crewboard.domain.clock import ManualClock
from crewboard.domain.identity.records import User
from crewboard.services.identity.users import person_actor
from crewboard.services.notifications import inbox
from crewboard.services.notifications.notify import notify
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork
from tests.support.factories import make_project, make_user
from tests.support.web import post_form, sign_in

BELL = re.compile(r"data-notification-count(?P<hidden> hidden)?>(?P<count>\d+)<")


def tell(db: Database, user: User, project_id: str, n: int, *, start: int = 0) -> None:
    """`n` notifications for `user`, a minute apart (the newest last)."""
    clock = db.clock
    assert isinstance(clock, ManualClock)

    def work(uow: UnitOfWork, index: int) -> None:
        notify(
            uow, recipients=[user.id], kind="handoff.received", project_id=project_id,
            title=f"Note {index}", body=f"Body {index}", link=f"/p/CRW/handoffs?n={index}",
            source=f"test:{index}", in_app=True, email=False,
        )  # fmt: skip

    for index in range(start, start + n):
        clock.advance(timedelta(minutes=1))
        db.write(lambda uow, i=index: work(uow, i))


def bell(answer: httpx2.Response) -> tuple[int, bool]:
    found = BELL.search(answer.text)
    assert found is not None, answer.text[:2000]
    return int(found["count"]), bool(found["hidden"])


def test_the_bell_the_list_and_marking_read(url: str, db: Database) -> None:
    owner = make_user(db, "owner@example.com")
    project = make_project(db, owner, "CRW")
    with closing(sign_in(url, owner.email)) as client:
        assert bell(client.get("/p/CRW/board")) == (0, True)
        assert client.get("/notifications/count").json() == {"unread": 0}
        assert "No notifications yet" in client.get("/notifications").text

        tell(db, owner, project, 3)
        assert bell(client.get("/p/CRW/board")) == (3, False)
        assert bell(client.get("/settings/tokens")) == (3, False)  # any page, with no project too
        assert client.get("/notifications/count").json() == {"unread": 3}
        listed = html.unescape(client.get("/notifications").text)
        assert listed.index("Note 2") < listed.index("Note 1") < listed.index("Note 0")
        assert listed.count('class="notification unread"') == 3
        assert "(3 unread)" in listed

        newest = inbox.list_notifications(db, person_actor(owner))["notifications"][0]
        opened = post_form(client, f"/notifications/{newest['id']}/open", {"link": newest["link"]})
        assert opened.status_code == 303
        assert opened.headers["location"] == "/p/CRW/handoffs?n=2"
        assert client.get("/notifications/count").json() == {"unread": 2}
        listed = html.unescape(client.get("/notifications").text)
        assert listed.count('class="notification unread"') == 2
        assert 'href="/p/CRW/handoffs?n=2"' in listed  # read: a plain link now
        unread = html.unescape(client.get("/notifications?unread=1").text)
        assert "Note 2" not in unread
        assert "Note 1" in unread

        # A link pointing off the app is never followed.
        off = post_form(client, f"/notifications/{newest['id']}/open", {"link": "//evil.example"})
        assert off.headers["location"] == "/notifications"

        done = post_form(client, "/notifications/read-all", {})
        assert done.status_code == 303
        after = html.unescape(client.get(done.headers["location"]).text)
        assert "Marked 2 read." in after
        assert bell(client.get("/p/CRW/board")) == (0, True)
        assert "Mark all read" not in after


def test_the_list_is_paged(url: str, db: Database) -> None:
    owner = make_user(db, "owner@example.com")
    project = make_project(db, owner, "CRW")
    tell(db, owner, project, 32)
    with closing(sign_in(url, owner.email)) as client:
        first = html.unescape(client.get("/notifications").text)
        assert "Note 31" in first
        assert "Note 2<" in first
        assert "Note 1<" not in first
        assert 'href="/notifications?offset=30"' in first
        second = html.unescape(client.get("/notifications?offset=30").text)
        assert "Note 1<" in second
        assert "Note 0<" in second
        assert "Note 31" not in second
        assert 'href="/notifications?offset=0"' in second
        assert client.get("/notifications?offset=x").status_code == 422


def test_the_count_needs_a_session(url: str) -> None:
    with httpx2.Client(base_url=url) as client:
        assert client.get("/notifications/count").status_code == 401
        assert client.get("/notifications", follow_redirects=False).status_code == 303


def test_settings_are_saved_and_a_refused_field_is_named(url: str, db: Database) -> None:
    owner = make_user(db, "owner@example.com")
    make_project(db, owner, "CRW")
    with closing(sign_in(url, owner.email)) as client:
        page = html.unescape(client.get("/settings/notifications").text)
        assert 'id="in_app" name="in_app" type="checkbox" checked' in page
        assert "This server sends no email" in page  # no SMTP in tests: email disabled
        assert 'id="email" type="checkbox" disabled' in page

        saved = post_form(client, "/settings/notifications", {})
        assert saved.status_code == 303
        shown = html.unescape(client.get(saved.headers["location"]).text)
        assert "Notification settings saved." in shown
        assert inbox.get_settings(db, person_actor(owner))["inApp"] is False
        assert 'id="in_app" name="in_app" type="checkbox">' in shown

        post_form(client, "/settings/notifications", {"in_app": "on"})
        assert inbox.get_settings(db, person_actor(owner))["inApp"] is True

        refused = post_form(
            client,
            "/settings/notifications",
            {"in_app": "on", "email": "on"},
        )
        assert refused.status_code == 303
        message = html.unescape(client.get("/settings/notifications").text)
        assert "Email notifications: this server sends no email" in message
        assert inbox.get_settings(db, person_actor(owner))["email"] is False

        post_form(client, "/settings/notifications", {"in_app": "maybe"})
        message = html.unescape(client.get("/settings/notifications").text)
        assert "In-app notifications: tick the box or leave it empty." in message
        assert inbox.get_settings(db, person_actor(owner))["inApp"] is True
