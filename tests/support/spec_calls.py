"""The spec use cases as the doors run them, for tests that set a scene: the use case of
`services/specs`, its result worded by `contract/specs/present` (kept in the idempotency
ledger, as on every door)."""

from __future__ import annotations

from typing import Any

from crewboard.contract.specs import present
from crewboard.domain.identity.records import Actor
from crewboard.services.idempotency import KeyedResult
from crewboard.services.specs import attachments, comments, files
from crewboard.storage.database import Database


def upload_spec_file(db: Database, actor: Actor, **given: Any) -> KeyedResult:
    return files.upload_spec_file(db, actor, answer=present.new_file_view, **given)


def update_spec_file(db: Database, actor: Actor, **given: Any) -> KeyedResult:
    return files.update_spec_file(db, actor, answer=present.saved_view, **given)


def upload_attachment(db: Database, actor: Actor, **given: Any) -> KeyedResult:
    return attachments.upload_attachment(db, actor, answer=present.uploaded_view, **given)


def create_spec_file_comment_thread(db: Database, actor: Actor, **given: Any) -> KeyedResult:
    answer = present.thread_answer(actor)
    return comments.create_spec_file_comment_thread(db, actor, answer=answer, **given)


def reply_spec_file_comment_thread(db: Database, actor: Actor, **given: Any) -> KeyedResult:
    answer = present.comment_answer(actor)
    return comments.reply_spec_file_comment_thread(db, actor, answer=answer, **given)


def move_spec_file_to_trash(db: Database, actor: Actor, **given: Any) -> dict[str, Any]:
    return present.trash_view(files.move_spec_file_to_trash(db, actor, **given))


def restore_spec_file_from_trash(db: Database, actor: Actor, **given: Any) -> dict[str, Any]:
    return present.trash_view(files.restore_spec_file_from_trash(db, actor, **given))
