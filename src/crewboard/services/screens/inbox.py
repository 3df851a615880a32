"""The web inbox's reading: the inbox of one project, narrowed to a kind, with each message's
task key and the name of the participant it is addressed to (a person or a team seat), a name
for each row that its buttons use, what comes next after a decision, and an item's page that
marks the item read for the person who opens it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from crewboard.domain.identity.naming import name_of
from crewboard.domain.identity.records import Actor
from crewboard.domain.review import (
    Draft,
    DraftRead,
    DraftRow,
    InboxItem,
    InboxMessage,
    InboxPage,
    ProposalRow,
    earlier_versions,
)
from crewboard.errors import NotFound, ValidationFailed
from crewboard.services.memory import records as memory
from crewboard.services.review import drafts, proposals
from crewboard.services.review.decisions import draft_not_found
from crewboard.services.review.inbox import KINDS, MAX_ITEMS, inbox
from crewboard.services.review.reads import mark_read
from crewboard.services.review.undo import UNDOABLE, undo_until
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork

# What a person decides about; messages are read and dismissed, never decided.
DECIDED_KINDS = ("hand_in", "proposal", "question")
EXCERPT_WORDS = 6


def check_kind(kind: str | None) -> str | None:
    """An inbox kind ('' and None mean every kind).

    Raises:
        ValidationFailed: not one of hand_in, proposal, question, message.
    """
    if not kind:
        return None
    if kind not in KINDS:
        raise ValidationFailed.field("kind", f"unknown value {kind!r}.", list(KINDS))
    return kind


@dataclass(frozen=True)
class InboxScreen:
    """The inbox page: the inbox, the rows of the chosen kind with their labels (aligned), the
    task keys of the messages' tasks and the names of the messages' participants."""

    inbox: InboxPage
    kind: str | None
    rows: tuple[InboxItem, ...]
    labels: tuple[str, ...]
    task_keys: dict[str, str]
    participant_names: dict[str, str]
    unread_shown: int


@dataclass(frozen=True)
class NextItem:
    """What to decide next: its kind, id and the label its row has."""

    kind: str
    id: str
    label: str


def inbox_page(db: Database, actor: Actor, *, project: str, kind: str | None = None) -> InboxScreen:
    """What waits for the person in one project (newest first), optionally of one kind.

    Counts always cover every kind; `rows` holds the chosen kind's only, each with a label
    (in `labels`), a name unique on the page that its buttons' accessible names use.

    Raises:
        PermissionDenied: through a token. NotFound: the project is not open to the actor.
        ValidationFailed: an unknown kind.
    """
    wanted = check_kind(kind)
    found = inbox(db, actor, project=project, limit=MAX_ITEMS)
    rows = tuple(item for item in found.items if wanted is None or item.kind == wanted)
    messages = [item.item for item in rows if isinstance(item.item, InboxMessage)]
    keys: dict[str, str] = {}
    names: dict[str, str] = {}
    if messages:
        keys, names = db.read(lambda uow: _labels(uow, messages))
    return InboxScreen(
        inbox=found,
        kind=wanted,
        rows=rows,
        labels=tuple(row_labels(rows)),
        task_keys=keys,
        participant_names=names,
        unread_shown=sum(1 for item in rows if not item.read),
    )


def _labels(uow: UnitOfWork, messages: list[InboxMessage]) -> tuple[dict[str, str], dict[str, str]]:
    """Task keys of the messages' tasks and names of their participants."""
    project_keys: dict[str, str] = {}
    for project_id in {m.project_id for m in messages}:
        project = uow.projects.get(project_id)
        project_keys[project_id] = project.key if project else "?"
    task_projects = {m.task_id: m.project_id for m in messages if m.task_id}
    numbers = uow.tasks.numbers_of(task_projects)
    keys = {
        task_id: f"{project_keys[task_projects[task_id]]}-{number}"
        for task_id, number in numbers.items()
    }
    names: dict[str, str] = {}
    for message in messages:
        participant = message.participant_id
        if participant in names:
            continue
        if participant.startswith("rol_"):
            seat = uow.team.get(message.project_id, participant)
            names[participant] = seat.name if seat else participant
        else:
            user = uow.users.get(participant)
            names[participant] = user.display_name if user else participant
    return keys, names


# --- names of rows --------------------------------------------------------------------------------


def author_name(stamp: dict[str, Any] | None) -> str:
    """Who wrote it, in a few words: an agent's seat or token, else the person."""
    return name_of(stamp)


def _excerpt(text: str | None) -> str:
    words = (text or "").split()
    cut = " ".join(words[:EXCERPT_WORDS])
    return f"“{cut}{'…' if len(words) > EXCERPT_WORDS else ''}”"


def _proposal_name(row: ProposalRow) -> str:
    payload = row.proposal.payload or {}
    key = row.task_key or "a task"
    names = {
        "task": f"the new-task proposal “{payload.get('title', '')}”",
        "task_update": f"the proposal to change {key}",
        "task_delete": f"the proposal to delete {key}",
        "role": f"the new-role proposal “{payload.get('name', '')}”",
        "composition": "the team proposal",
    }
    return names.get(str(row.proposal.kind), "the proposal")


def _name(entry: InboxItem) -> tuple[str, str]:
    """A row's name and the detail that tells it from a row of the same name."""
    item = entry.item
    if isinstance(item, DraftRow):
        key = item.task_key
        name = f"{key}'s hand-in" if key else "the hand-in"
        return name, f"“{item.draft.title}”"
    if isinstance(item, InboxMessage):
        return f"the message from {author_name(item.author)}", _excerpt(item.body)
    if isinstance(item, ProposalRow):
        return _proposal_name(item), _excerpt(item.proposal.reason)
    task = item.get("task") or {}
    return f"the question on {task.get('key', 'a task')}", _excerpt(item.get("question"))


def row_labels(items: Sequence[InboxItem]) -> list[str]:
    """A label for each row that no other row on the page has (repeated buttons then have
    unique accessible names): its name, with a detail, then a number, where names repeat."""
    named = [_name(item) for item in items]
    repeated = Counter(name for name, _ in named)
    labels = [f"{name} {detail}" if repeated[name] > 1 else name for name, detail in named]
    seen: Counter[str] = Counter()
    again = Counter(labels)
    shown = []
    for label in labels:
        seen[label] += 1
        shown.append(f"{label} ({seen[label]})" if again[label] > 1 else label)
    return shown


# --- what comes next ------------------------------------------------------------------------------


def next_waiting(
    db: Database,
    actor: Actor,
    *,
    project: str,
    after: Mapping[str, Any],
    kind: str | None = None,
) -> NextItem | None:
    """The item to decide next once `after` (an item's view: id and createdAt) is decided:
    the next older one in the inbox's order (newest first), else the newest one left; of one
    kind when `kind` is given. None when nothing is left to decide.

    Raises:
        PermissionDenied, NotFound: as `inbox`. ValidationFailed: an unknown kind.
    """
    wanted = check_kind(kind)
    kinds = (wanted,) if wanted else DECIDED_KINDS
    found = inbox(db, actor, project=project, limit=MAX_ITEMS).items
    left = [i for i in found if i.kind in kinds and i.id != after.get("id")]
    if not left:
        return None
    mark = (str(after.get("createdAt") or ""), str(after.get("id") or ""))
    labelled = list(zip(left, row_labels(left), strict=True))
    labelled.sort(key=lambda pair: (pair[0].created_at, pair[0].id), reverse=True)
    older = next((p for p in labelled if (p[0].created_at, p[0].id) < mark), None)
    chosen, label = older or labelled[0]
    return NextItem(chosen.kind, chosen.id, label)


# --- an item's page -----------------------------------------------------------------------------


@dataclass(frozen=True)
class HandInScreen:
    """A hand-in's page: the draft in full and the memory record its decision filed (id and
    title), if it is still there."""

    read: DraftRead
    memory_record: tuple[str, str] | None
    previous: Draft | None = None  # the version before this one, with its content
    undo_until: datetime | None = None  # until when this person may take its decision back


def open_hand_in(db: Database, actor: Actor, *, project_id: str, draft_id: str) -> HandInScreen:
    """A hand-in of this project in full, with the memory record its decision filed, marked
    read for the person who opens it.

    Raises:
        NotFound: no such draft in this project open to the actor.
    """
    found = drafts.get_draft(db, actor, draft_id)
    if found.row.draft.project_id != project_id:
        raise draft_not_found(draft_id)
    _read(db, actor, project_id, "hand_in", draft_id)
    draft = found.row.draft
    earlier = earlier_versions(draft, found.versions)
    previous = drafts.get_draft(db, actor, earlier[-1].id).row.draft if earlier else None
    until = undo_until(draft, actor)
    return HandInScreen(
        found,
        _record(db, actor, draft.memory_record_id),
        previous,
        until if until is not None and until > db.clock.now() else None,
    )


def open_proposal(db: Database, actor: Actor, *, project_id: str, proposal_id: str) -> ProposalRow:
    """A proposal card of this project, marked read for the person who opens it.

    Raises:
        NotFound: no such card in this project open to the actor.
    """
    card = proposals.get_proposal(db, actor, proposal_id)
    if card.proposal.project_id != project_id:
        raise proposals.proposal_not_found(proposal_id)
    _read(db, actor, project_id, "proposal", proposal_id)
    return card


def _record(db: Database, actor: Actor, record_id: str | None) -> tuple[str, str] | None:
    """The memory record a decision filed (id and title), None when none or gone since."""
    if not record_id:
        return None
    try:
        found = memory.get_record(db, actor, record_id)
    except NotFound:
        return None
    return found.id, found.title


def _read(db: Database, actor: Actor, project_id: str, kind: str, item_id: str) -> None:
    # Only a person's own opening marks it: a token's read is not the person reading.
    if actor.token is None:
        mark_read(db, actor, project_id, [(kind, item_id)])


# --- what a decision just did -------------------------------------------------------------------


@dataclass(frozen=True)
class DecidedNote:
    """A hand-in this person just decided, as the page after the decision tells it: the
    draft and its follow-up task now, and until when they may take the decision back (None:
    no longer, or not a decision of theirs)."""

    read: DraftRead
    undo_until: datetime | None


def decided_note(
    db: Database, actor: Actor, *, project_id: str, draft_id: str
) -> DecidedNote | None:
    """The hand-in of this project this person decided last (None when it is gone, not in
    this project, or waits for review again)."""
    try:
        found = drafts.get_draft(db, actor, draft_id)
    except NotFound:
        return None
    draft = found.row.draft
    if draft.project_id != project_id or draft.status not in UNDOABLE:
        return None
    until = undo_until(draft, actor)
    if until is not None and until <= db.clock.now():
        until = None
    return DecidedNote(found, until)
