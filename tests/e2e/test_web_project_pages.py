"""The state, week, team and activity pages over real HTTP: forms, conflicts, refusals as
flashes, admin-only forms, CSRF, escaping."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import closing
from datetime import timedelta

import httpx2
import pytest

from crewboard.contract.projects import present
from crewboard.domain.clock import ManualClock
from crewboard.domain.identity.access import Role
from crewboard.domain.identity.records import User
from crewboard.services.board import tasks
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support.factories import count_rows, grant, make_project, make_user
from tests.support.web import post_form, sign_in


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    return user


@pytest.fixture
def writer(db: Database, owner: User) -> User:
    user = make_user(db, "writer@example.com")
    grant(db, owner, "CRW", user, Role.WRITE)
    return user


@pytest.fixture
def client(url: str, owner: User) -> Iterator[httpx2.Client]:
    signed_in = sign_in(url, owner.email)
    yield signed_in
    signed_in.close()


def follow(client: httpx2.Client, answer: httpx2.Response) -> httpx2.Response:
    assert answer.status_code == 303, answer.text
    return client.get(answer.headers["location"])


def flash_of(page: httpx2.Response) -> str:
    parts = page.text.split('class="flash ')
    assert len(parts) > 1, page.text
    return parts[1].split("</div>")[0]


def save_state(db: Database, owner: User, text: str, revision: int) -> None:
    present.update_project_state(
        db,
        person_actor(owner),
        project="CRW",
        workspace_id=None,
        content=text,
        expected_revision=revision,
    )


def current_state(db: Database, owner: User) -> dict[str, object]:
    return present.get_project_state(db, person_actor(owner), project="CRW")


# --- state -----------------------------------------------------------------------------------


def test_the_state_page_renders_the_text_and_its_versions(
    db: Database, owner: User, client: httpx2.Client
) -> None:
    save_state(db, owner, "We ship **Friday**.", 0)
    answer = client.get("/p/CRW/state")
    assert answer.status_code == 200
    assert "<strong>Friday</strong>" in answer.text
    assert 'name="revision" value="1"' in answer.text
    assert "Revision 1" in answer.text
    assert client.get("/state").headers["location"] == "/p/CRW/state"


def test_saving_the_state_page_adds_a_revision(
    db: Database, owner: User, client: httpx2.Client
) -> None:
    answer = post_form(
        client, "/p/CRW/state", {"next": "/p/CRW/state", "revision": "0", "content": "a\r\nb"}
    )
    shown = follow(client, answer)
    assert "Saved as revision 1" in flash_of(shown)
    page = current_state(db, owner)
    assert (page["revision"], page["content"]) == (1, "a\nb")


def test_a_stale_state_save_flashes_the_current_revision_and_keeps_the_text(
    db: Database, owner: User, client: httpx2.Client
) -> None:
    save_state(db, owner, "first", 0)
    save_state(db, owner, "second", 1)
    answer = post_form(
        client, "/p/CRW/state", {"next": "/p/CRW/state", "revision": "1", "content": "mine"}
    )
    assert answer.status_code == 409
    assert "revision 2" in flash_of(answer)
    assert "mine" in answer.text
    assert 'name="revision" value="2"' in answer.text
    assert current_state(db, owner)["content"] == "second"


def test_a_state_page_over_the_limit_is_refused_naming_the_limit(
    db: Database, owner: User, client: httpx2.Client
) -> None:
    answer = post_form(
        client, "/p/CRW/state", {"next": "/p/CRW/state", "revision": "0", "content": "x" * 5001}
    )
    assert answer.status_code == 422
    assert "5000" in flash_of(answer)
    assert "x" * 5001 + "</textarea>" in answer.text  # the typed text stays in the form
    assert current_state(db, owner)["revision"] == 0


def test_restoring_a_state_version_saves_it_as_the_newest(
    db: Database, owner: User, client: httpx2.Client
) -> None:
    save_state(db, owner, "old plan", 0)
    save_state(db, owner, "new plan", 1)
    page = client.get("/p/CRW/state")
    assert 'name="restore" value="1"' in page.text
    answer = post_form(
        client,
        "/p/CRW/state/restore",
        {"next": "/p/CRW/state", "revision": "2", "restore": "1"},
    )
    assert "Restored revision 1 as revision 3" in flash_of(follow(client, answer))
    assert current_state(db, owner)["content"] == "old plan"


def test_a_reader_sees_no_state_form_and_cannot_save(db: Database, url: str, owner: User) -> None:
    reader = make_user(db, "reader@example.com")
    grant(db, owner, "CRW", reader, Role.READ)
    with closing(sign_in(url, reader.email)) as client:
        page = client.get("/p/CRW/state")
        assert page.status_code == 200
        assert 'action="/p/CRW/state"' not in page.text
        answer = post_form(
            client, "/p/CRW/state", {"next": "/p/CRW/state", "revision": "0", "content": "x"}
        )
        assert "write" in flash_of(follow(client, answer))
    assert current_state(db, owner)["revision"] == 0


def test_project_page_forms_without_the_token_are_refused(
    db: Database, owner: User, client: httpx2.Client
) -> None:
    for path, data in (
        ("/p/CRW/state", {"revision": "0", "content": "x"}),
        ("/p/CRW/state/restore", {"revision": "0", "restore": "1"}),
        ("/p/CRW/team/roles", {"name": "Reviewer"}),
        ("/p/CRW/team/members", {"email": "owner@example.com", "role": "read"}),
        ("/p/CRW/team/members/remove", {"email": "owner@example.com"}),
    ):
        assert client.post(path, data=data).status_code == 403, path
    assert current_state(db, owner)["revision"] == 0
    assert count_rows(db, "team_roles") == 0


def test_state_text_is_escaped(db: Database, owner: User, client: httpx2.Client) -> None:
    save_state(db, owner, "<script>alert(1)</script>", 0)
    page = client.get("/p/CRW/state")
    assert "<script>alert" not in page.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text


# --- week ------------------------------------------------------------------------------------


def test_the_week_shows_due_tasks_in_the_chosen_zone_with_navigation(
    db: Database, owner: User, client: httpx2.Client
) -> None:
    tasks.create_task(
        db,
        person_actor(owner),
        project="CRW",
        workspace_id=None,
        idempotency_key=None,
        title="<b>Ship</b> it",
        due_date="2026-03-04",
    )
    answer = client.get("/p/CRW/week?week=2026-03-04&tz=Europe/Berlin")
    assert answer.status_code == 200
    assert "Week of 2 March 2026" in answer.text
    assert "Wednesday 04 March" in answer.text
    assert "/p/CRW/tasks/CRW-1" in answer.text
    assert "&lt;b&gt;Ship&lt;/b&gt; it" in answer.text
    assert "week=2026-02-23&amp;tz=Europe/Berlin" in answer.text
    assert "week=2026-03-09&amp;tz=Europe/Berlin" in answer.text
    assert 'value="Europe/Berlin"' in answer.text


def test_an_unknown_time_zone_shows_the_week_with_the_mistake_named(
    client: httpx2.Client,
) -> None:
    answer = client.get("/p/CRW/week?tz=Mars/Olympus")
    assert answer.status_code == 400
    assert "Mars/Olympus" in flash_of(answer)
    bad_date = client.get("/p/CRW/week?week=someday")
    assert "Week" in flash_of(bad_date)


# --- team ------------------------------------------------------------------------------------


def test_the_team_page_lists_roles_and_people_with_admin_forms(
    db: Database, owner: User, writer: User, client: httpx2.Client
) -> None:
    present.add_team_role(
        db, person_actor(owner), project="CRW", name="<i>Coder</i>", model="m1", effort="high"
    )
    page = client.get("/p/CRW/team")
    assert page.status_code == 200
    assert "&lt;i&gt;Coder&lt;/i&gt;" in page.text
    assert "m1 · high" in page.text
    assert "writer@example.com" in page.text
    assert 'action="/p/CRW/team/roles"' in page.text
    assert 'action="/p/CRW/team/members"' in page.text


def test_a_writer_sees_the_team_without_forms_and_is_refused_changes(
    db: Database, url: str, owner: User, writer: User
) -> None:
    role = present.add_team_role(db, person_actor(owner), project="CRW", name="Coder")
    with closing(sign_in(url, writer.email)) as client:
        page = client.get("/p/CRW/team")
        assert page.status_code == 200
        assert "Coder" in page.text
        assert 'action="/p/CRW/team/roles"' not in page.text
        assert "owner@example.com" not in page.text
        for path, data in (
            ("/p/CRW/team/roles", {"name": "Mine", "kind": "ai"}),
            (f"/p/CRW/team/roles/{role['id']}/archive", {}),
            ("/p/CRW/team/members", {"email": writer.email, "role": "admin"}),
            ("/p/CRW/team/members/remove", {"email": "owner@example.com"}),
        ):
            answer = post_form(client, path, {"next": "/p/CRW/team", **data})
            assert answer.headers["location"] == "/p/CRW/team", path
            assert "admin" in flash_of(follow(client, answer)), path
    roles = present.get_team_page(db, person_actor(owner), project="CRW")
    assert [r["name"] for r in roles["roles"]] == ["Coder"]
    assert {p["email"]: p["projectRole"] for p in roles["people"]}[writer.email] == "write"


def test_an_admin_adds_and_archives_a_role(
    db: Database, owner: User, writer: User, client: httpx2.Client
) -> None:
    answer = post_form(
        client,
        "/p/CRW/team/roles",
        {
            "next": "/p/CRW/team",
            "name": "Reviewer",
            "role": "Reads every change",
            "kind": "human",
            "member_email": writer.email,
            "model": "",
            "effort": "",
            "rank": "3",
        },
    )
    assert "Added the role Reviewer" in flash_of(follow(client, answer))
    (role,) = present.get_team_page(db, person_actor(owner), project="CRW")["roles"]
    assert (role["kind"], role["memberName"], role["rank"]) == ("human", "writer", 3)

    archived = post_form(client, f"/p/CRW/team/roles/{role['id']}/archive", {"next": "/p/CRW/team"})
    assert "Archived the role Reviewer" in flash_of(follow(client, archived))
    assert present.get_team_page(db, person_actor(owner), project="CRW")["roles"] == []
    again = post_form(client, f"/p/CRW/team/roles/{role['id']}/archive", {"next": "/p/CRW/team"})
    assert role["id"] in flash_of(follow(client, again))


def test_an_admin_removes_a_person_from_the_project_but_never_its_last_admin(
    db: Database, owner: User, writer: User, client: httpx2.Client
) -> None:
    page = client.get("/p/CRW/team")
    assert 'action="/p/CRW/team/members/remove"' in page.text
    answer = post_form(
        client, "/p/CRW/team/members/remove", {"email": writer.email, "next": "/p/CRW/team"}
    )
    assert "no longer has a role" in flash_of(follow(client, answer))
    people = present.get_team_page(db, person_actor(owner), project="CRW")["people"]
    assert [p["email"] for p in people] == [owner.email]
    # The page offers no Remove for yourself; a hand-made form is refused all the same.
    last = post_form(
        client, "/p/CRW/team/members/remove", {"email": owner.email, "next": "/p/CRW/team"}
    )
    assert "last admin" in flash_of(follow(client, last))
    assert client.get("/p/CRW/team").status_code == 200  # still the admin


def test_a_bad_role_is_refused_naming_the_field(client: httpx2.Client) -> None:
    answer = post_form(
        client, "/p/CRW/team/roles", {"next": "/p/CRW/team", "name": "", "kind": "ai"}
    )
    assert 'alert">Name: must not be empty.' in flash_of(follow(client, answer))


def test_an_admin_adds_a_person_and_changes_their_role(
    db: Database, owner: User, client: httpx2.Client
) -> None:
    newcomer = make_user(db, "new@example.com")
    added = post_form(
        client,
        "/p/CRW/team/members",
        {"next": "/p/CRW/team", "email": newcomer.email, "role": "read"},
    )
    assert "new@example.com now has the read role" in flash_of(follow(client, added))
    changed = post_form(
        client,
        "/p/CRW/team/members",
        {"next": "/p/CRW/team", "email": newcomer.email, "role": "write"},
    )
    follow(client, changed)
    people = present.get_team_page(db, person_actor(owner), project="CRW")["people"]
    assert {p["email"]: p["projectRole"] for p in people}[newcomer.email] == "write"
    unknown = post_form(
        client,
        "/p/CRW/team/members",
        {"next": "/p/CRW/team", "email": "no@example.com", "role": "read"},
    )
    assert "no@example.com" in flash_of(follow(client, unknown))


# --- activity --------------------------------------------------------------------------------


def test_activity_lists_the_newest_entries_in_a_live_region(
    db: Database, owner: User, client: httpx2.Client
) -> None:
    tasks.create_task(
        db,
        person_actor(owner),
        project="CRW",
        workspace_id=None,
        idempotency_key=None,
        title="<script>alert(1)</script>",
    )
    save_state(db, owner, "x", 0)
    page = client.get("/p/CRW/activity")
    assert page.status_code == 200
    assert 'data-live="activity"' in page.text
    assert "data-live-region" in page.text
    assert "updated the project state page" in page.text
    assert "/p/CRW/tasks/CRW-1" in page.text
    assert "<script>alert" not in page.text
    assert "owner" in page.text
    assert page.text.index("updated the project state page") < page.text.index("CRW-1")


# --- every page ------------------------------------------------------------------------------


def test_project_pages_of_a_project_the_person_cannot_open_are_not_found(
    db: Database, url: str, owner: User
) -> None:
    stranger = make_user(db, "stranger@example.com")
    make_project(db, stranger, "SEC")
    with closing(sign_in(url, stranger.email)) as client:
        for page in ("state", "week", "team", "activity"):
            assert client.get(f"/p/CRW/{page}").status_code == 404, page
            assert client.get(f"/p/SEC/{page}").status_code == 200, page


def test_reading_project_pages_changes_nothing(
    db: Database, owner: User, client: httpx2.Client
) -> None:
    before = count_rows(db, "events")
    for page in ("state", "week", "team", "activity"):
        assert client.get(f"/p/CRW/{page}").status_code == 200
        assert client.get(
            f"/p/CRW/{page}/restore" if page == "state" else f"/{page}"
        ).status_code in (303, 404, 405)
    assert count_rows(db, "events") == before


def test_the_week_shows_in_progress_stretches_in_local_time(
    db: Database, owner: User, client: httpx2.Client, clock: ManualClock
) -> None:
    actor = person_actor(owner)
    coder = present.add_team_role(db, actor, project="CRW", name="Coder")
    tasks.create_task(
        db,
        actor,
        project="CRW",
        workspace_id=None,
        idempotency_key=None,
        title="Build",
        status="in_progress",
        assignee_id=coder["id"],
    )
    clock.advance(timedelta(hours=2))
    page = client.get("/p/CRW/week?tz=Europe/Berlin")
    assert "Monday 02 March" in page.text
    assert "10:00–12:00" in page.text
    assert "Build · Coder" in page.text
    assert "AI: 2 h" in page.text
    assert '<span class="badge">In progress</span>' in page.text  # a label, not the API value
    assert ">in_progress<" not in page.text
