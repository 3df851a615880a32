"""Hand-ins: an AI's result lands as a draft that waits for a person (or an acceptance rule).

`submit_result` hands in a finished task in one transaction: the draft, the task moved to
review (only from backlog, ready_for_ai or in_progress and only at the revision the agent
read; otherwise the draft still lands and the answer says why the task stayed) and the git
references the agent reports, kept as reported and never fetched. `create_draft` lands a
draft alone. Either way, a matching acceptance rule accepts it at once.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, NamedTuple

from crewboard.domain.board.tasks import MAX_LONG_TEXT, MAX_TITLE, AssigneeType, Task, TaskStatus
from crewboard.domain.identity.access import Role, Scope, parse_enum, parse_enum_list
from crewboard.domain.identity.records import Actor
from crewboard.domain.projects import Project
from crewboard.domain.review import (
    WAITING,
    Draft,
    DraftPage,
    DraftRead,
    DraftRow,
    DraftStatus,
    HandedIn,
    NotMoved,
    ReferenceKind,
    earlier_versions,
    hand_of,
    rule_decider,
)
from crewboard.domain.validation import check_no_nul, check_text
from crewboard.errors import LimitExceeded, ValidationFailed
from crewboard.services.board import context
from crewboard.services.board.claims import check_claim_fence, let_go_on_hand_in
from crewboard.services.board.task_lookup import access_task
from crewboard.services.board.tasks import save_task
from crewboard.services.board.views import task_key
from crewboard.services.idempotency import Ack, KeyedResult, keyed_write, require_key
from crewboard.services.identity.access import (
    ANY_WORKSPACE,
    WorkspaceRef,
    access_project,
    open_projects,
)
from crewboard.services.memory import records as memory
from crewboard.services.paging import check_page
from crewboard.services.review.decisions import access_draft, do_accept, drafts_of, new_draft_id
from crewboard.services.review.rules import matching_rule
from crewboard.services.views import stamp_of
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork

MAX_SUMMARY = 2000
MAX_REFERENCES = 20
MAX_REFERENCE_VALUE = 300
MAX_REFERENCE_LABEL = 120
MAX_REFERENCE_URL = 500
MOVABLE = frozenset({TaskStatus.BACKLOG, TaskStatus.READY_FOR_AI, TaskStatus.IN_PROGRESS})
VIA = ("mcp", "rest", "cli")
_COMMIT = re.compile(r"^[0-9a-fA-F]{7,64}$")
_REFERENCE_FIELDS = ("kind", "value", "label", "url")

Answer = Callable[[HandedIn], dict[str, Any]]


# --- checking a hand-in ---------------------------------------------------------------------------


def check_references(references: Sequence[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """Git evidence as the agent reports it: at most 20 items, https links only.

    Raises:
        LimitExceeded: too many items, or a field over its limit.
        ValidationFailed: naming `references[i].<field>`: an unknown kind or field, a commit
            that is not 7-64 hex digits, a url that is not https.
    """
    items = list(references or [])
    if len(items) > MAX_REFERENCES:
        raise LimitExceeded(
            f"references: {len(items)} items is over the limit of {MAX_REFERENCES}.",
            {"field": "references", "limit": MAX_REFERENCES},
        )
    return [_check_reference(f"references[{i}]", item) for i, item in enumerate(items)]


def _check_reference(at: str, item: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(item, dict):
        raise ValidationFailed.field(at, "must be an object with kind and value.")
    unknown = sorted(set(item) - set(_REFERENCE_FIELDS))
    if unknown:
        raise ValidationFailed.field(
            f"{at}.{unknown[0]}", "is not a reference field.", list(_REFERENCE_FIELDS)
        )
    kind = parse_enum(str(item.get("kind")), ReferenceKind, f"{at}.kind")
    value = check_text(
        f"{at}.value", str(item.get("value") or ""), max_length=MAX_REFERENCE_VALUE, required=True
    )
    if kind is ReferenceKind.COMMIT and not _COMMIT.match(value):
        raise ValidationFailed.field(f"{at}.value", "a commit is its SHA: 7 to 64 hex digits.")
    checked: dict[str, Any] = {"kind": str(kind), "value": value}
    if item.get("label") is not None:
        checked["label"] = check_text(
            f"{at}.label", str(item["label"]), max_length=MAX_REFERENCE_LABEL
        )
    if item.get("url") is not None:
        url = check_text(f"{at}.url", str(item["url"]), max_length=MAX_REFERENCE_URL, required=True)
        if not url.lower().startswith("https://") or len(url) <= len("https://") or " " in url:
            raise ValidationFailed.field(
                f"{at}.url", "must be an https:// link (it is shown, never fetched)."
            )
        checked["url"] = url
    return checked


def _check_content(content: str) -> str:
    if not content.strip():
        raise ValidationFailed.field("content", "must not be empty.")
    check_no_nul("content", content)
    if len(content) > MAX_LONG_TEXT:
        raise LimitExceeded(
            f"content: {len(content)} characters is over the limit of {MAX_LONG_TEXT}.",
            {"field": "content", "limit": MAX_LONG_TEXT, "actual": len(content)},
        )
    return content


def _check_texts(title: str, summary: str, content: str) -> tuple[str, str, str]:
    return (
        check_text("title", title, max_length=MAX_TITLE, required=True),
        check_text("summary", summary or "", max_length=MAX_SUMMARY),
        _check_content(content),
    )


# --- landing a draft -----------------------------------------------------------------------------


class _HandIn(NamedTuple):
    """What a hand-in sends, checked before the task is looked up."""

    kind: str  # "result" or "draft"
    texts: tuple[str, str, str]  # title, summary, content
    collection: str | None
    document: str | None
    references: list[dict[str, Any]]
    key: str | None
    via: str


def _land(
    uow: UnitOfWork,
    actor: Actor,
    target: tuple[Task, Project],
    hand_in: _HandIn,
    *,
    receipt: str | None,
    moved_from: TaskStatus | None,
) -> Draft:
    """Insert the draft and its event `draft.submitted` (the task is moved by the caller)."""
    task, project = target
    kind, texts, collection, document, references, key, via = hand_in
    repo = drafts_of(uow)
    root = repo.root_for(task.id)
    uow.serialize(f"draft-chain:{root}")
    draft = Draft(
        id=new_draft_id(),
        project_id=project.id,
        task_id=task.id,
        root_task_id=root,
        title=texts[0],
        summary=texts[1],
        content=texts[2],
        collection=memory.resolve_collection(project, collection, "collection")
        if collection is not None
        else None,
        document=document,
        references=references,
        context_receipt_id=receipt,
        status=DraftStatus.PENDING,
        via=via,
        author=stamp_of(uow, actor),
        token_id=actor.token.id if actor.token else None,
        role_id=task.assignee_id
        if actor.is_agent and task.assignee_type is AssigneeType.AI
        else None,
        idempotency_key=key,
        task_moved=moved_from is not None,
        task_status_before=moved_from,
        follow_up_task_id=None,
        review_comment=None,
        memory_record_id=None,
        rule_id=None,
        decided_by=None,
        decided_at=None,
        created_at=uow.now,
        updated_at=uow.now,
    )
    repo.add(draft)
    uow.record_event(
        "draft.submitted",
        actor=actor.as_payload(),
        payload={
            "draftId": draft.id,
            "taskId": task.id,
            "taskKey": task_key(project, task),
            "status": draft.status,
            "kind": kind,
            "via": via,
            "title": draft.title,
            "idempotencyKey": key,
            "taskMoved": draft.task_moved,
            "references": len(references),
            "contextReceiptId": receipt,
        },
        project_id=project.id,
        workspace_id=project.workspace_id,
    )
    return draft


def _apply_rule(uow: UnitOfWork, actor: Actor, draft: Draft, project: Project, task: Task) -> Draft:
    rule = matching_rule(uow, project.id, task, draft.role_id)
    if rule is None:
        return draft
    decided, _ = do_accept(
        uow,
        actor,
        draft,
        project,
        status=DraftStatus.ACCEPTED_BY_RULE,
        decided_by=rule_decider(rule.id),
        collection=rule.collection or draft.collection,
        document=rule.document or draft.document,
    )
    return decided


def _settle(
    uow: UnitOfWork,
    actor: Actor,
    kind: str,
    landed: tuple[Draft, Project, Task],
    reason: NotMoved | None,
) -> HandedIn:
    """Apply the project's review rule to a landed draft, then what the hand-in made."""
    draft, project, found = landed
    draft = _apply_rule(uow, actor, draft, project, found)
    task = uow.tasks.get(draft.task_id) if draft.task_id else None
    return HandedIn(
        kind=kind,
        row=DraftRow(draft, project, task_key(project, task) if task else None),
        task=task,
        task_moved=kind == "result" and reason is None,
        not_moved=reason,
        inputs_changed=context.changed_inputs(uow, draft.context_receipt_id)
        if draft.context_receipt_id
        else [],
    )


def _ack(answer: Answer, made: HandedIn) -> Ack:
    draft = made.row.draft
    return Ack(
        answer(made), resource_type="draft", resource_id=draft.id, project_id=draft.project_id
    )


def submit_result(
    db: Database,
    actor: Actor,
    *,
    project: str | None,
    workspace_id: WorkspaceRef,
    task: str,
    idempotency_key: str | None,
    expected_revision: int,
    context_receipt_id: str | None,
    title: str,
    summary: str = "",
    content: str,
    collection: str | None = None,
    document: str | None = None,
    references: Sequence[dict[str, Any]] | None = None,
    via: str = "mcp",
    answer: Answer,
    claim_fence: int | None = None,
) -> KeyedResult:
    """Hand in a finished task: the draft, the task to review, the references (keyed);
    `answer` words the result, and the ledger keeps that answer for a retry. Moving the task
    to review ends the caller's claim on it.

    Raises:
        ClaimLost: `claim_fence` is not the task's live claim of the caller's.
        NotFound: the task or project. PermissionDenied: without drafts.create and
            tasks.manage, or below the write role. ValidationFailed, LimitExceeded: a field,
            an unknown collection, a receipt of another read. IdempotencyConflict.
    """
    key = require_key(idempotency_key)
    check_via(via)
    texts = _check_texts(title, summary, content)
    refs = check_references(references)
    hand_in = _HandIn("result", texts, collection, _document(document), refs, key, via)
    arguments = {
        "projectId": project,
        "workspaceId": workspace_id,
        "taskId": task,
        "expectedRevision": expected_revision,
        "contextReceiptId": context_receipt_id,
        "title": title,
        "summary": summary,
        "content": content,
        "collection": collection,
        "document": document,
        "references": list(references or []),
    }

    def perform(uow: UnitOfWork) -> Ack:
        found, proj = access_task(
            uow,
            actor,
            task,
            project=project,
            scope=Scope.TASKS_MANAGE,
            role=Role.WRITE,
            workspace_id=workspace_id,
        )
        access_project(uow, actor, proj.id, scope=Scope.DRAFTS_CREATE, role=Role.WRITE)
        check_claim_fence(uow, actor, found, claim_fence)
        receipt = _receipt(uow, actor, context_receipt_id, found)
        reason = _stays(found, expected_revision)
        moved_from = found.status if reason is None else None
        draft = _land(uow, actor, (found, proj), hand_in, receipt=receipt, moved_from=moved_from)
        if reason is None:
            order = uow.tasks.next_board_order(proj.id, TaskStatus.REVIEW.value)
            moved = replace(found, status=TaskStatus.REVIEW, board_order=order)
            found = save_task(uow, actor, proj, found, moved, changed=["status"])
            let_go_on_hand_in(uow, actor, proj, found)
        return _ack(answer, _settle(uow, actor, "result", (draft, proj, found), reason))

    return keyed_write(db, actor, (key, "submit_result", arguments), perform)


def _stays(task: Task, expected_revision: int) -> NotMoved | None:
    """Why a hand-in leaves its task where it is, or None when it moves it to review."""
    if task.status not in MOVABLE:
        return NotMoved(
            "STATUS",
            task.status,
            task.revision,
            f"The task is {task.status}; a hand-in moves a task to review only from "
            "backlog, ready_for_ai or in_progress. The draft waits for review all the same.",
        )
    if task.revision != expected_revision:
        return NotMoved(
            "REVISION_CONFLICT",
            task.status,
            task.revision,
            f"The task is at revision {task.revision}, not {expected_revision}: it "
            "changed since you read it, so it stays where it is. The draft waits for review.",
        )
    return None


def _receipt(uow: UnitOfWork, actor: Actor, receipt: str | None, task: Task) -> str | None:
    if receipt is None:
        return None
    check_no_nul("contextReceiptId", receipt)
    return str(context.check_receipt(uow, actor, receipt, task))


def _document(document: str | None) -> str | None:
    if document is None:
        return None
    return str(memory.check_document(document, "document"))


def create_draft(
    db: Database,
    actor: Actor,
    *,
    task: str,
    project: str | None = None,
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
    idempotency_key: str | None = None,
    context_receipt_id: str | None = None,
    title: str,
    summary: str = "",
    content: str,
    collection: str | None = None,
    document: str | None = None,
    via: str = "mcp",
    answer: Answer,
) -> KeyedResult:
    """Land a draft for a task; the task itself stays as it is (key optional); `answer` words
    the result, as for `submit_result`.

    Raises:
        NotFound, PermissionDenied (without drafts.create or the write role),
            ValidationFailed, LimitExceeded, IdempotencyConflict.
    """
    check_via(via)
    texts = _check_texts(title, summary, content)
    hand_in = _HandIn("draft", texts, collection, _document(document), [], idempotency_key, via)
    arguments = {
        "projectId": project,
        "workspaceId": None if workspace_id is ANY_WORKSPACE else workspace_id,
        "taskId": task,
        "contextReceiptId": context_receipt_id,
        "title": title,
        "summary": summary,
        "content": content,
        "collection": collection,
        "document": document,
    }

    def perform(uow: UnitOfWork) -> Ack:
        found, proj = access_task(
            uow,
            actor,
            task,
            project=project,
            scope=Scope.DRAFTS_CREATE,
            role=Role.WRITE,
            workspace_id=workspace_id,
        )
        receipt = _receipt(uow, actor, context_receipt_id, found)
        draft = _land(uow, actor, (found, proj), hand_in, receipt=receipt, moved_from=None)
        return _ack(answer, _settle(uow, actor, "draft", (draft, proj, found), None))

    return keyed_write(db, actor, (idempotency_key, "create_draft", arguments), perform)


# --- reading drafts -------------------------------------------------------------------------------


def get_draft(db: Database, actor: Actor, draft_id: str) -> DraftRead:
    """One draft in full: content, references, task, whether its inputs changed since, the
    other versions of its chain, the follow-up task and the decision.

    Raises:
        NotFound: no such draft, or its project is not open to the actor.
    """

    def work(uow: UnitOfWork) -> DraftRead:
        draft, project = access_draft(uow, actor, draft_id)
        related = [i for i in (draft.task_id, draft.follow_up_task_id) if i]
        tasks = uow.tasks.get_many(related)
        task = tasks.get(draft.task_id) if draft.task_id else None
        follow = tasks.get(draft.follow_up_task_id) if draft.follow_up_task_id else None
        return DraftRead(
            row=DraftRow(draft, project, task_key(project, task) if task else None),
            task=task,
            follow_up=follow,
            inputs_changed=(
                context.changed_inputs(uow, draft.context_receipt_id)
                if draft.context_receipt_id
                else []
            ),
            versions=tuple(drafts_of(uow).chain(draft.root_task_id)),
        )

    result: DraftRead = db.read(work)
    return result


def list_drafts(
    db: Database,
    actor: Actor,
    *,
    project: str | None = None,
    statuses: Sequence[str] | None = None,
    limit: int = 50,
    offset: int = 0,
) -> DraftPage:
    """Drafts newest first (without content), of one project or every project open to the actor.

    Raises:
        ValidationFailed: an unknown status or a bad page. NotFound: the project.
    """
    wanted = (
        [str(s) for s in parse_enum_list(statuses, DraftStatus, "status")] if statuses else None
    )
    limit, offset = check_page(limit, offset)

    def work(uow: UnitOfWork) -> DraftPage:
        projects = open_projects(uow, actor, project, ANY_WORKSPACE)
        rows, total = drafts_of(uow).page(projects, statuses=wanted, limit=limit, offset=offset)
        return DraftPage(tuple(_rows(uow, rows, projects)), total, offset)

    result: DraftPage = db.read(work)
    return result


def _rows(uow: UnitOfWork, rows: list[Draft], projects: dict[str, Project]) -> list[DraftRow]:
    numbers = uow.tasks.numbers_of(d.task_id for d in rows if d.task_id)
    found = []
    for draft in rows:
        project = projects[draft.project_id]
        number = numbers.get(draft.task_id) if draft.task_id else None
        key = f"{project.key}-{number}" if number is not None else None
        found.append(DraftRow(draft, project, key))
    return found


def waiting_drafts(uow: UnitOfWork, project_ids: Sequence[str]) -> list[DraftRow]:
    """Hand-ins waiting for a person in these projects, newest first, each with inputsChanged
    and its earlier versions: one row per version chain (the same task and its follow-ups,
    handed in by the same seat or token), its newest waiting version."""
    if not project_ids:
        return []
    waiting, _ = drafts_of(uow).page(
        project_ids, statuses=[str(s) for s in WAITING], limit=200, offset=0
    )
    chains = drafts_of(uow).chains(d.root_task_id for d in waiting)
    shown: set[tuple[str, str]] = set()
    rows: list[Draft] = []
    earlier: dict[str, tuple[Draft, ...]] = {}
    for draft in waiting:  # newest first: the first of each chain and hand is its latest
        hand = (draft.root_task_id, hand_of(draft))
        if hand in shown:
            continue
        shown.add(hand)
        rows.append(draft)
        earlier[draft.id] = earlier_versions(draft, chains.get(draft.root_task_id, []))
    projects = {p: uow.projects.get(p) for p in {d.project_id for d in rows}}
    changed = context.changed_inputs_many(
        uow, [d.context_receipt_id for d in rows if d.context_receipt_id]
    )
    return [
        replace(
            row,
            inputs_changed=tuple(changed.get(row.draft.context_receipt_id, []))
            if row.draft.context_receipt_id
            else (),
            earlier=earlier[row.draft.id],
        )
        for row in _rows(uow, rows, {k: v for k, v in projects.items() if v is not None})
    ]


def check_via(via: str) -> str:
    """Raises: ValidationFailed when `via` is not a door name."""
    if via not in VIA:
        raise ValidationFailed.field("via", f"unknown value {via!r}.", list(VIA))
    return via
