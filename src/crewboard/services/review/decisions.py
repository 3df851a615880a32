"""A person's decisions about hand-ins, and the acceptance an acceptance rule makes for them.

Every decision is taken by a person directly (web app or operator CLI, never a token: an AI
may hold any token) with the write role on the project, in one transaction with its event.
Approving, saving to memory and a rule's acceptance share one path (`do_accept`): the task
(and the chain's first task) moves to approved, older drafts of the chain are superseded and
the task's AI role gains xp. Events name the draft, never its summary or content.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from crewboard.domain.board.tasks import MAX_TITLE, AssigneeType, Task, TaskStatus
from crewboard.domain.identity.access import Role
from crewboard.domain.identity.records import Actor
from crewboard.domain.ids import new_id
from crewboard.domain.projects import Project
from crewboard.domain.review import (
    SUPERSEDABLE,
    WAITING,
    XP_PER_ACCEPTED_TASK,
    Decided,
    DecisionKind,
    Draft,
    DraftRow,
    DraftStatus,
    XpGain,
)
from crewboard.domain.validation import check_text
from crewboard.errors import ValidationFailed
from crewboard.services.board.tasks import do_create_task, save_task
from crewboard.services.board.views import task_key
from crewboard.services.identity.access import (
    access_owned,
    not_open,
    require_signed_in_person,
)
from crewboard.services.memory import records as memory
from crewboard.services.notifications.notify import notify
from crewboard.services.views import actor_stamp, iso
from crewboard.storage.database import Database
from crewboard.storage.review.drafts import DraftRepository
from crewboard.storage.uow import UnitOfWork

MAX_COMMENT = 20_000
UNDO_NOTE = "undo"  # the key of a decision's stamp that says what taking it back restores
PREVIEW = 200  # how much of a reviewer's comment an event carries
DONE_STATES = frozenset({TaskStatus.APPROVED, TaskStatus.DONE})


def drafts_of(uow: UnitOfWork) -> DraftRepository:
    return DraftRepository(uow.conn)


def preview(text: str) -> str:
    return text if len(text) <= PREVIEW else text[: PREVIEW - 1] + "…"


# --- shared by decisions -------------------------------------------------------------------------


draft_not_found = not_open("draft", "the inbox lists the hand-ins waiting for review.")


def access_draft(
    uow: UnitOfWork, actor: Actor, draft_id: str, *, role: Role = Role.READ
) -> tuple[Draft, Project]:
    """A draft by id, with its project, when the actor holds `role` there.

    Raises:
        NotFound: no such draft, or its project is not open to the actor.
        PermissionDenied: the actor's role is below `role`.
    """
    return access_owned(uow, actor, draft_id, drafts_of(uow).get, draft_not_found, role=role)


def check_state(draft: Draft, accepted: frozenset[DraftStatus], action: str) -> None:
    """Raises: ValidationFailed naming the draft's status and the states `action` takes."""
    if draft.status not in accepted:
        states = sorted(str(s) for s in accepted)
        raise ValidationFailed(
            f"Draft {draft.id} is {draft.status}; {action} takes a draft that is "
            f"{' or '.join(states)}.",
            {"draftId": draft.id, "status": draft.status, "accepted": states},
        )


def set_status(
    uow: UnitOfWork, actor: Actor, project: Project, task: Task, status: TaskStatus
) -> Task:
    """Move a task to `status` with its lifecycle events (unchanged when it is there already)."""
    if task.status is status:
        return task
    order = uow.tasks.next_board_order(project.id, status.value)
    return save_task(
        uow,
        actor,
        project,
        task,
        replace(task, status=status, board_order=order),
        changed=["status"],
    )


def record_decision(
    uow: UnitOfWork, actor: Actor, draft: Draft, project: Project, **details: Any
) -> None:
    """The event of a decision: `draft.<status>`, owned by the hand-in's token; the person the
    hand-in was made in the name of hears of it, unless they decided it."""
    task = uow.tasks.get(draft.task_id) if draft.task_id else None
    _tell_author(uow, actor, draft, project)
    if "decidedBy" in details:
        details["decidedBy"] = public_stamp(details["decidedBy"])
    uow.record_event(
        f"draft.{draft.status}",
        actor=actor.as_payload(),
        payload={
            "draftId": draft.id,
            "taskId": draft.task_id,
            "taskKey": task_key(project, task) if task else None,
            "status": draft.status,
            "handInTokenId": draft.token_id,
            "title": draft.title,
            **details,
        },
        project_id=project.id,
        workspace_id=project.workspace_id,
    )


DECIDED = {
    "approved": "was approved",
    "saved_to_memory": "was approved and saved to memory",
    "accepted_by_rule": "was accepted by a rule",
    "rejected": "was rejected",
    "revision_requested": "needs a revision",
    "returned_to_review": "is back in review",
}


def _tell_author(uow: UnitOfWork, actor: Actor, draft: Draft, project: Project) -> None:
    author = draft.author.get("userId")
    outcome = DECIDED.get(draft.status)
    if not author or author == actor.user_id or outcome is None:
        return
    notify(
        uow, recipients=[author], kind="draft.decided", project_id=project.id,
        title=f"Your hand-in “{draft.title[:120]}” {outcome}",
        body=draft.review_comment[:500] if draft.review_comment else "",
        link=f"/p/{project.key}/inbox/drafts/{draft.id}", source=f"draft:{draft.id}:{draft.status}",
        in_app=True, email=True,
    )  # fmt: skip


def public_stamp(stamp: dict[str, Any] | None) -> dict[str, Any] | None:
    """A `decidedBy` stamp as answers and events show it: without the note of what the
    decision changed, which only taking the decision back reads."""
    if stamp is None:
        return None
    return {k: v for k, v in stamp.items() if k != UNDO_NOTE}


def _decide(
    uow: UnitOfWork,
    draft: Draft,
    status: DraftStatus,
    decided_by: dict[str, Any],
    undo: dict[str, Any] | None = None,
    **values: Any,
) -> Draft:
    """Record a decision on the draft. Its stamp keeps, under UNDO_NOTE, how the draft stood
    before and what else the decision moved (`undo`), so the person can take it back."""
    before = {
        "status": str(draft.status),
        "decidedBy": public_stamp(draft.decided_by),
        "decidedAt": iso(draft.decided_at),
        "reviewComment": draft.review_comment,
        "followUpTaskId": draft.follow_up_task_id,
    }
    note = {**(undo or {}), **_revisions(uow, draft), "before": before}
    stamp = {**(public_stamp(decided_by) or {}), UNDO_NOTE: note}
    changes = {"status": str(status), "decided_by": stamp, "decided_at": uow.now, **values}
    drafts_of(uow).update(draft.id, uow.now, **changes)
    return replace(draft, **changes, updated_at=uow.now)


def _revisions(uow: UnitOfWork, draft: Draft) -> dict[str, int]:
    """The revisions the draft's task and its chain's first task are at once decided: a
    later change to either means something acted on the decision."""
    found: dict[str, int] = {}
    for name, task_id in (("taskRevision", draft.task_id), ("rootRevision", draft.root_task_id)):
        task = uow.tasks.get(task_id) if task_id else None
        if task is not None:
            found[name] = task.revision
    return found


def _restore_task(
    uow: UnitOfWork, actor: Actor, project: Project, draft: Draft
) -> tuple[Task | None, dict[str, Any]]:
    """Put the task back where it was when this draft moved it, if it still waits in review;
    with the undo note of that move (empty when it stayed)."""
    task = uow.tasks.get(draft.task_id) if draft.task_id else None
    if task is None:
        return None, {}
    if draft.task_moved and draft.task_status_before and task.status is TaskStatus.REVIEW:
        moved = set_status(uow, actor, project, task, draft.task_status_before)
        return moved, {"taskFrom": str(TaskStatus.REVIEW)}
    return task, {}


def gain_xp(uow: UnitOfWork, project: Project, role_id: str | None, delta: int) -> XpGain | None:
    if role_id is None or not role_id.startswith("rol_"):
        return None
    changed = drafts_of(uow).add_xp(project.id, role_id, delta)
    if changed is None:
        return None
    return XpGain(role_id, delta, changed[0], changed[1])


# --- acceptance -------------------------------------------------------------------------------


def do_accept(
    uow: UnitOfWork,
    actor: Actor,
    draft: Draft,
    project: Project,
    *,
    status: DraftStatus,
    decided_by: dict[str, Any],
    collection: str | None = None,
    document: str | None = None,
    comment: str | None = None,
) -> tuple[Draft, XpGain | None]:
    """Accept a draft: file it into memory (unless plain approval), approve its task and the
    chain's first one, supersede the chain's older drafts, give the task's AI role xp.

    Returns the decided draft and the xp its task's role gained.
    """
    details: dict[str, Any] = {"decidedBy": decided_by}
    values: dict[str, Any] = {"review_comment": comment}
    if status is not DraftStatus.APPROVED:
        content = draft.content
        if content is None:
            content = (drafts_of(uow).get(draft.id) or draft).content or ""
        record = memory.file_record(
            uow,
            actor,
            project,
            title=draft.title,
            summary=draft.summary,
            content=content,
            collection=collection,
            document=document,
            source_draft_id=draft.id,
        )
        values["memory_record_id"] = record.id
        details |= {"memoryRecordId": record.id, "collection": collection, "document": document}
    if status is DraftStatus.ACCEPTED_BY_RULE:
        values["rule_id"] = decided_by.get("ruleId")
    undo: dict[str, Any] = {}
    task = uow.tasks.get(draft.task_id) if draft.task_id else None
    if task is not None and task.status not in DONE_STATES:
        undo["taskFrom"] = str(task.status)
        task = set_status(uow, actor, project, task, TaskStatus.APPROVED)
    if draft.root_task_id != draft.task_id:
        root = uow.tasks.get(draft.root_task_id)
        if root is not None and root.status not in DONE_STATES:
            undo["rootFrom"] = str(root.status)
            set_status(uow, actor, project, root, TaskStatus.APPROVED)
    xp = gain_xp(uow, project, task.assignee_id if task else None, XP_PER_ACCEPTED_TASK)
    if xp is not None:
        decided_by = {**decided_by, "xpRoleId": xp.role_id}
        details["xp"] = xp.as_payload()
    decided = _decide(uow, draft, status, decided_by, undo, **values)
    details["supersededDraftIds"] = _supersede(uow, actor, decided, project)
    if comment:
        details["commentPreview"] = preview(comment)
    record_decision(uow, actor, decided, project, **details)
    return decided, xp


def _supersede(uow: UnitOfWork, actor: Actor, accepted: Draft, project: Project) -> list[str]:
    closed: list[str] = []
    for older in drafts_of(uow).chain(accepted.root_task_id):
        if older.id == accepted.id or (older.created_at, older.id) > (
            accepted.created_at,
            accepted.id,
        ):
            continue
        if older.status not in SUPERSEDABLE:
            continue
        done = _decide(
            uow,
            older,
            DraftStatus.SUPERSEDED,
            accepted.decided_by or {},
            {"supersededBy": accepted.id},
        )
        record_decision(uow, actor, done, project, supersededBy=accepted.id)
        closed.append(older.id)
    return closed


# --- a person's decisions -------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """What a decision did besides deciding (the fields of `Decided` it fills)."""

    xp: XpGain | None = None
    follow_up_task_id: str | None = None
    removed_memory_record_id: str | None = None


Decide = Callable[[UnitOfWork, Draft, Project], tuple[Draft, Outcome]]


# What each decision is called when a token tries it (a person decides directly).
ACTIONS = {
    DecisionKind.APPROVE: "Approving a hand-in",
    DecisionKind.REJECT: "Rejecting a hand-in",
    DecisionKind.REVISE: "Requesting a revision",
    DecisionKind.UNDO: "Undoing a rule's acceptance",
    DecisionKind.UNDO_DECISION: "Undoing a decision",
}


def take_decision(
    db: Database, actor: Actor, draft_id: str, kind: DecisionKind, decide: Decide
) -> Decided:
    require_signed_in_person(actor, ACTIONS[kind])

    def work(uow: UnitOfWork) -> Decided:
        draft, project = access_draft(uow, actor, draft_id, role=Role.WRITE)
        uow.serialize(f"draft-chain:{draft.root_task_id}")
        decided, outcome = decide(uow, draft, project)
        task = uow.tasks.get(decided.task_id) if decided.task_id else None
        row = DraftRow(decided, project, task_key(project, task) if task else None)
        return Decided(
            kind,
            row,
            task,
            xp=outcome.xp,
            follow_up_task_id=outcome.follow_up_task_id,
            removed_memory_record_id=outcome.removed_memory_record_id,
        )

    result: Decided = db.write(work)
    return result


def _person(actor: Actor) -> dict[str, Any]:
    return actor_stamp(actor)


def approve(
    db: Database,
    actor: Actor,
    draft_id: str,
    *,
    save_to_memory: bool = False,
    collection: str | None = None,
    document: str | None = None,
    comment: str | None = None,
) -> Decided:
    """Approve a waiting draft (and, with `save_to_memory`, file it as a memory record).

    Raises:
        PermissionDenied: through any token, or below the write role.
        NotFound: no such draft. ValidationFailed: the draft is not waiting, a bad
            collection or document. LimitExceeded: the comment is over 20,000 characters.
    """
    note = _comment(comment)

    def decide(uow: UnitOfWork, draft: Draft, project: Project) -> tuple[Draft, Outcome]:
        check_state(draft, WAITING, "approving")
        chosen = (
            memory.resolve_collection(project, collection, "collection")
            if collection is not None
            else draft.collection
        )
        doc = memory.check_document(document, "document") if document is not None else None
        decided, xp = do_accept(
            uow,
            actor,
            draft,
            project,
            status=DraftStatus.SAVED_TO_MEMORY if save_to_memory else DraftStatus.APPROVED,
            decided_by=_person(actor),
            collection=chosen,
            document=str(doc) if doc is not None else draft.document,
            comment=note,
        )
        return decided, Outcome(xp=xp)

    return take_decision(db, actor, draft_id, DecisionKind.APPROVE, decide)


def reject(db: Database, actor: Actor, draft_id: str, *, comment: str | None = None) -> Decided:
    """Reject a waiting draft; its task goes back to where the hand-in found it.

    Raises:
        PermissionDenied, NotFound, ValidationFailed, LimitExceeded: as `approve`.
    """
    note = _comment(comment)

    def decide(uow: UnitOfWork, draft: Draft, project: Project) -> tuple[Draft, Outcome]:
        check_state(draft, WAITING, "rejecting")
        _, undo = _restore_task(uow, actor, project, draft)
        decided = _decide(
            uow, draft, DraftStatus.REJECTED, _person(actor), undo, review_comment=note
        )
        details: dict[str, Any] = {"decidedBy": decided.decided_by}
        if note:
            details["commentPreview"] = preview(note)
        record_decision(uow, actor, decided, project, **details)
        return decided, Outcome()

    return take_decision(db, actor, draft_id, DecisionKind.REJECT, decide)


def request_revision(db: Database, actor: Actor, draft_id: str, *, comment: str) -> Decided:
    """Send a waiting draft back with a comment: a follow-up task carries the comment to the
    same assignee, and the draft's task goes back to where the hand-in found it.

    Raises:
        PermissionDenied, NotFound: as `approve`. ValidationFailed: the draft is not waiting,
            or the comment is blank. LimitExceeded: the comment is over 20,000 characters.
    """
    note = check_text("comment", comment, max_length=MAX_COMMENT, required=True)

    def decide(uow: UnitOfWork, draft: Draft, project: Project) -> tuple[Draft, Outcome]:
        check_state(draft, WAITING, "requesting a revision")
        task, undo = _restore_task(uow, actor, project, draft)
        follow_up = _follow_up_task(uow, actor, project, draft=draft, task=task, note=note)
        decided = _decide(
            uow,
            draft,
            DraftStatus.REVISION_REQUESTED,
            _person(actor),
            undo,
            review_comment=note,
            follow_up_task_id=follow_up,
        )
        record_decision(
            uow,
            actor,
            decided,
            project,
            decidedBy=decided.decided_by,
            followUpTaskId=follow_up,
            commentPreview=preview(note),
        )
        return decided, Outcome(follow_up_task_id=follow_up)

    return take_decision(db, actor, draft_id, DecisionKind.REVISE, decide)


def _follow_up_task(
    uow: UnitOfWork, actor: Actor, project: Project, *, draft: Draft, task: Task | None, note: str
) -> str:
    original = task.title if task is not None else draft.title
    pointer = f"draft {draft.id}" + (f" on {task_key(project, task)}" if task else "")
    fields: dict[str, Any] = {
        "title": f"Revise: {original}"[:MAX_TITLE],
        "brief": (
            f'A reviewer asked for a revision of {pointer} ("{draft.title}").\n\n'
            f"Reviewer's comment:\n\n{note}\n\n"
            "Read the earlier result and the original task, address the comment, and hand in "
            "the revised result on this task."
        ),
        "parent_task_id": task.id if task else None,
    }
    if task is not None:
        # The follow-up carries on the original's work: the same kind, date, urgency and tags.
        fields |= {
            "type": task.type,
            "due_date": task.due_date,
            "priority": task.priority,
            "tags": task.tags,
            "labels": task.labels,
        }
        ai = task.assignee_type is AssigneeType.AI
        fields["status"] = TaskStatus.READY_FOR_AI if ai else TaskStatus.BACKLOG
        if task.assignee_id is not None:
            fields |= {"assignee_id": task.assignee_id, "assignee_type": task.assignee_type}
        if task.human_owner_id is not None:
            fields["human_owner_id"] = task.human_owner_id
    ack = do_create_task(
        uow, actor, project=project.id, workspace_id=project.workspace_id, fields=fields
    )
    return str(ack.body["task"]["id"])


def undo_rule_acceptance(db: Database, actor: Actor, draft_id: str) -> Decided:
    """Take back what an acceptance rule did with a draft: the memory record it filed goes,
    the task returns to review, the xp is taken back and the draft waits for a person again.

    Raises:
        PermissionDenied, NotFound: as `approve`. ValidationFailed: the draft was not
            accepted by a rule.
    """

    def decide(uow: UnitOfWork, draft: Draft, project: Project) -> tuple[Draft, Outcome]:
        check_state(draft, frozenset({DraftStatus.ACCEPTED_BY_RULE}), "undoing a rule's acceptance")
        if draft.memory_record_id is not None:
            memory.remove_record(uow, actor, project, draft.memory_record_id)
        task = uow.tasks.get(draft.task_id) if draft.task_id else None
        if task is not None and task.status is TaskStatus.APPROVED:
            set_status(uow, actor, project, task, TaskStatus.REVIEW)
        role_id = (draft.decided_by or {}).get("xpRoleId")
        xp = gain_xp(uow, project, role_id or None, -XP_PER_ACCEPTED_TASK)
        decided = _decide(
            uow, draft, DraftStatus.RETURNED_TO_REVIEW, _person(actor), memory_record_id=None
        )
        record_decision(
            uow,
            actor,
            decided,
            project,
            decidedBy=decided.decided_by,
            ruleId=draft.rule_id,
            removedMemoryRecordId=draft.memory_record_id,
            xp=xp.as_payload() if xp else None,
        )
        return decided, Outcome(xp=xp, removed_memory_record_id=draft.memory_record_id)

    return take_decision(db, actor, draft_id, DecisionKind.UNDO, decide)


def _comment(comment: str | None) -> str | None:
    if comment is None:
        return None
    return check_text("comment", comment, max_length=MAX_COMMENT) or None


def new_draft_id() -> str:
    return new_id("drf")
