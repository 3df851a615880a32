"""The check-in: which events of a project's log concern one caller, and how each is told.

An agent that checks in gets only what is about it since its last check-in: its tasks
changed by someone else, answers to its questions, decisions on its hand-ins, messages in its
seat's thread, mentions, claims it lost, and tasks that became free for its seat. Everything
else in the log (another agent's questions, hand-ins, messages and claims) is not its business
and is left out. Pure rules, no I/O: the service reads the events and the state they need.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from enum import StrEnum
from typing import Any

from crewboard.domain.identity.naming import name_of

MAX_UPDATES = 50  # rows one check-in answers; the cursor stops after the last one told
SCAN_EVENTS = 500  # events one check-in reads; the cursor moves past those it skipped
FIRST_READY = 5  # free tasks the first check-in (no cursor) names

# Task events that tell the caller its task changed. Others about a task (a question asked,
# an output saved, a hand-in made by another caller) are that caller's business.
TASK_CHANGES = ("task.created", "task.updated", "task.deleted", "task.comment_posted")
FREED = ("task.claim_released", "task.claim_lapsed", "task.claim_broken")
CLAIM_ENDS = ("task.claim_lapsed", "task.claim_broken")  # how a holder loses a claim
NOT_DECISIONS = ("draft.submitted",)


class UpdateKind(StrEnum):
    TASK = "task"  # one of its tasks changed (fields, a comment, deleted)
    ANSWER = "answer"  # a person answered its question
    DECISION = "decision"  # a person (or a rule) decided its hand-in
    MESSAGE = "message"  # a message in its seat's (or its own) inbox thread
    MENTION = "mention"  # a comment that names it
    CLAIM_LOST = "claim_lost"  # its claim lapsed or a person broke it
    READY = "ready"  # a task it may claim now


@dataclass(frozen=True)
class Watcher:
    """Who checks in: a person, through a token or not, and the AI seat the token acts as."""

    user_id: str
    token_id: str | None
    seat_id: str | None
    names: frozenset[str]  # what a mention of it may say, casefolded (token and seat names)

    @property
    def assignees(self) -> tuple[str, ...]:
        """The assignee ids that make a task its own: an agent's seat, a person themself."""
        if self.token_id is not None and self.seat_id is not None:
            return (self.seat_id,)
        return (self.user_id,) if self.token_id is None else ()

    def did(self, actor: Mapping[str, Any]) -> bool:
        """Whether an event's actor is this caller (its own writes are not news to it); what an
        integration did for the caller (GitHub) is news."""
        if actor.get("kind") == "integration":
            return False
        if self.token_id is not None:
            return actor.get("tokenId") == self.token_id
        return actor.get("userId") == self.user_id and actor.get("tokenId") is None

    def holds(self, holder: Mapping[str, Any]) -> bool:
        """Whether a claim's holder (as events keep it) is this caller."""
        if self.token_id is not None:
            return holder.get("tokenId") == self.token_id
        return holder.get("userId") == self.user_id and holder.get("tokenId") is None


@dataclass(frozen=True)
class Seen:
    """An event of the log, as the check-in reads it."""

    id: int
    type: str
    actor: Mapping[str, Any]
    payload: Mapping[str, Any]
    task_id: str | None
    token_id: str | None
    created_at: datetime


@dataclass(frozen=True)
class Update:
    """One thing the caller did not know: what happened, on which task, by whom."""

    kind: UpdateKind
    at: datetime
    task_id: str | None = None
    task_key: str | None = None
    by: str | None = None  # a user id, or a token id when a token did it
    changed: tuple[str, ...] = ()
    text: str | None = None  # the comment, answer, message or review note, cut short
    ref_id: str | None = None  # the question, hand-in, message or comment
    status: str | None = None  # a decision's outcome, how a claim ended
    title: str | None = None
    priority: str | None = None


@dataclass(frozen=True)
class Context:
    """What the rules need beyond the events: the state after them."""

    mine: Collection[str]  # task ids that are the caller's (assigned, owned or held)
    free: Collection[str]  # task ids the caller may claim now
    mentioned: Collection[str]  # comment ids whose text names the caller
    keys: Mapping[str, str]  # task id -> key, for events that do not carry one


def _key(event: Seen, ctx: Context) -> str | None:
    task = event.payload.get("task")
    if isinstance(task, Mapping) and task.get("key"):
        return str(task["key"])
    key = event.payload.get("taskKey")
    return str(key) if key else ctx.keys.get(event.task_id or "")


def _by(event: Seen) -> str | None:
    if event.actor.get("kind") == "integration":  # named as itself, not the person behind it
        return name_of(event.actor)
    who = event.actor.get("tokenId") or event.actor.get("userId")
    return str(who) if who else None


def _update(event: Seen, ctx: Context, kind: UpdateKind, **values: Any) -> Update:
    return Update(
        kind=kind,
        at=event.created_at,
        task_id=event.task_id,
        task_key=_key(event, ctx),
        by=_by(event),
        **values,
    )


def _assigned_away(event: Seen, watcher: Watcher) -> bool:
    """A task.updated that took the task from the caller (its assignee changed from it)."""
    changes = event.payload.get("changes")
    moved = changes.get("assigneeId") if isinstance(changes, Mapping) else None
    return isinstance(moved, Mapping) and moved.get("from") in watcher.assignees


def _task_fields(event: Seen) -> tuple[str, ...]:
    if event.type == "task.comment_posted":
        return ("comment",)
    if event.type == "task.deleted":
        return ("deleted",)
    if event.type == "task.created":
        return ("created",)
    return tuple(str(name) for name in event.payload.get("changed") or ())


def _claim_lost(event: Seen, watcher: Watcher, ctx: Context) -> Update | None:
    claim = event.payload.get("claim") if event.type in CLAIM_ENDS else None
    holder = claim.get("holder") if isinstance(claim, Mapping) else None
    if not isinstance(claim, Mapping) or not isinstance(holder, Mapping):
        return None
    if not watcher.holds(holder):
        return None
    return _update(event, ctx, UpdateKind.CLAIM_LOST, status=claim.get("ended"))


def _ready(event: Seen, _watcher: Watcher, ctx: Context) -> Update | None:
    moved = event.type in FREED or event.type in ("task.created", "task.updated")
    return _update(event, ctx, UpdateKind.READY) if moved and event.task_id in ctx.free else None


def _answer(event: Seen, watcher: Watcher, ctx: Context) -> Update | None:
    mine = watcher.token_id is not None and event.token_id == watcher.token_id
    if event.type != "task.question_answered" or not mine:
        return None
    payload = event.payload
    return _update(
        event, ctx, UpdateKind.ANSWER, text=payload.get("excerpt"), ref_id=payload.get("questionId")
    )


def _decision(event: Seen, watcher: Watcher, ctx: Context) -> Update | None:
    payload = event.payload
    decided = event.type.startswith("draft.") and event.type not in NOT_DECISIONS
    if not decided or watcher.token_id is None or payload.get("handInTokenId") != watcher.token_id:
        return None
    return _update(
        event, ctx, UpdateKind.DECISION, text=payload.get("commentPreview"),
        ref_id=payload.get("draftId"), status=payload.get("status"),
    )  # fmt: skip


def _message(event: Seen, watcher: Watcher, ctx: Context) -> Update | None:
    payload = event.payload
    if event.type != "message.posted":
        return None
    if payload.get("participantId") not in (watcher.seat_id, watcher.user_id):
        return None
    return _update(
        event, ctx, UpdateKind.MESSAGE, text=payload.get("preview"), ref_id=payload.get("messageId")
    )


def _mention(event: Seen, _watcher: Watcher, ctx: Context) -> Update | None:
    comment = event.payload.get("commentId")
    if event.type != "task.comment_posted" or comment not in ctx.mentioned:
        return None
    return _update(
        event, ctx, UpdateKind.MENTION, text=event.payload.get("excerpt"), ref_id=comment
    )


def _task_changed(event: Seen, watcher: Watcher, ctx: Context) -> Update | None:
    if event.type not in TASK_CHANGES:
        return None
    if not (
        event.task_id in ctx.mine or _assigned_away(event, watcher) or _deleted_mine(event, watcher)
    ):
        return None
    text = event.payload.get("excerpt") if event.type == "task.comment_posted" else None
    return _update(event, ctx, UpdateKind.TASK, changed=_task_fields(event), text=text)


# The rules after "not the caller's own write", in order: the first that answers decides.
_RULES = (_ready, _answer, _decision, _message, _mention, _task_changed)


def classify(event: Seen, watcher: Watcher, ctx: Context) -> Update | None:
    """What `event` tells the caller, or None when it is not about it. A claim the caller
    lost is news whoever ended it; nothing the caller did itself is."""
    lost = _claim_lost(event, watcher, ctx)
    if lost is not None:
        return lost
    if watcher.did(event.actor):
        return None
    for rule in _RULES:
        found = rule(event, watcher, ctx)
        if found is not None:
            return found
    return None


def _deleted_mine(event: Seen, watcher: Watcher) -> bool:
    task = event.payload.get("task")
    return (
        event.type == "task.deleted"
        and isinstance(task, Mapping)
        and task.get("assigneeId") in watcher.assignees
    )


def gather(events: list[Seen], watcher: Watcher, ctx: Context) -> tuple[list[Update], int, bool]:
    """The updates `events` (oldest first) hold for the caller, at most MAX_UPDATES.

    Returns the updates, the id of the last event read (the next check-in continues after
    it; 0 when none was read) and whether events are left unread. A task changed several
    times shows once, with every field that changed and the last one to change it; a task
    that came free shows once.
    """
    told: list[Update] = []
    rows: dict[tuple[UpdateKind, str], int] = {}  # (kind, task) -> index of its row
    last = 0
    for event in events:
        found = classify(event, watcher, ctx)
        if found is not None:
            merge = (
                (found.kind, found.task_id)
                if found.kind in (UpdateKind.TASK, UpdateKind.READY) and found.task_id
                else None
            )
            if merge is not None and merge in rows:
                index = rows[merge]
                told[index] = _merged(told[index], found)
            elif len(told) == MAX_UPDATES:
                return told, last, True
            else:
                if merge is not None:
                    rows[merge] = len(told)
                told.append(found)
        last = event.id
    return told, last, False


def _merged(earlier: Update, later: Update) -> Update:
    if later.kind is UpdateKind.READY:
        return earlier
    changed = tuple(dict.fromkeys((*earlier.changed, *later.changed)))
    return replace(later, changed=changed, text=later.text or earlier.text)


@dataclass(frozen=True)
class HeldClaim:
    """A claim the caller holds, renewed by this check-in."""

    task_id: str
    task_key: str
    fence: int
    expires_at: datetime


@dataclass(frozen=True)
class CheckIn:
    """A check-in's answer: the updates, where the next check-in continues, and the claims
    it renewed."""

    updates: list[Update]
    position: int  # the last event read
    more: bool  # events are left: check in again at once
    held: list[HeldClaim]
    names: Mapping[str, str] = field(default_factory=dict)  # who did it: id -> name
