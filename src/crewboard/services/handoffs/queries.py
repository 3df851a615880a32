"""Reading handoffs and their action items: typed read models (`domain/handoffs`) that the
doors put into words (`contract/handoffs/present`).

Every read needs a person (see `commands`). Linked tasks are shown to a reader only when the
reader may open them; the others are left out, unnamed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from crewboard.domain.handoffs import (
    ActionItem,
    DaySheet,
    Handoff,
    HandoffPage,
    HandoffRead,
    ItemPage,
    ItemRead,
    local_day,
    parse_day,
)
from crewboard.domain.identity.records import Actor
from crewboard.domain.projects import ProjectAccess
from crewboard.domain.validation import zone_of
from crewboard.errors import ValidationFailed
from crewboard.services import cursors
from crewboard.services.handoffs.lookups import (
    handoffs_of,
    open_handoff,
    open_item,
    person_of,
    users_of,
    visible_tasks,
)
from crewboard.services.identity.access import access_project, require_person
from crewboard.services.paging import check_limit, check_page
from crewboard.services.views import iso
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork

DEFAULT_PAGE = 20
MAX_PAGE = 100
FIRST_ITEMS = 20  # action items get_handoff shows; list_handoff_action_items pages on
ITEM_CURSOR = "hai1"


def read_of(uow: UnitOfWork, actor: Actor, item: Handoff, access: ProjectAccess) -> HandoffRead:
    """The handoff as `actor` sees it, with its first action items (one more than are shown)."""
    repo = handoffs_of(uow)
    items = repo.items(handoff_id=item.id, after=None, limit=FIRST_ITEMS + 1)
    users = users_of(
        uow,
        [item.author_user_id, *item.recipient_user_ids, *(i.assignee_user_id for i in items)],
    )
    return HandoffRead(
        handoff=item,
        project_key=access.project.key,
        users=users,
        linked_tasks=visible_tasks(uow, actor, item.linked_task_ids),
        first_items=tuple(items),
        item_count=repo.item_counts([item.id]).get(item.id, 0),
    )


def item_cursor(
    actor: Actor, binding: Mapping[str, str | None], shown: Sequence[ActionItem]
) -> str:
    """The cursor to the action items after `shown`, for this caller and these filters."""
    last = shown[-1]
    return cursors.seal(
        ITEM_CURSOR, [iso(last.created_at) or "", last.id], caller=actor.principal,
        binding=dict(binding),
    )  # fmt: skip


def get_handoff(db: Database, actor: Actor, *, handoff_id: str) -> HandoffRead:
    """A handoff with its bodies, the linked tasks the reader may open, and its first action
    items.

    Raises:
        HumanIdentityRequired, NotFound.
    """
    require_person(actor, "get_handoff")

    def work(uow: UnitOfWork) -> HandoffRead:
        item, access = open_handoff(uow, actor, handoff_id)
        return read_of(uow, actor, item, access)

    return db.read(work)


def list_handoffs(
    db: Database,
    actor: Actor,
    *,
    project: str,
    author: str | None = None,
    recipient: str | None = None,
    since: str | None = None,
    until: str | None = None,
    limit: int = DEFAULT_PAGE,
    offset: int = 0,
) -> HandoffPage:
    """A project's handoffs, newest day first: metadata only (get_handoff has the bodies).
    `since` and `until` are inclusive dates; `author` and `recipient` are people (id or
    email).

    Raises:
        HumanIdentityRequired, NotFound, ValidationFailed.
    """
    require_person(actor, "list_handoffs")
    check_page(limit, offset, MAX_PAGE)
    first = parse_day("since", since) if since else None
    last = parse_day("until", until) if until else None
    if first and last and first > last:
        raise ValidationFailed.field("until", f"is before since ({since}); swap them.")

    def work(uow: UnitOfWork) -> HandoffPage:
        access = access_project(uow, actor, project)
        pid = access.project.id
        repo = handoffs_of(uow)
        rows, total = repo.page(
            pid,
            author_user_id=person_of(uow, pid, "author", author) if author else None,
            recipient_user_id=person_of(uow, pid, "recipient", recipient) if recipient else None,
            since=first,
            until=last,
            limit=limit,
            offset=offset,
        )
        counts = repo.item_counts([r.id for r in rows])
        users = users_of(uow, [u for r in rows for u in (r.author_user_id, *r.recipient_user_ids)])
        return HandoffPage(tuple(rows), counts, users, total, offset)

    return db.read(work)


def list_handoff_action_items(
    db: Database,
    actor: Actor,
    *,
    handoff_id: str | None = None,
    project: str | None = None,
    day: str | None = None,
    cursor: str | None = None,
    limit: int = DEFAULT_PAGE,
) -> ItemPage:
    """Action items oldest first: a handoff's, or those of a project's handoffs of one day.
    The page's cursor continues (same filters, same caller).

    Raises:
        HumanIdentityRequired, NotFound, ValidationFailed (which filters; the cursor).
    """
    require_person(actor, "list_handoff_action_items")
    check_limit(limit, MAX_PAGE)
    if (handoff_id is None) == (project is None) or (project is not None and day is None):
        raise ValidationFailed.field(
            "handoffId", "send handoffId, or projectId with date (YYYY-MM-DD), not both."
        )
    when = parse_day("date", day) if day else None
    binding = {"handoffId": handoff_id} if handoff_id else {"projectId": project, "date": day}
    after = None
    if cursor:
        position = cursors.unseal(
            ITEM_CURSOR, cursor, caller=actor.principal, binding=binding,
            tool="list_handoff_action_items",
        )  # fmt: skip
        after = (datetime.fromisoformat(str(position[0])), str(position[1]))

    def work(uow: UnitOfWork) -> ItemPage:
        repo = handoffs_of(uow)
        if handoff_id is not None:
            item, _ = open_handoff(uow, actor, handoff_id)
            rows = repo.items(handoff_id=item.id, after=after, limit=limit + 1)
        else:
            access = access_project(uow, actor, str(project))
            rows = repo.items(project_id=access.project.id, day=when, after=after, limit=limit + 1)
        users = users_of(uow, [r.assignee_user_id for r in rows[:limit]])
        return ItemPage(tuple(rows), users, limit, binding)

    return db.read(work)


def get_handoff_action_item(db: Database, actor: Actor, *, item_id: str) -> ItemRead:
    """One action item.

    Raises:
        HumanIdentityRequired, NotFound.
    """
    require_person(actor, "get_handoff_action_item")

    def work(uow: UnitOfWork) -> ItemRead:
        item, _ = open_item(uow, actor, item_id)
        return ItemRead(item, users_of(uow, [item.assignee_user_id]))

    return db.read(work)


def day_sheet(db: Database, actor: Actor, *, project: str, day: str | None) -> DaySheet:
    """What the web app's handoffs page shows for one day: the day (today in shift A's zone
    unless given), the two shift zones, every handoff of that day whole (newest first), and
    the people of the project (for recipients and assignees), by name.

    Raises:
        NotFound, ValidationFailed (the date).
    """

    def work(uow: UnitOfWork) -> DaySheet:
        access = access_project(uow, actor, project)
        found = access.project
        shifts = uow.projects.handoff_settings(found.id)
        when = parse_day("date", day) if day else local_day(uow.now, zone_of("tz", shifts.zone_a))
        rows, _ = handoffs_of(uow).page(
            found.id, author_user_id=None, recipient_user_id=None, since=when, until=when,
            limit=MAX_PAGE, offset=0,
        )  # fmt: skip
        people = [user for user, _ in uow.projects.members(found.id)]
        return DaySheet(
            day=when,
            zone_a=shifts.zone_a,
            zone_b=shifts.zone_b,
            role=str(access.role),
            handoffs=tuple(read_of(uow, actor, row, access) for row in rows),
            people=tuple(sorted(people, key=lambda p: (p.display_name or "").lower())),
        )

    return db.read(work)
