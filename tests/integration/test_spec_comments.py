"""Comment threads on spec files through the services, on SQLite and PostgreSQL: placing a
passage, replies, one's own comments (edit from its version, delete with its three outcomes),
trashed files, status filters, the list's limits, AI work, people resolving threads, events,
re-anchoring on every save through update_spec_file, and migration 0015."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from crewboard.contract.specs import present as comments
from crewboard.contract.specs import present as files
from crewboard.domain.clock import ManualClock
from crewboard.domain.identity.access import Role
from crewboard.domain.identity.records import Actor, User
from crewboard.domain.spec_comments import MAX_COMMENT, MAX_THREADS_SHOWN
from crewboard.errors import ErrorCode
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.services.notifications import inbox
from crewboard.services.specs.file_lookup import FileRef
from crewboard.storage import migrate
from crewboard.storage.database import Database
from tests.support import spec_calls
from tests.support.errors import refused
from tests.support.factories import count_rows, grant, make_project, make_user, token_actor

KEY = "CRW"
SPEC = (
    "# Rate limits\n"
    "\n"
    "Every token may send requests to the API.\n"
    "\n"
    "The rate limit is ten requests per second for each token.\n"
    "\n"
    "Bursts above the limit are answered with 429 and a Retry-After header.\n"
)
QUOTE = "The rate limit is ten requests per second"
SPEC_SCOPES = ["read", "specs.write"]


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "owner@example.com")
    make_project(db, user, KEY)
    return user


@pytest.fixture
def me(owner: User) -> Actor:
    return person_actor(owner)


@pytest.fixture
def spec(db: Database, me: Actor) -> dict[str, Any]:
    """The file `docs/limits.md` holding SPEC, as uploaded."""
    return upload(db, me, "docs/limits.md", SPEC)


def upload(db: Database, actor: Actor, path: str, content: str | bytes) -> dict[str, Any]:
    data = content.encode() if isinstance(content, str) else content
    made = spec_calls.upload_spec_file(
        db, actor, project=KEY, workspace_id=None, path=path, content=data, idempotency_key=None
    )
    return dict(made.body["file"])


def save(db: Database, actor: Actor, file_id: str, content: str | bytes) -> dict[str, Any]:
    """Save a new revision from the file's current version; the file's view after it."""
    data = content.encode() if isinstance(content, str) else content
    now = files.get_spec_file(db, actor, project=KEY, ref=FileRef(file_id=file_id))
    saved = spec_calls.update_spec_file(
        db, actor, project=KEY, workspace_id=None, ref=FileRef(file_id=file_id), content=data,
        expected_version=now["file"]["contentVersion"], idempotency_key=None,
    )  # fmt: skip
    return dict(saved.body["file"])


def start(
    db: Database,
    actor: Actor,
    file_id: str,
    quote: str = QUOTE,
    body: str = "Is ten enough?",
    **options: Any,
) -> dict[str, Any]:
    """A new thread's view."""
    made = spec_calls.create_spec_file_comment_thread(
        db, actor, project=KEY, workspace_id=None, ref=FileRef(file_id=file_id),
        anchor_quote=quote, anchor_prefix=options.pop("prefix", None),
        anchor_suffix=options.pop("suffix", None), body=body,
        idempotency_key=options.pop("key", None),
    )  # fmt: skip
    return dict(made.body["thread"])


def reply(
    db: Database, actor: Actor, thread_id: str, body: str = "Agreed.", key: str | None = None
) -> dict[str, Any]:
    made = spec_calls.reply_spec_file_comment_thread(
        db, actor, project=KEY, workspace_id=None, thread_id=thread_id, body=body,
        idempotency_key=key,
    )  # fmt: skip
    return dict(made.body["comment"])


def edit(db: Database, actor: Actor, comment: dict[str, Any], body: str) -> dict[str, Any]:
    done = comments.update_spec_file_comment(
        db, actor, project=KEY, workspace_id=None, comment_id=comment["id"], body=body,
        expected_version=comment["contentVersion"],
    )  # fmt: skip
    return dict(done["comment"])


def delete(db: Database, actor: Actor, comment_id: str) -> str:
    done = comments.delete_spec_file_comment(
        db, actor, project=KEY, workspace_id=None, comment_id=comment_id
    )
    return str(done["outcome"])


def threads(
    db: Database, actor: Actor, file_id: str, status: str | None = None, **options: Any
) -> dict[str, Any]:
    return comments.list_spec_file_comments(
        db, actor, project=KEY, ref=FileRef(file_id=file_id), status=status, **options
    )


def only_thread(db: Database, actor: Actor, file_id: str) -> dict[str, Any]:
    listed = threads(db, actor, file_id)["threads"]
    assert len(listed) == 1
    return dict(listed[0])


def agent_actor(db: Database, user: User) -> Actor:
    issued = tokens.issue_token(
        db, person_actor(user), kind="agent", scopes=SPEC_SCOPES, name="Writer", project=KEY
    )
    return tokens.authenticate_token(db, issued.secret)


def events(db: Database, prefix: str = "spec_comment.") -> list[dict[str, Any]]:
    rows = db.read(lambda uow: uow.events.list_after(project_id=None, limit=500))
    return [r for r in rows if r["type"].startswith(prefix)]


def resolve(db: Database, actor: Actor, thread_id: str) -> dict[str, Any]:
    return comments.resolve_thread(db, actor, project=KEY, workspace_id=None, thread_id=thread_id)


# --- starting threads ----------------------------------------------------------------------------


def test_a_thread_is_anchored_to_the_quoted_passage_with_its_first_comment(
    db: Database, me: Actor, spec: dict[str, Any]
) -> None:
    made = start(db, me, spec["id"], body="Is ten enough for the importer?")
    at = SPEC.index(QUOTE)
    assert made["anchor"] == {
        "quote": QUOTE,
        "prefix": SPEC[at - 32 : at],
        "suffix": SPEC[at + len(QUOTE) : at + len(QUOTE) + 32],
        "start": at,
        "end": at + len(QUOTE),
        "revision": 1,
    }
    assert (made["status"], made["orphaned"], made["fileId"]) == ("open", False, spec["id"])
    [first] = made["comments"]
    assert first["body"] == "Is ten enough for the importer?"
    assert (first["aiWork"], first["deleted"], first["yours"]) == (False, False, True)
    assert first["author"]["userId"] == me.user_id
    assert first["contentVersion"]
    assert only_thread(db, me, spec["id"]) == made


def test_a_repeated_quote_is_refused_until_its_context_singles_it_out(
    db: Database, me: Actor
) -> None:
    text = "- [ ] ship the export\n- [ ] ship the import\n- [ ] ship the export again\n"
    made = upload(db, me, "tasks.md", text)
    ambiguous = refused(ErrorCode.VALIDATION, start, db, me, made["id"], "ship the export")
    assert ambiguous.details == {"field": "anchorQuote", "occurrences": 2}
    assert "anchorPrefix/anchorSuffix" in ambiguous.message
    thread = start(db, me, made["id"], "ship the export", suffix=" again")
    assert thread["anchor"]["start"] == text.rindex("ship the export")
    assert count_rows(db, "spec_comment_threads") == 1


def test_a_quote_not_in_the_file_is_refused_and_nothing_is_stored(
    db: Database, me: Actor, spec: dict[str, Any]
) -> None:
    missing = refused(ErrorCode.VALIDATION, start, db, me, spec["id"], "ten requests a minute")
    assert missing.details["field"] == "anchorQuote"
    assert "copy it exactly" in missing.message
    assert count_rows(db, "spec_comment_threads") == count_rows(db, "spec_comments") == 0


def test_the_quote_is_placed_in_the_newest_revision(
    db: Database, me: Actor, spec: dict[str, Any]
) -> None:
    save(db, me, spec["id"], "Preface.\n\n" + SPEC)
    made = start(db, me, spec["id"])
    assert made["anchor"]["revision"] == 2
    assert made["anchor"]["start"] == len("Preface.\n\n") + SPEC.index(QUOTE)


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ("", ErrorCode.VALIDATION),
        ("  \n", ErrorCode.VALIDATION),
        ("x" * (MAX_COMMENT + 1), ErrorCode.LIMIT_EXCEEDED),
    ],
)
def test_an_empty_or_too_long_body_is_refused_naming_it(
    db: Database, me: Actor, spec: dict[str, Any], body: str, code: ErrorCode
) -> None:
    assert refused(code, start, db, me, spec["id"], body=body).details["field"] == "body"
    thread = start(db, me, spec["id"], body="x" * MAX_COMMENT)
    assert refused(code, reply, db, me, thread["id"], body).details["field"] == "body"


def test_an_over_long_quote_and_a_binary_file_are_refused(db: Database, me: Actor) -> None:
    text = upload(db, me, "long.md", "word " * 1000)
    too_long = refused(ErrorCode.LIMIT_EXCEEDED, start, db, me, text["id"], "word " * 401)
    assert too_long.details["field"] == "anchorQuote"
    binary = upload(db, me, "logo.bin", b"\x00\x01\x02 not text")
    assert refused(ErrorCode.VALIDATION, start, db, me, binary["id"], "not").details == {
        "field": "fileId",
        "kind": "binary",
    }


def test_a_keyed_thread_and_reply_replay_and_a_changed_payload_is_refused(
    db: Database, me: Actor, spec: dict[str, Any]
) -> None:
    first = start(db, me, spec["id"], key="thread-1")
    assert start(db, me, spec["id"], key="thread-1") == first
    refused(
        ErrorCode.IDEMPOTENCY_CONFLICT, start, db, me, spec["id"], body="Other.", key="thread-1"
    )
    answer = reply(db, me, first["id"], "Yes.", key="reply-1")
    assert reply(db, me, first["id"], "Yes.", key="reply-1") == answer
    assert (count_rows(db, "spec_comment_threads"), count_rows(db, "spec_comments")) == (1, 2)


# --- replies and one's own comments --------------------------------------------------------------


def test_replies_follow_the_first_comment_in_order(
    db: Database, me: Actor, spec: dict[str, Any]
) -> None:
    thread = start(db, me, spec["id"], body="First.")
    for body in ("Second.", "Third.", "Fourth."):
        reply(db, me, thread["id"], body)
    listed = only_thread(db, me, spec["id"])
    assert [c["body"] for c in listed["comments"]] == ["First.", "Second.", "Third.", "Fourth."]
    assert listed["commentCount"] == 4


def test_an_own_comment_is_edited_from_its_own_version_and_gets_a_new_one(
    db: Database, me: Actor, spec: dict[str, Any]
) -> None:
    first = start(db, me, spec["id"])["comments"][0]
    file_version = files.get_spec_file(db, me, project=KEY, ref=FileRef(file_id=spec["id"]))
    edited = edit(db, me, first, "Is ten enough? Ask the importer team.")
    assert edited["body"] == "Is ten enough? Ask the importer team."
    assert edited["contentVersion"] not in (first["contentVersion"], None)
    # The file's version is not the comment's: it refuses, and the file did not change.
    stale = refused(
        ErrorCode.REVISION_CONFLICT, edit, db, me,
        {**first, "contentVersion": file_version["file"]["contentVersion"]}, "Nope.",
    )  # fmt: skip
    assert stale.details["currentVersion"] == edited["contentVersion"]


def test_a_stale_comment_version_is_refused_naming_who_edited_it_and_when(
    db: Database, me: Actor, spec: dict[str, Any], clock: ManualClock
) -> None:
    first = start(db, me, spec["id"])["comments"][0]
    clock.advance(timedelta(minutes=5))
    edited = edit(db, me, first, "Second thoughts.")
    conflict = refused(ErrorCode.REVISION_CONFLICT, edit, db, me, first, "Lost words.")
    assert conflict.details["field"] == "expectedVersion"
    assert conflict.details["currentVersion"] == edited["contentVersion"]
    assert conflict.details["updatedBy"]["userId"] == me.user_id
    assert conflict.details["updatedAt"] == edited["updatedAt"]
    assert "owner" in conflict.message
    assert edited["updatedAt"] in conflict.message
    assert only_thread(db, me, spec["id"])["comments"][0]["body"] == "Second thoughts."


def test_only_the_same_principal_edits_or_deletes_a_comment(
    db: Database, owner: User, me: Actor, spec: dict[str, Any]
) -> None:
    thread = start(db, me, spec["id"])
    first = thread["comments"][0]
    writer = make_user(db, "writer@example.com")
    grant(db, owner, KEY, writer, Role.WRITE)
    colleague = person_actor(writer)
    own_token = token_actor(db, owner, SPEC_SCOPES)  # the same person, through a token
    for other in (colleague, own_token):
        denied = refused(ErrorCode.PERMISSION_DENIED, edit, db, other, first, "Mine now.")
        assert denied.details["field"] == "commentId"
        refused(ErrorCode.PERMISSION_DENIED, delete, db, other, first["id"])
        assert only_thread(db, other, spec["id"])["comments"][0]["yours"] is False
    theirs = reply(db, colleague, thread["id"], "From the colleague.")
    refused(ErrorCode.PERMISSION_DENIED, delete, db, me, theirs["id"])
    assert edit(db, colleague, theirs, "Edited by its author.")["body"] == "Edited by its author."


# --- deleting ------------------------------------------------------------------------------------


def test_a_deleted_reply_vanishes(db: Database, me: Actor, spec: dict[str, Any]) -> None:
    thread = start(db, me, spec["id"], body="First.")
    answer = reply(db, me, thread["id"], "A reply.")
    reply(db, me, thread["id"], "Another.")
    assert delete(db, me, answer["id"]) == "removed"
    assert [c["body"] for c in only_thread(db, me, spec["id"])["comments"]] == [
        "First.",
        "Another.",
    ]
    refused(ErrorCode.NOT_FOUND, delete, db, me, answer["id"])


def test_a_first_comment_with_replies_becomes_a_deleted_placeholder(
    db: Database, me: Actor, spec: dict[str, Any]
) -> None:
    thread = start(db, me, spec["id"], body="First, with a secret.")
    reply(db, me, thread["id"], "A reply.")
    assert delete(db, me, thread["comments"][0]["id"]) == "placeholder"
    placeholder, kept = only_thread(db, me, spec["id"])["comments"]
    assert (placeholder["deleted"], placeholder["body"], placeholder["id"]) == (
        True,
        "",
        thread["comments"][0]["id"],
    )
    assert kept["body"] == "A reply."
    # A placeholder is not a comment any more: it cannot be edited or deleted again.
    refused(ErrorCode.NOT_FOUND, edit, db, me, placeholder, "Back.")
    refused(ErrorCode.NOT_FOUND, delete, db, me, placeholder["id"])


def test_a_first_comment_alone_takes_its_thread_with_it(
    db: Database, me: Actor, spec: dict[str, Any]
) -> None:
    thread = start(db, me, spec["id"])
    assert delete(db, me, thread["comments"][0]["id"]) == "threadDeleted"
    assert threads(db, me, spec["id"])["total"] == 0
    assert count_rows(db, "spec_comment_threads") == count_rows(db, "spec_comments") == 0
    refused(ErrorCode.NOT_FOUND, reply, db, me, thread["id"])


def test_the_last_reply_under_a_placeholder_takes_the_empty_thread_with_it(
    db: Database, me: Actor, spec: dict[str, Any]
) -> None:
    thread = start(db, me, spec["id"])
    answer = reply(db, me, thread["id"])
    delete(db, me, thread["comments"][0]["id"])
    assert delete(db, me, answer["id"]) == "threadDeleted"
    assert count_rows(db, "spec_comment_threads") == count_rows(db, "spec_comments") == 0


# --- the trash bin -------------------------------------------------------------------------------


def test_on_a_trashed_file_comments_are_read_edited_and_deleted_but_not_started_or_answered(
    db: Database, me: Actor, spec: dict[str, Any]
) -> None:
    thread = start(db, me, spec["id"], body="First.")
    answer = reply(db, me, thread["id"], "A reply.")
    spec_calls.move_spec_file_to_trash(
        db, me, project=KEY, workspace_id=None, ref=FileRef(file_id=spec["id"])
    )
    listed = threads(db, me, spec["id"])
    assert listed["file"]["trashed"] is True
    assert listed["total"] == 1
    no_thread = refused(ErrorCode.VALIDATION, start, db, me, spec["id"], "Bursts")
    assert no_thread.details == {"field": "fileId", "fileId": spec["id"], "trashed": True}
    assert "trash bin" in no_thread.message
    no_reply = refused(ErrorCode.VALIDATION, reply, db, me, thread["id"])
    assert no_reply.details["field"] == "threadId"
    assert edit(db, me, answer, "Edited in the trash.")["body"] == "Edited in the trash."
    assert delete(db, me, answer["id"]) == "removed"
    assert count_rows(db, "spec_comments") == 1


# --- lists ---------------------------------------------------------------------------------------


def test_status_filters_split_open_resolved_and_orphaned_threads(
    db: Database, me: Actor, spec: dict[str, Any]
) -> None:
    kept = start(db, me, spec["id"], "Every token may send")
    closed = start(db, me, spec["id"], "answered with 429")
    gone = start(db, me, spec["id"], QUOTE)
    resolve(db, me, closed["id"])
    save(
        db,
        me,
        spec["id"],
        SPEC.replace("The rate limit is ten requests per second for each token.\n\n", ""),
    )

    def ids(status: str | None) -> list[str]:
        return [t["id"] for t in threads(db, me, spec["id"], status)["threads"]]

    assert ids("open") == [kept["id"]]
    assert ids("resolved") == [closed["id"]]
    assert ids("orphaned") == [gone["id"]]
    assert ids(None) == [kept["id"], closed["id"], gone["id"]]  # file order, orphaned last
    unknown = refused(ErrorCode.VALIDATION, threads, db, me, spec["id"], "closed")
    assert unknown.details["accepted"] == ["open", "resolved", "orphaned"]


def test_a_list_shows_at_most_100_threads_and_cuts_bodies_to_1000_characters(
    db: Database, me: Actor
) -> None:
    text = "".join(f"Requirement {n:03d} holds.\n" for n in range(101))
    made = upload(db, me, "many.md", text)
    long_body = "word " * 300  # 1,500 characters
    first = start(db, me, made["id"], "Requirement 000 holds.", body=long_body)
    assert first["comments"][0]["body"] == long_body.strip()  # the answer to a write is whole
    for n in range(1, 101):
        start(db, me, made["id"], f"Requirement {n:03d} holds.", body=f"Note {n}.")
    listed = threads(db, me, made["id"])
    assert (len(listed["threads"]), listed["total"], listed["nextOffset"]) == (100, 101, 100)
    shown = listed["threads"][0]["comments"][0]
    assert shown["body"] == long_body.strip()[:1000]
    assert (shown["bodyTruncated"], shown["bodyLength"]) == (True, 1499)
    assert listed["threads"][1]["comments"][0]["bodyTruncated"] is False
    rest = threads(db, me, made["id"], offset=100)
    assert [t["anchor"]["quote"] for t in rest["threads"]] == ["Requirement 100 holds."]
    over = refused(ErrorCode.VALIDATION, threads, db, me, made["id"], limit=MAX_THREADS_SHOWN + 1)
    assert over.details["field"] == "limit"


# --- AI work, people's decisions, access ---------------------------------------------------------


def test_comments_written_through_an_agent_token_are_ai_work(
    db: Database, owner: User, me: Actor, spec: dict[str, Any]
) -> None:
    agent = agent_actor(db, owner)
    thread = start(db, agent, spec["id"], body="Written by an agent.")
    by_person = reply(db, me, thread["id"], "Written by a person.")
    by_token = reply(db, token_actor(db, owner, SPEC_SCOPES), thread["id"], "Personal token.")
    listed = only_thread(db, me, spec["id"])["comments"]
    assert [c["aiWork"] for c in listed] == [True, False, False]
    assert (by_person["aiWork"], by_token["aiWork"]) == (False, False)
    assert listed[0]["author"]["tokenName"] == "Writer"
    opened = [e for e in events(db) if e["type"] == "spec_comment.thread_opened"]
    assert opened[0]["payload"]["aiWork"] is True


def test_only_a_signed_in_person_resolves_or_reopens_a_thread(
    db: Database, owner: User, me: Actor, spec: dict[str, Any]
) -> None:
    thread = start(db, me, spec["id"])
    for token in (agent_actor(db, owner), token_actor(db, owner, SPEC_SCOPES)):
        refused(ErrorCode.PERMISSION_DENIED, resolve, db, token, thread["id"])
    done = resolve(db, me, thread["id"])
    assert (done["changed"], done["thread"]["status"]) == (True, "resolved")
    assert done["thread"]["resolvedBy"]["userId"] == me.user_id
    assert resolve(db, me, thread["id"])["changed"] is False
    reader = make_user(db, "reader@example.com")
    grant(db, owner, KEY, reader, Role.READ)
    refused(ErrorCode.PERMISSION_DENIED, resolve, db, person_actor(reader), thread["id"])
    reopened = comments.reopen_thread(
        db, me, project=KEY, workspace_id=None, thread_id=thread["id"]
    )
    assert reopened["thread"]["status"] == "open"
    assert reopened["thread"]["resolvedAt"] is None


def test_access_follows_the_project_roles_and_token_scopes(
    db: Database, owner: User, me: Actor, spec: dict[str, Any]
) -> None:
    thread = start(db, me, spec["id"])
    stranger = person_actor(make_user(db, "stranger@example.com"))
    refused(ErrorCode.NOT_FOUND, threads, db, stranger, spec["id"])
    refused(ErrorCode.NOT_FOUND, reply, db, stranger, thread["id"])
    reader = make_user(db, "reader@example.com")
    grant(db, owner, KEY, reader, Role.READ)
    assert threads(db, person_actor(reader), spec["id"])["total"] == 1
    refused(ErrorCode.PERMISSION_DENIED, start, db, person_actor(reader), spec["id"])
    refused(ErrorCode.PERMISSION_DENIED, reply, db, person_actor(reader), thread["id"])
    read_only = token_actor(db, owner, ["read"])
    refused(ErrorCode.PERMISSION_DENIED, start, db, read_only, spec["id"])
    make_project(db, owner, "OTH")
    elsewhere = spec_calls.reply_spec_file_comment_thread
    refused(
        ErrorCode.NOT_FOUND, elsewhere, db, me, project="OTH", workspace_id=None,
        thread_id=thread["id"], body="Wrong project.", idempotency_key=None,
    )  # fmt: skip
    refused(
        ErrorCode.NOT_FOUND, comments.delete_spec_file_comment, db, me, project="OTH",
        workspace_id=None, comment_id=thread["comments"][0]["id"],
    )  # fmt: skip
    assert count_rows(db, "spec_comments") == 1


# --- events --------------------------------------------------------------------------------------


def test_every_change_records_an_event(db: Database, me: Actor, spec: dict[str, Any]) -> None:
    thread = start(db, me, spec["id"])
    answer = reply(db, me, thread["id"])
    edit(db, me, answer, "Edited.")
    delete(db, me, answer["id"])
    resolve(db, me, thread["id"])
    comments.reopen_thread(db, me, project=KEY, workspace_id=None, thread_id=thread["id"])
    save(db, me, spec["id"], "All new text.\n")
    recorded = [(e["type"], e["payload"]) for e in events(db)]
    assert [kind for kind, _ in recorded] == [
        "spec_comment.thread_opened",
        "spec_comment.replied",
        "spec_comment.updated",
        "spec_comment.deleted",
        "spec_comment.resolved",
        "spec_comment.reopened",
        "spec_comment.orphaned",
    ]
    assert all(p["threadId"] == thread["id"] and p["fileId"] == spec["id"] for _, p in recorded)
    assert recorded[1][1]["commentId"] == answer["id"]
    assert recorded[3][1]["outcome"] == "removed"
    assert recorded[6][1] | {"quote": QUOTE, "revision": 2} == recorded[6][1]


# --- re-anchoring on every save ------------------------------------------------------------------


def anchor_of(db: Database, actor: Actor, file_id: str, thread_id: str) -> dict[str, Any]:
    found = [t for t in threads(db, actor, file_id)["threads"] if t["id"] == thread_id]
    return {**found[0]["anchor"], "orphaned": found[0]["orphaned"]}


def test_a_save_moves_anchors_past_an_edit_above_into_the_new_revision(
    db: Database, me: Actor, spec: dict[str, Any]
) -> None:
    thread = start(db, me, spec["id"])
    new = "Status: draft.\n\n" + SPEC
    save(db, me, spec["id"], new)
    moved = anchor_of(db, me, spec["id"], thread["id"])
    assert (moved["quote"], moved["revision"], moved["orphaned"]) == (QUOTE, 2, False)
    assert new[moved["start"] : moved["end"]] == QUOTE


def test_a_small_edit_inside_the_passage_updates_the_quote(
    db: Database, me: Actor, spec: dict[str, Any]
) -> None:
    thread = start(db, me, spec["id"])
    new = SPEC.replace("ten requests", "twelve requests")
    save(db, me, spec["id"], new)
    moved = anchor_of(db, me, spec["id"], thread["id"])
    assert moved["quote"] == "The rate limit is twelve requests per second"
    assert new[moved["start"] : moved["end"]] == moved["quote"]


def test_edits_around_the_passage_keep_it(db: Database, me: Actor, spec: dict[str, Any]) -> None:
    thread = start(db, me, spec["id"])
    new = SPEC.replace("\nThe rate", "\nNote: The rate").replace("each token", "every token")
    save(db, me, spec["id"], new)
    assert anchor_of(db, me, spec["id"], thread["id"])["quote"] == QUOTE


def test_deleting_the_passage_orphans_its_thread_and_it_stays_orphaned(
    db: Database, me: Actor, spec: dict[str, Any]
) -> None:
    thread = start(db, me, spec["id"])
    kept = start(db, me, spec["id"], "Every token may send")
    without = SPEC.replace("The rate limit is ten requests per second for each token.\n\n", "")
    save(db, me, spec["id"], without)
    gone = anchor_of(db, me, spec["id"], thread["id"])
    assert gone["orphaned"] is True
    assert (gone["quote"], gone["revision"]) == (QUOTE, 1)  # the passage as it last was
    assert anchor_of(db, me, spec["id"], kept["id"])["revision"] == 2
    orphaned = [e["payload"] for e in events(db) if e["type"] == "spec_comment.orphaned"]
    assert [p["threadId"] for p in orphaned] == [thread["id"]]
    save(db, me, spec["id"], SPEC)  # the passage comes back: the thread does not re-attach
    assert anchor_of(db, me, spec["id"], thread["id"])["orphaned"] is True
    assert [t["id"] for t in threads(db, me, spec["id"], "orphaned")["threads"]] == [thread["id"]]


def test_resolved_threads_follow_their_passages_too(
    db: Database, me: Actor, spec: dict[str, Any]
) -> None:
    thread = start(db, me, spec["id"])
    resolve(db, me, thread["id"])
    save(db, me, spec["id"], "Moved down.\n\n" + SPEC)
    moved = anchor_of(db, me, spec["id"], thread["id"])
    assert (moved["revision"], moved["start"]) == (2, len("Moved down.\n\n") + SPEC.index(QUOTE))


def test_a_binary_save_leaves_anchors_in_the_last_text_until_text_returns(
    db: Database, me: Actor, spec: dict[str, Any]
) -> None:
    thread = start(db, me, spec["id"])
    save(db, me, spec["id"], b"\x00\x01 binary for a while")
    assert anchor_of(db, me, spec["id"], thread["id"])["revision"] == 1
    new = "Back as text.\n\n" + SPEC
    save(db, me, spec["id"], new)
    moved = anchor_of(db, me, spec["id"], thread["id"])
    assert (moved["revision"], moved["orphaned"]) == (3, False)
    assert new[moved["start"] : moved["end"]] == QUOTE


def test_a_refused_save_moves_no_anchor(db: Database, me: Actor, spec: dict[str, Any]) -> None:
    thread = start(db, me, spec["id"])
    refused(
        ErrorCode.REVISION_CONFLICT, spec_calls.update_spec_file, db, me, project=KEY,
        workspace_id=None, ref=FileRef(file_id=spec["id"]), content=b"Gone.\n",
        expected_version="cv_stale", idempotency_key=None,
    )  # fmt: skip
    assert anchor_of(db, me, spec["id"], thread["id"]) == {
        **thread["anchor"],
        "orphaned": False,
    }
    assert events(db, "spec_comment.orphaned") == []


# --- migration 0015 ------------------------------------------------------------------------------


def test_the_comment_tables_go_with_a_downgrade_and_come_back(
    db: Database, me: Actor, spec: dict[str, Any]
) -> None:
    start(db, me, spec["id"])
    names = {"spec_comment_threads", "spec_comments"}
    migrate.downgrade(db, "0014_attachments")
    assert _tables(db) & names == set()
    assert "spec_files" in _tables(db)
    migrate.upgrade(db)
    assert names <= _tables(db)
    assert migrate.schema_differences(db) == []
    assert start(db, me, spec["id"])["anchor"]["quote"] == QUOTE
    assert threads(db, me, spec["id"])["total"] == 1


def _tables(db: Database) -> set[str]:
    query = (
        "SELECT name FROM sqlite_master WHERE type = 'table'"
        if db.dialect == "sqlite"
        else "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
    )
    with db.engine.connect() as conn:
        return set(conn.exec_driver_sql(query).scalars())


def test_a_thread_tells_the_people_its_comments_mention_once_each(
    db: Database, owner: User, me: Actor, spec: dict[str, Any]
) -> None:
    bo = make_user(db, "bo@example.com")
    cy = make_user(db, "cy@example.com")
    outsider = make_user(db, "dee@example.com")  # not of the project
    for person in (bo, cy):
        grant(db, owner, KEY, person, Role.WRITE)
    opened = start(db, me, spec["id"], body="@bo is ten enough? (@dee, @owner: me)")
    reply(db, person_actor(bo), opened["id"], body="Ask @cy, and @bo is me.")
    first = opened["comments"][0]
    edit(db, me, first, "@bo is ten enough? @cy too")  # cy is new here: told; bo already was

    def told(user: User) -> list[tuple[str, str]]:
        listed = inbox.list_notifications(db, person_actor(user))["notifications"]
        return sorted((n["title"], n["link"]) for n in listed)

    link = f"/p/{KEY}/specs/files/{spec['id']}#threads"
    assert told(bo) == [("owner mentioned you on docs/limits.md", link)]
    assert told(cy) == [
        ("bo mentioned you on docs/limits.md", link),
        ("owner mentioned you on docs/limits.md", link),
    ]
    assert told(owner) == []
    assert told(outsider) == []
