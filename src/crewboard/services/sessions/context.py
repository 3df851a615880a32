"""What a turn sends the model: the workflow's instructions, the session's working context
(the spec files and attachments it names, and the files accepted in it, as they are now), and
the conversation so far."""

from __future__ import annotations

from dataclasses import dataclass

from crewboard.domain.identity.records import Actor
from crewboard.domain.sessions import (
    MAX_CONTEXT,
    Session,
    SessionProposalKind,
    SessionProposalStatus,
)
from crewboard.domain.specs import AttachmentKind, SpecFile
from crewboard.services.identity.access import ANY_WORKSPACE, WorkspaceRef
from crewboard.services.sessions.providers import ChatMessage
from crewboard.services.sessions.sessions import find_session, sessions_of
from crewboard.services.sessions.workflows import default_workflow, workflows
from crewboard.services.specs.attachments import attachments_of
from crewboard.services.specs.file_lookup import files_of
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork

FILE_ROOM = 120_000  # bytes of one file the model is shown
CONTEXT_ROOM = 600_000  # bytes of all of them (the rest are named, not shown)


@dataclass(frozen=True)
class Prepared:
    system: str
    messages: tuple[ChatMessage, ...]
    context: str


def working_context(uow: UnitOfWork, session: Session) -> str:
    """The files the session works on, as they are now: those it was started with, then those
    accepted in it. Bounded: a file past its room is cut, with a note saying so."""
    files: dict[str, SpecFile] = {}
    repo = files_of(uow)
    for ident in session.spec_file_ids:
        found = repo.get(ident)
        if found is not None and found.trashed_at is None:
            files[found.id] = found
    for proposal in sessions_of(uow).proposals(session.id, [SessionProposalStatus.ACCEPTED]):
        if proposal.kind is SessionProposalKind.FILE and proposal.result:
            found = repo.get(str(proposal.result.get("fileId")))
            if found is not None and found.trashed_at is None:
                files[found.id] = found
    parts: list[str] = []
    used = 0
    for file in files.values():
        data = uow.blobs.read(file.digest)
        shown, cut = data[:FILE_ROOM], len(data) > FILE_ROOM
        if used + len(shown) > CONTEXT_ROOM:
            parts.append(f"### {file.path}\n(not shown: the context is full)\n")
            continue
        used += len(shown)
        note = f"\n(cut after {FILE_ROOM} bytes of {len(data)})" if cut else ""
        text = shown.decode("utf-8", errors="replace")
        parts.append(f"### {file.path} (contentVersion {file.content_version})\n{text}{note}\n")
    for ident in session.attachment_ids:
        item = attachments_of(uow).get(ident)
        if item is None:
            continue
        if item.kind is AttachmentKind.TEXT and used < CONTEXT_ROOM:
            data = uow.blobs.read(item.digest)[:FILE_ROOM]
            used += len(data)
            parts.append(f"### Attachment {item.name}\n{data.decode('utf-8', errors='replace')}\n")
        else:
            parts.append(f"### Attachment {item.name} ({item.media_type}; not readable here)\n")
    if not parts:
        return ""
    body = "## Files this session works on\n\n" + "\n".join(parts)
    return body.encode("utf-8")[:MAX_CONTEXT].decode("utf-8", errors="ignore")


def prepare(uow: UnitOfWork, session: Session) -> Prepared:
    """The request's instructions and messages for the session's next turn."""
    flow = workflows().get(session.workflow_id) or default_workflow(session.mode)
    context = working_context(uow, session)
    system = flow.system_prompt(session.language)
    if context:
        system = f"{system}\n\n{context}"
    messages = tuple(
        ChatMessage(role="assistant" if m.role == "assistant" else "user", content=m.content)
        for m in sessions_of(uow).messages(session.id)
    )
    return Prepared(system=system, messages=messages, context=context)


def session_context(
    db: Database,
    actor: Actor,
    *,
    project: str,
    ref: str,
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
) -> str:
    """The session's working context as the model sees it now (at most 1 MiB).

    Raises:
        NotFound.
    """

    def work(uow: UnitOfWork) -> str:
        session, _access = find_session(
            uow, actor, project=project, ref=ref, workspace_id=workspace_id
        )
        return working_context(uow, session)

    return db.read(work)
