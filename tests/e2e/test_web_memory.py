"""The memory pages over real HTTP: records by collection and document, record and document
edits with versions and conflicts, refusals as flashes, CSRF, escaping."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import closing
from typing import Any

import httpx2
import pytest

from crewboard.contract import memory_present
from crewboard.domain.identity.access import Role
from crewboard.domain.identity.records import User
from crewboard.domain.projects import Project
from crewboard.services.identity.users import person_actor
from crewboard.services.memory import records as memory
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork
from tests.support.factories import count_rows, grant, make_project, make_user
from tests.support.web import post_form, sign_in


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW", collections=["Architecture", "Runbooks"])
    make_project(db, user, "OTH")
    return user


@pytest.fixture
def client(url: str, owner: User) -> Iterator[httpx2.Client]:
    signed_in = sign_in(url, owner.email)
    yield signed_in
    signed_in.close()


def project_of(uow: UnitOfWork, key: str) -> Project:
    found = uow.projects.get_with_role(key, "")
    assert found is not None
    return found[0]


def file(db: Database, owner: User, key: str = "CRW", **fields: Any) -> dict[str, Any]:
    values: dict[str, Any] = {
        "title": "Login flow",
        "summary": "How sign-in works",
        "content": "Sessions are **cookies**.",
        "collection": None,
        "document": None,
        "source_draft_id": None,
        **fields,
    }
    actor = person_actor(owner)
    return memory_present.record_view(
        db.write(lambda uow: memory.file_record(uow, actor, project_of(uow, key), **values))
    )


def follow(client: httpx2.Client, answer: httpx2.Response) -> httpx2.Response:
    assert answer.status_code == 303, answer.text
    return client.get(answer.headers["location"])


def test_memory_lists_records_and_filters_by_collection_and_document(
    db: Database, owner: User, client: httpx2.Client
) -> None:
    file(db, owner, title="Deploy steps", collection="Runbooks")
    file(db, owner, title="Service map", collection="Architecture", document="decisions")

    everything = client.get("/p/CRW/memory")
    assert everything.status_code == 200
    assert "Deploy steps" in everything.text
    assert "Service map" in everything.text
    assert "/p/CRW/memory/documents/legal" in everything.text

    runbooks = client.get("/p/CRW/memory?collection=runbooks")
    assert "Deploy steps" in runbooks.text
    assert "Service map" not in runbooks.text

    decisions = client.get("/p/CRW/memory?document=decisions")
    assert "Service map" in decisions.text
    assert "Deploy steps" not in decisions.text

    # The Decisions document's own page lists what is filed in it, linked.
    document = client.get("/p/CRW/memory/documents/decisions")
    assert "Records filed in Decisions" in document.text
    filed = document.text.split("Records filed in Decisions", 1)[1].split("</section>", 1)[0]
    assert "Service map" in filed
    assert "/p/CRW/memory/records/mem_" in filed
    assert "Deploy steps" not in filed
    empty = client.get("/p/CRW/memory/documents/legal").text
    assert "No accepted record is filed here yet." in empty


def test_memory_pages_through_many_records(
    db: Database, owner: User, client: httpx2.Client
) -> None:
    for number in range(30):
        file(db, owner, title=f"Record {number:02d}")

    first = client.get("/p/CRW/memory")
    assert first.text.count("/p/CRW/memory/records/mem_") == 25
    assert "?offset=25" in first.text
    second = client.get("/p/CRW/memory?offset=25")
    assert second.text.count("/p/CRW/memory/records/mem_") == 5
    assert "?offset=0" in second.text


def test_memory_of_a_project_the_person_cannot_open_is_not_found(
    db: Database, url: str, owner: User
) -> None:
    stranger = make_user(db, "stranger@example.com")
    make_project(db, stranger, "SEC")
    record = file(db, owner)
    with closing(sign_in(url, stranger.email)) as client:
        assert client.get("/p/CRW/memory").status_code == 404
        assert client.get(f"/p/SEC/memory/records/{record['id']}").status_code == 404
        assert client.get("/p/CRW/memory/documents/overview").status_code == 404


def test_a_record_page_shows_content_source_and_versions(
    db: Database, owner: User, client: httpx2.Client
) -> None:
    record = file(db, owner, collection="Runbooks", document="notes", source_draft_id="drf_x1")

    answer = client.get(f"/p/CRW/memory/records/{record['id']}")
    assert answer.status_code == 200
    assert "<strong>cookies</strong>" in answer.text
    assert "/p/CRW/inbox/drafts/drf_x1" in answer.text
    assert "Runbooks" in answer.text
    assert "Version 1" in answer.text
    assert 'name="expected_version" value="1"' in answer.text
    assert f'name="next" value="/p/CRW/memory/records/{record["id"]}"' in answer.text


def test_a_record_of_another_project_is_not_found_under_this_one(
    db: Database, owner: User, client: httpx2.Client
) -> None:
    record = file(db, owner, key="OTH")
    assert client.get(f"/p/CRW/memory/records/{record['id']}").status_code == 404
    assert client.get(f"/p/OTH/memory/records/{record['id']}").status_code == 200


def test_editing_a_record_saves_a_new_version(
    db: Database, owner: User, client: httpx2.Client
) -> None:
    record = file(db, owner)
    path = f"/p/CRW/memory/records/{record['id']}"

    answer = post_form(
        client,
        path,
        {
            "expected_version": "1",
            "title": "Login flow v2",
            "summary": "Updated",
            "content": "Line one\r\nLine two",
            "status": "canon",
            "collection": "Architecture",
            "document": "decisions",
        },
    )
    shown = follow(client, answer)
    assert "Saved as version 2" in shown.text
    assert "Login flow v2" in shown.text
    saved = memory_present.get_record(db, person_actor(owner), record["id"])
    assert saved["version"] == 2
    assert saved["content"] == "Line one\nLine two"
    assert (saved["status"], saved["collection"], saved["document"]) == (
        "canon",
        "Architecture",
        "decisions",
    )
    assert "Version 2" in shown.text


def test_a_stale_record_edit_is_refused_naming_the_current_version_and_keeping_the_text(
    db: Database, owner: User, client: httpx2.Client
) -> None:
    record = file(db, owner)
    path = f"/p/CRW/memory/records/{record['id']}"
    fields = {"title": "T", "summary": "", "content": "first", "status": "approved"}
    follow(client, post_form(client, path, {**fields, "expected_version": "1"}))

    stale = post_form(client, path, {**fields, "content": "my edit", "expected_version": "1"})
    assert stale.status_code == 409
    assert "version 2" in stale.text
    assert "my edit" in stale.text
    assert 'name="expected_version" value="2"' in stale.text
    assert memory_present.get_record(db, person_actor(owner), record["id"])["content"] == "first"


def test_a_bad_record_field_comes_back_as_a_flash_naming_it_with_the_typed_text(
    db: Database, owner: User, client: httpx2.Client
) -> None:
    record = file(db, owner)
    path = f"/p/CRW/memory/records/{record['id']}"
    answer = post_form(
        client,
        path,
        {
            "next": path,
            "expected_version": "1",
            "title": "",
            "content": "x\r\ny",
            "status": "approved",
        },
    )
    assert answer.status_code == 422
    assert "Title" in answer.text.split('class="flash')[1]
    assert "x\ny</textarea>" in answer.text  # what was typed stays in the form


def test_a_reader_cannot_edit_memory(db: Database, url: str, owner: User) -> None:
    reader = make_user(db, "reader@example.com")
    grant(db, owner, "CRW", reader, Role.READ)
    record = file(db, owner)
    path = f"/p/CRW/memory/records/{record['id']}"
    with closing(sign_in(url, reader.email)) as client:
        assert client.get(path).status_code == 200
        answer = post_form(
            client,
            path,
            {"next": path, "expected_version": "1", "title": "Mine", "status": "approved"},
        )
        flash = follow(client, answer).text.split('class="flash error"')[1]
        assert "write" in flash
    assert memory_present.get_record(db, person_actor(owner), record["id"])["version"] == 1


def test_a_memory_form_without_its_token_is_refused(
    db: Database, owner: User, client: httpx2.Client
) -> None:
    record = file(db, owner)
    answer = client.post(
        f"/p/CRW/memory/records/{record['id']}",
        data={"expected_version": "1", "title": "x", "status": "approved"},
    )
    assert answer.status_code == 403
    document = client.post(
        "/p/CRW/memory/documents/notes", data={"expected_version": "0", "content": "x"}
    )
    assert document.status_code == 403
    assert memory_present.get_record(db, person_actor(owner), record["id"])["version"] == 1
    assert count_rows(db, "project_document_versions") == 0


def test_reading_memory_pages_changes_nothing(
    db: Database, owner: User, client: httpx2.Client
) -> None:
    record = file(db, owner)
    before = count_rows(db, "events")
    for path in (
        "/p/CRW/memory",
        f"/p/CRW/memory/records/{record['id']}",
        "/p/CRW/memory/documents/overview",
        "/memory",
    ):
        assert client.get(path).status_code in (200, 303)
    assert count_rows(db, "events") == before
    assert count_rows(db, "memory_record_versions") == 1


def test_agent_text_in_a_record_shows_as_text(
    db: Database, owner: User, client: httpx2.Client
) -> None:
    record = file(
        db,
        owner,
        title="<script>alert(1)</script>",
        summary="<img src=x onerror=alert(2)>",
        content="<script>alert(3)</script>\n\n[x](javascript:alert(4))",
    )
    listing = client.get("/p/CRW/memory")
    page = client.get(f"/p/CRW/memory/records/{record['id']}")
    for text in (listing.text, page.text):
        assert "<script>alert" not in text
        assert "<img src=x" not in text
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert 'href="javascript' not in page.text


def test_a_document_page_saves_versions_and_refuses_a_stale_save(
    db: Database, owner: User, client: httpx2.Client
) -> None:
    path = "/p/CRW/memory/documents/decisions"
    empty = client.get(path)
    assert empty.status_code == 200
    assert "Nothing written yet" in empty.text
    assert 'name="expected_version" value="0"' in empty.text

    saved = follow(
        client, post_form(client, path, {"expected_version": "0", "content": "# We chose SQLite"})
    )
    assert "Saved as version 1" in saved.text
    assert "<h1>We chose SQLite</h1>" in saved.text

    stale = post_form(client, path, {"expected_version": "0", "content": "my other text"})
    assert stale.status_code == 409
    assert "version 1" in stale.text
    assert "my other text" in stale.text
    assert count_rows(db, "project_document_versions") == 1


def test_an_unknown_document_is_not_found(client: httpx2.Client) -> None:
    assert client.get("/p/CRW/memory/documents/secrets").status_code == 404
