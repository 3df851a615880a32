"""The activity stream: the work log of the projects an actor can open, with the AI hand-ins and
what people decided about each, newest first, or oldest first after a cursor to keep polling.

A cursor is "act_" and an event id in base 36: entries after it are the events written later.
Hand-in entries carry the draft's id and current status, never its text.
"""

from __future__ import annotations

import re
from typing import Any

from crewboard.domain.identity.records import Actor
from crewboard.domain.review import EventRow, HandIn
from crewboard.errors import ValidationFailed
from crewboard.services.board.task_lookup import access_task
from crewboard.services.identity.access import ANY_WORKSPACE, WorkspaceRef, open_projects
from crewboard.services.paging import check_limit
from crewboard.services.views import iso
from crewboard.storage.database import Database
from crewboard.storage.review.activity import ActivityRepository, EventQuery
from crewboard.storage.uow import UnitOfWork

MAX_LIMIT = 100
MAX_CURSOR = 200
CURSOR = re.compile(r"^act_([0-9a-z]{1,13})$")
HAND_IN = "draft."
ANSWER = "task.question_answered"
# What `mine` lists: this token's hand-ins with their decisions, and answers to its questions.
MINE = (HAND_IN, ANSWER)
# Identity and access bookkeeping, and a person clearing their own inbox: not what a team
# follows.
# Notifications are one person's, not the project's story.
NOISE = ("user.", "token.", "workspace.", "message.dismissed", "notification.")
DECISION_FIELDS = ("followUpTaskId", "commentPreview", "ruleId", "supersededBy")
_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"

SUMMARIES = {
    "task.created": "created {task}",
    "task.updated": "changed {task}{changed}",
    "task.deleted": "deleted {task}",
    "task.comment_posted": "commented on {task}",
    "task.agent_update_posted": "posted a progress note on {task}",
    "task.output_saved": "saved output {name} on {task}",
    "task.question_asked": "asked a question on {task}",
    "task.question_answered": "answered a question on {task}",
    "task.repo_linked": "linked a branch to {task}",
    "task.repo_status_reported": "reported repository status on {task}",
    "draft.submitted": "handed in {task} for review",
    "draft.approved": "approved the hand-in for {task}",
    "draft.saved_to_memory": "approved the hand-in for {task} and saved it to memory",
    "draft.rejected": "rejected the hand-in for {task}",
    "draft.revision_requested": "asked for a revision of {task}",
    "draft.accepted_by_rule": "an acceptance rule accepted the hand-in for {task}",
    "draft.returned_to_review": "returned the hand-in for {task} to review",
    "draft.superseded": "closed an older hand-in for {task}: a newer one was accepted",
    "proposal.created": "proposed {kind}",
    "proposal.accepted": "accepted a proposed {kind}",
    "proposal.dismissed": "dismissed a proposed {kind}",
    "message.posted": "posted a message",
    "state.updated": "updated the project state page",
    "state.restored": "restored an earlier project state page",
    "team.role_added": "added role {role}",
    "team.role_archived": "archived role {role}",
    "project.member_set": "changed who is on the project",
    "project.created": "created the project",
    "project.updated": "changed the project's settings",
    "project.archived": "archived the project",
    "project.unarchived": "brought the project back from the archive",
    "project.deleted": "deleted the project",
    "repo.added": "added the repository {repo}",
    "memory.record_added": "added the memory record {record}",
    "memory.record_updated": "edited the memory record {record}",
    "memory.record_removed": "removed the memory record {record}",
    "memory.document_saved": "saved the project document {document}",
    "oauth.grant_created": "connected an app through OAuth",
    "oauth.grant_revoked": "disconnected an app connected through OAuth",
    "stream_token.created": "made a live-events token",
    "stream_token.revoked": "revoked a live-events token",
    "spec_file.created": "added spec file {path}",
    "spec_file.updated": "saved revision {revision} of {path}",
    "spec_file.trashed": "moved {path} to the trash",
    "spec_file.restored": "restored {path} from the trash",
    "spec_comment.thread_opened": "opened a comment thread on {path}",
    "spec_comment.replied": "replied in a comment thread on {path}",
    "spec_comment.updated": "edited a comment on {path}",
    "spec_comment.deleted": "deleted a comment on {path}",
    "spec_comment.resolved": "resolved a comment thread on {path}",
    "spec_comment.reopened": "reopened a comment thread on {path}",
    "spec_comment.orphaned": "a comment thread on {path} lost the passage it was on",
    "attachment.added": "attached {name}",
    "attachment.replaced": "replaced the attachment {name}",
    "artifact.created": "created artifact {slug}",
    "artifact.revised": "saved revision {revision} of artifact {slug}",
    "handoff.created": "wrote the handoff for {date}",
    "handoff.updated": "changed a handoff",
    "handoff_action_item.created": "added an action item to a handoff",
    "handoff_action_item.updated": "changed a handoff's action item",
    "handoff_action_item.assigned": "assigned a handoff's action item",
    "spec_session.started": "started the spec session {title}",
    "spec_session.turn_queued": "wrote in the spec session {title}",
    "spec_session.turn_ended": "a spec session's turn ended ({status})",
    "spec_session.renamed": "renamed a spec session to {title}",
    "spec_session.archived": "archived the spec session {title}",
    "spec_session.unarchived": "brought back the spec session {title}",
    "spec_session.deleted": "deleted the spec session {title}",
}


# --- cursors -------------------------------------------------------------------------------


def cursor_of(event_id: int) -> str:
    digits = ""
    value = event_id
    while True:
        value, rest = divmod(value, 36)
        digits = _DIGITS[rest] + digits
        if value == 0:
            return f"act_{digits}"


def parse_cursor(since: str, field: str = "since") -> int:
    """Raises: ValidationFailed naming `field` for anything list_activity did not issue."""
    match = CURSOR.match(since) if len(since) <= MAX_CURSOR else None
    if match is None:
        raise ValidationFailed.field(
            field,
            "is not a cursor from list_activity; pass the cursor an earlier answer gave, "
            "or leave it out for the newest entries.",
        )
    return int(match.group(1), 36)


# --- entries -------------------------------------------------------------------------------


def _part(payload: dict[str, Any], name: str) -> dict[str, Any]:
    value = payload.get(name)
    return value if isinstance(value, dict) else {}


def _quoted(text: object) -> str:
    return f"“{text}”" if text else ""


def _summary(event: EventRow) -> str:
    payload = event.payload
    task = _part(payload, "task")
    key = payload.get("taskKey") or task.get("key")
    title = payload.get("title") or task.get("title")
    named = " ".join(part for part in (key, f"“{title}”" if title else None) if part)
    changed = payload.get("changed")
    role = _part(payload, "role")
    template = SUMMARIES.get(event.type)
    if template is None:
        words = event.type.replace(".", " ").replace("_", " ")
        return f"{words} {key}" if key else words
    return template.format(
        task=named or "a task",
        changed=f": {', '.join(changed)}" if isinstance(changed, list) and changed else "",
        name=payload.get("name", ""),
        kind=str(payload.get("kind", "change")).replace("_", " "),
        role=role.get("name", ""),
        path=payload.get("path", ""),
        repo=_part(payload, "repo").get("name", ""),
        record=_quoted(_part(payload, "record").get("title")),
        document=_part(payload, "document").get("name", ""),
        revision=payload.get("revision", ""),
        slug=payload.get("slug", ""),
        date=payload.get("date", ""),
        title=_quoted(title),
        status=str(payload.get("status", "")).replace("_", " "),
    ).strip()


def entry_of(event: EventRow, actor: Actor, hand_ins: dict[str, HandIn]) -> dict[str, Any]:
    """One event as an activity entry (hand-ins with their draft's current status)."""
    payload = event.payload
    task = _part(payload, "task")
    entry: dict[str, Any] = {
        "id": cursor_of(event.id),
        "type": event.type,
        "at": iso(event.created_at),
        "actor": event.actor,
        "projectId": event.project_id,
        "taskId": event.task_id,
        "taskKey": payload.get("taskKey") or task.get("key"),
        "summary": _summary(event),
    }
    if event.type == ANSWER:
        token = actor.token.id if actor.token else None
        return entry | {
            "questionId": payload.get("questionId"),
            "answerPreview": payload.get("excerpt"),
            "mine": token is not None and token == event.token_id,
        }
    if not event.type.startswith(HAND_IN):
        return entry
    draft = hand_ins.get(str(payload.get("draftId")))
    token = actor.token.id if actor.token else None
    mine = token is not None and token in (event.token_id, draft.token_id if draft else None)
    entry |= {
        "draftId": payload.get("draftId"),
        "draftStatus": draft.status if draft else payload.get("status"),
        "mine": mine,
    }
    if mine and draft is not None:
        entry["idempotencyKey"] = draft.idempotency_key
    return entry | {name: payload[name] for name in DECISION_FIELDS if payload.get(name)}


def list_activity(
    db: Database,
    actor: Actor,
    *,
    project: str | None = None,
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
    limit: int = 20,
    since: str | None = None,
    mine: bool = False,
    task: str | None = None,
) -> tuple[list[dict[str, Any]], str]:
    """Activity entries and the cursor to poll from next.

    Without `since`: the newest entries, newest first. With it: the entries after it, oldest
    first. The cursor is the newest entry's (or `since` when nothing is new; act_0 at first).
    `mine`: only this token's hand-ins and the decisions about them, and the answers to the
    questions it asked. `task`: id or key.

    Raises:
        ValidationFailed: limit outside 1-100 or a cursor list_activity did not issue.
        NotFound: the project or task is not open to the actor.
    """
    check_limit(limit, MAX_LIMIT)
    after_id = parse_cursor(since) if since is not None else None

    def work(uow: UnitOfWork) -> tuple[list[dict[str, Any]], str]:
        ids = list(open_projects(uow, actor, project, workspace_id))
        task_id = None
        if task is not None:
            found, owner = access_task(uow, actor, task, workspace_id=workspace_id)
            if project is not None and owner.id not in ids:
                ids = []
            task_id = found.id
        if mine and actor.token is None:
            ids = []  # a person's own hand-ins: none, hand-ins come through tokens
        query = EventQuery(
            project_ids=ids,
            limit=limit,
            noise=NOISE,
            task_id=task_id,
            token_id=actor.token.id if mine and actor.token else None,
            only_prefixes=MINE if mine else (),
            after_id=after_id,
        )
        repo = ActivityRepository(uow.conn)
        events = repo.events(query)
        hand_ins = repo.hand_ins(
            str(e.payload["draftId"])
            for e in events
            if e.type.startswith(HAND_IN) and e.payload.get("draftId")
        )
        entries = [entry_of(e, actor, hand_ins) for e in events]
        return entries, next_cursor(entries, since, oldest_first=after_id is not None)

    return db.read(work)


def next_cursor(entries: list[dict[str, Any]], since: str | None, *, oldest_first: bool) -> str:
    """The newest entry's cursor; `since` (or act_0) when there is none."""
    if not entries:
        return since or cursor_of(0)
    newest = entries[-1] if oldest_first else entries[0]
    return str(newest["id"])
