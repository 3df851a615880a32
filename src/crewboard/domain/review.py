"""The review inbox: hand-ins (drafts), proposal cards, messages to participants and acceptance
rules, their states and names, and what the activity stream shows of them. Pure values, no I/O."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from crewboard.domain.board.tasks import Task, TaskStatus
from crewboard.domain.identity.access import TokenKind
from crewboard.domain.projects import Project


class DraftStatus(StrEnum):
    PENDING = "pending"
    REVISION_REQUESTED = "revision_requested"  # a follow-up task carries the reviewer's comment
    APPROVED = "approved"
    REJECTED = "rejected"
    SAVED_TO_MEMORY = "saved_to_memory"  # approved, and a memory record made from it
    ACCEPTED_BY_RULE = "accepted_by_rule"  # an acceptance rule of the project took it
    RETURNED_TO_REVIEW = "returned_to_review"  # a person undid a rule's acceptance
    SUPERSEDED = "superseded"  # a newer draft of the same task was accepted


# Drafts a person still has to decide about: the inbox shows these.
WAITING: frozenset[DraftStatus] = frozenset({DraftStatus.PENDING, DraftStatus.RETURNED_TO_REVIEW})
# Drafts whose content became (or may become) the task's accepted result.
ACCEPTED: frozenset[DraftStatus] = frozenset(
    {DraftStatus.APPROVED, DraftStatus.SAVED_TO_MEMORY, DraftStatus.ACCEPTED_BY_RULE}
)
# Older drafts an accepted newer one closes as superseded.
SUPERSEDABLE: frozenset[DraftStatus] = frozenset(
    {DraftStatus.PENDING, DraftStatus.RETURNED_TO_REVIEW, DraftStatus.REVISION_REQUESTED}
)


class ReferenceKind(StrEnum):
    COMMIT = "commit"
    BRANCH = "branch"
    PULL_REQUEST = "pull_request"
    TESTS = "tests"
    LINK = "link"


class ProposalKind(StrEnum):
    TASK = "task"
    TASK_UPDATE = "task_update"
    TASK_DELETE = "task_delete"
    ROLE = "role"
    COMPOSITION = "composition"


class ProposalStatus(StrEnum):
    PENDING = "pending"
    ACCEPTED = "accepted"
    DISMISSED = "dismissed"


class RuleMatch(StrEnum):
    """What an acceptance rule takes: every hand-in, or those of one task type or AI role."""

    ALL = "all"
    TASK_TYPE = "task_type"
    AI_ROLE = "ai_role"


# Experience a team role gains per accepted task, and the xp each level needs.
XP_PER_ACCEPTED_TASK = 10
XP_PER_LEVEL = 50


def level_for(xp: int) -> int:
    """A role's level: 1 to start, one more for every XP_PER_LEVEL points."""
    return 1 + max(xp, 0) // XP_PER_LEVEL


@dataclass(frozen=True)
class Draft:
    """A hand-in; `content` is None when a list left it out."""

    id: str
    project_id: str
    task_id: str | None
    root_task_id: str
    title: str
    summary: str
    content: str | None
    collection: str | None
    document: str | None
    references: list[dict[str, Any]]
    context_receipt_id: str | None
    status: DraftStatus
    via: str
    author: dict[str, Any]
    token_id: str | None
    role_id: str | None
    idempotency_key: str | None
    task_moved: bool
    task_status_before: TaskStatus | None  # where the hand-in moved the task from
    follow_up_task_id: str | None
    review_comment: str | None
    memory_record_id: str | None
    rule_id: str | None
    decided_by: dict[str, Any] | None
    decided_at: datetime | None
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class AcceptanceRule:
    id: str
    project_id: str
    match: RuleMatch
    value: str | None
    collection: str | None
    document: str | None
    created_by: dict[str, Any]
    created_at: datetime

    def as_payload(self) -> dict[str, Any]:
        """How a rule's events and answers name it (both say the same)."""
        return {
            "id": self.id,
            "projectId": self.project_id,
            "match": self.match,
            "value": self.value,
            "collection": self.collection,
            "document": self.document,
            "createdBy": self.created_by,
            "createdAt": self.created_at.isoformat(),
        }


@dataclass(frozen=True)
class Proposal:
    """A card an agent puts in the inbox proposing a change to the board or the team (a task, an
    update, a deletion, a role, a composition) for a person to accept or dismiss."""

    id: str
    project_id: str
    kind: ProposalKind
    task_id: str | None
    payload: dict[str, Any]
    reason: str
    status: ProposalStatus
    author: dict[str, Any]
    token_id: str | None
    result: dict[str, Any] | None
    decided_by: dict[str, Any] | None
    decided_at: datetime | None
    created_at: datetime


@dataclass(frozen=True)
class InboxMessage:
    id: str
    project_id: str
    participant_id: str
    task_id: str | None
    body: str
    author: dict[str, Any]
    created_at: datetime
    dismissed_at: datetime | None = None
    dismissed_by: dict[str, Any] | None = None


@dataclass(frozen=True)
class DraftHit:
    id: str
    task_id: str | None
    title: str
    summary: str
    content: str
    status: DraftStatus
    created_at: datetime


@dataclass(frozen=True)
class DraftHits:
    rows: list[DraftHit]
    total: int  # every hand-in of the project that holds the words


@dataclass(frozen=True)
class EventRow:
    id: int
    project_id: str
    type: str
    actor: dict[str, Any]
    payload: dict[str, Any]
    created_at: datetime
    task_id: str | None
    token_id: str | None


@dataclass(frozen=True)
class HandIn:
    """What activity shows of a draft: never its text."""

    id: str
    status: DraftStatus
    token_id: str | None
    idempotency_key: str | None
    task_id: str | None


@dataclass(frozen=True)
class TokenName:
    """What an activity row shows of the token an event came through."""

    id: str
    name: str
    kind: TokenKind
    user_id: str
    project_id: str | None
    revoked_at: datetime | None
    seat_id: str | None = None


# --- what the review services answer (worded at the door side, in contract/review) -----------


def rule_decider(rule_id: str) -> dict[str, Any]:
    """The `decidedBy` stamp a draft keeps when an acceptance rule took it."""
    return {"kind": "rule", "ruleId": rule_id}


@dataclass(frozen=True)
class DraftRow:
    """A draft with what its answers name beside it: its project and its task's key;
    `inputs_changed` is filled only where a list shows it (the inbox)."""

    draft: Draft
    project: Project
    task_key: str | None
    inputs_changed: tuple[dict[str, Any], ...] | None = None
    earlier: tuple[Draft, ...] | None = None  # the earlier versions, where the inbox shows them


def hand_of(draft: Draft) -> str:
    """Who handed a draft in, as versions are told apart: the AI seat, else the token (a
    person handing in without one, from the operator CLI, is one hand)."""
    return draft.role_id or draft.token_id or ""


def earlier_versions(draft: Draft, chain: Sequence[Draft]) -> tuple[Draft, ...]:
    """The versions before `draft`: drafts of its chain (the task and the follow-ups a
    revision request made) handed in earlier by the same seat or token, oldest first."""
    mark = (draft.created_at, draft.id)
    return tuple(
        d
        for d in chain
        if d.id != draft.id and hand_of(d) == hand_of(draft) and (d.created_at, d.id) < mark
    )


@dataclass(frozen=True)
class DraftRead:
    """One draft in full: its task, follow-up task, changed inputs and its chain's versions."""

    row: DraftRow
    task: Task | None
    follow_up: Task | None
    inputs_changed: list[dict[str, Any]]
    versions: tuple[Draft, ...]


@dataclass(frozen=True)
class DraftPage:
    rows: tuple[DraftRow, ...]
    total: int
    offset: int


@dataclass(frozen=True)
class NotMoved:
    """Why a hand-in left its task where it was."""

    code: str  # STATUS or REVISION_CONFLICT
    status: TaskStatus
    current_revision: int
    message: str


@dataclass(frozen=True)
class HandedIn:
    """A landed draft (`submit_result` or `create_draft`), after any acceptance rule;
    `not_moved` is only said by a hand-in (`kind` "result"), which tries to move the task."""

    kind: str  # "result" or "draft"
    row: DraftRow
    task: Task | None
    task_moved: bool
    not_moved: NotMoved | None
    inputs_changed: list[dict[str, Any]]


@dataclass(frozen=True)
class XpGain:
    """Experience a team role gained (or, negative, lost) by a decision."""

    role_id: str
    gained: int
    xp: int
    level: int

    def as_payload(self) -> dict[str, Any]:
        """How events and answers name it."""
        return {"roleId": self.role_id, "gained": self.gained, "xp": self.xp, "level": self.level}


class DecisionKind(StrEnum):
    APPROVE = "approve"
    REJECT = "reject"
    REVISE = "revise"
    UNDO = "undo"  # of a rule's acceptance
    UNDO_DECISION = "undo_decision"  # a person takes back their own decision


@dataclass(frozen=True)
class Decided:
    """A person's decision about a draft, with the draft as it is now and its task."""

    kind: DecisionKind
    row: DraftRow
    task: Task | None
    xp: XpGain | None = None
    follow_up_task_id: str | None = None
    removed_memory_record_id: str | None = None


@dataclass(frozen=True)
class Thread:
    """A page of one participant's thread, newest first."""

    project_id: str
    participant_id: str
    messages: tuple[InboxMessage, ...]
    total: int
    offset: int


@dataclass(frozen=True)
class ReadMarks:
    """Inbox items (kind, id) a person marked read."""

    project_id: str
    items: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class UnreadMark:
    project_id: str
    kind: str
    item_id: str
    changed: bool  # False when it was not read


@dataclass(frozen=True)
class AllRead:
    project_id: str
    marked: int


@dataclass(frozen=True)
class ProposalRow:
    """A proposal card with the task its answers name: the card's own, or the one accepting it
    made (`task_key` stays the old key once accepting it deleted its task)."""

    proposal: Proposal
    task_id: str | None
    task_key: str | None


@dataclass(frozen=True)
class ProposalPage:
    rows: tuple[ProposalRow, ...]
    total: int
    offset: int


@dataclass(frozen=True)
class InboxItem:
    """One row of a person's inbox. `item` is the hand-in, the proposal card, the question or
    the message; a question comes worded already (notes are typed apart)."""

    kind: str  # hand_in, proposal, question, message
    id: str
    created_at: str  # ISO 8601: the inbox's order, newest first
    item: DraftRow | ProposalRow | InboxMessage | dict[str, Any]
    read: bool = False


@dataclass(frozen=True)
class InboxPage:
    projects: tuple[Project, ...]
    counts: dict[str, int]
    total: int
    unread: int
    items: tuple[InboxItem, ...]


@dataclass(frozen=True)
class ActivityEntry:
    """An event as the activity stream shows it: with its hand-in's draft as it is now, and
    whether it is the reader's own (a token's hand-in, or an answer to its question)."""

    event: EventRow
    hand_in: HandIn | None
    mine: bool


@dataclass(frozen=True)
class ActivityPage:
    """Activity entries and the cursor to poll from next."""

    entries: tuple[ActivityEntry, ...]
    cursor: str


@dataclass(frozen=True)
class AgentChoice:
    """An agent token as a choice of the activity page's "who" filter."""

    id: str
    name: str  # the AI seat it acts as, else the token's name
    token_name: str
    owner: str | None  # the name of the person whose token it is
    revoked: bool


@dataclass(frozen=True)
class ShownEntry:
    """An entry of the web activity page: who acted (a stamp, resolved now) and the fields a
    task change changed (wire names)."""

    entry: ActivityEntry
    by: dict[str, Any]
    changed: list[str]


@dataclass(frozen=True)
class ActivityRead:
    """One page of a project's activity for a person, with what its filters offer."""

    entries: tuple[ShownEntry, ...]
    older: str | None  # the cursor of the page after this one
    now: datetime
    people: tuple[tuple[str, str], ...]  # (user id, name)
    agents: tuple[AgentChoice, ...]


# What accepting a proposal card made; the card keeps it, as its payload, for its `result`.


@dataclass(frozen=True)
class TaskMade:
    task_id: str
    task_key: str
    assignee_id: str | None

    def as_payload(self) -> dict[str, Any]:
        return {"taskId": self.task_id, "taskKey": self.task_key, "assigneeId": self.assignee_id}


@dataclass(frozen=True)
class TaskChanged:
    task_id: str
    task_key: str
    applied: list[str]  # the fields changed, by their wire names
    revision: int

    def as_payload(self) -> dict[str, Any]:
        return {
            "taskId": self.task_id,
            "taskKey": self.task_key,
            "applied": self.applied,
            "revision": self.revision,
        }


@dataclass(frozen=True)
class TaskDeleted:
    task_id: str
    task_key: str

    def as_payload(self) -> dict[str, Any]:
        return {"taskId": self.task_id, "taskKey": self.task_key, "deleted": True}


@dataclass(frozen=True)
class SeatsMade:
    role_ids: list[str]

    def as_payload(self) -> dict[str, Any]:
        return {"roleIds": self.role_ids}


CardMade = TaskMade | TaskChanged | TaskDeleted | SeatsMade
