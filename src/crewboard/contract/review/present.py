"""Hand-ins in words: the one place that turns the typed draft results of `services/review`
(drafts and the decisions about them) into the camelCase answers every door gives: MCP, REST,
the CLI's JSON and the web app's inbox."""

from __future__ import annotations

from typing import Any

from crewboard.domain.board.tasks import Task
from crewboard.domain.projects import Project
from crewboard.domain.review import (
    AcceptanceRule,
    Decided,
    DecisionKind,
    Draft,
    DraftPage,
    DraftRead,
    DraftRow,
    HandedIn,
    NotMoved,
    XpGain,
    earlier_versions,
)
from crewboard.services.board.views import task_key
from crewboard.services.paging import next_offset
from crewboard.services.review.decisions import public_stamp
from crewboard.services.views import iso


def draft_view(row: DraftRow) -> dict[str, Any]:
    """A draft as every door shows it; `content` only when it was loaded, `inputsChanged`
    only where the list that read it looked."""
    draft = row.draft
    view: dict[str, Any] = {
        "id": draft.id,
        "projectId": draft.project_id,
        "workspaceId": row.project.workspace_id,
        "taskId": draft.task_id,
        "taskKey": row.task_key,
        "rootTaskId": draft.root_task_id,
        "title": draft.title,
        "summary": draft.summary,
        "collection": draft.collection,
        "document": draft.document,
        "references": draft.references,
        "contextReceiptId": draft.context_receipt_id,
        "status": draft.status,
        "via": draft.via,
        "author": draft.author,
        "roleId": draft.role_id,
        "idempotencyKey": draft.idempotency_key,
        "taskMoved": draft.task_moved,
        "taskStatusBefore": draft.task_status_before,
        "followUpTaskId": draft.follow_up_task_id,
        "reviewComment": draft.review_comment,
        "memoryRecordId": draft.memory_record_id,
        "ruleId": draft.rule_id,
        "decidedBy": public_stamp(draft.decided_by),
        "decidedAt": iso(draft.decided_at),
        "createdAt": iso(draft.created_at),
        "updatedAt": iso(draft.updated_at),
    }
    if draft.content is not None:
        view["content"] = draft.content
    if row.inputs_changed is not None:
        view["inputsChanged"] = list(row.inputs_changed)
    if row.earlier is not None:
        view["version"] = len(row.earlier) + 1
        view["earlierVersions"] = [version_view(d) for d in row.earlier]
    return view


def version_view(draft: Draft) -> dict[str, Any]:
    """An earlier (or later) version of a hand-in, as its list names it."""
    return {
        "id": draft.id,
        "taskId": draft.task_id,
        "status": draft.status,
        "createdAt": iso(draft.created_at),
        "reviewComment": draft.review_comment,
        "decidedBy": public_stamp(draft.decided_by),
    }


def task_brief_view(task: Task | None, project: Project) -> dict[str, Any] | None:
    """What a hand-in's answers say about its task (None without one)."""
    if task is None:
        return None
    return {
        "id": task.id,
        "key": task_key(project, task),
        "title": task.title,
        "status": str(task.status),
        "revision": task.revision,
    }


def draft_read_view(read: DraftRead) -> dict[str, Any]:
    """One draft in full (`get_draft`)."""
    draft, project = read.row.draft, read.row.project
    return {
        **draft_view(read.row),
        "task": task_brief_view(read.task, project),
        "followUpTask": task_brief_view(read.follow_up, project),
        "inputsChanged": read.inputs_changed,
        "versions": [
            {"id": d.id, "taskId": d.task_id, "status": d.status, "createdAt": iso(d.created_at)}
            for d in read.versions
        ],
        "earlierVersions": [version_view(d) for d in earlier_versions(draft, read.versions)],
        "decision": {
            "status": draft.status,
            "decidedBy": public_stamp(draft.decided_by),
            "decidedAt": iso(draft.decided_at),
            "comment": draft.review_comment,
        }
        if draft.decided_at is not None
        else None,
    }


def draft_page_view(page: DraftPage) -> dict[str, Any]:
    return {
        "drafts": [draft_view(row) for row in page.rows],
        "total": page.total,
        "nextOffset": next_offset(page.offset, len(page.rows), page.total),
    }


def _not_moved_view(reason: NotMoved | None) -> dict[str, Any] | None:
    if reason is None:
        return None
    return {
        "code": reason.code,
        "status": str(reason.status),
        "currentRevision": reason.current_revision,
        "message": reason.message,
    }


def hand_in_view(made: HandedIn) -> dict[str, Any]:
    """The answer of `submit_result` and `create_draft` (kept by the idempotency ledger)."""
    draft = made.row.draft
    view = {k: v for k, v in draft_view(made.row).items() if k != "content"}
    moved: dict[str, Any] = {"taskMoved": made.task_moved}
    if made.kind == "result":
        moved["taskNotMovedReason"] = _not_moved_view(made.not_moved)
    return {
        "draft": view,
        "task": task_brief_view(made.task, made.row.project),
        **moved,
        "acceptedByRule": draft.rule_id,
        "inputsChanged": made.inputs_changed,
    }


def xp_view(xp: XpGain | None) -> dict[str, Any] | None:
    return None if xp is None else xp.as_payload()


def decided_view(decided: Decided) -> dict[str, Any]:
    """The answer of a person's decision: the draft now, its task, and what the decision did."""
    extra: dict[str, Any] = {}
    if decided.kind is DecisionKind.APPROVE:
        extra = {"memoryRecordId": decided.row.draft.memory_record_id, "xp": xp_view(decided.xp)}
    elif decided.kind is DecisionKind.REVISE:
        extra = {"followUpTaskId": decided.follow_up_task_id}
    elif decided.kind in (DecisionKind.UNDO, DecisionKind.UNDO_DECISION):
        extra = {
            "removedMemoryRecordId": decided.removed_memory_record_id,
            "xp": xp_view(decided.xp),
        }
    return {
        "draft": draft_view(decided.row),
        "task": task_brief_view(decided.task, decided.row.project),
        **extra,
    }


def rule_view(rule: AcceptanceRule) -> dict[str, Any]:
    """An acceptance rule: worded as its events name it."""
    return rule.as_payload()
