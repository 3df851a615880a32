"""What a turn sends the model: the workflow's instructions, the session's working context
(the spec files and attachments it names, and the files accepted in it, as they are now), and
the conversation so far."""

from __future__ import annotations

import re
from collections.abc import Iterable
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
    accepted in it; then what its workflow adds (the project's spec files under its context
    folders, the next free feature number). Bounded: a file past its room is cut, with a note
    saying so."""
    flow = workflows().get(session.workflow_id) or default_workflow(session.mode)
    files, accepted = _session_files(uow, session)
    room = _Room()
    parts = [room.show(uow, file) for file in files.values()]
    parts += _attachments(uow, session, room)
    sections = ["## Files this session works on\n\n" + "\n".join(parts)] if parts else []
    for folder in flow.context_folders:
        shown = _folder_files(uow, session.project_id, folder, skip=set(files), room=room)
        if shown:
            sections.append(f"## The project's spec files under {folder}/\n\n" + "\n".join(shown))
    if flow.next_number_in is not None:
        sections.append(_feature_number(uow, session, flow.next_number_in, accepted))
    if not sections:
        return ""
    body = "\n\n".join(sections)
    return body.encode("utf-8")[:MAX_CONTEXT].decode("utf-8", errors="ignore")


def _session_files(uow: UnitOfWork, session: Session) -> tuple[dict[str, SpecFile], list[str]]:
    """The session's files by id (started with, then accepted), and the accepted ones' paths."""
    files: dict[str, SpecFile] = {}
    accepted: list[str] = []
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
                accepted.append(found.path)
    return files, accepted


class _Room:
    """What is left of CONTEXT_ROOM as files are shown."""

    def __init__(self) -> None:
        self.used = 0

    def show(self, uow: UnitOfWork, file: SpecFile) -> str:
        data = uow.blobs.read(file.digest)
        shown, cut = data[:FILE_ROOM], len(data) > FILE_ROOM
        if self.used + len(shown) > CONTEXT_ROOM:
            return f"### {file.path}\n(not shown: the context is full)\n"
        self.used += len(shown)
        note = f"\n(cut after {FILE_ROOM} bytes of {len(data)})" if cut else ""
        text = shown.decode("utf-8", errors="replace")
        return f"### {file.path} (contentVersion {file.content_version})\n{text}{note}\n"


def _attachments(uow: UnitOfWork, session: Session, room: _Room) -> list[str]:
    parts: list[str] = []
    for ident in session.attachment_ids:
        item = attachments_of(uow).get(ident)
        if item is None:
            continue
        if item.kind is AttachmentKind.TEXT and room.used < CONTEXT_ROOM:
            data = uow.blobs.read(item.digest)[:FILE_ROOM]
            room.used += len(data)
            parts.append(f"### Attachment {item.name}\n{data.decode('utf-8', errors='replace')}\n")
        else:
            parts.append(f"### Attachment {item.name} ({item.media_type}; not readable here)\n")
    return parts


FOLDER_FILES = 200  # files of one context folder shown (the rest are left out, with a note)


def _folder_files(
    uow: UnitOfWork, project_id: str, folder: str, *, skip: set[str], room: _Room
) -> list[str]:
    """The project's spec files under `folder` (path order), as the session's files show."""
    found, total = files_of(uow).page(
        project_id, prefix=folder.rstrip("/") + "/", trashed=False, limit=FOLDER_FILES, offset=0
    )
    parts = [room.show(uow, file) for file in found if file.id not in skip]
    if total > len(found):
        parts.append(f"({total - len(found)} more files under {folder}/ are not shown.)\n")
    return parts


_NUMBERED = re.compile(r"^(\d{3,})-[^/]+$")


def _numbered(path: str, prefix: str) -> tuple[int, str] | None:
    """The number and name of the `NNN-name` folder right under `prefix` that holds `path`."""
    if not path.startswith(prefix) or "/" not in path[len(prefix) :]:
        return None
    name = path[len(prefix) :].split("/", 1)[0]
    hit = _NUMBERED.match(name)
    return (int(hit[1]), name) if hit else None


def next_feature_number(paths: Iterable[str], folder: str) -> int:
    """One past the highest number of the `NNN-name` folders right under `folder` that hold
    one of these file paths (1 when there is none)."""
    prefix = folder.rstrip("/") + "/"
    return max((hit[0] for p in paths if (hit := _numbered(p, prefix))), default=0) + 1


def _feature_number(uow: UnitOfWork, session: Session, folder: str, accepted: list[str]) -> str:
    """The note naming the folder the session writes in: the numbered folder its accepted
    files already opened, else the next free number among the project's folders."""
    root = folder.rstrip("/")
    own = sorted(hit[1] for p in accepted if (hit := _numbered(p, root + "/")))
    if own:
        return (
            f"## Feature number\n\nThis session's feature folder is {root}/{own[0]}/: keep "
            "every file of this session in it."
        )
    paths = files_of(uow).paths(session.project_id, root + "/")
    number = f"{next_feature_number(paths, root):03d}"
    return (
        f"## Feature number\n\nThe next free feature number is {number}: this session's "
        f"folder is {root}/{number}-short-name/ (short-name naming the feature)."
    )


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
