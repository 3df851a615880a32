"""The web inbox's reading: the inbox of one project, narrowed to a kind, with each message's
task key and the name of the participant it is addressed to (a person or a team seat), a name
for each row that its buttons use, what comes next after a decision, and an item's page that
marks the item read for the person who opens it."""

from __future__ import annotations

from collections import Counter
from typing import Any

from crewboard.domain.identity.records import Actor
from crewboard.errors import NotFound, ValidationFailed
from crewboard.services.memory import records as memory
from crewboard.services.review import drafts, proposals
from crewboard.services.review.decisions import draft_not_found
from crewboard.services.review.inbox import KINDS, MAX_ITEMS, inbox
from crewboard.services.review.reads import mark_read
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


def inbox_page(
    db: Database, actor: Actor, *, project: str, kind: str | None = None
) -> dict[str, Any]:
    """What waits for the person in one project (newest first), optionally of one kind.

    Counts always cover every kind; `items` holds the chosen kind's only, each with `label`,
    a name unique on the page that its buttons' accessible names use.

    Raises:
        PermissionDenied: through a token. NotFound: the project is not open to the actor.
        ValidationFailed: an unknown kind.
    """
    wanted = check_kind(kind)
    found = inbox(db, actor, project=project, limit=MAX_ITEMS)
    items = [item for item in found["items"] if wanted is None or item["kind"] == wanted]
    messages = [item for item in items if item["kind"] == "message"]
    if messages:
        keys, names = db.read(lambda uow: _labels(uow, messages))
        for message in messages:
            message["taskKey"] = keys.get(message["taskId"] or "")
            message["participantName"] = names.get(message["participantId"])
    name_rows(items)
    unread_here = sum(1 for item in items if not item["read"])
    return {**found, "kind": wanted, "items": items, "unreadShown": unread_here}


def _labels(
    uow: UnitOfWork, messages: list[dict[str, Any]]
) -> tuple[dict[str, str], dict[str, str]]:
    """Task keys of the messages' tasks and names of their participants."""
    project_keys: dict[str, str] = {}
    for project_id in {m["projectId"] for m in messages}:
        project = uow.projects.get(project_id)
        project_keys[project_id] = project.key if project else "?"
    task_projects = {m["taskId"]: m["projectId"] for m in messages if m["taskId"]}
    numbers = uow.tasks.numbers_of(task_projects)
    keys = {
        task_id: f"{project_keys[task_projects[task_id]]}-{number}"
        for task_id, number in numbers.items()
    }
    names: dict[str, str] = {}
    for message in messages:
        participant = str(message["participantId"])
        if participant in names:
            continue
        if participant.startswith("rol_"):
            seat = uow.team.get(message["projectId"], participant)
            names[participant] = seat.name if seat else participant
        else:
            user = uow.users.get(participant)
            names[participant] = user.display_name if user else participant
    return keys, names


# --- names of rows --------------------------------------------------------------------------------


def author_name(stamp: dict[str, Any] | None) -> str:
    """Who wrote it, in a few words: an agent's seat or token, else the person."""
    if not stamp:
        return "someone"
    shown = stamp.get("roleName") or stamp.get("tokenName") or stamp.get("displayName")
    return str(shown or "someone")


def _excerpt(text: str | None) -> str:
    words = (text or "").split()
    cut = " ".join(words[:EXCERPT_WORDS])
    return f"“{cut}{'…' if len(words) > EXCERPT_WORDS else ''}”"


def _proposal_name(item: dict[str, Any]) -> str:
    payload = item.get("payload") or {}
    key = item.get("taskKey") or "a task"
    names = {
        "task": f"the new-task proposal “{payload.get('title', '')}”",
        "task_update": f"the proposal to change {key}",
        "task_delete": f"the proposal to delete {key}",
        "role": f"the new-role proposal “{payload.get('name', '')}”",
        "composition": "the team proposal",
    }
    return names.get(str(item.get("proposalKind") or item.get("kind")), "the proposal")


def _name(item: dict[str, Any]) -> tuple[str, str]:
    """A row's name and the detail that tells it from a row of the same name."""
    kind = item["kind"]
    if kind == "hand_in":
        key = item.get("taskKey")
        name = f"{key}'s hand-in" if key else "the hand-in"
        return name, f"“{item.get('title', '')}”"
    if kind == "proposal":
        return _proposal_name(item), _excerpt(item.get("reason"))
    if kind == "question":
        task = item.get("task") or {}
        return f"the question on {task.get('key', 'a task')}", _excerpt(item.get("question"))
    return f"the message from {author_name(item.get('author'))}", _excerpt(item.get("body"))


def name_rows(items: list[dict[str, Any]]) -> None:
    """Give each row a `label` no other row on the page has (repeated buttons then have
    unique accessible names): its name, with a detail, then a number, where names repeat."""
    named = [_name(item) for item in items]
    repeated = Counter(name for name, _ in named)
    labels = [f"{name} {detail}" if repeated[name] > 1 else name for name, detail in named]
    seen: Counter[str] = Counter()
    again = Counter(labels)
    for item, label in zip(items, labels, strict=True):
        seen[label] += 1
        item["label"] = f"{label} ({seen[label]})" if again[label] > 1 else label


# --- what comes next ------------------------------------------------------------------------------


def next_waiting(
    db: Database,
    actor: Actor,
    *,
    project: str,
    after: dict[str, Any],
    kind: str | None = None,
) -> dict[str, Any] | None:
    """The item to decide next once `after` (an item's view: id and createdAt) is decided:
    the next older one in the inbox's order (newest first), else the newest one left; of one
    kind when `kind` is given. None when nothing is left to decide.

    Raises:
        PermissionDenied, NotFound: as `inbox`. ValidationFailed: an unknown kind.
    """
    wanted = check_kind(kind)
    kinds = (wanted,) if wanted else DECIDED_KINDS
    found = inbox(db, actor, project=project, limit=MAX_ITEMS)["items"]
    left = [i for i in found if i["kind"] in kinds and i["id"] != after.get("id")]
    if not left:
        return None
    name_rows(left)
    mark = (str(after.get("createdAt") or ""), str(after.get("id") or ""))
    left.sort(key=lambda i: (str(i["createdAt"]), str(i["id"])), reverse=True)
    older = next((i for i in left if (str(i["createdAt"]), str(i["id"])) < mark), None)
    chosen = older or left[0]
    return {"kind": chosen["kind"], "id": chosen["id"], "label": chosen["label"]}


# --- an item's page -----------------------------------------------------------------------------


def open_hand_in(db: Database, actor: Actor, *, project_id: str, draft_id: str) -> dict[str, Any]:
    """A hand-in of this project in full, with the memory record its decision filed (id and
    title), marked read for the person who opens it.

    Raises:
        NotFound: no such draft in this project open to the actor.
    """
    draft = drafts.get_draft(db, actor, draft_id)
    _in_project(draft, project_id, draft_not_found(draft_id))
    _read(db, actor, project_id, "hand_in", draft_id)
    return {**draft, "memoryRecord": _record(db, actor, draft.get("memoryRecordId"))}


def open_proposal(
    db: Database, actor: Actor, *, project_id: str, proposal_id: str
) -> dict[str, Any]:
    """A proposal card of this project, marked read for the person who opens it.

    Raises:
        NotFound: no such card in this project open to the actor.
    """
    card = proposals.get_proposal(db, actor, proposal_id)
    _in_project(card, project_id, proposals.proposal_not_found(proposal_id))
    _read(db, actor, project_id, "proposal", proposal_id)
    return card


def _record(db: Database, actor: Actor, record_id: str | None) -> dict[str, Any] | None:
    """The memory record a decision filed (id and title), None when none or gone since."""
    if not record_id:
        return None
    try:
        found = memory.get_record(db, actor, record_id)
    except NotFound:
        return None
    return {"id": found.id, "title": found.title}


def _in_project(found: dict[str, Any], project_id: str, missing: NotFound) -> None:
    """Raises: NotFound when the item belongs to another project than the page's."""
    if found["projectId"] != project_id:
        raise missing


def _read(db: Database, actor: Actor, project_id: str, kind: str, item_id: str) -> None:
    # Only a person's own opening marks it: a token's read is not the person reading.
    if actor.token is None:
        mark_read(db, actor, project_id, [(kind, item_id)])
