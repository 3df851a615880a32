"""The words of spec sessions: the camelCase answers built from the services' records
(`domain/sessions`), in one place for MCP, REST, the CLI and the web pages. The 48 KiB
fitting of a list is `paged_reply`'s, of a working context `cut_text`'s; both act on these.

No answer carries a provider's key or a password written into its URL: a provider shows
where its key is read from, and its URL as `display_url` shows it.
"""

from __future__ import annotations

from typing import Any

from crewboard.domain.redaction import display_url
from crewboard.domain.sessions import (
    Decided,
    FirstTurn,
    ModelChoice,
    ModelConfig,
    ModelRead,
    PendingAction,
    ProjectModel,
    Provider,
    Session,
    SessionChanged,
    SessionChoices,
    SessionFound,
    SessionProposal,
    SessionScreen,
    SessionsPage,
    SessionStarted,
    ShownMessage,
    Turn,
)
from crewboard.services.views import iso


def session_url(public_url: str, project_key: str, session_id: str) -> str:
    return f"{public_url.rstrip('/')}/p/{project_key}/sessions/{session_id}"


def session_view(session: Session) -> dict[str, Any]:
    """A session's facts (never the conversation)."""
    return {
        "id": session.id,
        "projectId": session.project_id,
        "title": session.title,
        "mode": session.mode.value,
        "workflowId": session.workflow_id,
        "language": session.language.value,
        "modelId": session.model_id,
        "status": session.status.value,
        "pendingAction": session.pending_action.value,
        "archived": session.archived_at is not None,
        "archivedAt": iso(session.archived_at),
        "turnCount": session.turn_count,
        "messageCount": session.message_count,
        "usage": {"inputTokens": session.input_tokens, "outputTokens": session.output_tokens},
        "attachmentIds": list(session.attachment_ids),
        "specFileIds": list(session.spec_file_ids),
        "lastError": session.last_error,
        "createdBy": session.created_by,
        "createdAt": iso(session.created_at),
        "updatedAt": iso(session.updated_at),
    }


def page_answer(found: SessionsPage) -> dict[str, Any]:
    return {
        "sessions": [session_view(s) for s in found.sessions],
        "total": found.total,
        "nextOffset": found.next_offset,
    }


def found_answer(found: SessionFound, public_url: str) -> dict[str, Any]:
    """get_spec_session's answer (before any working context is added)."""
    return {
        "session": session_view(found.session),
        "sessionUrl": session_url(public_url, found.project_key, found.session.id),
        "warnings": list(found.warnings),
    }


def changed_answer(done: SessionChanged) -> dict[str, Any]:
    return {"session": session_view(done.session), "changed": done.changed}


def deleted_answer(session: Session) -> dict[str, Any]:
    return {"deleted": True, "sessionId": session.id}


def started_answer(made: SessionStarted) -> dict[str, Any]:
    """The acknowledgement a keyed start keeps in the ledger (a retry reads it back)."""
    return {"sessionId": made.session_id, "projectId": made.project_id, "turnId": made.turn_id,
            "projectKey": made.project_key}  # fmt: skip


NEXT_STEP = {
    PendingAction.TURN_STILL_RUNNING: (
        "The first reply is still being written; it finishes in the background. Give the "
        "person sessionUrl to follow it; do not start another session for the same goal."
    ),
    PendingAction.NONE: "Give the person sessionUrl to continue the session in the web app.",
}
HAND_OVER = (
    "The session now waits for the person: give them sessionUrl to continue in the web app. "
    "Do not answer the session's questions yourself."
)
WAITS_FOR_BRIDGE = (
    "The session reads the code through `crewboard reverse`, and none is connected for the "
    "person who started it (see warnings). Run it, or ask the person to, on the machine with "
    "the code: `crewboard reverse --project {key} <folder>`, with their token. The first "
    "reply then goes on by itself; give the person sessionUrl to follow it."
)
FIRST_TURN_FAILED = (
    "The session exists but its first reply could not run (see firstTurnError). Give the "
    "person sessionUrl: they can send the message again from the page once the cause is "
    "fixed. Do not start another session."
)


def first_turn_answer(first: FirstTurn, ack: dict[str, Any], public_url: str) -> dict[str, Any]:
    """What start_spec_session answers once its wait is over (`ack`: `started_answer`)."""
    session = first.session
    answer: dict[str, Any] = {
        "sessionUrl": session_url(public_url, ack["projectKey"], session.id),
        "sessionId": session.id,
        "projectId": session.project_id,
        "assistantText": first.assistant_text,
        "pendingAction": session.pending_action.value,
        "nextStepInstruction": NEXT_STEP.get(session.pending_action, HAND_OVER),
        "warnings": list(first.warnings),
    }
    if first.waits_for_bridge and not first.error:
        answer["nextStepInstruction"] = WAITS_FOR_BRIDGE.format(key=ack["projectKey"])
    if first.error:
        answer["firstTurnError"] = first.error
        answer["nextStepInstruction"] = FIRST_TURN_FAILED
    return answer


# --- the session page ---------------------------------------------------------------------------


def proposal_view(proposal: SessionProposal) -> dict[str, Any]:
    return {
        "id": proposal.id,
        "kind": proposal.kind.value,
        "status": proposal.status.value,
        "path": proposal.path,
        "baseVersion": proposal.base_version,
        "body": proposal.body,
        "createdAt": iso(proposal.created_at),
        "decidedBy": proposal.decided_by,
        "decidedAt": iso(proposal.decided_at),
        "feedback": proposal.feedback,
        "result": proposal.result,
    }


def message_view(message: ShownMessage) -> dict[str, Any]:
    return {"id": message.id, "role": message.role, "text": message.text,
            "notes": list(message.notes), "author": message.author,
            "at": iso(message.at)}  # fmt: skip


def turn_view(turn: Turn | None) -> dict[str, Any]:
    """The turn in progress or the last one (empty: none yet)."""
    if turn is None:
        return {}
    return {"id": turn.id, "status": turn.status.value, "partial": turn.partial,
            "error": turn.error, "attempts": turn.attempts}  # fmt: skip


def screen_view(shown: SessionScreen) -> dict[str, Any]:
    """Everything the session page shows, as its template reads it."""
    return {
        "session": session_view(shown.session),
        "project": {"id": shown.project_id, "key": shown.project_key, "name": shown.project_name},
        "canWrite": shown.can_write,
        "messages": [message_view(m) for m in shown.messages],
        "proposals": [proposal_view(p) for p in shown.proposals],
        "currentFiles": dict(shown.current_files),
        "turn": turn_view(shown.turn),
        "warnings": list(shown.warnings),
        "reads": reads_view(shown.reads),
    }


def read_view(read: ModelRead) -> dict[str, Any]:
    """One code call the model made: the tool, what it named, and what came back in short."""
    arguments, summary = read.arguments, read.summary
    return {
        "seq": read.seq,
        "tool": read.tool,
        "path": arguments.get("path"),
        "query": arguments.get("query"),
        "lines": summary.get("lines"),
        "matches": summary.get("matches"),
        "entries": summary.get("entries"),
        "refused": summary.get("error"),
        "status": read.status,
    }


def reads_view(reads: tuple[ModelRead, ...]) -> list[dict[str, Any]]:
    """The code calls grouped by turn, oldest turn first."""
    turns: dict[str, dict[str, Any]] = {}
    for read in reads:
        turn = turns.setdefault(read.turn_id, {"turnId": read.turn_id, "turnSeq": read.turn_seq,
                                               "calls": []})  # fmt: skip
        turn["calls"].append(read_view(read))
    return list(turns.values())


def queued_answer(turn: Turn) -> dict[str, Any]:
    return {"turnId": turn.id}


def decided_answer(done: Decided) -> dict[str, Any]:
    answer: dict[str, Any] = {"turnId": done.turn_id, "waiting": done.waiting}
    if done.file_id is not None:
        answer |= {"fileId": done.file_id, "revision": done.revision}
    return answer


# --- models -------------------------------------------------------------------------------------


def key_source(provider: Provider) -> str | None:
    if provider.key_env:
        return f"env:{provider.key_env}"
    if provider.key_file:
        return f"file:{provider.key_file}"
    return None


def provider_view(provider: Provider) -> dict[str, Any]:
    """A provider as shown to its owner: where its key is read from, never the key."""
    return {
        "id": provider.id,
        "kind": provider.kind,
        "baseUrl": display_url(provider.base_url),
        "keyFrom": key_source(provider),
        "timeoutSeconds": provider.timeout_seconds,
        "maxRetries": provider.max_retries,
        "stream": provider.stream,
        "updatedAt": iso(provider.updated_at),
    }


def model_view(model: ModelChoice) -> dict[str, Any]:
    return {"id": model.id, "providerId": model.provider_id, "model": model.model,
            "label": model.label, "maxTokens": model.max_tokens,
            "isDefault": model.is_default}  # fmt: skip


def config_view(config: ModelConfig) -> dict[str, Any]:
    return {"providers": [provider_view(p) for p in config.providers],
            "models": [model_view(m) for m in config.models]}  # fmt: skip


def choices_view(choices: SessionChoices) -> dict[str, Any]:
    return {
        "models": [model_view(m) for m in choices.models],
        "projectModel": choices.project_model,
        "canWrite": choices.can_write,
        "canAdmin": choices.can_admin,
    }


def project_model_answer(chosen: ProjectModel) -> dict[str, Any]:
    return {"projectId": chosen.project_id, "modelId": chosen.model_id}
