"""The activity stream in words: each event's one-line summary and the camelCase entry for
the typed entries of `services/review/activity` (MCP, REST, the CLI) and of the web app's
activity page (`services/review/activity_page`)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from crewboard.domain.review import ActivityEntry, ActivityRead, EventRow, ShownEntry
from crewboard.services.review.activity import ANSWER, HAND_IN, cursor_of
from crewboard.services.views import iso

# A decision's details an entry repeats from its event, when the event has them.
DECISION_FIELDS = ("followUpTaskId", "commentPreview", "ruleId", "supersededBy")

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
    "task.claimed": "claimed {task} until {until}",
    "task.claim_released": "let go of the claim on {task}",
    "task.claim_lapsed": "ended the claim of {holder} on {task}: it was not renewed in time",
    "task.claim_broken": "broke the claim of {holder} on {task}",
    "draft.submitted": "handed in {task} for review",
    "draft.approved": "approved the hand-in for {task}",
    "draft.saved_to_memory": "approved the hand-in for {task} and saved it to memory",
    "draft.rejected": "rejected the hand-in for {task}",
    "draft.revision_requested": "asked for a revision of {task}",
    "draft.accepted_by_rule": "an acceptance rule accepted the hand-in for {task}",
    "draft.returned_to_review": "returned the hand-in for {task} to review",
    "draft.superseded": "closed an older hand-in for {task}: a newer one was accepted",
    "draft.decision_undone": "took back the decision on the hand-in for {task}",
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
    "webhook.created": "added a webhook",
    "webhook.updated": "changed a webhook",
    "webhook.deleted": "deleted a webhook",
    "webhook.secret_rotated": "gave a webhook a new signing secret",
    "webhook.delivery_queued": "queued a webhook delivery by hand",
    "webhook.paused": "paused a webhook whose deliveries failed for a day",
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


def _part(payload: dict[str, Any], name: str) -> dict[str, Any]:
    value = payload.get(name)
    return value if isinstance(value, dict) else {}


def _quoted(text: object) -> str:
    return f"“{text}”" if text else ""


def summary(event: EventRow) -> str:
    """What happened, in one line: its task (key and title) and what the event says."""
    payload = event.payload
    task = _part(payload, "task")
    key = payload.get("taskKey") or task.get("key")
    title = payload.get("title") or task.get("title")
    named = " ".join(part for part in (key, f"“{title}”" if title else None) if part)
    changed = payload.get("changed")
    role = _part(payload, "role")
    claim = _part(payload, "claim")
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
        holder=_part(claim, "holder").get("by") or "its holder",
        until=_clock(claim.get("expiresAt")),
    ).strip()


def _clock(moment: object) -> str:
    """A lease's end as a line says it: 14:05 UTC."""
    if not isinstance(moment, str):
        return "its lease ran out"
    return datetime.fromisoformat(moment).astimezone(UTC).strftime("%H:%M UTC")


def entry_view(entry: ActivityEntry) -> dict[str, Any]:
    """One entry: a hand-in's with its draft's status now, and its key when it is the reader's;
    an answer's with its question and preview."""
    event = entry.event
    payload = event.payload
    task = _part(payload, "task")
    view: dict[str, Any] = {
        "id": cursor_of(event.id),
        "type": event.type,
        "at": iso(event.created_at),
        "actor": event.actor,
        "projectId": event.project_id,
        "taskId": event.task_id,
        "taskKey": payload.get("taskKey") or task.get("key"),
        "summary": summary(event),
    }
    if event.type == ANSWER:
        return view | {
            "questionId": payload.get("questionId"),
            "answerPreview": payload.get("excerpt"),
            "mine": entry.mine,
        }
    if not event.type.startswith(HAND_IN):
        return view
    draft = entry.hand_in
    view |= {
        "draftId": payload.get("draftId"),
        "draftStatus": draft.status if draft else payload.get("status"),
        "mine": entry.mine,
    }
    if entry.mine and draft is not None:
        view["idempotencyKey"] = draft.idempotency_key
    return view | {name: payload[name] for name in DECISION_FIELDS if payload.get(name)}


def _shown_view(shown: ShownEntry) -> dict[str, Any]:
    return entry_view(shown.entry) | {"by": shown.by, "changed": shown.changed}


def activity_read_view(read: ActivityRead) -> dict[str, Any]:
    """The web activity page's read: entries with who acted, the cursor of older entries, the
    time now, and the people and agents the "who" filter offers."""
    return {
        "entries": [_shown_view(e) for e in read.entries],
        "older": read.older,
        "now": iso(read.now),
        "people": [{"id": user_id, "name": name} for user_id, name in read.people],
        "agents": [
            {
                "id": a.id,
                "name": a.name,
                "tokenName": a.token_name,
                "for": a.owner,
                "revoked": a.revoked,
            }
            for a in read.agents
        ],
    }
