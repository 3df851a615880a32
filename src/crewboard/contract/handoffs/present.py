"""Handoffs in words: the one place that turns the typed handoff results of
`services/handoffs` into the camelCase answers every door gives (MCP, REST, the CLI's JSON and
the web page), and fits a handoff or a page of action items to an answer budget.

A door runs the use case (`commands`, `queries`) and words its result with these views
(`made_view`, `handoff_answer`, `item_answer`, the page views), so a use case answers alike on
every door.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from crewboard.domain.handoffs import (
    WIRE_BODIES,
    ActionItem,
    DaySheet,
    Handoff,
    HandoffMade,
    HandoffPage,
    HandoffRead,
    ItemPage,
    ItemRead,
    Told,
)
from crewboard.domain.identity.records import Actor, User
from crewboard.services.handoffs import queries
from crewboard.services.handoffs.queries import DEFAULT_PAGE as DEFAULT_PAGE  # noqa: PLC0414 - the doors' page sizes
from crewboard.services.handoffs.queries import FIRST_ITEMS
from crewboard.services.handoffs.queries import MAX_PAGE as MAX_PAGE  # noqa: PLC0414 - as DEFAULT_PAGE
from crewboard.services.paging import fit_rows, json_size, next_offset
from crewboard.services.views import iso
from crewboard.storage.database import Database

ITEMS_ROOM = 8 * 1024  # bytes of an answer kept for the first action items


# --- views ---------------------------------------------------------------------------------


def _person(users: Mapping[str, User], user_id: str | None) -> dict[str, Any] | None:
    if user_id is None:
        return None
    user = users.get(user_id)
    return {
        "userId": user_id,
        "displayName": user.display_name if user else None,
        "email": user.email if user else None,
    }


def _stamp(users: Mapping[str, User], stamp: dict[str, Any]) -> dict[str, Any]:
    """An author stamp with the person's current name (older stamps kept only the id)."""
    user = users.get(str(stamp.get("userId")))
    return {
        **stamp,
        "displayName": stamp.get("displayName") or (user.display_name if user else None),
    }


def handoff_meta(item: Handoff, users: Mapping[str, User], items: int) -> dict[str, Any]:
    """What a list shows of a handoff: everything but the bodies and the linked tasks."""
    return {
        "id": item.id,
        "projectId": item.project_id,
        "date": item.day.isoformat(),
        "author": _person(users, item.author_user_id),
        "writtenBy": _stamp(users, item.author),
        "sourceTimeZone": item.source_zone,
        "destinationTimeZone": item.destination_zone,
        "recipients": [_person(users, u) for u in item.recipient_user_ids],
        "actionItemCount": items,
        "createdAt": iso(item.created_at),
        "updatedAt": iso(item.updated_at),
        "updatedBy": item.updated_by,
    }


def item_view(item: ActionItem, users: Mapping[str, User]) -> dict[str, Any]:
    return {
        "id": item.id,
        "handoffId": item.handoff_id,
        "projectId": item.project_id,
        "date": item.day.isoformat(),
        "text": item.text,
        "assignee": _person(users, item.assignee_user_id),
        "status": item.status.value,
        "dueDate": None if item.due_date is None else item.due_date.isoformat(),
        "createdBy": item.created_by,
        "createdAt": iso(item.created_at),
        "updatedAt": iso(item.updated_at),
        "updatedBy": item.updated_by,
    }


def told_view(told: Told) -> dict[str, Any]:
    if told.note is not None:
        return {"inApp": told.in_app, "emailsQueued": told.emails_queued, "note": told.note}
    return {
        "inApp": told.in_app,
        "emailsQueued": told.emails_queued,
        "emailNotSent": told.email_not_sent,
    }


def handoff_view(read: HandoffRead, actor: Actor, room: int | None = None) -> dict[str, Any]:
    """The handoff whole, or (with `room`) within that many bytes of JSON: action items that
    do not fit are left to the cursor; in a handoff too large for any answer the linked tasks,
    then the bodies, are cut, and `truncated` names what was."""
    item = read.handoff
    view = handoff_meta(item, read.users, read.item_count)
    view |= {
        "projectKey": read.project_key,
        "completed": item.completed,
        "inProgress": item.in_progress,
        "blockers": item.blockers,
        "nextSteps": item.next_steps,
        "linkedTasks": [{"id": t.id, "key": t.key, "title": t.title} for t in read.linked_tasks],
    }
    items = read.first_items
    views = [item_view(i, read.users) for i in items[:FIRST_ITEMS]]
    if room is not None:
        view = _cut_to(view, room - ITEMS_ROOM)
        views = fit_rows(views, max(1, room - json_size(view)))
    view["actionItems"] = views
    view["actionItemsCursor"] = (
        queries.item_cursor(actor, {"handoffId": item.id}, items[: len(views)])
        if len(items) > len(views)
        else None
    )
    return view


def _cut_to(view: dict[str, Any], room: int) -> dict[str, Any]:
    """The view within `room` bytes: linked tasks first, then the bodies, cut from their ends
    (`truncated` names the fields cut)."""
    if json_size(view) <= room:
        return view
    cut: list[str] = []
    tasks = view["linkedTasks"]
    others = json_size({**view, "linkedTasks": []})
    kept = fit_rows(tasks, max(1, room - others)) if others < room else []
    if len(kept) < len(tasks):
        view = {**view, "linkedTasks": kept}
        cut.append("linkedTasks")
    if json_size(view) > room:
        # Share what is left among the four bodies: a short one keeps all it has, and the
        # others split the rest evenly.
        names = sorted(WIRE_BODIES.values(), key=lambda n: json_size(view[n]))
        left = room - json_size({**view, **dict.fromkeys(names, "")})
        for index, name in enumerate(names):
            share = max(0, left // (len(names) - index))
            text = view[name]
            if json_size(text) > share:
                text = _prefix_within(text, share)
                cut.append(name)
                view = {**view, name: text}
            left -= json_size(text)
    return {**view, "truncated": cut}


def _prefix_within(text: str, size: int) -> str:
    """The longest prefix of `text` whose JSON is at most `size` bytes."""
    low, high = 0, len(text)
    while low < high:
        middle = (low + high + 1) // 2
        if json_size(text[:middle]) <= size:
            low = middle
        else:
            high = middle - 1
    return text[:low]


def handoff_page_view(page: HandoffPage) -> dict[str, Any]:
    return {
        "handoffs": [handoff_meta(r, page.users, page.item_counts.get(r.id, 0)) for r in page.rows],
        "total": page.total,
        "nextOffset": next_offset(page.offset, len(page.rows), page.total),
    }


def item_page_view(page: ItemPage, actor: Actor, room: int | None = None) -> dict[str, Any]:
    """A page of action items; with `room`, only those that fit in that many bytes (the
    cursor continues after the last one shown)."""
    views = [item_view(r, page.users) for r in page.rows[: page.limit]]
    if room is not None:
        views = fit_rows(views, room)
    shown: Sequence[ActionItem] = page.rows[: len(views)]
    more = len(page.rows) > len(shown)
    return {
        "actionItems": views,
        "hasMore": more,
        "nextCursor": queries.item_cursor(actor, page.binding, shown) if more else None,
    }


def day_sheet_view(sheet: DaySheet, actor: Actor) -> dict[str, Any]:
    return {
        "date": sheet.day.isoformat(),
        "zones": {"a": sheet.zone_a, "b": sheet.zone_b},
        "role": sheet.role,
        "handoffs": [handoff_view(read, actor) for read in sheet.handoffs],
        "people": [
            {"userId": user.id, "displayName": user.display_name, "email": user.email}
            for user in sheet.people
        ],
    }


def made_view(actor: Actor) -> Callable[[HandoffMade], dict[str, Any]]:
    """The answer to a handoff made (`commands.create_handoff` keeps it for a retry):
    `handoff` and `notifications`."""

    def answer(made: HandoffMade) -> dict[str, Any]:
        return {"handoff": handoff_view(made.read, actor), "notifications": told_view(made.told)}

    return answer


def handoff_answer(read: HandoffRead, actor: Actor, room: int | None = None) -> dict[str, Any]:
    """The answer to a handoff changed or read: `handoff`, whole or within `room` bytes
    (`actionItemsCursor` continues with list_handoff_action_items)."""
    return {"handoff": handoff_view(read, actor, room)}


def item_answer(read: ItemRead) -> dict[str, Any]:
    """The answer to an action item made, changed or read: `actionItem`."""
    return {"actionItem": item_view(read.item, read.users)}


def day_sheet(db: Database, actor: Actor, *, project: str, day: str | None) -> dict[str, Any]:
    """What the web app's handoffs page shows for one day (`queries.day_sheet`)."""
    return day_sheet_view(queries.day_sheet(db, actor, project=project, day=day), actor)
