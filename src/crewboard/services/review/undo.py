"""Taking back a decision about a hand-in: the person who approved, rejected or sent it back
may undo it for a short while, as long as nothing has acted on it since.

"Nothing has acted on it" is checked, not assumed: the task (and the chain's first task) has
not changed since the decision, no newer hand-in landed in the chain, the memory record it
filed is unedited, and a follow-up task it made was not changed, claimed, commented on or
worked on. Then everything the decision moved goes back: the task's status, the superseded
older hand-ins, the xp, the memory record and the follow-up task (deleted) — read from the
note the decision kept in its stamp (`decisions.UNDO_NOTE`) — and `draft.decision_undone`
is recorded in the same transaction.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from crewboard.domain.board.tasks import Task, TaskStatus
from crewboard.domain.identity.records import Actor
from crewboard.domain.projects import Project
from crewboard.domain.review import (
    ACCEPTED,
    XP_PER_ACCEPTED_TASK,
    Decided,
    DecisionKind,
    Draft,
    DraftStatus,
)
from crewboard.errors import ValidationFailed
from crewboard.services.board.notes import notes_of
from crewboard.services.board.views import task_key
from crewboard.services.memory import records as memory
from crewboard.services.notifications.notify import notify
from crewboard.services.review.decisions import (
    UNDO_NOTE,
    Outcome,
    check_state,
    drafts_of,
    gain_xp,
    public_stamp,
    set_status,
    take_decision,
)
from crewboard.storage.board.claims import ClaimRepository
from crewboard.storage.database import Database
from crewboard.storage.review.proposals import ProposalRepository
from crewboard.storage.uow import UnitOfWork

UNDO_WINDOW = timedelta(minutes=10)
UNDOABLE = frozenset(
    {
        DraftStatus.APPROVED,
        DraftStatus.SAVED_TO_MEMORY,
        DraftStatus.REJECTED,
        DraftStatus.REVISION_REQUESTED,
    }
)


def undo_until(draft: Draft, actor: Actor) -> datetime | None:
    """Until when this person may take back the decision on `draft` (None: it is not theirs
    to take back, or not a decision that can be). Whether something acted on it since is
    checked only when they try."""
    stamp = draft.decided_by or {}
    if draft.status not in UNDOABLE or draft.decided_at is None or UNDO_NOTE not in stamp:
        return None
    if stamp.get("kind") != "person" or stamp.get("userId") != actor.user_id:
        return None
    return draft.decided_at + UNDO_WINDOW


def _refuse(draft: Draft, why: str, **details: Any) -> ValidationFailed:
    return ValidationFailed(
        f"The decision on “{draft.title[:80]}” can no longer be undone: {why}",
        {"draftId": draft.id, "field": "decision", **details},
    )


def _unchanged(draft: Draft, task: Task | None, revision: int | None, what: str) -> None:
    if task is not None and revision is not None and task.revision != revision:
        raise _refuse(
            draft,
            f"{what} changed since. Decide again on the hand-in's page instead.",
            taskId=task.id,
            revision=task.revision,
        )


def check_undoable(uow: UnitOfWork, actor: Actor, draft: Draft) -> dict[str, Any]:
    """The decision's undo note, when this person may take it back now.

    Raises:
        ValidationFailed: not their decision, past the window, or something acted on it.
    """
    check_state(draft, UNDOABLE, "undoing a decision")
    until = undo_until(draft, actor)
    if until is None:
        raise _refuse(draft, "only the person who took it can undo it.")
    if uow.now > until:
        minutes = int(UNDO_WINDOW.total_seconds() // 60)
        raise _refuse(draft, f"a decision can be undone for {minutes} minutes.")
    note: dict[str, Any] = dict((draft.decided_by or {})[UNDO_NOTE])
    task = uow.tasks.get(draft.task_id) if draft.task_id else None
    _unchanged(draft, task, note.get("taskRevision"), "its task")
    if draft.root_task_id != draft.task_id:
        root = uow.tasks.get(draft.root_task_id)
        _unchanged(draft, root, note.get("rootRevision"), "the task it revises")
    assert draft.decided_at is not None  # noqa: S101 - checked by undo_until
    newer = [
        d
        for d in drafts_of(uow).chain(draft.root_task_id)
        if (d.created_at, d.id) > (draft.created_at, draft.id) and d.created_at >= draft.decided_at
    ]
    if newer:
        raise _refuse(draft, "a newer hand-in arrived since.", newerDraftId=newer[-1].id)
    if draft.follow_up_task_id:
        _check_follow_up(uow, draft, draft.follow_up_task_id)
    if draft.memory_record_id is not None:
        record = memory.memory_of(uow).record(draft.memory_record_id)
        if record is not None and record.version > 1:
            raise _refuse(draft, "the memory record it filed was edited since.")
    return note


def _check_follow_up(uow: UnitOfWork, draft: Draft, task_id: str) -> None:
    follow_up = uow.tasks.get(task_id)
    if follow_up is None:
        return
    touched = (
        follow_up.revision > 1
        or ClaimRepository(uow.conn).get(task_id) is not None
        or notes_of(uow).latest_note_time(task_id) is not None
    )
    if touched:
        raise _refuse(
            draft,
            "work started on its follow-up task. Change that task on the board instead.",
            followUpTaskId=task_id,
        )


def _status_back(
    uow: UnitOfWork, actor: Actor, project: Project, task_id: str | None, was: str | None
) -> None:
    task = uow.tasks.get(task_id) if task_id else None
    if task is not None and was:
        set_status(uow, actor, project, task, TaskStatus(was))


def _key(uow: UnitOfWork, project: Project, task_id: str | None) -> str | None:
    task = uow.tasks.get(task_id) if task_id else None
    return task_key(project, task) if task else None


def _delete_follow_up(uow: UnitOfWork, actor: Actor, project: Project, task_id: str) -> None:
    task = uow.tasks.get(task_id)
    if task is None:
        return
    ProposalRepository(uow.conn).delete_task(task_id)
    uow.record_event(
        "task.deleted",
        actor=actor.as_payload(),
        payload={"taskId": task.id, "taskKey": task_key(project, task), "title": task.title},
        project_id=project.id,
        workspace_id=project.workspace_id,
    )


def _restore_superseded(uow: UnitOfWork, draft: Draft) -> list[str]:
    """The older hand-ins this approval closed, back as they stood."""
    restored: list[str] = []
    for older in drafts_of(uow).chain(draft.root_task_id):
        note = (older.decided_by or {}).get(UNDO_NOTE) or {}
        if older.status is not DraftStatus.SUPERSEDED or note.get("supersededBy") != draft.id:
            continue
        _put_back(uow, older, note["before"])
        restored.append(older.id)
    return restored


def _put_back(uow: UnitOfWork, draft: Draft, before: dict[str, Any], **values: Any) -> Draft:
    decided_at = before.get("decidedAt")
    changes = {
        "status": str(before["status"]),
        "decided_by": before.get("decidedBy"),
        "decided_at": datetime.fromisoformat(decided_at) if decided_at else None,
        "review_comment": before.get("reviewComment"),
        "follow_up_task_id": before.get("followUpTaskId"),
        **values,
    }
    drafts_of(uow).update(draft.id, uow.now, **changes)
    return replace(
        draft, **(changes | {"status": DraftStatus(changes["status"]), "updated_at": uow.now})
    )


def _tell_author(uow: UnitOfWork, actor: Actor, draft: Draft, project: Project) -> None:
    """The person told of the decision hears that it was taken back."""
    author = draft.author.get("userId")
    if not author or author == actor.user_id:
        return
    notify(
        uow, recipients=[author], kind="draft.decided", project_id=project.id,
        title=f"Your hand-in “{draft.title[:120]}” is back in review: the decision was undone",
        body="", link=f"/p/{project.key}/inbox/drafts/{draft.id}",
        source=f"draft:{draft.id}:undone:{uow.now.isoformat()}", in_app=True, email=False,
    )  # fmt: skip


def undo_decision(db: Database, actor: Actor, draft_id: str) -> Decided:
    """Take back the approval, rejection or revision request this person made on a hand-in
    within the last ten minutes; the hand-in waits for review again, as it did.

    Raises:
        PermissionDenied: through any token, or below the write role. NotFound: no such draft.
        ValidationFailed: not a decision of theirs, too late, or something acted on it since.
    """

    def decide(uow: UnitOfWork, draft: Draft, project: Project) -> tuple[Draft, Outcome]:
        note = check_undoable(uow, actor, draft)
        removed = None
        if draft.status in ACCEPTED and draft.memory_record_id is not None:
            memory.remove_record(uow, actor, project, draft.memory_record_id)
            removed = draft.memory_record_id
        _status_back(uow, actor, project, draft.task_id, note.get("taskFrom"))
        if draft.root_task_id != draft.task_id:
            _status_back(uow, actor, project, draft.root_task_id, note.get("rootFrom"))
        xp = None
        role_id = (draft.decided_by or {}).get("xpRoleId")
        if draft.status in ACCEPTED and role_id:
            xp = gain_xp(uow, project, role_id, -XP_PER_ACCEPTED_TASK)
        restored = _restore_superseded(uow, draft)
        if draft.follow_up_task_id:
            _delete_follow_up(uow, actor, project, draft.follow_up_task_id)
        undone = _put_back(uow, draft, note["before"], memory_record_id=None)
        _tell_author(uow, actor, draft, project)
        uow.record_event(
            "draft.decision_undone",
            actor=actor.as_payload(),
            payload={
                "draftId": draft.id,
                "taskId": draft.task_id,
                "taskKey": _key(uow, project, draft.task_id),
                "status": str(undone.status),
                "undone": str(draft.status),
                "decidedBy": public_stamp(draft.decided_by),
                "title": draft.title,
                "restoredDraftIds": restored,
                "removedMemoryRecordId": removed,
                "deletedTaskId": draft.follow_up_task_id,
                "xp": xp.as_payload() if xp else None,
            },
            project_id=project.id,
            workspace_id=project.workspace_id,
        )
        return undone, Outcome(xp=xp, removed_memory_record_id=removed)

    return take_decision(db, actor, draft_id, DecisionKind.UNDO_DECISION, decide)
