"""Spec sessions: start one, find them, rename, archive, unarchive and delete them.

Starting writes the session, the opening message and its first turn in one transaction; the
turn is work queued in the database, which a runner (`runner.py`) on any node claims. What
the person does next on the session page (write, answer, choose, decide on a proposal) is in
`conversation.py`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from crewboard.domain.identity.access import Role, Scope
from crewboard.domain.identity.records import Actor
from crewboard.domain.ids import new_id
from crewboard.domain.projects import ProjectAccess
from crewboard.domain.sessions import (
    PAGE_MAX,
    ArchiveFilter,
    Language,
    Message,
    Mode,
    PendingAction,
    Session,
    Status,
    Turn,
    TurnStatus,
    check_message,
    check_references,
    check_title,
    default_title,
    parse_reply,
)
from crewboard.errors import NotFound, ValidationFailed
from crewboard.services.idempotency import Ack, KeyedResult, do_keyed_write
from crewboard.services.identity.access import ANY_WORKSPACE, WorkspaceRef, access_project
from crewboard.services.paging import check_page, next_offset
from crewboard.services.sessions.models import check_model_choice
from crewboard.services.sessions.workflows import check_workflow
from crewboard.services.specs.attachments import attachments_of
from crewboard.services.specs.file_lookup import files_of
from crewboard.services.views import iso, stamp_of
from crewboard.storage.database import Database
from crewboard.storage.sessions.repository import SessionRepository
from crewboard.storage.uow import UnitOfWork

TURN_QUEUED = "spec_session.turn_queued"  # the runners wake on it


def sessions_of(uow: UnitOfWork) -> SessionRepository:
    return SessionRepository(uow.conn)


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


def not_found(ref: str) -> NotFound:
    return NotFound(
        f"No session {ref!r} in this project; list_spec_sessions shows them.",
        {"resource": "specSession", "ref": ref},
    )


def find_session(
    uow: UnitOfWork,
    actor: Actor,
    *,
    project: str,
    ref: str,
    scope: Scope = Scope.READ,
    role: Role = Role.READ,
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
    for_update: bool = False,
) -> tuple[Session, ProjectAccess]:
    """A session of a project the actor may act on this way.

    Raises:
        NotFound, PermissionDenied.
    """
    access = access_project(uow, actor, project, scope=scope, role=role, workspace_id=workspace_id)
    found = None
    if ref.startswith("ses_") and "\x00" not in ref:
        found = sessions_of(uow).get(ref, for_update=for_update)
    if found is None or found.project_id != access.project.id:
        raise not_found(ref)
    return found, access


# --- starting -----------------------------------------------------------------------------------


def _check_refs(
    uow: UnitOfWork, project_id: str, attachment_ids: Sequence[str], spec_file_ids: Sequence[str]
) -> None:
    """Raises: ValidationFailed naming the first id that is not the project's."""
    for n, ident in enumerate(attachment_ids):
        item = attachments_of(uow).get(ident) if ident.startswith("att_") else None
        if item is None or item.project_id != project_id:
            raise ValidationFailed.field(
                f"attachmentIds[{n}]",
                f"{ident!r} is not an attachment of this project; list_attachments shows them.",
            )
    for n, ident in enumerate(spec_file_ids):
        file = files_of(uow).get(ident) if ident.startswith("spf_") else None
        if file is None or file.project_id != project_id or file.trashed_at is not None:
            raise ValidationFailed.field(
                f"specFileIds[{n}]",
                f"{ident!r} is not a spec file of this project (trashed files do not count); "
                "list_spec_files shows them.",
            )


def start_session(
    db: Database,
    actor: Actor,
    *,
    project: str,
    workspace_id: WorkspaceRef,
    mode: Mode,
    prompt: str,
    workflow_id: str | None = None,
    language: Language = Language.EN,
    model_id: str | None = None,
    attachment_ids: Sequence[str] = (),
    spec_file_ids: Sequence[str] = (),
    title: str | None = None,
    idempotency_key: str | None = None,
) -> KeyedResult:
    """A new session with its opening message and first turn queued (keyed: a retry after a
    timeout answers the same session). Everything is checked before anything is written.

    Raises:
        ValidationFailed (unknown workflow, model or reference, with what is accepted),
        LimitExceeded, NotFound, PermissionDenied, IdempotencyConflict.
    """
    opening = check_message(prompt, "prompt")
    flow = check_workflow(workflow_id, mode)
    named = check_title(title) if title is not None else default_title(opening)
    attachments = check_references(list(attachment_ids), "attachmentIds")
    files = check_references(list(spec_file_ids), "specFileIds")

    def work(uow: UnitOfWork) -> KeyedResult:
        access = access_project(
            uow, actor, project, scope=Scope.SPECS_WRITE, role=Role.WRITE,
            workspace_id=workspace_id,
        )  # fmt: skip
        model = check_model_choice(uow, model_id)
        _check_refs(uow, access.project.id, attachments, files)

        def perform() -> Ack:
            session = Session(
                id=new_id("ses"), project_id=access.project.id, title=named, mode=mode,
                workflow_id=flow.id, language=language, model_id=model,
                status=Status.RUNNING, pending_action=PendingAction.TURN_STILL_RUNNING,
                attachment_ids=attachments, spec_file_ids=files, turn_count=0,
                message_count=0, input_tokens=0, output_tokens=0, provider_seconds=0.0,
                created_by=stamp_of(uow, actor), created_at=uow.now, updated_at=uow.now,
            )  # fmt: skip
            sessions_of(uow).add(session)
            turn = do_queue_turn(uow, actor, session, access, text=opening, first=True)
            return Ack(
                {"sessionId": session.id, "projectId": session.project_id, "turnId": turn.id,
                 "projectKey": access.project.key},
                resource_type="spec_session", resource_id=session.id,
                project_id=session.project_id,
            )  # fmt: skip

        return do_keyed_write(
            uow, actor, key=idempotency_key, operation="start_spec_session",
            arguments={"project": access.project.id, "mode": mode.value, "prompt": opening,
                       "workflow": flow.id, "language": language.value, "model": model,
                       "attachments": list(attachments), "files": list(files),
                       "title": title},
            perform=perform,
        )  # fmt: skip

    return db.write(work)


def do_queue_turn(
    uow: UnitOfWork,
    actor: Actor,
    session: Session,
    access: ProjectAccess,
    *,
    text: str | None,
    first: bool = False,
) -> Turn:
    """Add the person's (or agent's) message and queue the turn that answers it (`text` None:
    answer the last message again, after a failed turn)."""
    repo = sessions_of(uow)
    messages = session.message_count
    if text is not None:
        messages += 1
        repo.add_message(
            Message(id=new_id("ssm"), session_id=session.id, seq=messages, role="user",
                    content=text, author=stamp_of(uow, actor), created_at=uow.now)
        )  # fmt: skip
    turn = Turn(
        id=new_id("stn"), session_id=session.id, project_id=session.project_id,
        seq=session.turn_count + 1, status=TurnStatus.QUEUED, model_id=session.model_id,
        attempts=0, partial="", error=None, input_tokens=0, output_tokens=0,
        provider_seconds=0.0, queued_at=uow.now,
    )  # fmt: skip
    repo.add_turn(turn)
    repo.change(
        session.id, message_count=messages, turn_count=session.turn_count + 1,
        status=Status.RUNNING.value, pending_action=PendingAction.TURN_STILL_RUNNING.value,
        last_error=None, updated_at=uow.now,
    )  # fmt: skip
    uow.record_event(
        "spec_session.started" if first else TURN_QUEUED,
        actor=actor.as_payload(),
        payload={"sessionId": session.id, "turnId": turn.id, "title": session.title,
                 "mode": session.mode.value, "workflowId": session.workflow_id},
        project_id=session.project_id,
        workspace_id=access.project.workspace_id,
    )  # fmt: skip
    return turn


# --- reading ------------------------------------------------------------------------------------


def list_sessions(
    db: Database,
    actor: Actor,
    *,
    project: str,
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
    archive: ArchiveFilter = ArchiveFilter.ACTIVE,
    status: Status | None = None,
    query: str | None = None,
    limit: int = 10,
    offset: int = 0,
) -> dict[str, Any]:
    """A project's sessions, most recently active first.

    Raises:
        ValidationFailed: limit outside 1..20, negative offset. NotFound.
    """
    check_page(limit, offset, PAGE_MAX)
    wanted = (query or "").strip()[:200] or None

    def work(uow: UnitOfWork) -> dict[str, Any]:
        access = access_project(uow, actor, project, workspace_id=workspace_id)
        items, total = sessions_of(uow).page(
            access.project.id, archive=archive, status=status, query=wanted, limit=limit,
            offset=offset,
        )  # fmt: skip
        return {
            "sessions": [session_view(s) for s in items],
            "total": total,
            "nextOffset": next_offset(offset, len(items), total),
        }

    return db.read(work)


def get_session(
    db: Database,
    actor: Actor,
    *,
    project: str,
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
    ref: str,
) -> dict[str, Any]:
    """One session's facts and what it waits for.

    Raises:
        NotFound.
    """

    def work(uow: UnitOfWork) -> dict[str, Any]:
        session, access = find_session(
            uow, actor, project=project, ref=ref, workspace_id=workspace_id
        )
        return {"session": session_view(session), "projectKey": access.project.key}

    return db.read(work)


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


def first_turn_answer(db: Database, ack: dict[str, Any], public_url: str) -> dict[str, Any]:
    """What start_spec_session answers once its wait is over: the first reply as far as it
    got, what the session waits for, and why the first turn failed if it did."""

    def work(uow: UnitOfWork) -> dict[str, Any]:
        repo = sessions_of(uow)
        session = repo.get(ack["sessionId"])
        if session is None:  # deleted meanwhile (archived, then deleted, by someone)
            raise not_found(ack["sessionId"])
        turn = repo.turn(ack["turnId"])
        answer: dict[str, Any] = {
            "sessionUrl": session_url(public_url, ack["projectKey"], session.id),
            "sessionId": session.id,
            "projectId": session.project_id,
            "assistantText": _first_reply(uow, session, turn),
            "pendingAction": session.pending_action.value,
            "nextStepInstruction": NEXT_STEP.get(session.pending_action, HAND_OVER),
        }
        if turn is not None and turn.status is TurnStatus.FAILED and turn.error:
            answer["firstTurnError"] = turn.error
            answer["nextStepInstruction"] = (
                "The session exists but its first reply could not run (see firstTurnError). "
                "Give the person sessionUrl: they can send the message again from the page "
                "once the cause is fixed. Do not start another session."
            )
        return answer

    return db.read(work)


def _first_reply(uow: UnitOfWork, session: Session, turn: Turn | None) -> str:
    if turn is None:
        return ""
    if turn.status in (TurnStatus.QUEUED, TurnStatus.RUNNING):
        return turn.partial
    replies = [m for m in sessions_of(uow).messages(session.id) if m.role == "assistant"]
    return parse_reply(replies[0].content).text if replies else ""


# --- renaming, archiving, deleting ----------------------------------------------------------------


def _change(
    db: Database,
    actor: Actor,
    *,
    project: str,
    workspace_id: WorkspaceRef,
    ref: str,
    event: str,
    apply: Any,
) -> dict[str, Any]:
    def work(uow: UnitOfWork) -> dict[str, Any]:
        session, access = find_session(
            uow, actor, project=project, ref=ref, scope=Scope.SPECS_WRITE, role=Role.WRITE,
            workspace_id=workspace_id, for_update=True,
        )  # fmt: skip
        values = apply(uow, session)
        if values:
            sessions_of(uow).change(session.id, **values)
            uow.record_event(
                event, actor=actor.as_payload(),
                payload={"sessionId": session.id, "title": values.get("title", session.title)},
                project_id=session.project_id, workspace_id=access.project.workspace_id,
            )  # fmt: skip
        after = sessions_of(uow).get(session.id)
        assert after is not None  # noqa: S101 - locked above
        return {"session": session_view(after), "changed": bool(values)}

    return db.write(work)


def rename_session(
    db: Database, actor: Actor, *, project: str, workspace_id: WorkspaceRef, ref: str, title: str
) -> dict[str, Any]:
    """A new title (archived sessions too).

    Raises:
        ValidationFailed, LimitExceeded, NotFound, PermissionDenied.
    """
    named = check_title(title, "title")

    def apply(uow: UnitOfWork, session: Session) -> dict[str, Any]:
        return {} if named == session.title else {"title": named, "updated_at": uow.now}

    return _change(db, actor, project=project, workspace_id=workspace_id, ref=ref,
                   event="spec_session.renamed", apply=apply)  # fmt: skip


def set_archived(
    db: Database,
    actor: Actor,
    *,
    project: str,
    workspace_id: WorkspaceRef,
    ref: str,
    archived: bool,
) -> dict[str, Any]:
    """Archive or unarchive (idempotent: a second call changes nothing).

    Raises:
        NotFound, PermissionDenied.
    """

    def apply(uow: UnitOfWork, session: Session) -> dict[str, Any]:
        if (session.archived_at is not None) == archived:
            return {}
        return {"archived_at": uow.now if archived else None, "updated_at": uow.now}

    event = "spec_session.archived" if archived else "spec_session.unarchived"
    return _change(db, actor, project=project, workspace_id=workspace_id, ref=ref,
                   event=event, apply=apply)  # fmt: skip


def delete_session(
    db: Database, actor: Actor, *, project: str, workspace_id: WorkspaceRef, ref: str
) -> dict[str, Any]:
    """Delete an archived session, its conversation, turns and proposals. Spec files saved
    from it stay.

    Raises:
        ValidationFailed: the session is not archived (it is never archived for you).
        NotFound, PermissionDenied.
    """

    def work(uow: UnitOfWork) -> dict[str, Any]:
        session, access = find_session(
            uow, actor, project=project, ref=ref, scope=Scope.SPECS_WRITE, role=Role.WRITE,
            workspace_id=workspace_id, for_update=True,
        )  # fmt: skip
        if session.archived_at is None:
            raise ValidationFailed(
                f"sessionId: {session.id} is active; archive it first "
                "(archive_spec_session), then delete it.",
                {"field": "sessionId", "archived": False},
            )
        sessions_of(uow).delete(session.id)
        uow.record_event(
            "spec_session.deleted", actor=actor.as_payload(),
            payload={"sessionId": session.id, "title": session.title},
            project_id=session.project_id, workspace_id=access.project.workspace_id,
        )  # fmt: skip
        return {"deleted": True, "sessionId": session.id}

    return db.write(work)
