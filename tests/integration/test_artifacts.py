"""Artifacts on both databases: create as revision 1, full and delta revisions, rollback by
adding a revision, the expected revision count, the limits (files, bytes a file and a
revision, slugs, paths), retention of the 50 newest (an older one is not found), the bytes of a
file stored once however many revisions or artifacts hold it, and collected once nothing names
them; text files in line windows, binaries refused; access, keys and events."""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from typing import Any

import pytest

from crewboard.contract.projects import present
from crewboard.contract.specs import present as attachments
from crewboard.domain.artifacts import KEPT_REVISIONS, MAX_FILE_BYTES, MAX_FILES
from crewboard.domain.files import digest_of
from crewboard.domain.identity.access import Role
from crewboard.domain.identity.records import Actor, User
from crewboard.errors import (
    AlreadyExists,
    ErrorCode,
    LimitExceeded,
    NotFound,
    PermissionDenied,
    RevisionConflict,
    StaleBaseRevision,
    ValidationFailed,
)
from crewboard.services.artifacts.artifacts import FileInput
from crewboard.services.identity.users import person_actor
from crewboard.storage.blobs import DatabaseBlobStore
from crewboard.storage.database import Database
from crewboard.storage.specs import tables as spec_tables
from tests.conftest import ONLY_POSTGRESQL
from tests.support import artifact_calls, spec_calls
from tests.support.factories import count_rows, grant, make_project, make_user, token_actor

PAGE = b"<!doctype html>\n<title>Login</title>\n<link rel=stylesheet href=site.css>\n"
CSS = b"body { font: 16px sans-serif; }\n"
LOGO = b"\x89PNG\r\n\x1a\n" + bytes(range(256))
ROOM = 40_000
THEIRS = b"<p>theirs</p>\n"
RED = b"p { color: red }\n"
NOW = datetime(2026, 12, 3, 9, 0, tzinfo=UTC)


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    return user


@pytest.fixture
def me(owner: User) -> Actor:
    return person_actor(owner)


def files(**named: bytes) -> list[FileInput]:
    return [
        FileInput(path.replace("__", "/").replace("_", "."), data) for path, data in named.items()
    ]


MOCKUP = files(index_html=PAGE, site_css=CSS, img__logo_png=LOGO)


def create(db: Database, actor: Actor, slug: str = "login", sent: list[FileInput] | None = None,
           **more: Any) -> dict[str, Any]:  # fmt: skip
    made = artifact_calls.create_artifact(
        db, actor, project="CRW", workspace_id=None, slug=slug, title=more.pop("title", None),
        description=more.pop("description", None), files=MOCKUP if sent is None else sent,
        idempotency_key=more.pop("key", None),
    )  # fmt: skip
    return made.body


def write(db: Database, actor: Actor, sent: list[FileInput], expected: int, **more: Any) -> Any:
    return artifact_calls.write_artifact_revision(
        db, actor, project="CRW", workspace_id=None, ref=more.pop("ref", "login"), files=sent,
        remove=more.pop("remove", []), base_revision=more.pop("base", None),
        expected_version=expected, idempotency_key=more.pop("key", None),
        merge_onto_current=more.pop("merge", False),
    ).body  # fmt: skip


def details(db: Database, actor: Actor, revision: int | None = None) -> dict[str, Any]:
    return artifact_calls.get_artifact(db, actor, project="CRW", ref="login", revision=revision)


def paths(body: dict[str, Any]) -> list[str]:
    return [f["path"] for f in body["files"]]


def checksum(db: Database, actor: Actor, path: str) -> str:
    """The newest revision's checksum of one file."""
    return str(next(f["checksum"] for f in details(db, actor)["files"] if f["path"] == path))


def test_create_makes_revision_one_with_each_files_facts(db: Database, me: Actor) -> None:
    made = create(db, me, title="Login mockup")
    assert made["artifact"]["slug"] == "login"
    assert made["artifact"]["title"] == "Login mockup"
    assert made["artifact"]["revisionCount"] == 1
    assert made["revision"]["kind"] == "full"
    shown = details(db, me)
    assert paths(shown) == ["img/logo.png", "index.html", "site.css"]
    by_path = {f["path"]: f for f in shown["files"]}
    assert by_path["index.html"]["type"] == "text/html"
    assert by_path["site.css"]["type"] == "text/css"
    assert by_path["img/logo.png"] == {
        "path": "img/logo.png", "type": "image/png", "kind": "binary", "size": len(LOGO),
        "checksum": f"sha256:{digest_of(LOGO)}", "totalLines": None,
    }  # fmt: skip
    assert by_path["index.html"]["totalLines"] == 3
    assert [r["revision"] for r in shown["revisions"]] == [1]
    listed = artifact_calls.list_artifacts(db, me, project="CRW")
    assert [(a["slug"], a["revisionCount"]) for a in listed["artifacts"]] == [("login", 1)]


def test_a_full_revision_replaces_every_file_and_a_delta_changes_only_what_it_names(
    db: Database, me: Actor
) -> None:
    create(db, me)
    delta = write(db, me, files(site_css=b"p { color: red }\n"), 1, base=1, remove=["img/logo.png"])
    assert (delta["revision"]["kind"], delta["revision"]["baseRevision"]) == ("delta", 1)
    now = details(db, me)
    assert paths(now) == ["index.html", "site.css"]
    index = next(f for f in now["files"] if f["path"] == "index.html")
    assert index["checksum"] == f"sha256:{digest_of(PAGE)}"  # from the base, revision 1
    full = write(db, me, files(index_html=b"<p>v3</p>\n"), 2)
    assert (full["revision"]["revision"], full["revision"]["kind"]) == (3, "full")
    assert paths(details(db, me)) == ["index.html"]
    # Older revisions never change.
    assert paths(details(db, me, revision=2)) == ["index.html", "site.css"]
    assert paths(details(db, me, revision=1)) == ["img/logo.png", "index.html", "site.css"]


def _someone_else_changes_the_page(db: Database, owner: User) -> Actor:
    """Revision 2, by another writer: a delta on revision 1 that changes only index.html."""
    other = token_actor(db, owner, ["read", "specs.write"])
    write(db, other, files(index_html=THEIRS), 1, base=1)
    return other


def test_a_delta_on_an_older_base_is_refused_naming_it_and_the_current_revision(
    db: Database, me: Actor, owner: User
) -> None:
    """The writer read revision 2 (expectedVersion 2) but built the delta on revision 1:
    applied there it would bring back revision 1's index.html. Nothing is written."""
    create(db, me)
    other = _someone_else_changes_the_page(db, owner)
    with pytest.raises(StaleBaseRevision) as stale:
        write(db, me, files(site_css=RED), 2, base=1)
    assert stale.value.code is ErrorCode.REVISION_CONFLICT
    assert stale.value.details["field"] == "baseRevision"
    assert stale.value.details["baseRevision"] == 1
    assert stale.value.details["currentRevision"] == 2
    assert stale.value.details["updatedBy"]["tokenId"] == other.token.id  # type: ignore[union-attr]
    assert "mergeOntoCurrent" in stale.value.message
    assert count_rows(db, "artifact_revisions") == 2
    assert checksum(db, me, "index.html") == "sha256:" + digest_of(THEIRS)


def test_merge_onto_current_applies_the_named_files_onto_the_newest_revision(
    db: Database, me: Actor, owner: User
) -> None:
    create(db, me)
    _someone_else_changes_the_page(db, owner)
    merged = write(
        db, me, files(site_css=RED), 2, base=1, merge=True,
        remove=["img/logo.png"],
    )  # fmt: skip
    assert (merged["revision"]["kind"], merged["revision"]["baseRevision"]) == ("delta", 2)
    assert paths(details(db, me)) == ["index.html", "site.css"]
    # Revision 2's change is kept, and the delta's file is added.
    assert checksum(db, me, "index.html") == "sha256:" + digest_of(THEIRS)
    assert checksum(db, me, "site.css") == "sha256:" + digest_of(RED)
    # A removal applies to the newest revision too: a path it no longer holds is refused.
    with pytest.raises(ValidationFailed) as gone:
        write(db, me, [], 3, base=1, merge=True, remove=["img/logo.png"])
    assert gone.value.details["field"] == "remove[0]"
    # On the newest revision the option changes nothing.
    same = write(db, me, files(extra_js=b"1;\n"), 3, base=3, merge=True)
    assert same["revision"]["baseRevision"] == 3


def test_merge_onto_current_without_a_base_is_refused_naming_it(db: Database, me: Actor) -> None:
    create(db, me)
    with pytest.raises(ValidationFailed) as refused:
        write(db, me, files(index_html=b"x\n"), 1, merge=True)
    assert refused.value.details["field"] == "mergeOntoCurrent"
    assert count_rows(db, "artifact_revisions") == 1


def test_a_delta_refuses_removing_what_the_base_lacks_or_what_it_also_sends(
    db: Database, me: Actor
) -> None:
    create(db, me)
    with pytest.raises(ValidationFailed) as missing:
        write(db, me, [], 1, base=1, remove=["nope.js"])
    assert missing.value.details["field"] == "remove[0]"
    with pytest.raises(ValidationFailed) as both:
        write(db, me, files(site_css=CSS), 1, base=1, remove=["site.css"])
    assert both.value.details["field"] == "remove[0]"
    with pytest.raises(ValidationFailed) as no_base:
        write(db, me, files(site_css=CSS), 1, remove=["index.html"])
    assert no_base.value.details["field"] == "remove"
    with pytest.raises(ValidationFailed) as emptied:
        write(db, me, [], 1, base=1, remove=["index.html", "site.css", "img/logo.png"])
    assert emptied.value.details["field"] == "files"
    assert details(db, me)["artifact"]["revisionCount"] == 1


def test_a_stale_expected_version_is_refused_naming_who_wrote_and_nothing_is_written(
    db: Database, me: Actor, owner: User
) -> None:
    create(db, me)
    other = token_actor(db, owner, ["read", "specs.write"])
    write(db, other, files(index_html=b"theirs\n"), 1)
    with pytest.raises(RevisionConflict) as stale:
        write(db, me, files(index_html=b"mine\n"), 1)
    assert stale.value.code is ErrorCode.REVISION_CONFLICT
    assert stale.value.details["currentVersion"] == 2
    assert stale.value.details["updatedBy"]["tokenId"] == other.token.id  # type: ignore[union-attr]
    assert "revision 2" in stale.value.message
    assert count_rows(db, "artifact_revisions") == 2


def test_rollback_adds_a_revision_with_the_old_files(db: Database, me: Actor) -> None:
    create(db, me)
    write(db, me, files(index_html=b"v2\n"), 1)
    back = artifact_calls.rollback_artifact(
        db, me, project="CRW", workspace_id=None, ref="login", revision=1, expected_version=2,
        idempotency_key=None,
    ).body  # fmt: skip
    assert (back["revision"]["revision"], back["revision"]["kind"]) == (3, "rollback")
    assert back["revision"]["baseRevision"] == 1
    assert paths(details(db, me)) == paths(details(db, me, revision=1))
    assert [r["revision"] for r in details(db, me)["revisions"]] == [3, 2, 1]


def test_only_the_fifty_newest_revisions_are_kept_and_older_ones_are_not_found(
    db: Database, me: Actor
) -> None:
    create(db, me, sent=files(index_html=b"revision 1\n"))
    for n in range(2, KEPT_REVISIONS + 2):  # up to revision 51
        write(db, me, files(index_html=f"revision {n}\n".encode()), n - 1)
    shown = details(db, me)
    assert shown["artifact"]["revisionCount"] == 51
    assert shown["artifact"]["oldestKeptRevision"] == 2
    assert len(shown["revisions"]) == KEPT_REVISIONS
    with pytest.raises(NotFound) as gone:
        details(db, me, revision=1)
    assert gone.value.details["oldestKept"] == 2
    with pytest.raises(NotFound):
        artifact_calls.rollback_artifact(
            db, me, project="CRW", workspace_id=None, ref="login", revision=1,
            expected_version=51, idempotency_key=None,
        )  # fmt: skip
    assert count_rows(db, "artifact_revisions") == KEPT_REVISIONS
    # Revision 1's bytes are named by nothing now: collected with it.
    assert count_rows(db, "blobs") == KEPT_REVISIONS


def test_the_same_bytes_are_stored_once_across_revisions_and_artifacts(
    db: Database, me: Actor
) -> None:
    create(db, me)
    write(db, me, files(site_css=b"p {}\n"), 1, base=1)  # logo and page unchanged
    create(db, me, slug="signup", sent=files(img__logo_png=LOGO))
    assert count_rows(db, "artifact_files") == 7
    assert count_rows(db, "blobs") == 4  # page, css, logo, the new css
    assert count_rows(db, "blob_chunks") == 4


def test_a_blob_another_area_still_names_is_not_collected(db: Database, me: Actor) -> None:
    spec_calls.upload_attachment(
        db, me, project="CRW", workspace_id=None, name="page.txt", content=b"revision 1\n",
        override=False, idempotency_key=None,
    )  # fmt: skip
    create(db, me, sent=files(index_html=b"revision 1\n"))
    for n in range(2, KEPT_REVISIONS + 2):
        write(db, me, files(index_html=f"revision {n}\n".encode()), n - 1)
    listed = attachments.list_attachments(db, me, project="CRW")["attachments"]
    read = attachments.read_attachment(
        db, me, project="CRW", attachment_id=listed[0]["id"], offset=1, limit=10
    )
    assert read["text"] == "revision 1\n"


def test_deleting_a_project_collects_its_bytes(db: Database, me: Actor, owner: User) -> None:
    create(db, me)
    present.set_project_archived(db, me, project="CRW", workspace_id=None, archived=True)
    present.delete_project(db, me, project="CRW", workspace_id=None)
    assert (count_rows(db, "artifacts"), count_rows(db, "blobs")) == (0, 0)
    assert count_rows(db, "blob_chunks") == 0


def test_limits_refuse_what_they_should_and_write_nothing(db: Database, me: Actor) -> None:
    too_many = [FileInput(f"f{n}.txt", b"x\n") for n in range(MAX_FILES + 1)]
    with pytest.raises(LimitExceeded) as many:
        create(db, me, sent=too_many)
    assert many.value.details == {"field": "files", "limit": MAX_FILES, "actual": MAX_FILES + 1}
    with pytest.raises(LimitExceeded) as big:
        create(db, me, sent=[FileInput("big.bin", bytes(MAX_FILE_BYTES + 1))])
    assert big.value.details["field"] == "files[0]"
    six = [FileInput(f"part{n}.bin", bytes([n]) * MAX_FILE_BYTES) for n in range(6)]
    with pytest.raises(LimitExceeded) as total:
        create(db, me, sent=six)  # 12 MiB in all
    assert total.value.details["limit"] == 10 * 1024 * 1024
    create(db, me, sent=six[:5])  # exactly 10 MiB
    for bad, field in (("../x", "files[0]"), ("/etc/passwd", "files[0]"), ("a\x00b", "files[0]")):
        with pytest.raises(ValidationFailed) as path:
            create(db, me, slug="other", sent=[FileInput(bad, b"x")])
        assert path.value.details["field"] == field
    with pytest.raises(ValidationFailed) as twice:
        create(db, me, slug="other", sent=[FileInput("a.txt", b"1"), FileInput("./a.txt", b"2")])
    assert twice.value.details["field"] == "files[1]"
    for slug in ("Login", "-x", "x-", "a b", "x" * 65, ""):
        with pytest.raises(ValidationFailed) as bad_slug:
            create(db, me, slug=slug)
        assert bad_slug.value.details["field"] == "slug"
    assert count_rows(db, "artifacts") == 1


def test_a_slug_is_unique_in_its_project(db: Database, me: Actor) -> None:
    first = create(db, me)
    with pytest.raises(AlreadyExists) as taken:
        create(db, me)
    assert taken.value.details["artifactId"] == first["artifact"]["id"]
    by_id = artifact_calls.get_artifact(db, me, project="CRW", ref=first["artifact"]["id"])
    assert by_id["artifact"]["slug"] == "login"


def test_text_files_read_in_windows_and_binaries_are_refused(db: Database, me: Actor) -> None:
    long = "".join(f"line {n}\n" for n in range(1, 5001)).encode()
    create(db, me, sent=[FileInput("app.js", long), FileInput("logo.png", LOGO)])
    pieces, offset = [], 1
    while offset is not None:
        window = artifact_calls.read_artifact_file(
            db, me, project="CRW", ref="login", path="app.js", offset=offset, limit=2000,
            room=ROOM,
        )  # fmt: skip
        pieces.append(window["text"])
        offset = window["nextOffset"]
    assert "".join(pieces).encode() == long
    with pytest.raises(ValidationFailed) as binary:
        artifact_calls.read_artifact_file(
            db, me, project="CRW", ref="login", path="logo.png", limit=10, room=ROOM
        )
    assert "binary" in binary.value.message
    with pytest.raises(NotFound):
        artifact_calls.read_artifact_file(
            db, me, project="CRW", ref="login", path="nope.txt", limit=10, room=ROOM
        )


def test_a_key_replays_and_events_say_what_was_written(db: Database, me: Actor) -> None:
    first = create(db, me, key="k1")
    again = artifact_calls.create_artifact(
        db, me, project="CRW", workspace_id=None, slug="login", title=None, description=None,
        files=MOCKUP, idempotency_key="k1",
    )  # fmt: skip
    assert again.replayed
    assert again.body["artifact"]["id"] == first["artifact"]["id"]
    write(db, me, files(index_html=b"v2\n"), 1)
    events = db.read(lambda uow: uow.events.list_after(project_id=None, limit=100))
    kinds = [(e["type"], e["payload"].get("revision")) for e in events if "artifact" in e["type"]]
    assert kinds == [("artifact.created", 1), ("artifact.revised", 2)]


def test_readers_read_and_only_writers_write(db: Database, me: Actor, owner: User) -> None:
    create(db, me)
    reader = make_user(db, "reader@example.com")
    grant(db, owner, "CRW", reader, Role.READ)
    as_reader = person_actor(reader)
    assert details(db, as_reader)["artifact"]["slug"] == "login"
    with pytest.raises(PermissionDenied):
        write(db, as_reader, files(index_html=b"x\n"), 1)
    stranger = person_actor(make_user(db, "stranger@example.com"))
    with pytest.raises(NotFound):
        details(db, stranger)
    read_only = token_actor(db, owner, ["read"])
    with pytest.raises(PermissionDenied):
        write(db, read_only, files(index_html=b"x\n"), 1)


# --- the collector against a concurrent put (PostgreSQL; SQLite runs writes one at a time) --


def _unreferenced_blob(db: Database, data: bytes) -> str:
    with db.engine.begin() as conn:
        return DatabaseBlobStore(conn, NOW).put(data)


@ONLY_POSTGRESQL
def test_a_put_waiting_on_a_collection_stores_the_bytes_again(db: Database) -> None:
    digest = _unreferenced_blob(db, b"shared bytes\n")
    collector = db.engine.connect()
    trans = collector.begin()
    assert DatabaseBlobStore(collector, NOW).collect({digest}) == {digest}  # row locked, gone
    stored = threading.Event()

    def put() -> None:
        with db.engine.begin() as conn:
            DatabaseBlobStore(conn, NOW).put(b"shared bytes\n")  # waits for the collector
        stored.set()

    worker = threading.Thread(target=put)
    worker.start()
    assert not stored.wait(0.5)  # blocked behind the collector's lock
    trans.commit()
    collector.close()
    worker.join(10)
    assert stored.is_set()
    with db.engine.connect() as conn:
        assert DatabaseBlobStore(conn, NOW).read(digest) == b"shared bytes\n"


@ONLY_POSTGRESQL
def test_a_collection_waiting_on_a_put_sees_its_reference_and_keeps_the_blob(
    db: Database, owner: User
) -> None:
    digest = _unreferenced_blob(db, b"shared bytes\n")
    project_id = db.read(lambda uow: uow.projects.get_by_key("CRW")).id  # type: ignore[union-attr]
    writer = db.engine.connect()
    trans = writer.begin()
    DatabaseBlobStore(writer, NOW).put(b"shared bytes\n")  # reuses it: FOR SHARE until commit
    collected: list[set[str]] = []

    def collect() -> None:
        with db.engine.begin() as conn:
            collected.append(DatabaseBlobStore(conn, NOW).collect({digest}))

    worker = threading.Thread(target=collect)
    worker.start()
    worker.join(0.5)
    assert worker.is_alive()  # waiting for the put's transaction
    writer.execute(
        spec_tables.attachments.insert(),
        {"id": "att_race", "project_id": project_id, "name": "race.txt", "kind": "text",
         "media_type": "text/plain", "size": 13, "digest": digest, "total_lines": 1,
         "line_marks": [0], "created_by": {}, "created_at": NOW, "updated_by": {},
         "updated_at": NOW},
    )  # fmt: skip
    trans.commit()
    writer.close()
    worker.join(10)
    assert collected == [set()]
    with db.engine.connect() as conn:
        assert DatabaseBlobStore(conn, NOW).read(digest) == b"shared bytes\n"
