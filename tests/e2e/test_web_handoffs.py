"""The handoffs page over real HTTP as a signed-in person: the day's handoffs grouped by shift
(the day taken in each shift's zone), writing your own and changing it (a stale form refused
with what to do), action items added and their assignee and status changed; a reader sees
but gets no forms; hidden linked tasks stay hidden."""

from __future__ import annotations

import html
import re
from contextlib import closing

import httpx2
import pytest

from crewboard.contract.projects import present
from crewboard.domain.handoffs import Bodies
from crewboard.domain.identity.access import Role
from crewboard.domain.identity.records import User
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support import handoff_calls
from tests.support.factories import grant, make_project, make_task, make_user
from tests.support.web import post_form, sign_in

DAY = "2026-03-02"


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    present.update_project(
        db, person_actor(user), project="CRW", workspace_id=None,
        shift_time_zone_a="Europe/Berlin", shift_time_zone_b="America/New_York",
    )  # fmt: skip
    return user


@pytest.fixture
def bob(db: Database, owner: User) -> User:
    user = make_user(db, "bob@example.com")
    grant(db, owner, "CRW", user, Role.WRITE)
    return user


def text_of(answer: httpx2.Response) -> str:
    return html.unescape(answer.text)


def test_write_change_and_work_a_handoff_in_the_web_app(
    url: str, db: Database, owner: User, bob: User
) -> None:
    make_task(db, owner, "CRW", "Roll out")
    with closing(sign_in(url, owner.email)) as client:
        page = client.get(f"/p/CRW/handoffs?date={DAY}")
        assert page.status_code == 200
        shown = text_of(page)
        # Zones by place and offset, never their IANA names.
        assert re.search(r"Berlin \(UTC\+\d\) hands over to New York \(UTC−\d\)", shown)
        assert "Europe/Berlin" not in shown.split("<main", 1)[1].split("Write your handoff")[0]
        assert "Write your handoff" in shown
        saved = post_form(
            client,
            "/p/CRW/handoffs",
            {"date": DAY, "shift": "b", "completed": "Shipped **it**.", "in_progress": "",
             "blockers": "The VPN", "next_steps": "Watch errors", "linked_tasks": "CRW-1",
             "recipients": bob.id},
        )  # fmt: skip
        assert saved.status_code == 303
        day = text_of(client.get(saved.headers["location"]))
        assert "Handoff saved." in day
        assert "<strong>it</strong>" in day  # the bodies are markdown, rendered safely
        # the reverse shift, as chosen
        assert re.search(r"New York \(UTC−\d\) to Berlin \(UTC\+\d\)", day)
        assert "Change your handoff" in day
        made = handoff_calls.list_handoffs(db, person_actor(owner), project="CRW")["handoffs"][0]
        assert made["sourceTimeZone"] == "America/New_York"
        assert [r["email"] for r in made["recipients"]] == ["bob@example.com"]
        changed = post_form(
            client,
            f"/p/CRW/handoffs/{made['id']}",
            {"expected_updated_at": made["updatedAt"], "recipients_sent": "1",
             "completed": "Shipped it.", "in_progress": "Nothing", "blockers": "",
             "next_steps": "Watch errors", "linked_tasks": "CRW-1"},
        )  # fmt: skip
        assert changed.status_code == 303
        stale = post_form(
            client,
            f"/p/CRW/handoffs/{made['id']}",
            {"expected_updated_at": made["updatedAt"], "blockers": "again",
             "next": f"/p/CRW/handoffs?date={DAY}"},
        )  # fmt: skip
        # refused, on the same page: the change form open again, holding what was typed
        assert stale.status_code == 409
        refused = text_of(stale)
        assert "Not saved: owner saved the handoff meanwhile; at 20" in refused
        assert re.search(
            rf'<details class="card handoff-change" id="change-{made["id"]}" open>', refused
        )
        assert re.search(r'<textarea id="e-blockers"[^>]*>again</textarea>', refused)
        item = post_form(
            client,
            f"/p/CRW/handoffs/{made['id']}/items",
            {"text": "Call the vendor", "assignee": bob.id, "due_date": "2026-03-04"},
        )
        assert item.status_code == 303
    got = handoff_calls.get_handoff(db, person_actor(bob), handoff_id=made["id"])["handoff"]
    assert (got["completed"], got["recipients"], got["blockers"]) == ("Shipped it.", [], "")
    action = got["actionItems"][0]
    assert action["assignee"]["email"] == "bob@example.com"
    with closing(sign_in(url, bob.email)) as client:
        day = text_of(client.get(f"/p/CRW/handoffs?date={DAY}"))
        assert "Call the vendor" in day
        assert "Write your handoff" in day  # bob has none yet
        done = post_form(
            client,
            f"/p/CRW/handoff-items/{action['id']}",
            {"expected_updated_at": action["updatedAt"], "status": "done", "assignee": "",
             "due_date": ""},
        )  # fmt: skip
        assert done.status_code == 303
    item_now = handoff_calls.get_handoff_action_item(db, person_actor(bob), item_id=action["id"])
    assert (item_now["actionItem"]["status"], item_now["actionItem"]["assignee"]) == ("done", None)


def test_a_reader_sees_handoffs_without_forms_and_no_hidden_task(
    url: str, db: Database, owner: User
) -> None:
    make_project(db, owner, "SEC")
    make_task(db, owner, "SEC", "Rotate the secret keys")
    make_task(db, owner, "CRW", "Update the docs")
    handoff_calls.create_handoff(
        db, person_actor(owner), project="CRW", workspace_id=None, bodies=Bodies("Done."),
        day=DAY, linked_task_ids=["CRW-1", "SEC-1"],
    )  # fmt: skip
    reader = make_user(db, "reader@example.com")
    grant(db, owner, "CRW", reader, Role.READ)
    with closing(sign_in(url, reader.email)) as client:
        day = text_of(client.get(f"/p/CRW/handoffs?date={DAY}"))
    assert "Update the docs" in day
    assert "Rotate the secret keys" not in day
    assert "SEC-1" not in day
    assert "Write your handoff" not in day
    assert "New action item" not in day
    with closing(sign_in(url, reader.email)) as client:
        bad = client.get("/p/CRW/handoffs?date=yesterday")
    assert bad.status_code == 422
    assert "YYYY-MM-DD" in text_of(bad)


def test_an_admin_sets_the_shifts_and_the_assignee_notices_in_project_settings(
    url: str, db: Database, owner: User
) -> None:
    with closing(sign_in(url, owner.email)) as client:
        form = text_of(client.get("/p/CRW/settings/project"))
        assert 'value="Europe/Berlin"' in form
        saved = post_form(
            client,
            "/p/CRW/settings/project",
            {"shift_time_zone_a": "Asia/Tokyo", "shift_time_zone_b": "Europe/Berlin",
             "handoff_settings": "1"},  # the box left unticked: assignees are not told
        )  # fmt: skip
        assert saved.status_code == 303
        bad = post_form(
            client, "/p/CRW/settings/project",
            {"shift_time_zone_b": "Tokio", "next": "/p/CRW/settings/project"},
        )  # fmt: skip
        refused = text_of(client.get(bad.headers["location"]))
        assert "not an IANA time zone" in refused
    project = present.describe_project(db, person_actor(owner), "CRW")["project"]
    assert project["shiftTimeZones"] == {"a": "Asia/Tokyo", "b": "Europe/Berlin"}
    assert project["notifyActionItemAssignees"] is False


def test_a_refused_handoff_comes_back_open_with_what_was_typed(
    url: str, db: Database, owner: User, bob: User
) -> None:
    with closing(sign_in(url, owner.email)) as client:
        page = client.get(f"/p/CRW/handoffs?date={DAY}").text
        # closed until asked for
        assert '<details class="card handoff-write" id="write">' in page
        refused = post_form(
            client,
            "/p/CRW/handoffs",
            {"date": DAY, "shift": "b", "completed": "Half the rollout", "blockers": "",
             "in_progress": "", "next_steps": "", "linked_tasks": "CRW-404",
             "recipients": bob.id, "email": "1"},
        )  # fmt: skip
        assert refused.status_code in (404, 422)
        shown = text_of(refused)
        assert "Not saved:" in shown
        assert "Your text is still in the form." in shown
        assert '<details class="card handoff-write" id="write" open>' in refused.text
        assert re.search(r'<textarea id="w-completed"[^>]*>Half the rollout</textarea>', shown)
        assert 'value="CRW-404"' in shown
        assert re.search(rf'value="{bob.id}" checked', shown)
        assert re.search(r'name="email" value="1" checked', shown)
        assert re.search(r'<option value="b" selected>', shown)
        assert handoff_calls.list_handoffs(db, person_actor(owner), project="CRW")["handoffs"] == []
