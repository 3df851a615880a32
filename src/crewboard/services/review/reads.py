"""Inbox read markers: what each person has read of their inbox, and how much is new.

Reading is personal: a marker belongs to one person and one item (a hand-in, a proposal card,
a question or a message), so one reviewer opening a hand-in leaves it new for the others.
Markers are a person's own view of the inbox, not a change to the project: they record no
event (an event would refresh every open page of every member for one person's click).
"""

from __future__ import annotations

from collections.abc import Iterable

from crewboard.domain.identity.records import Actor
from crewboard.domain.review import WAITING, AllRead, ReadMarks, UnreadMark
from crewboard.domain.validation import check_no_nul
from crewboard.errors import NotFound, ValidationFailed
from crewboard.services.identity.access import access_project, require_signed_in_person
from crewboard.storage.database import Database
from crewboard.storage.review.reads import InboxReadRepository
from crewboard.storage.uow import UnitOfWork

KINDS = ("hand_in", "proposal", "question", "message")
WAITING_DRAFTS = tuple(sorted(str(s) for s in WAITING))


def reads_of(uow: UnitOfWork) -> InboxReadRepository:
    return InboxReadRepository(uow.conn)


def check_item_kind(kind: str) -> str:
    """Raises: ValidationFailed when `kind` is not an inbox kind."""
    if kind not in KINDS:
        raise ValidationFailed.field("kind", f"unknown value {kind!r}.", list(KINDS))
    return kind


def _item_not_found(kind: str, item_id: str, key: str) -> NotFound:
    return NotFound(
        f"No {kind.replace('_', '-')} {item_id!r} in {key}; the inbox lists what waits for you.",
        {"resource": kind, "ref": item_id},
    )


def _check_item(uow: UnitOfWork, project_id: str, key: str, kind: str, item_id: str) -> None:
    """Raises: NotFound unless the item exists in this project."""
    check_no_nul("itemId", item_id)
    if reads_of(uow).item_project(kind, item_id) != project_id:
        raise _item_not_found(kind, item_id, key)


def mark_read(
    db: Database, actor: Actor, project: str, items: Iterable[tuple[str, str]]
) -> ReadMarks:
    """Mark inbox items (kind, id) of a project read for this person; again changes nothing.

    Raises:
        PermissionDenied: through a token (the inbox is a person's). ValidationFailed: an
            unknown kind. NotFound: the project, or an item that is not in it.
    """
    require_signed_in_person(actor, "Marking inbox items read")
    wanted = [(check_item_kind(kind), item_id) for kind, item_id in items]

    def work(uow: UnitOfWork) -> ReadMarks:
        found = access_project(uow, actor, project).project
        for kind, item_id in wanted:
            _check_item(uow, found.id, found.key, kind, item_id)
        reads_of(uow).mark(actor.user_id, found.id, wanted, uow.now)
        return ReadMarks(found.id, tuple(wanted))

    result: ReadMarks = db.write(work)
    return result


def mark_unread(db: Database, actor: Actor, project: str, kind: str, item_id: str) -> UnreadMark:
    """Make an inbox item new again for this person (`changed: false` when it was not read).

    Raises:
        PermissionDenied, ValidationFailed, NotFound: as `mark_read`.
    """
    require_signed_in_person(actor, "Marking an inbox item unread")
    check_item_kind(kind)

    def work(uow: UnitOfWork) -> UnreadMark:
        found = access_project(uow, actor, project).project
        _check_item(uow, found.id, found.key, kind, item_id)
        changed = reads_of(uow).unmark(actor.user_id, kind, item_id)
        return UnreadMark(found.id, kind, item_id, changed)

    result: UnreadMark = db.write(work)
    return result


def mark_all_read(db: Database, actor: Actor, project: str, kind: str | None = None) -> AllRead:
    """Mark everything in this person's inbox of a project read (or everything of one kind).

    Raises:
        PermissionDenied, NotFound: as `mark_read`. ValidationFailed: an unknown kind.
    """
    require_signed_in_person(actor, "Marking the inbox read")
    if kind is not None:
        check_item_kind(kind)

    def work(uow: UnitOfWork) -> AllRead:
        found = access_project(uow, actor, project).project
        marked = reads_of(uow).mark_all(actor.user_id, found.id, WAITING_DRAFTS, uow.now, kind)
        return AllRead(found.id, marked)

    result: AllRead = db.write(work)
    return result


def unread_count(db: Database, actor: Actor, project: str) -> int:
    """How many items of this person's inbox of a project they have not read (0 through a
    token: the inbox is a person's).

    Raises:
        NotFound: the project is not open to the actor.
    """
    if actor.token is not None:
        return 0

    def work(uow: UnitOfWork) -> int:
        found = access_project(uow, actor, project).project
        return reads_of(uow).unread_count(actor.user_id, found.id, WAITING_DRAFTS)

    return db.read(work)


def read_items(uow: UnitOfWork, actor: Actor, item_ids: Iterable[str]) -> set[tuple[str, str]]:
    """Which of these items (by id) the person has read, as (kind, id): for the inbox list."""
    return reads_of(uow).read_of(actor.user_id, list(item_ids))
