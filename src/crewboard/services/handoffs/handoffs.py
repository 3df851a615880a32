"""Shift handoffs (see `domain/handoffs`): one per author, project and day.

Every handoff tool needs a person: a personal token or the web app (an agent token is
refused with HUMAN_IDENTITY_REQUIRED), because a handoff speaks in a person's name. The author
is whoever calls; only the author changes the four bodies, while anyone who may write on the
project may change its linked tasks and recipients, and its action items. Edits name the
`updatedAt` they read; a stale one is refused naming the current one, and nothing is written.
Linked tasks are shown to a reader only when the reader may open them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from crewboard.domain.handoffs import (
    BODIES,
    MAX_ITEM_TEXT,
    MAX_ITEMS,
    MAX_LINKED_TASKS,
    MAX_RECIPIENTS,
    WIRE_BODIES,
    ActionItem,
    Handoff,
    ItemStatus,
    check_body,
    local_day,
    parse_day,
    unique_ids,
)
from crewboard.domain.identity.access import Role, Scope, parse_enum
from crewboard.domain.identity.records import Actor, User
from crewboard.domain.ids import new_id
from crewboard.domain.notifications import MAX_EMAIL_TEXT
from crewboard.domain.projects import ProjectAccess
from crewboard.domain.validation import check_text, check_time_zone, zone_of
from crewboard.errors import (
    HandoffAlreadyExists,
    LimitExceeded,
    NotFound,
    PermissionDenied,
    RevisionConflict,
    ValidationFailed,
)
from crewboard.services import cursors
from crewboard.services.board.tasks import access_task
from crewboard.services.idempotency import Ack, KeyedResult, do_keyed_write
from crewboard.services.identity.access import (
    ANY_WORKSPACE,
    WorkspaceRef,
    access_project,
    require_person,
)
from crewboard.services.notifications.notify import notify
from crewboard.services.paging import check_limit, check_page, fit_rows, json_size, next_offset
from crewboard.services.views import iso, who_of
from crewboard.storage.database import Database, LostRace
from crewboard.storage.handoffs.repository import HandoffRepository
from crewboard.storage.uow import UnitOfWork

DEFAULT_PAGE = 20
MAX_PAGE = 100
FIRST_ITEMS = 20  # action items get_handoff shows; list_handoff_action_items pages on
ITEMS_ROOM = 8 * 1024  # bytes of an answer kept for the first action items
ITEM_CURSOR = "hai1"
BODY_LABELS = (("completed", "Completed"), ("in_progress", "In progress"),
               ("blockers", "Blockers"), ("next_steps", "Next steps"))  # fmt: skip


def handoffs_of(uow: UnitOfWork) -> HandoffRepository:
    return HandoffRepository(uow.conn)


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


def handoff_meta(item: Handoff, users: Mapping[str, User], items: int) -> dict[str, Any]:
    """What a list shows of a handoff: everything but the bodies and the linked tasks."""
    return {
        "id": item.id,
        "projectId": item.project_id,
        "date": item.day.isoformat(),
        "author": _person(users, item.author_user_id),
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


def _users(uow: UnitOfWork, ids: Sequence[str | None]) -> dict[str, User]:
    return uow.users.get_many(i for i in ids if i)


# --- lookups -------------------------------------------------------------------------------


def handoff_not_found(ref: str) -> NotFound:
    return NotFound(
        f"No handoff {ref!r} that you can open; list_handoffs shows a project's handoffs.",
        {"resource": "handoff", "ref": ref},
    )


def item_not_found(ref: str) -> NotFound:
    return NotFound(
        f"No action item {ref!r} that you can open; list_handoff_action_items lists a "
        "handoff's items.",
        {"resource": "handoff_action_item", "ref": ref},
    )


def _open_handoff(
    uow: UnitOfWork, actor: Actor, ref: str, *, for_update: bool = False, **access: Any
) -> tuple[Handoff, ProjectAccess]:
    """A handoff by id and the access to its project (`access`: as access_project takes it).

    Raises:
        NotFound: no such handoff, or one in a project the actor cannot open (alike).
    """
    found = None if "\x00" in ref else handoffs_of(uow).get(ref, for_update=for_update)
    return found, _access(uow, actor, found, handoff_not_found(ref), access)  # type: ignore[return-value]


def _open_item(
    uow: UnitOfWork, actor: Actor, ref: str, **access: Any
) -> tuple[ActionItem, ProjectAccess]:
    """An action item by id and the access to its project (as `_open_handoff`)."""
    found = None if "\x00" in ref else handoffs_of(uow).item(ref)
    return found, _access(uow, actor, found, item_not_found(ref), access)  # type: ignore[return-value]


def _access(
    uow: UnitOfWork,
    actor: Actor,
    found: Handoff | ActionItem | None,
    missing: NotFound,
    access: dict[str, Any],
) -> ProjectAccess:
    if found is None:
        raise missing
    try:
        return access_project(uow, actor, found.project_id, **access)
    except NotFound:
        raise missing from None


def _visible_tasks(uow: UnitOfWork, actor: Actor, task_ids: Sequence[str]) -> list[dict[str, Any]]:
    """The linked tasks the reader may open (the others are left out, unnamed)."""
    shown = []
    for task_id in task_ids:
        try:
            task, project = access_task(uow, actor, task_id)
        except (NotFound, PermissionDenied):
            continue
        shown.append({"id": task.id, "key": f"{project.key}-{task.number}", "title": task.title})
    return shown


def _linked(uow: UnitOfWork, actor: Actor, refs: Sequence[str]) -> tuple[str, ...]:
    """The ids of tasks the caller links, each one the caller may open.

    Raises:
        ValidationFailed: naming the entry that is not a task the caller can open.
    """
    ids = []
    for index, ref in enumerate(unique_ids("linkedTaskIds", list(refs), MAX_LINKED_TASKS)):
        try:
            task, _ = access_task(uow, actor, ref)
        except (NotFound, PermissionDenied):
            raise ValidationFailed.field(
                f"linkedTaskIds[{index}]",
                f"{ref!r} is not a task you can open; send a task id (tsk_…) or key (CRW-12).",
            ) from None
        ids.append(task.id)
    return tuple(dict.fromkeys(ids))


def _people(uow: UnitOfWork, project_id: str, field: str, refs: Sequence[str]) -> tuple[str, ...]:
    """User ids of people of the project, named by id or email.

    Raises:
        ValidationFailed: naming the entry that is not a person of the project.
    """
    members = {user.id: user for user, _ in uow.projects.members(project_id)}
    by_email = {user.email.lower(): user.id for user in members.values()}
    found = []
    for index, ref in enumerate(unique_ids(field, list(refs), MAX_RECIPIENTS)):
        user_id = ref if ref in members else by_email.get(ref.strip().lower())
        if user_id is None:
            raise ValidationFailed.field(
                f"{field}[{index}]",
                f"{ref!r} is not a person of this project; send a user id or email that "
                "list_team shows.",
            )
        found.append(user_id)
    return tuple(dict.fromkeys(found))


def _person_of(uow: UnitOfWork, project_id: str, field: str, ref: str) -> str:
    return _people(uow, project_id, field, [ref])[0]


def _later(now: datetime, previous: datetime) -> datetime:
    """A new updatedAt: now, or just after the previous one when the clock has not moved
    (so every edit gets a version of its own)."""
    return max(now, previous + timedelta(microseconds=1))


def _expected(field: str, value: str) -> datetime:
    """An updatedAt as the reads give it (ISO 8601 with its offset).

    Raises:
        ValidationFailed: naming the field.
    """
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        parsed = None
    if parsed is None or parsed.tzinfo is None:
        raise ValidationFailed.field(
            field, "send the updatedAt of a fresh read as it came (ISO 8601 with its offset)."
        )
    return parsed


def _stale(kind: str, ref: str, current: datetime, by: dict[str, Any], sent: str) -> Exception:
    return RevisionConflict(
        f"{kind} {ref} has changed since you read it: {who_of(by)} saved it at {iso(current)}, "
        f"and you sent expectedUpdatedAt {sent}. Nothing was written. Read it again and send "
        "its updatedAt.",
        {"currentUpdatedAt": iso(current), "updatedBy": by, "expectedUpdatedAt": sent},
    )


# --- handoffs ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Bodies:
    completed: str = ""
    in_progress: str = ""
    blockers: str = ""
    next_steps: str = ""


def create_handoff(
    db: Database,
    actor: Actor,
    *,
    project: str,
    workspace_id: WorkspaceRef,
    bodies: Bodies,
    day: str | None = None,
    source_time_zone: str | None = None,
    destination_time_zone: str | None = None,
    linked_task_ids: Sequence[str] = (),
    recipients: Sequence[str] = (),
    idempotency_key: str | None = None,
    send_notification: bool = False,
    send_email: bool = False,
) -> KeyedResult:
    """The caller's handoff of a project for a day (today in the source zone by default).

    The recipients hear of it only when asked: in the app (`send_notification`) and by email
    (`send_email`), each as their own settings allow; the answer's `notifications` says who
    was told and, when no email went out, why. Mail leaves after the commit (the outbox).

    Raises:
        HumanIdentityRequired: an agent token.
        HandoffAlreadyExists: the caller wrote that project's handoff for that day already.
        NotFound, PermissionDenied, ValidationFailed, IdempotencyConflict.
    """
    require_person(actor, "create_handoff")
    for name in BODIES:
        check_body(WIRE_BODIES[name], getattr(bodies, name))
    arguments = {
        "project": project, "workspaceId": workspace_id, "bodies": bodies.__dict__, "date": day,
        "source": source_time_zone, "destination": destination_time_zone,
        "linkedTaskIds": list(linked_task_ids), "recipients": list(recipients),
        "sendNotification": send_notification, "sendEmail": send_email,
    }  # fmt: skip

    def work(uow: UnitOfWork) -> KeyedResult:
        def perform() -> Ack:
            access = access_project(
                uow, actor, project, scope=Scope.TASKS_MANAGE, role=Role.WRITE,
                workspace_id=workspace_id,
            )  # fmt: skip
            found = access.project
            shifts = uow.projects.handoff_settings(found.id)
            source = check_time_zone("sourceTimeZone", source_time_zone or shifts.zone_a)
            destination = check_time_zone(
                "destinationTimeZone", destination_time_zone or shifts.zone_b
            )
            when = parse_day("date", day) if day else local_day(uow.now, zone_of("tz", source))
            repo = handoffs_of(uow)
            existing = repo.in_slot(found.id, actor.user_id, when)
            if existing is not None:
                raise HandoffAlreadyExists(
                    f"You already wrote the {found.key} handoff for {when.isoformat()} "
                    f"({existing.id}); change it with update_handoff.",
                    {"handoffId": existing.id, "date": when.isoformat(),
                     "updatedAt": iso(existing.updated_at)},
                )  # fmt: skip
            stamp = actor.as_payload()
            item = Handoff(
                id=new_id("hof"),
                project_id=found.id,
                author_user_id=actor.user_id,
                author=stamp,
                day=when,
                source_zone=source,
                destination_zone=destination,
                completed=bodies.completed,
                in_progress=bodies.in_progress,
                blockers=bodies.blockers,
                next_steps=bodies.next_steps,
                linked_task_ids=_linked(uow, actor, linked_task_ids),
                recipient_user_ids=_people(uow, found.id, "recipients", recipients),
                created_at=uow.now,
                updated_at=uow.now,
                updated_by=stamp,
            )
            repo.add(item)
            body = {"handoff": _full(uow, actor, item, access)}
            body["notifications"] = _tell(
                uow, actor, item, access, in_app=send_notification, email=send_email
            )
            uow.record_event(
                "handoff.created",
                actor=stamp,
                payload={"handoffId": item.id, "date": when.isoformat()},
                project_id=found.id,
            )
            return Ack(body, "handoff", item.id, found.id)

        return do_keyed_write(
            uow, actor, key=idempotency_key, operation="create_handoff", arguments=arguments,
            perform=perform,
        )  # fmt: skip

    return db.write(work)


def _tell_assignee(uow: UnitOfWork, actor: Actor, item: ActionItem) -> None:
    """A person given an action item hears of it (in the app, and by email when their own
    settings say so) unless the project turned that off; once per item and assignment; giving
    it to yourself tells nobody."""
    person = item.assignee_user_id
    if person is None or person == actor.user_id:
        return
    if not uow.projects.handoff_settings(item.project_id).notify_assignees:
        return  # the project's admins turned it off
    key = uow.projects.get(item.project_id)
    where = f"/p/{key.key if key else item.project_id}/handoffs?date={item.day.isoformat()}"
    notify(
        uow, recipients=[person], kind="handoff_action_item.assigned",
        project_id=item.project_id,
        title=f"{actor.display_name or 'Someone'} gave you an action item", body=item.text[:500],
        link=f"{where}#{item.handoff_id}", source=f"handoff_item:{item.id}:{item.updated_at.isoformat()}",
        in_app=True, email=True,
    )  # fmt: skip


def _tell(
    uow: UnitOfWork, actor: Actor, item: Handoff, access: ProjectAccess, *, in_app: bool,
    email: bool,
) -> dict[str, Any]:  # fmt: skip
    """Notify the recipients of a new handoff, as the call and their settings ask."""
    if not (in_app or email) or not item.recipient_user_ids:
        why = "nobody was notified: " + (
            "the handoff names no recipients." if (in_app or email)
            else "send sendNotification or sendEmail to tell the recipients."
        )  # fmt: skip
        return {"inApp": 0, "emailsQueued": 0, "note": why}
    key = access.project.key
    who = actor.display_name or "Someone"
    title = f"{who} handed over {key} for {item.day.isoformat()}"
    sections = [(label, getattr(item, name)) for name, label in BODY_LABELS if getattr(item, name)]
    text = "\n\n".join(f"{label}:\n{value}" for label, value in sections) or title
    outcome = notify(
        uow, recipients=item.recipient_user_ids, kind="handoff.created",
        project_id=item.project_id, title=title, body=(item.next_steps or item.completed)[:500],
        link=f"/p/{key}/handoffs?date={item.day.isoformat()}#{item.id}",
        source=f"handoff:{item.id}", in_app=in_app, email=email,
        email_subject=f"[{key}] {title}", email_text=text[:MAX_EMAIL_TEXT],
    )  # fmt: skip
    return {
        "inApp": outcome.in_app,
        "emailsQueued": outcome.emails_queued,
        "emailNotSent": outcome.email_not_sent,
    }


def _full(
    uow: UnitOfWork, actor: Actor, item: Handoff, access: ProjectAccess, room: int | None = None
) -> dict[str, Any]:
    """The handoff whole, or (with `room`) within that many bytes of JSON: action items that
    do not fit are left to the cursor; in a handoff too large for any answer the linked tasks,
    then the bodies, are cut, and `truncated` names what was."""
    repo = handoffs_of(uow)
    items = repo.items(handoff_id=item.id, after=None, limit=FIRST_ITEMS + 1)
    users = _users(
        uow,
        [item.author_user_id, *item.recipient_user_ids, *(i.assignee_user_id for i in items)],
    )
    count = repo.item_counts([item.id]).get(item.id, 0)
    view = handoff_meta(item, users, count)
    view |= {
        "projectKey": access.project.key,
        "completed": item.completed,
        "inProgress": item.in_progress,
        "blockers": item.blockers,
        "nextSteps": item.next_steps,
        "linkedTasks": _visible_tasks(uow, actor, item.linked_task_ids),
    }
    views = [item_view(i, users) for i in items[:FIRST_ITEMS]]
    if room is not None:
        view = _cut_to(view, room - ITEMS_ROOM)
        views = fit_rows(views, max(1, room - json_size(view)))
    view["actionItems"] = views
    view["actionItemsCursor"] = (
        _item_cursor(actor, {"handoffId": item.id}, items[: len(views)])
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


def update_handoff(
    db: Database,
    actor: Actor,
    *,
    handoff_id: str,
    expected_updated_at: str,
    changes: Mapping[str, Any],
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
) -> dict[str, Any]:
    """Change a handoff: the bodies (author only), linked tasks, recipients. A key left out of
    `changes` stays; a body or list given as None is cleared.

    Raises:
        HumanIdentityRequired, NotFound, PermissionDenied, ValidationFailed,
        RevisionConflict: `expected_updated_at` is not the current one.
    """
    require_person(actor, "update_handoff")
    expected = _expected("expectedUpdatedAt", expected_updated_at)
    allowed = {*BODIES, "linked_task_ids", "recipients"}
    unknown = set(changes) - allowed
    if unknown or not changes:
        raise ValidationFailed.field(
            "fields",
            "name at least one field to change.",
            ["completed", "inProgress", "blockers", "nextSteps", "linkedTaskIds", "recipients"],
        )
    for name in BODIES:
        if changes.get(name) is not None:
            check_body(WIRE_BODIES[name], changes[name])

    def work(uow: UnitOfWork) -> dict[str, Any]:
        item, access = _open_handoff(
            uow, actor, handoff_id, scope=Scope.TASKS_MANAGE, role=Role.WRITE,
            workspace_id=workspace_id,
        )  # fmt: skip
        if item.updated_at != expected:
            raise _stale("Handoff", item.id, item.updated_at, item.updated_by, expected_updated_at)
        touched = [name for name in BODIES if name in changes]
        if touched and item.author_user_id != actor.user_id:
            raise PermissionDenied(
                "Only the handoff's author changes its bodies "
                f"({', '.join(WIRE_BODIES[n] for n in touched)}); you may change its linked "
                "tasks, recipients and action items.",
                {"authorUserId": item.author_user_id, "fields": [WIRE_BODIES[n] for n in touched]},
            )
        edited: dict[str, Any] = {name: changes[name] or "" for name in touched}
        new = replace(
            item, **edited, updated_at=_later(uow.now, item.updated_at),
            updated_by=actor.as_payload(),
        )  # fmt: skip
        if "linked_task_ids" in changes:
            new = replace(
                new, linked_task_ids=_linked(uow, actor, changes["linked_task_ids"] or [])
            )
        if "recipients" in changes:
            new = replace(
                new,
                recipient_user_ids=_people(
                    uow, item.project_id, "recipients", changes["recipients"] or []
                ),
            )
        if not handoffs_of(uow).replace(new, expected=item.updated_at):
            raise LostRace(
                _stale("Handoff", item.id, item.updated_at, item.updated_by, expected_updated_at)
            )
        uow.record_event(
            "handoff.updated",
            actor=actor.as_payload(),
            payload={"handoffId": item.id, "fields": sorted(changes)},
            project_id=item.project_id,
        )
        return {"handoff": _full(uow, actor, new, access)}

    return db.write(work)


def get_handoff(
    db: Database, actor: Actor, *, handoff_id: str, room: int | None = None
) -> dict[str, Any]:
    """A handoff with its bodies, the linked tasks the reader may open, and its first action
    items (`actionItemsCursor` continues with list_handoff_action_items).

    Raises:
        HumanIdentityRequired, NotFound.
    """
    require_person(actor, "get_handoff")

    def work(uow: UnitOfWork) -> dict[str, Any]:
        item, access = _open_handoff(uow, actor, handoff_id)
        return {"handoff": _full(uow, actor, item, access, room)}

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
) -> dict[str, Any]:
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

    def work(uow: UnitOfWork) -> dict[str, Any]:
        access = access_project(uow, actor, project)
        pid = access.project.id
        repo = handoffs_of(uow)
        rows, total = repo.page(
            pid,
            author_user_id=_person_of(uow, pid, "author", author) if author else None,
            recipient_user_id=_person_of(uow, pid, "recipient", recipient) if recipient else None,
            since=first,
            until=last,
            limit=limit,
            offset=offset,
        )
        counts = repo.item_counts([r.id for r in rows])
        users = _users(uow, [u for r in rows for u in (r.author_user_id, *r.recipient_user_ids)])
        return {
            "handoffs": [handoff_meta(r, users, counts.get(r.id, 0)) for r in rows],
            "total": total,
            "nextOffset": next_offset(offset, len(rows), total),
        }

    return db.read(work)


# --- action items --------------------------------------------------------------------------


def _item_cursor(actor: Actor, binding: dict[str, Any], shown: Sequence[ActionItem]) -> str:
    last = shown[-1]
    return cursors.seal(
        ITEM_CURSOR, [iso(last.created_at) or "", last.id], caller=actor.principal,
        binding=binding,
    )  # fmt: skip


def list_handoff_action_items(
    db: Database,
    actor: Actor,
    *,
    handoff_id: str | None = None,
    project: str | None = None,
    day: str | None = None,
    cursor: str | None = None,
    limit: int = DEFAULT_PAGE,
    room: int | None = None,
) -> dict[str, Any]:
    """Action items oldest first: a handoff's, or those of a project's handoffs of one day.
    `nextCursor` continues (same filters, same caller).

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

    def work(uow: UnitOfWork) -> dict[str, Any]:
        repo = handoffs_of(uow)
        if handoff_id is not None:
            item, _ = _open_handoff(uow, actor, handoff_id)
            rows = repo.items(handoff_id=item.id, after=after, limit=limit + 1)
        else:
            access = access_project(uow, actor, str(project))
            rows = repo.items(project_id=access.project.id, day=when, after=after, limit=limit + 1)
        users = _users(uow, [r.assignee_user_id for r in rows[:limit]])
        views = [item_view(r, users) for r in rows[:limit]]
        if room is not None:
            views = fit_rows(views, room)
        shown = rows[: len(views)]
        more = len(rows) > len(shown)
        return {
            "actionItems": views,
            "hasMore": more,
            "nextCursor": _item_cursor(actor, binding, shown) if more else None,
        }

    return db.read(work)


def get_handoff_action_item(db: Database, actor: Actor, *, item_id: str) -> dict[str, Any]:
    """One action item.

    Raises:
        HumanIdentityRequired, NotFound.
    """
    require_person(actor, "get_handoff_action_item")

    def work(uow: UnitOfWork) -> dict[str, Any]:
        item, _ = _open_item(uow, actor, item_id)
        return {"actionItem": item_view(item, _users(uow, [item.assignee_user_id]))}

    return db.read(work)


def _check_item_text(text: str) -> str:
    return check_text("text", text, max_length=MAX_ITEM_TEXT, required=True)


def create_handoff_action_item(
    db: Database,
    actor: Actor,
    *,
    handoff_id: str,
    text: str,
    assignee: str | None = None,
    status: str = ItemStatus.OPEN.value,
    due_date: str | None = None,
    idempotency_key: str | None = None,
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
) -> KeyedResult:
    """A follow-up on a handoff, for anyone who may write on its project.

    Raises:
        HumanIdentityRequired, NotFound, PermissionDenied, ValidationFailed, LimitExceeded,
        IdempotencyConflict.
    """
    require_person(actor, "create_handoff_action_item")
    text = _check_item_text(text)
    state = parse_enum(status, ItemStatus, "status")
    due = parse_day("dueDate", due_date) if due_date else None
    arguments = {"handoffId": handoff_id, "text": text, "assignee": assignee,
                 "status": state.value, "dueDate": due_date}  # fmt: skip

    def work(uow: UnitOfWork) -> KeyedResult:
        def perform() -> Ack:
            handoff, _ = _open_handoff(
                uow, actor, handoff_id, scope=Scope.TASKS_MANAGE, role=Role.WRITE,
                workspace_id=workspace_id, for_update=True,
            )  # fmt: skip
            repo = handoffs_of(uow)
            if repo.item_counts([handoff.id]).get(handoff.id, 0) >= MAX_ITEMS:
                raise LimitExceeded(
                    f"Handoff {handoff.id} has {MAX_ITEMS} action items, the most one may "
                    "have; close some or write them in nextSteps.",
                    {"limit": MAX_ITEMS},
                )
            stamp = actor.as_payload()
            item = ActionItem(
                id=new_id("hai"),
                handoff_id=handoff.id,
                project_id=handoff.project_id,
                day=handoff.day,
                text=text,
                assignee_user_id=_person_of(uow, handoff.project_id, "assignee", assignee)
                if assignee
                else None,
                status=state,
                due_date=due,
                created_by=stamp,
                created_at=uow.now,
                updated_at=uow.now,
                updated_by=stamp,
            )
            repo.add_item(item)
            _tell_assignee(uow, actor, item)
            uow.record_event(
                "handoff_action_item.created",
                actor=stamp,
                payload={"handoffId": handoff.id, "actionItemId": item.id,
                         "assigneeUserId": item.assignee_user_id},
                project_id=handoff.project_id,
            )  # fmt: skip
            view = item_view(item, _users(uow, [item.assignee_user_id]))
            return Ack({"actionItem": view}, "handoff_action_item", item.id, handoff.project_id)

        return do_keyed_write(
            uow, actor, key=idempotency_key, operation="create_handoff_action_item",
            arguments=arguments, perform=perform,
        )  # fmt: skip

    return db.write(work)


def update_handoff_action_item(
    db: Database,
    actor: Actor,
    *,
    item_id: str,
    expected_updated_at: str,
    changes: Mapping[str, Any],
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
) -> dict[str, Any]:
    """Change an action item's text, assignee, status or due date (None clears the assignee
    and the due date). Anyone who may write on the project may.

    Raises:
        HumanIdentityRequired, NotFound, PermissionDenied, ValidationFailed,
        RevisionConflict: `expected_updated_at` is not the current one.
    """
    require_person(actor, "update_handoff_action_item")
    expected = _expected("expectedUpdatedAt", expected_updated_at)
    names = {"text", "assignee", "status", "due_date"}
    if not changes or set(changes) - names:
        raise ValidationFailed.field(
            "fields",
            "name at least one field to change.",
            ["text", "assignee", "status", "dueDate"],
        )
    fields: dict[str, Any] = {}
    if "text" in changes:
        fields["text"] = _check_item_text(changes["text"] or "")
    if "status" in changes:
        if changes["status"] is None:
            raise ValidationFailed.field(
                "status", "cannot be cleared.", [s.value for s in ItemStatus]
            )
        fields["status"] = parse_enum(changes["status"], ItemStatus, "status")
    if "due_date" in changes:
        fields["due_date"] = (
            parse_day("dueDate", changes["due_date"]) if changes["due_date"] else None
        )

    def work(uow: UnitOfWork) -> dict[str, Any]:
        item, _ = _open_item(
            uow, actor, item_id, scope=Scope.TASKS_MANAGE, role=Role.WRITE,
            workspace_id=workspace_id,
        )  # fmt: skip
        if item.updated_at != expected:
            raise _stale("Action item", item.id, item.updated_at, item.updated_by,
                         expected_updated_at)  # fmt: skip
        if "assignee" in changes:
            ref = changes["assignee"]
            fields["assignee_user_id"] = (
                _person_of(uow, item.project_id, "assignee", ref) if ref else None
            )
        new = replace(
            item, **fields, updated_at=_later(uow.now, item.updated_at),
            updated_by=actor.as_payload(),
        )  # fmt: skip
        if new.assignee_user_id != item.assignee_user_id:
            _tell_assignee(uow, actor, new)
        if not handoffs_of(uow).replace_item(new, expected=item.updated_at):
            stale = _stale(
                "Action item", item.id, item.updated_at, item.updated_by, expected_updated_at
            )
            raise LostRace(stale)
        uow.record_event(
            "handoff_action_item.updated",
            actor=actor.as_payload(),
            payload={"handoffId": item.handoff_id, "actionItemId": item.id,
                     "fields": sorted(changes)},
            project_id=item.project_id,
        )  # fmt: skip
        return {"actionItem": item_view(new, _users(uow, [new.assignee_user_id]))}

    return db.write(work)


def day_sheet(db: Database, actor: Actor, *, project: str, day: str | None) -> dict[str, Any]:
    """What the web app's handoffs page shows for one day: the day (today in shift A's zone
    unless given), the two shift zones, every handoff of that day whole (newest first), and
    the people of the project (for recipients and assignees).

    Raises:
        NotFound, ValidationFailed (the date).
    """

    def work(uow: UnitOfWork) -> dict[str, Any]:
        access = access_project(uow, actor, project)
        found = access.project
        shifts = uow.projects.handoff_settings(found.id)
        when = parse_day("date", day) if day else local_day(uow.now, zone_of("tz", shifts.zone_a))
        rows, _ = handoffs_of(uow).page(
            found.id, author_user_id=None, recipient_user_id=None, since=when, until=when,
            limit=MAX_PAGE, offset=0,
        )  # fmt: skip
        people = [
            {"userId": user.id, "displayName": user.display_name, "email": user.email}
            for user, _ in uow.projects.members(found.id)
        ]
        return {
            "date": when.isoformat(),
            "zones": {"a": shifts.zone_a, "b": shifts.zone_b},
            "role": str(access.role),
            "handoffs": [_full(uow, actor, row, access) for row in rows],
            "people": sorted(people, key=lambda p: (p["displayName"] or "").lower()),
        }

    return db.read(work)
