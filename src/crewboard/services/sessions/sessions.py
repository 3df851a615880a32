"""Spec sessions: start one, find them, rename, archive, unarchive and delete them.

Starting writes the session, the opening message and its first turn in one transaction; the
turn is work queued in the database, which a runner (`runner.py`) on any node claims. What
the person does next on the session page (write, answer, choose, decide on a proposal) is in
`conversation.py`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from crewboard.domain.identity.access import Role, Scope
from crewboard.domain.identity.records import Actor
from crewboard.domain.ids import new_id
from crewboard.domain.projects import ProjectAccess
from crewboard.domain.sessions import (
    PAGE_MAX,
    ArchiveFilter,
    FirstTurn,
    Language,
    Message,
    Mode,
    PendingAction,
    Session,
    SessionChanged,
    SessionFound,
    SessionsPage,
    SessionStarted,
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
from crewboard.services.sessions.notices import session_warnings, waits_for_bridge
from crewboard.services.sessions.workflows import check_workflow
from crewboard.services.specs.attachments import attachments_of
from crewboard.services.specs.file_lookup import files_of
from crewboard.services.views import stamp_of
from crewboard.storage.database import Database
from crewboard.storage.sessions.repository import SessionRepository
from crewboard.storage.uow import UnitOfWork

TURN_QUEUED = "spec_session.turn_queued"  # the runners wake on it


def sessions_of(uow: UnitOfWork) -> SessionRepository:
    return SessionRepository(uow.conn)


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
    answer: Callable[[SessionStarted], dict[str, Any]],
) -> KeyedResult:
    """A new session with its opening message and first turn queued (keyed: a retry after a
    timeout answers the same session, so the ledger keeps `answer`, the door's wording of
    what was made). Everything is checked before anything is written.

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
            made = SessionStarted(session.id, session.project_id, turn.id, access.project.key)
            return Ack(
                answer(made), resource_type="spec_session", resource_id=session.id,
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
) -> SessionsPage:
    """A project's sessions, most recently active first.

    Raises:
        ValidationFailed: limit outside 1..20, negative offset. NotFound.
    """
    check_page(limit, offset, PAGE_MAX)
    wanted = (query or "").strip()[:200] or None

    def work(uow: UnitOfWork) -> SessionsPage:
        access = access_project(uow, actor, project, workspace_id=workspace_id)
        items, total = sessions_of(uow).page(
            access.project.id, archive=archive, status=status, query=wanted, limit=limit,
            offset=offset,
        )  # fmt: skip
        return SessionsPage(tuple(items), total, next_offset(offset, len(items), total))

    return db.read(work)


def get_session(
    db: Database,
    actor: Actor,
    *,
    project: str,
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
    ref: str,
) -> SessionFound:
    """One session's facts, what it waits for and what it warns of.

    Raises:
        NotFound.
    """

    def work(uow: UnitOfWork) -> SessionFound:
        session, access = find_session(
            uow, actor, project=project, ref=ref, workspace_id=workspace_id
        )
        return SessionFound(session, access.project.key, tuple(session_warnings(uow, session)))

    return db.read(work)


def waiting_for_bridge(db: Database, session_id: str) -> bool:
    """Whether a new session's first turn waits for its creator's `crewboard reverse`: then
    start_spec_session answers at once, with the warning that says what to run, rather than
    after its whole wait for a reply that cannot come before the bridge does."""

    def work(uow: UnitOfWork) -> bool:
        session = sessions_of(uow).get(session_id)
        return session is not None and waits_for_bridge(uow, session)

    return db.read(work)


def first_turn(db: Database, *, session_id: str, turn_id: str) -> FirstTurn:
    """A new session once start_spec_session's wait is over: the first reply as far as it
    got, and why the first turn failed if it did.

    Raises:
        NotFound: the session was deleted meanwhile (archived, then deleted, by someone).
    """

    def work(uow: UnitOfWork) -> FirstTurn:
        repo = sessions_of(uow)
        session = repo.get(session_id)
        if session is None:
            raise not_found(session_id)
        turn = repo.turn(turn_id)
        failed = turn is not None and turn.status is TurnStatus.FAILED
        error = turn.error if failed and turn is not None else None
        return FirstTurn(
            session, _first_reply(uow, session, turn), error,
            tuple(session_warnings(uow, session)), waits_for_bridge(uow, session),
        )  # fmt: skip

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
) -> SessionChanged:
    def work(uow: UnitOfWork) -> SessionChanged:
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
        return SessionChanged(after, bool(values))

    return db.write(work)


def rename_session(
    db: Database, actor: Actor, *, project: str, workspace_id: WorkspaceRef, ref: str, title: str
) -> SessionChanged:
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
) -> SessionChanged:
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
) -> Session:
    """Delete an archived session, its conversation, turns and proposals (the session as it
    was is returned). Spec files saved from it stay.

    Raises:
        ValidationFailed: the session is not archived (it is never archived for you).
        NotFound, PermissionDenied.
    """

    def work(uow: UnitOfWork) -> Session:
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
        return session

    return db.write(work)
