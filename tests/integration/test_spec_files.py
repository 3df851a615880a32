"""Spec files through the services, on SQLite and PostgreSQL: upload, lists, saves from the
version read (and two writers racing), line windows of large files, the trash bin, access,
keyed uploads, content-addressed blobs in the database or a folder, events, migration 0013."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import event
from sqlalchemy.engine import URL

from crewboard.contract.specs import present as files
from crewboard.domain.clock import ManualClock
from crewboard.domain.files import MAX_WINDOW_LINES, digest_of
from crewboard.domain.identity.access import Role
from crewboard.domain.identity.records import Actor, User
from crewboard.domain.specs import MAX_READ_BYTES
from crewboard.errors import CrewboardError, ErrorCode, RevisionConflict
from crewboard.services.identity.users import person_actor
from crewboard.services.specs.file_lookup import FileRef
from crewboard.services.text_windows import text_size
from crewboard.storage import migrate
from crewboard.storage.blobs import CHUNK
from crewboard.storage.database import Database
from tests.conftest import ONLY_POSTGRESQL
from tests.support import spec_calls
from tests.support.errors import refused
from tests.support.factories import count_rows, grant, make_project, make_user, token_actor

KEY = "CRW"
MIB = 1024 * 1024


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "owner@example.com")
    make_project(db, user, KEY)
    return user


@pytest.fixture
def actor(owner: User) -> Actor:
    return person_actor(owner)


def as_bytes(content: bytes | str) -> bytes:
    return content.encode() if isinstance(content, str) else content


def upload(
    db: Database,
    actor: Actor,
    path: str,
    content: bytes | str = "# Spec\n",
    *,
    project: str = KEY,
    key: str | None = None,
) -> dict[str, Any]:
    """The uploaded file's view."""
    made = spec_calls.upload_spec_file(
        db, actor, project=project, workspace_id=None, path=path, content=as_bytes(content),
        idempotency_key=key,
    )  # fmt: skip
    return dict(made.body["file"])


def update(
    db: Database,
    actor: Actor,
    file_id: str,
    content: bytes | str,
    expected: str,
    *,
    project: str = KEY,
) -> dict[str, Any]:
    """The answer of the save: `file` and the new `revision`."""
    saved = spec_calls.update_spec_file(
        db, actor, project=project, workspace_id=None, ref=FileRef(file_id=file_id),
        content=as_bytes(content), expected_version=expected, idempotency_key=None,
    )  # fmt: skip
    return dict(saved.body)


def read(
    db: Database, actor: Actor, file_id: str, *, project: str = KEY, **options: Any
) -> dict[str, Any]:
    return files.read_spec_file(db, actor, project=project, ref=FileRef(file_id=file_id), **options)


def read_from(
    db: Database, actor: Actor, file_id: str, offset: int = 1, **options: Any
) -> list[dict[str, Any]]:
    """Every window from line `offset` to the end, each from the previous one's nextOffset."""
    windows = []
    while True:
        window = read(db, actor, file_id, offset=offset, **options)
        windows.append(window)
        if window["nextOffset"] is None:
            return windows
        assert window["nextOffset"] == offset + window["lines"]
        offset = window["nextOffset"]


def joined(windows: list[dict[str, Any]]) -> bytes:
    return "".join(window["text"] for window in windows).encode()


def listed(db: Database, actor: Actor, **options: Any) -> list[str]:
    found = files.list_spec_files(db, actor, project=KEY, **options)
    return [file["path"] for file in found["files"]]


def trash(db: Database, actor: Actor, file_id: str) -> dict[str, Any]:
    return spec_calls.move_spec_file_to_trash(
        db, actor, project=KEY, workspace_id=None, ref=FileRef(file_id=file_id)
    )


def restore(db: Database, actor: Actor, file_id: str) -> dict[str, Any]:
    return spec_calls.restore_spec_file_from_trash(
        db, actor, project=KEY, workspace_id=None, ref=FileRef(file_id=file_id)
    )


def events_of(db: Database, type_: str) -> list[dict[str, Any]]:
    rows = db.read(lambda uow: uow.events.list_after(project_id=None, limit=1000))
    return [row["payload"] for row in rows if row["type"] == type_]


def big_text(size: int) -> bytes:
    """Exactly `size` bytes of UTF-8 text: ASCII, CJK and emoji lines, LF and CRLF endings,
    control characters and quotes (longer as JSON than as bytes), no newline at the end."""
    kinds = [
        "Plain line {n}: the quick brown fox jumps over the lazy dog.\r\n",
        "漢字かな交じり文 {n} — emoji 🙂🚀 and accents: déjà vu\n",
        'Quotes "{n}", a \\ backslash, a \t tab and a \x01 control\r\n',
        "\n",
        "{n}" * 40 + "\n",
    ]
    out = bytearray()
    for n in itertools.count():
        line = kinds[n % len(kinds)].format(n=n).encode()
        if len(out) + len(line) > size - 1:
            break
        out += line
    out += b"x" * (size - len(out))
    return bytes(out)


# --- upload, get, list -------------------------------------------------------------------------


def test_an_upload_is_stored_at_its_normalised_path_and_found_by_id_or_path(
    db: Database, actor: Actor
) -> None:
    made = upload(db, actor, "./docs//design.md/", "# Design\r\nLine two\n")

    assert made["path"] == "docs/design.md"
    assert made["id"].startswith("spf_")
    assert (made["kind"], made["size"], made["totalLines"]) == ("text", 19, 2)
    assert made["revisionCount"] == 1
    assert made["trashed"] is False
    by_id = files.get_spec_file(db, actor, project=KEY, ref=FileRef(file_id=made["id"]))
    by_path = files.get_spec_file(db, actor, project=KEY, ref=FileRef(path="docs/./design.md"))
    assert by_id == by_path == {"file": made}
    assert joined(read_from(db, actor, made["id"])) == b"# Design\r\nLine two\n"


def test_a_file_is_named_by_exactly_one_of_id_and_path(db: Database, actor: Actor) -> None:
    made = upload(db, actor, "a.md")

    for ref in (FileRef(), FileRef(file_id=made["id"], path="a.md")):
        error = refused(ErrorCode.VALIDATION, files.get_spec_file, db, actor, project=KEY, ref=ref)
        assert error.details["field"] == "fileId"
    error = refused(
        ErrorCode.VALIDATION, files.get_spec_file, db, actor, project=KEY, ref=FileRef(path="../a")
    )
    assert error.details["field"] == "path"


def test_the_list_is_in_path_order_and_a_folder_filter_keeps_only_that_folder(
    db: Database, actor: Actor
) -> None:
    for path in ["b.md", "docs/x.md", "docsx.md", "a.md", "docs-old/z.md", "docs/sub/y.md"]:
        upload(db, actor, path)

    assert listed(db, actor) == [
        "a.md",
        "b.md",
        "docs-old/z.md",
        "docs/sub/y.md",
        "docs/x.md",
        "docsx.md",
    ]
    for folder in ("docs", "docs/", "./docs//"):
        assert listed(db, actor, path=folder) == ["docs/sub/y.md", "docs/x.md"]
    assert listed(db, actor, path="docs/sub") == ["docs/sub/y.md"]
    assert listed(db, actor, path="nowhere") == []
    assert refused(
        ErrorCode.VALIDATION, files.list_spec_files, db, actor, project=KEY, path="/docs"
    ).details == {"field": "path"}


@ONLY_POSTGRESQL
def test_a_folder_filter_and_the_order_follow_the_bytes_under_a_language_collation(
    db: Database, actor: Actor
) -> None:
    """A server whose databases sort by a language (en_US, ICU) must not put `Docs/…` or
    `docs#…` in the folder `docs`: the range compares paths as bytes."""
    with db.engine.begin() as conn:
        conn.exec_driver_sql(
            'ALTER TABLE spec_files ALTER COLUMN path TYPE varchar(512) COLLATE "en-US-x-icu"'
        )
    for path in ["docs/a.md", "Docs/b.md", "docs#c.md", "docs+d.md", "docs/é.md", "e.md"]:
        upload(db, actor, path)

    assert listed(db, actor, path="docs") == ["docs/a.md", "docs/é.md"]
    assert listed(db, actor) == [
        "Docs/b.md",
        "docs#c.md",
        "docs+d.md",
        "docs/a.md",
        "docs/é.md",
        "e.md",
    ]


def test_lists_come_50_at_a_time_up_to_200_and_a_larger_page_is_refused(
    db: Database, actor: Actor
) -> None:
    paths = [f"notes/{n:03}.md" for n in range(201)]
    for path in paths:
        upload(db, actor, path, path)

    first = files.list_spec_files(db, actor, project=KEY)
    assert [f["path"] for f in first["files"]] == paths[:50]
    assert (first["total"], first["nextOffset"]) == (201, 50)
    most = files.list_spec_files(db, actor, project=KEY, limit=200, offset=50)
    assert [f["path"] for f in most["files"]] == paths[50:201]
    assert most["nextOffset"] is None
    page = files.list_spec_files(db, actor, project=KEY, limit=200)
    assert (len(page["files"]), page["nextOffset"]) == (200, 200)
    error = refused(ErrorCode.VALIDATION, files.list_spec_files, db, actor, project=KEY, limit=201)
    assert error.details["field"] == "limit"
    error = refused(ErrorCode.VALIDATION, files.list_spec_files, db, actor, project=KEY, offset=-1)
    assert error.details["field"] == "offset"


@pytest.mark.parametrize("trashed", [False, True], ids=["live", "in-the-trash"])
def test_a_second_upload_at_the_same_path_is_refused_naming_the_path(
    db: Database, actor: Actor, trashed: bool
) -> None:
    made = upload(db, actor, "docs/spec.md", "first")
    if trashed:
        trash(db, actor, made["id"])

    error = refused(ErrorCode.ALREADY_EXISTS, upload, db, actor, "./docs//spec.md", "second")

    assert error.details == {"field": "path", "fileId": made["id"], "path": "docs/spec.md"}
    assert "docs/spec.md" in error.message
    assert ("trash" in error.message) is trashed
    assert count_rows(db, "spec_files") == 1
    assert count_rows(db, "spec_file_revisions") == 1


# --- saving from the version read --------------------------------------------------------------


def test_a_save_from_the_current_version_adds_revision_two_and_keeps_revision_one(
    db: Database, actor: Actor, clock: ManualClock
) -> None:
    made = upload(db, actor, "spec.md", "one\n")
    clock.advance(timedelta(minutes=5))

    saved = update(db, actor, made["id"], "two\nlines\n", made["contentVersion"])

    file = saved["file"]
    assert (file["revisionCount"], saved["revision"]["revision"]) == (2, 2)
    assert file["contentVersion"] == saved["revision"]["contentVersion"]
    assert file["contentVersion"] not in (made["contentVersion"], "2", 2)
    assert not file["contentVersion"].removeprefix("cv_").isdigit()
    assert (file["size"], file["totalLines"]) == (10, 2)
    assert file["updatedAt"] == clock.now().isoformat()
    assert file["createdAt"] == made["createdAt"] != file["updatedAt"]
    newest = read(db, actor, made["id"])
    assert (newest["text"], newest["revision"]) == ("two\nlines\n", 2)
    older = read(db, actor, made["id"], revision=1)
    assert (older["text"], older["revision"], older["totalLines"]) == ("one\n", 1, 1)
    assert older["contentVersion"] == made["contentVersion"]
    error = refused(ErrorCode.NOT_FOUND, read, db, actor, made["id"], revision=3)
    assert error.details["revision"] == 3
    got = files.get_spec_file(
        db, actor, project=KEY, ref=FileRef(file_id=made["id"]), revisions_limit=5
    )
    assert [r["revision"] for r in got["revisions"]] == [2, 1]
    assert got["revisions"][1]["savedAt"] == made["createdAt"]
    for wrong in (-1, 201):
        error = refused(
            ErrorCode.VALIDATION, files.get_spec_file, db, actor, project=KEY,
            ref=FileRef(file_id=made["id"]), revisions_limit=wrong,
        )  # fmt: skip
        assert error.details["field"] == "revisions"


def test_a_save_from_a_stale_version_names_who_saved_and_when_and_writes_nothing(
    db: Database, owner: User, actor: Actor, clock: ManualClock
) -> None:
    colleague = make_user(db, "ada@example.com")
    grant(db, owner, KEY, colleague, Role.WRITE)
    made = upload(db, actor, "spec.md", "base\n")
    clock.advance(timedelta(minutes=3))
    theirs = update(db, person_actor(colleague), made["id"], "theirs\n", made["contentVersion"])
    blobs_before = count_rows(db, "blobs")
    clock.advance(timedelta(minutes=1))

    error = refused(
        ErrorCode.REVISION_CONFLICT, update, db, actor, made["id"], "mine\n", made["contentVersion"]
    )

    saved_at = theirs["file"]["updatedAt"]
    assert saved_at == (clock.now() - timedelta(minutes=1)).isoformat()
    assert "ada" in error.message
    assert saved_at in error.message
    assert error.details["field"] == "expectedVersion"
    assert error.details["updatedBy"]["userId"] == colleague.id
    assert error.details["updatedAt"] == saved_at
    assert error.details["currentVersion"] == theirs["file"]["contentVersion"]
    assert error.details["currentRevision"] == 2
    assert count_rows(db, "spec_file_revisions") == 2
    assert count_rows(db, "blobs") == blobs_before
    assert read(db, actor, made["id"])["text"] == "theirs\n"
    assert len(events_of(db, "spec_file.updated")) == 1


def test_a_save_needs_an_expected_version(db: Database, actor: Actor) -> None:
    made = upload(db, actor, "spec.md")

    error = refused(ErrorCode.VALIDATION, update, db, actor, made["id"], "x", "  ")

    assert error.details["field"] == "expectedVersion"


def test_two_writers_from_the_same_version_one_wins_and_the_other_is_told_who(
    db: Database, owner: User, actor: Actor
) -> None:
    """On PostgreSQL each writer is held just before its compare-and-set until both have read
    the file, so both saw the same version: a real race the database settles."""
    colleague = make_user(db, "ada@example.com")
    grant(db, owner, KEY, colleague, Role.WRITE)
    writers = {"owner": actor, "ada": person_actor(colleague)}
    made = upload(db, actor, "race.md", "base\n")
    start = threading.Barrier(2, timeout=30)
    both_read = threading.Barrier(2, timeout=30)
    outcomes: dict[str, dict[str, Any] | CrewboardError] = {}

    def hold_the_save(_conn: Any, _cursor: Any, statement: str, *_rest: Any) -> None:
        if statement.lstrip().startswith("UPDATE spec_files"):
            both_read.wait()

    def write(name: str) -> None:
        start.wait()
        try:
            outcomes[name] = update(
                db, writers[name], made["id"], f"{name} was here\n", made["contentVersion"]
            )
        except CrewboardError as error:
            outcomes[name] = error

    if db.dialect == "postgresql":  # on SQLite BEGIN IMMEDIATE takes turns: no one to wait for
        event.listen(db.engine, "before_cursor_execute", hold_the_save)
    try:
        threads = [threading.Thread(target=write, args=(name,)) for name in writers]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
    finally:
        if db.dialect == "postgresql":
            event.remove(db.engine, "before_cursor_execute", hold_the_save)

    assert set(outcomes) == set(writers)
    lost = [name for name, outcome in outcomes.items() if isinstance(outcome, CrewboardError)]
    assert len(lost) == 1, outcomes
    loser = lost[0]
    winner = next(name for name in writers if name != loser)
    conflict = outcomes[loser]
    assert isinstance(conflict, RevisionConflict)
    assert winner in conflict.message
    assert conflict.details["updatedBy"]["userId"] == writers[winner].user_id
    got = files.get_spec_file(db, actor, project=KEY, ref=FileRef(file_id=made["id"]))["file"]
    assert got["revisionCount"] == 2
    assert conflict.details["currentVersion"] == got["contentVersion"]
    assert read(db, actor, made["id"])["text"] == f"{winner} was here\n"
    assert count_rows(db, "spec_file_revisions") == 2


# --- line windows ------------------------------------------------------------------------------


def test_windows_of_an_8_mib_file_reassemble_it_exactly(db: Database, actor: Actor) -> None:
    data = big_text(MAX_READ_BYTES)
    made = upload(db, actor, "big.txt", data)
    assert made["kind"] == "text"

    windows = read_from(db, actor, made["id"], limit=MAX_WINDOW_LINES)

    assert joined(windows) == data
    total = data.count(b"\n") + 1
    assert {w["totalLines"] for w in windows} == {total}
    assert sum(w["lines"] for w in windows) == total
    assert all(w["lines"] == MAX_WINDOW_LINES for w in windows[:-1])
    assert not any(w["truncated"] for w in windows)
    middle = read(db, actor, made["id"], offset=total // 2, limit=3)
    lines = data.split(b"\n")
    assert middle["text"].encode() == b"\n".join(lines[total // 2 - 1 : total // 2 + 2]) + b"\n"


def test_a_window_stopped_by_its_room_holds_whole_lines_and_says_so(
    db: Database, actor: Actor
) -> None:
    data = "".join(f'line "{n}" 漢\r\n' for n in range(1, 101)).encode()
    made = upload(db, actor, "room.md", data)
    room = 100

    windows = read_from(db, actor, made["id"], room=room)

    assert joined(windows) == data
    assert all(text_size(w["text"]) <= room for w in windows)
    assert all(w["truncated"] for w in windows[:-1])
    assert not windows[-1]["truncated"]
    assert all(w["text"].endswith("\r\n") for w in windows)


def test_a_first_line_longer_than_the_room_comes_back_cut_and_flagged(
    db: Database, actor: Actor
) -> None:
    long_line = "漢字" * 300 + '"quoted"\n'
    made = upload(db, actor, "long.md", long_line + "short\n")

    window = read(db, actor, made["id"], room=301)

    assert window["truncated"] is True
    assert window["lines"] == 1
    assert window["nextOffset"] == 2
    assert long_line.startswith(window["text"])
    assert 290 < text_size(window["text"]) <= 301
    assert read(db, actor, made["id"], offset=2, room=301)["text"] == "short\n"


def test_an_empty_file_reads_as_no_lines(db: Database, actor: Actor) -> None:
    made = upload(db, actor, "empty.md", b"")

    window = read(db, actor, made["id"])

    assert (window["text"], window["lines"], window["totalLines"]) == ("", 0, 0)
    assert window["nextOffset"] is None
    assert refused(ErrorCode.VALIDATION, read, db, actor, made["id"], offset=2).details == {
        "field": "offset"
    }


def test_windows_outside_the_file_or_the_limits_are_refused_naming_the_field(
    db: Database, actor: Actor
) -> None:
    made = upload(db, actor, "three.md", "a\nb\nc\n")
    last = read(db, actor, made["id"], offset=3)
    assert (last["text"], last["nextOffset"]) == ("c\n", None)

    cases = [({"offset": 4}, "offset"), ({"offset": 0}, "offset"), ({"limit": 2001}, "limit")]
    for options, field in cases:
        error = refused(ErrorCode.VALIDATION, read, db, actor, made["id"], **options)
        assert error.details["field"] == field
    assert "3 lines" in refused(ErrorCode.VALIDATION, read, db, actor, made["id"], offset=4).message
    assert refused(ErrorCode.VALIDATION, read, db, actor, made["id"], limit=0).details == {
        "field": "limit"
    }


def test_a_binary_file_is_not_read_by_lines_but_pointed_to_a_download(
    db: Database, actor: Actor
) -> None:
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))
    made = upload(db, actor, "logo.png", png)
    assert (made["kind"], made["totalLines"]) == ("binary", None)

    error = refused(ErrorCode.VALIDATION, read, db, actor, made["id"])

    assert error.details["kind"] == "binary"
    assert "download_spec_file" in error.message
    assert "web app" in error.message
    view, data = files.read_file_bytes(db, actor, project=KEY, ref=FileRef(file_id=made["id"]))
    assert (data, view["size"], view["revision"]) == (png, len(png), 1)


def test_a_file_over_8_mib_is_refused_as_over_the_limit(db: Database, actor: Actor) -> None:
    made = upload(db, actor, "huge.txt", big_text(MAX_READ_BYTES + 1))

    error = refused(ErrorCode.LIMIT_EXCEEDED, read, db, actor, made["id"])

    assert (error.details["limit"], error.details["actual"]) == (MAX_READ_BYTES, MAX_READ_BYTES + 1)
    assert "download_spec_file" in error.message


_line = st.text(st.characters(codec="utf-8", exclude_characters="\n\x00"), max_size=12)
_PATHS = itertools.count()


@st.composite
def texts(draw: st.DrawFn) -> str:
    """Short lines of any characters but NUL, numbered and repeated past the index's 256-line
    marks, ended by LF or CRLF, with or without a newline at the end."""
    lines = draw(st.lists(_line, max_size=12))
    copies = draw(st.integers(min_value=1, max_value=50))
    ends = draw(st.sampled_from(["\n", "\r\n"]))
    numbered = [f"{line} {n}" for n, line in enumerate(lines * copies)]
    return ends.join(numbered) + (ends if numbered and draw(st.booleans()) else "")


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=texts(), data=st.data())
def test_windows_from_any_line_join_back_to_the_exact_bytes(
    db: Database, actor: Actor, text: str, data: st.DataObject
) -> None:
    """Whatever the text (control characters, lone CRs, emoji), the windows from a line to the
    end are the file's bytes from that line's start, as long as every line fits the room."""
    content = text.encode()
    made = upload(db, actor, f"p/{next(_PATHS)}.md", content)
    starts = [0] + [at + 1 for at, byte in enumerate(content[:-1]) if byte == ord("\n")]
    assert made["totalLines"] == (len(starts) if content else 0)
    widest = max((text_size(text[a:b]) for a, b in _pairs(text)), default=1)
    first = data.draw(st.integers(min_value=1, max_value=max(1, len(starts))), label="offset")
    limit = data.draw(st.integers(min_value=1, max_value=7), label="limit")
    room = data.draw(st.integers(min_value=widest, max_value=widest + 64), label="room")

    windows = read_from(db, actor, made["id"], first, limit=limit, room=room)

    assert joined(windows) == content[starts[first - 1] if content else 0 :]


def _pairs(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each line of `text` in characters, its newline included."""
    start = 0
    while start < len(text):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end + 1
        yield start, end
        start = end


# --- the trash bin -----------------------------------------------------------------------------


def test_a_trashed_file_leaves_the_list_and_reads_until_it_is_restored(
    db: Database, actor: Actor
) -> None:
    kept = upload(db, actor, "kept.md")
    gone = upload(db, actor, "gone.md", "old words\n")

    trashed = trash(db, actor, gone["id"])

    assert trashed["changed"] is True
    assert trashed["file"]["trashed"] is True
    assert trashed["file"]["trashedBy"]["userId"] == actor.user_id
    assert listed(db, actor) == ["kept.md"]
    assert listed(db, actor, trashed=True) == ["gone.md"]
    ref = FileRef(file_id=gone["id"])
    for call in (
        lambda: read(db, actor, gone["id"]),
        lambda: files.get_spec_file(db, actor, project=KEY, ref=ref),
        lambda: files.get_spec_file(db, actor, project=KEY, ref=FileRef(path="gone.md")),
        lambda: update(db, actor, gone["id"], "new", gone["contentVersion"]),
    ):
        error = refused(ErrorCode.NOT_FOUND, call)
        assert error.details["trashed"] is True
        assert "trash" in error.message
    assert read(db, actor, gone["id"], include_trashed=True)["text"] == "old words\n"
    got = files.get_spec_file(db, actor, project=KEY, ref=ref, include_trashed=True)
    assert got["file"]["trashed"] is True

    restored = restore(db, actor, gone["id"])

    assert restored["changed"] is True
    assert restored["file"]["trashed"] is False
    assert restored["file"]["trashedAt"] is None
    assert listed(db, actor) == ["gone.md", "kept.md"]
    assert listed(db, actor, trashed=True) == []
    assert read(db, actor, gone["id"])["text"] == "old words\n"
    assert kept["trashed"] is False


def test_trashing_or_restoring_twice_answers_unchanged(db: Database, actor: Actor) -> None:
    made = upload(db, actor, "spec.md")

    assert restore(db, actor, made["id"])["changed"] is False
    assert trash(db, actor, made["id"])["changed"] is True
    again = trash(db, actor, made["id"])

    assert again["changed"] is False
    assert again["file"]["trashed"] is True
    assert len(events_of(db, "spec_file.trashed")) == 1
    assert events_of(db, "spec_file.restored") == []


# --- access ------------------------------------------------------------------------------------


def test_a_stranger_finds_neither_the_project_nor_its_files(db: Database, actor: Actor) -> None:
    made = upload(db, actor, "secret.md")
    stranger = person_actor(make_user(db, "stranger@example.com"))

    for call in (
        lambda: files.list_spec_files(db, stranger, project=KEY),
        lambda: read(db, stranger, made["id"]),
        lambda: files.get_spec_file(db, stranger, project=KEY, ref=FileRef(path="secret.md")),
        lambda: upload(db, stranger, "mine.md"),
        lambda: update(db, stranger, made["id"], "x", made["contentVersion"]),
        lambda: trash(db, stranger, made["id"]),
        lambda: files.read_file_bytes(db, stranger, project=KEY, ref=FileRef(file_id=made["id"])),
    ):
        assert refused(ErrorCode.NOT_FOUND, call).details["resource"] == "project"


def test_a_file_of_another_project_is_not_found_through_this_one(
    db: Database, owner: User, actor: Actor
) -> None:
    make_project(db, owner, "TWO")
    elsewhere = upload(db, actor, "two.md", "two\n", project="TWO")

    for call in (
        lambda: read(db, actor, elsewhere["id"]),
        lambda: update(db, actor, elsewhere["id"], "x", elsewhere["contentVersion"]),
        lambda: trash(db, actor, elsewhere["id"]),
        lambda: files.get_spec_file(db, actor, project=KEY, ref=FileRef(path="two.md")),
    ):
        error = refused(ErrorCode.NOT_FOUND, call)
        assert error.details["resource"] == "specFile"
    assert read(db, actor, elsewhere["id"], project="TWO")["text"] == "two\n"


def test_writes_need_the_specs_write_scope_and_the_write_role(
    db: Database, owner: User, actor: Actor
) -> None:
    made = upload(db, actor, "spec.md", "text\n")
    reader = make_user(db, "reader@example.com")
    grant(db, owner, KEY, reader, Role.READ)
    refusals = {
        "a token without specs.write": token_actor(db, owner, ["read", "tasks.manage"]),
        "a member with the read role": person_actor(reader),
    }
    writes: list[Callable[[Actor], object]] = [
        lambda caller: upload(db, caller, "new.md"),
        lambda caller: update(db, caller, made["id"], "x", made["contentVersion"]),
        lambda caller: trash(db, caller, made["id"]),
        lambda caller: restore(db, caller, made["id"]),
    ]
    for who, caller in refusals.items():
        for write in writes:
            error = refused(ErrorCode.PERMISSION_DENIED, write, caller)
            assert error.details["requiredScope"] == "specs.write", who
        assert read(db, caller, made["id"])["text"] == "text\n"  # reading needs neither
    writer = token_actor(db, owner, ["read", "specs.write"])
    saved = update(db, writer, made["id"], "by token\n", made["contentVersion"])
    assert writer.token is not None
    assert saved["file"]["updatedBy"]["tokenId"] == writer.token.id
    assert count_rows(db, "spec_files") == 1


# --- keyed uploads -----------------------------------------------------------------------------


def test_an_upload_retried_with_its_key_answers_the_same_file_and_other_content_is_refused(
    db: Database, actor: Actor
) -> None:
    first = spec_calls.upload_spec_file(
        db, actor, project=KEY, workspace_id=None, path="spec.md", content=b"one",
        idempotency_key="upload-1",
    )  # fmt: skip
    again = spec_calls.upload_spec_file(
        db, actor, project=KEY, workspace_id=None, path="./spec.md", content=b"one",
        idempotency_key="upload-1",
    )  # fmt: skip

    assert again.replayed is True
    assert again.body == first.body
    assert count_rows(db, "spec_files") == 1
    error = refused(
        ErrorCode.IDEMPOTENCY_CONFLICT, upload, db, actor, "spec.md", "two", key="upload-1"
    )
    assert error.message
    assert read(db, actor, first.body["file"]["id"])["text"] == "one"
    assert len(events_of(db, "spec_file.created")) == 1


# --- blobs -------------------------------------------------------------------------------------


def test_the_same_bytes_in_two_files_and_two_revisions_are_stored_once(
    db: Database, actor: Actor
) -> None:
    logo = bytes(range(256)) * (CHUNK // 256 + 10)  # two chunks
    first = upload(db, actor, "a/logo.png", logo)
    upload(db, actor, "b/logo.png", logo)
    other = update(db, actor, first["id"], "text now\n", first["contentVersion"])
    update(db, actor, first["id"], logo, other["file"]["contentVersion"])

    assert count_rows(db, "spec_file_revisions") == 4
    assert count_rows(db, "blobs") == 2
    assert count_rows(db, "blob_chunks") == 3
    for file_id, revision in ((first["id"], 1), (first["id"], 3)):
        _view, data = files.read_file_bytes(
            db, actor, project=KEY, ref=FileRef(file_id=file_id), revision=revision
        )
        assert data == logo


def test_a_byte_range_is_read_exactly_across_chunk_borders(db: Database, actor: Actor) -> None:
    data = bytes(n % 251 for n in range(3 * CHUNK + 17))
    upload(db, actor, "data.bin", data)
    digest = digest_of(data)

    def piece(start: int, length: int | None) -> bytes:
        return db.read(lambda uow: uow.blobs.read(digest, start, length))

    for start, length in [
        (0, None),
        (CHUNK - 3, 6),
        (CHUNK, CHUNK),
        (CHUNK - 1, CHUNK + 2),
        (3 * CHUNK, None),
        (3 * CHUNK + 10, 100),
        (len(data), 5),
        (0, 0),
    ]:
        end = len(data) if length is None else start + length
        assert piece(start, length) == data[start:end], (start, length)
    assert db.read(lambda uow: uow.blobs.size(digest)) == len(data)
    assert db.read(lambda uow: uow.blobs.size("0" * 64)) is None


def test_a_window_reads_only_the_chunks_around_it(db: Database, actor: Actor) -> None:
    """Of an 8 MiB file's 32 chunks, a window in its middle reads the one or two that hold the
    window and the lines between it and the index's mark before it, whatever the room."""
    data = big_text(MAX_READ_BYTES)
    made = upload(db, actor, "big.txt", data)
    total = data.count(b"\n") + 1
    assert count_rows(db, "blob_chunks") == MAX_READ_BYTES // CHUNK
    chunks: set[int] = set()

    def note_chunks(
        _conn: Any, _cursor: Any, statement: str, _params: Any, context: Any, _many: bool
    ) -> None:
        if "FROM blob_chunks" in statement:
            named = context.compiled_parameters[0]  # by name on both databases
            chunks.update(range(named["first"], named["last"] + 1))

    event.listen(db.engine, "before_cursor_execute", note_chunks)
    try:
        short = read(db, actor, made["id"], offset=total // 2, limit=20)
        touched_by_short = set(chunks)
        chunks.clear()
        full = read(db, actor, made["id"], offset=total // 2 + 20, limit=MAX_WINDOW_LINES)
    finally:
        event.remove(db.engine, "before_cursor_execute", note_chunks)

    assert (short["lines"], full["lines"]) == (20, MAX_WINDOW_LINES)
    window_start = len(b"\n".join(data.split(b"\n")[: total // 2 - 1])) + 1
    assert window_start // CHUNK in touched_by_short
    assert len(touched_by_short) <= 2, touched_by_short
    assert len(chunks) <= 2, chunks


def test_a_folder_store_keeps_the_bytes_in_a_file_named_by_their_digest(
    database_url: URL, clock: ManualClock, tmp_path: Path
) -> None:
    folder = tmp_path / "blobs"
    db = Database(database_url, clock=clock, blob_dir=folder)
    try:
        owner = make_user(db, "owner@example.com")
        make_project(db, owner, KEY)
        actor = person_actor(owner)
        data = big_text(CHUNK * 2 + 99)
        made = upload(db, actor, "docs/spec.md", data)
        upload(db, actor, "docs/copy.md", data)
        digest = digest_of(data)

        stored = folder / digest[:2] / digest[2:]
        assert stored.read_bytes() == data
        assert [p for p in folder.rglob("*") if p.is_file()] == [stored]
        assert count_rows(db, "blobs") == 1
        assert count_rows(db, "blob_chunks") == 0
        assert joined(read_from(db, actor, made["id"], limit=300)) == data
        middle = read(db, actor, made["id"], offset=100, limit=2)
        assert middle["text"].encode() == b"\n".join(data.split(b"\n")[99:101]) + b"\n"
        saved = update(db, actor, made["id"], "short\n", made["contentVersion"])
        assert saved["file"]["revisionCount"] == 2
        assert read(db, actor, made["id"])["text"] == "short\n"
        assert read(db, actor, made["id"], revision=1, limit=1)["text"].encode() == (
            data.split(b"\n")[0] + b"\n"
        )
        assert len([p for p in folder.rglob("*") if p.is_file()]) == 2
    finally:
        db.dispose()


def test_a_server_moved_between_the_database_and_a_folder_store_reads_both(
    database_url: URL, clock: ManualClock, tmp_path: Path
) -> None:
    """Bytes saved under one store stay readable under the other, and saving the same bytes
    again under the database store brings them into the database."""
    folder = tmp_path / "blobs"
    in_folder = Database(database_url, clock=clock, blob_dir=folder)
    try:
        owner = make_user(in_folder, "owner@example.com")
        make_project(in_folder, owner, KEY)
        actor = person_actor(owner)
        folder_text = big_text(CHUNK + 10)
        kept_in_folder = upload(in_folder, actor, "docs/a.md", folder_text)
    finally:
        in_folder.dispose()
    plain = Database(database_url, clock=clock)
    try:
        with pytest.raises(LookupError, match="CREWBOARD_BLOB_DIR"):
            read(plain, actor, kept_in_folder["id"])
        kept_in_db = upload(plain, actor, "docs/b.md", "in the database\n")
        upload(plain, actor, "docs/c.md", folder_text)  # the same bytes, now in the database
        assert joined(read_from(plain, actor, kept_in_folder["id"], limit=500)) == folder_text
    finally:
        plain.dispose()
    again = Database(database_url, clock=clock, blob_dir=folder)
    try:
        assert read(again, actor, kept_in_db["id"])["text"] == "in the database\n"
        assert joined(read_from(again, actor, kept_in_folder["id"], limit=500)) == folder_text
    finally:
        again.dispose()


# --- events ------------------------------------------------------------------------------------


def test_each_change_records_its_event_with_the_file_and_its_path(
    db: Database, actor: Actor
) -> None:
    made = upload(db, actor, "docs/spec.md", "one\n")
    saved = update(db, actor, made["id"], "two\n", made["contentVersion"])
    trash(db, actor, made["id"])
    restore(db, actor, made["id"])

    created, updated = events_of(db, "spec_file.created"), events_of(db, "spec_file.updated")
    trashed, restored = events_of(db, "spec_file.trashed"), events_of(db, "spec_file.restored")
    for payloads in (created, updated, trashed, restored):
        assert [(p["fileId"], p["path"]) for p in payloads] == [(made["id"], "docs/spec.md")]
    assert (created[0]["revision"], updated[0]["revision"]) == (1, 2)
    assert created[0]["contentVersion"] == made["contentVersion"]
    assert updated[0]["contentVersion"] == saved["file"]["contentVersion"]
    assert "content" not in updated[0]


# --- migration 0013 ----------------------------------------------------------------------------


def test_the_spec_file_tables_go_with_a_downgrade_and_come_back(db: Database, actor: Actor) -> None:
    upload(db, actor, "before.md")
    tables = {"blobs", "blob_chunks", "spec_files", "spec_file_revisions"}

    migrate.downgrade(db, "0012_handin_comment_search")

    assert _tables(db) & tables == set()
    migrate.upgrade(db)
    assert tables <= _tables(db)
    assert migrate.schema_differences(db) == []
    made = upload(db, actor, "after.md", "back\n")
    assert read(db, actor, made["id"])["text"] == "back\n"
    assert listed(db, actor) == ["after.md"]


def _tables(db: Database) -> set[str]:
    query = (
        "SELECT name FROM sqlite_master WHERE type = 'table'"
        if db.dialect == "sqlite"
        else "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
    )
    with db.engine.connect() as conn:
        return set(conn.exec_driver_sql(query).scalars())
