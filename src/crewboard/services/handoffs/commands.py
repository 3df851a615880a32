"""Changing handoffs and their action items (see `domain/handoffs`): one per author, project
and day. Each command runs access, checks, the change, its event and whom it tells in one
transaction, and returns a typed result (`domain/handoffs`); the doors put it into words.

Every handoff tool needs a person: a personal token or the web app (an agent token is
refused with HUMAN_IDENTITY_REQUIRED), because a handoff speaks in a person's name. The author
is whoever calls; only the author changes the four bodies, while anyone who may write on the
project may change its linked tasks and recipients, and its action items. Edits name the
`updatedAt` they read; a stale one is refused naming the current one, and nothing is written.

A keyed write (create) keeps its answer in the idempotency ledger so that a retry gets the
same one; so those commands take `answer`, the door's wording of the typed result, and give
back what it made of it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date
from typing import Any

from crewboard.domain.handoffs import (
    BODIES,
    MAX_ITEM_TEXT,
    MAX_ITEMS,
    WIRE_BODIES,
    ActionItem,
    Bodies,
    Handoff,
    HandoffMade,
    HandoffRead,
    ItemRead,
    ItemStatus,
    check_body,
    local_day,
    parse_day,
)
from crewboard.domain.identity.access import Role, Scope, parse_enum
from crewboard.domain.identity.records import Actor
from crewboard.domain.ids import new_id
from crewboard.domain.projects import ProjectAccess
from crewboard.domain.validation import check_text, check_time_zone, zone_of
from crewboard.errors import (
    HandoffAlreadyExists,
    LimitExceeded,
    PermissionDenied,
    ValidationFailed,
)
from crewboard.services.handoffs.lookups import (
    expected_at,
    handoffs_of,
    later,
    linked_tasks,
    open_handoff,
    open_item,
    people,
    person_of,
    stale,
    users_of,
)
from crewboard.services.handoffs.notify import tell_assignee, tell_recipients
from crewboard.services.handoffs.queries import read_of
from crewboard.services.idempotency import Ack, KeyedResult, keyed_write
from crewboard.services.identity.access import (
    ANY_WORKSPACE,
    WorkspaceRef,
    access_project,
    require_person,
)
from crewboard.services.views import iso, stamp_of
from crewboard.storage.database import Database, LostRace
from crewboard.storage.search_texts import put_text
from crewboard.storage.uow import UnitOfWork


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
    answer: Callable[[HandoffMade], dict[str, Any]],
) -> KeyedResult:
    """The caller's handoff of a project for a day (today in the source zone by default).

    The recipients hear of it only when asked: in the app (`send_notification`) and by email
    (`send_email`), each as their own settings allow; `HandoffMade.told` says who was told
    and, when no email went out, why. Mail leaves after the commit (the outbox).

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

    def perform(uow: UnitOfWork) -> Ack:
        slot = _free_slot(
            uow, actor, project=project, workspace_id=workspace_id, day=day,
            source_time_zone=source_time_zone, destination_time_zone=destination_time_zone,
        )  # fmt: skip
        item = _new_handoff(
            uow, actor, slot=slot, bodies=bodies, linked_task_ids=linked_task_ids,
            recipients=recipients,
        )  # fmt: skip
        handoffs_of(uow).add(item)
        _index_text(uow, item)
        read = read_of(uow, actor, item, slot.access)
        told = tell_recipients(
            uow, actor, item, slot.access, in_app=send_notification, email=send_email
        )
        uow.record_event(
            "handoff.created",
            actor=item.author,
            payload={"handoffId": item.id, "date": item.day.isoformat()},
            project_id=item.project_id,
        )
        return Ack(answer(HandoffMade(read, told)), "handoff", item.id, item.project_id)

    return keyed_write(db, actor, (idempotency_key, "create_handoff", arguments), perform)


@dataclass(frozen=True)
class _Slot:
    """Where a new handoff goes: its project (with the caller's access), day and zones."""

    access: ProjectAccess
    day: date
    source: str
    destination: str


def _index_text(uow: UnitOfWork, item: Handoff) -> None:
    """Keep what search finds of a handoff: its four bodies, under whose and which day."""
    user = uow.users.get(item.author_user_id)
    who = (user.display_name or user.email) if user else "someone"
    put_text(
        uow.conn, kind="handoff", id=item.id, project_id=item.project_id,
        title=f"{who}'s handoff for {item.day.isoformat()}",
        content="\n\n".join(getattr(item, name) for name in BODIES), at=uow.now,
    )  # fmt: skip


def _free_slot(
    uow: UnitOfWork,
    actor: Actor,
    *,
    project: str,
    workspace_id: WorkspaceRef,
    day: str | None,
    source_time_zone: str | None,
    destination_time_zone: str | None,
) -> _Slot:
    """The caller's slot for a new handoff: the zones default to the project's shifts, the
    day to today in the source zone.

    Raises:
        HandoffAlreadyExists: the caller wrote that project's handoff for that day already.
        NotFound, PermissionDenied, ValidationFailed.
    """
    access = access_project(
        uow, actor, project, scope=Scope.TASKS_MANAGE, role=Role.WRITE, workspace_id=workspace_id
    )
    found = access.project
    shifts = uow.projects.handoff_settings(found.id)
    source = check_time_zone("sourceTimeZone", source_time_zone or shifts.zone_a)
    destination = check_time_zone("destinationTimeZone", destination_time_zone or shifts.zone_b)
    when = parse_day("date", day) if day else local_day(uow.now, zone_of("tz", source))
    existing = handoffs_of(uow).in_slot(found.id, actor.user_id, when)
    if existing is not None:
        raise HandoffAlreadyExists(
            f"You already wrote the {found.key} handoff for {when.isoformat()} "
            f"({existing.id}); change it with update_handoff.",
            {"handoffId": existing.id, "date": when.isoformat(),
             "updatedAt": iso(existing.updated_at)},
        )  # fmt: skip
    return _Slot(access, when, source, destination)


def _new_handoff(
    uow: UnitOfWork,
    actor: Actor,
    *,
    slot: _Slot,
    bodies: Bodies,
    linked_task_ids: Sequence[str],
    recipients: Sequence[str],
) -> Handoff:
    """The handoff to add, its linked tasks and recipients checked."""
    stamp = stamp_of(uow, actor)  # with the token and seat, so pages name who wrote it
    project_id = slot.access.project.id
    return Handoff(
        id=new_id("hof"),
        project_id=project_id,
        author_user_id=actor.user_id,
        author=stamp,
        day=slot.day,
        source_zone=slot.source,
        destination_zone=slot.destination,
        completed=bodies.completed,
        in_progress=bodies.in_progress,
        blockers=bodies.blockers,
        next_steps=bodies.next_steps,
        linked_task_ids=linked_tasks(uow, actor, linked_task_ids),
        recipient_user_ids=people(uow, project_id, "recipients", recipients),
        created_at=uow.now,
        updated_at=uow.now,
        updated_by=stamp,
    )


def update_handoff(
    db: Database,
    actor: Actor,
    *,
    handoff_id: str,
    expected_updated_at: str,
    changes: Mapping[str, Any],
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
) -> HandoffRead:
    """Change a handoff: the bodies (author only), linked tasks, recipients. A key left out of
    `changes` stays; a body or list given as None is cleared.

    Raises:
        HumanIdentityRequired, NotFound, PermissionDenied, ValidationFailed,
        RevisionConflict: `expected_updated_at` is not the current one.
    """
    require_person(actor, "update_handoff")
    expected = expected_at("expectedUpdatedAt", expected_updated_at)
    _check_handoff_changes(changes)

    def work(uow: UnitOfWork) -> HandoffRead:
        item, access = open_handoff(
            uow, actor, handoff_id, scope=Scope.TASKS_MANAGE, role=Role.WRITE,
            workspace_id=workspace_id,
        )  # fmt: skip
        if item.updated_at != expected:
            raise stale("Handoff", item.id, item.updated_at, item.updated_by, expected_updated_at)
        new = _edited_handoff(uow, actor, item, changes)
        if not handoffs_of(uow).replace(new, expected=item.updated_at):
            raise LostRace(
                stale("Handoff", item.id, item.updated_at, item.updated_by, expected_updated_at)
            )
        _index_text(uow, new)
        uow.record_event(
            "handoff.updated",
            actor=actor.as_payload(),
            payload={"handoffId": item.id, "fields": sorted(changes)},
            project_id=item.project_id,
        )
        return read_of(uow, actor, new, access)

    return db.write(work)


def _check_handoff_changes(changes: Mapping[str, Any]) -> None:
    """Raises: ValidationFailed: no change, an unknown one, or a body too long."""
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


def _edited_handoff(
    uow: UnitOfWork, actor: Actor, item: Handoff, changes: Mapping[str, Any]
) -> Handoff:
    """The handoff with `changes` made, as the caller may make them.

    Raises:
        PermissionDenied: a body changed by someone other than the author.
        ValidationFailed: a linked task or recipient the caller cannot name.
    """
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
        item, **edited, updated_at=later(uow.now, item.updated_at), updated_by=stamp_of(uow, actor)
    )
    if "linked_task_ids" in changes:
        new = replace(
            new, linked_task_ids=linked_tasks(uow, actor, changes["linked_task_ids"] or [])
        )
    if "recipients" in changes:
        new = replace(
            new,
            recipient_user_ids=people(
                uow, item.project_id, "recipients", changes["recipients"] or []
            ),
        )
    return new


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
    answer: Callable[[ItemRead], dict[str, Any]],
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

    def perform(uow: UnitOfWork) -> Ack:
        handoff, _ = open_handoff(
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
        item = _new_item(
            uow, actor, handoff=handoff, text=text, assignee=assignee, status=state, due=due
        )
        repo.add_item(item)
        tell_assignee(uow, actor, item)
        uow.record_event(
            "handoff_action_item.created",
            actor=item.created_by,
            payload={"handoffId": handoff.id, "actionItemId": item.id,
                     "assigneeUserId": item.assignee_user_id},
            project_id=handoff.project_id,
        )  # fmt: skip
        read = ItemRead(item, users_of(uow, [item.assignee_user_id]))
        return Ack(answer(read), "handoff_action_item", item.id, handoff.project_id)

    return keyed_write(
        db, actor, (idempotency_key, "create_handoff_action_item", arguments), perform
    )


def _new_item(
    uow: UnitOfWork,
    actor: Actor,
    *,
    handoff: Handoff,
    text: str,
    assignee: str | None,
    status: ItemStatus,
    due: date | None,
) -> ActionItem:
    """The action item to add, its assignee checked."""
    stamp = actor.as_payload()
    return ActionItem(
        id=new_id("hai"),
        handoff_id=handoff.id,
        project_id=handoff.project_id,
        day=handoff.day,
        text=text,
        assignee_user_id=person_of(uow, handoff.project_id, "assignee", assignee)
        if assignee
        else None,
        status=status,
        due_date=due,
        created_by=stamp,
        created_at=uow.now,
        updated_at=uow.now,
        updated_by=stamp,
    )


def update_handoff_action_item(
    db: Database,
    actor: Actor,
    *,
    item_id: str,
    expected_updated_at: str,
    changes: Mapping[str, Any],
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
) -> ItemRead:
    """Change an action item's text, assignee, status or due date (None clears the assignee
    and the due date). Anyone who may write on the project may.

    Raises:
        HumanIdentityRequired, NotFound, PermissionDenied, ValidationFailed,
        RevisionConflict: `expected_updated_at` is not the current one.
    """
    require_person(actor, "update_handoff_action_item")
    expected = expected_at("expectedUpdatedAt", expected_updated_at)
    fields = _item_fields(changes)

    def work(uow: UnitOfWork) -> ItemRead:
        item, _ = open_item(
            uow, actor, item_id, scope=Scope.TASKS_MANAGE, role=Role.WRITE,
            workspace_id=workspace_id,
        )  # fmt: skip
        if item.updated_at != expected:
            raise stale("Action item", item.id, item.updated_at, item.updated_by,
                         expected_updated_at)  # fmt: skip
        if "assignee" in changes:
            ref = changes["assignee"]
            fields["assignee_user_id"] = (
                person_of(uow, item.project_id, "assignee", ref) if ref else None
            )
        new = replace(
            item, **fields, updated_at=later(uow.now, item.updated_at),
            updated_by=stamp_of(uow, actor),
        )  # fmt: skip
        if new.assignee_user_id != item.assignee_user_id:
            tell_assignee(uow, actor, new)
        if not handoffs_of(uow).replace_item(new, expected=item.updated_at):
            refused = stale(
                "Action item", item.id, item.updated_at, item.updated_by, expected_updated_at
            )
            raise LostRace(refused)
        uow.record_event(
            "handoff_action_item.updated",
            actor=actor.as_payload(),
            payload={"handoffId": item.handoff_id, "actionItemId": item.id,
                     "fields": sorted(changes)},
            project_id=item.project_id,
        )  # fmt: skip
        return ItemRead(new, users_of(uow, [new.assignee_user_id]))

    return db.write(work)


def _item_fields(changes: Mapping[str, Any]) -> dict[str, Any]:
    """The checked new values of an action item's text, status and due date (the assignee,
    a person of the project, is looked up in the transaction).

    Raises:
        ValidationFailed: no change, an unknown one, or a value out of bounds.
    """
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
    return fields
