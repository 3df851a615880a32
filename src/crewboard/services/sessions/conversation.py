"""The person's side of a session (the session page): read the conversation, write, answer the
interview, pick an option, take or dismiss review findings, accept a proposed file or send it
back, and send again after a failed turn.

Every one of these is a person's decision, so each refuses tokens (`require_signed_in_person`):
an AI may start a session and hand its link on, never answer it or accept what it wrote. A
decision closes its proposal; once nothing waits any more, the decisions are written to the
model as the person's next message and a turn is queued.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from crewboard.domain.identity.access import Role, Scope
from crewboard.domain.identity.records import Actor
from crewboard.domain.projects import ProjectAccess
from crewboard.domain.sessions import (
    MAX_FEEDBACK,
    Decided,
    Message,
    ModelConfig,
    Session,
    SessionChoices,
    SessionProposal,
    SessionProposalKind,
    SessionProposalStatus,
    SessionScreen,
    ShownMessage,
    Turn,
    TurnStatus,
    answers_message,
    check_message,
    parse_reply,
    pending_action_of,
)
from crewboard.errors import (
    LimitExceeded,
    NotFound,
    PermissionDenied,
    RevisionConflict,
    ValidationFailed,
)
from crewboard.services.identity.access import access_project, require_signed_in_person
from crewboard.services.sessions.models import config_of, config_read, models_of
from crewboard.services.sessions.notices import model_reads, session_warnings
from crewboard.services.sessions.sessions import do_queue_turn, find_session, sessions_of
from crewboard.services.specs.file_lookup import files_of
from crewboard.services.specs.file_saves import do_create_file, do_update_file
from crewboard.services.views import stamp_of
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork


def session_page(db: Database, actor: Actor, *, project: str, ref: str) -> SessionScreen:
    """Everything the session page shows: the facts, the conversation (the model's replies as
    prose), the proposals, and the turn in progress or the last one.

    Raises:
        NotFound.
    """

    def work(uow: UnitOfWork) -> SessionScreen:
        session, access = find_session(uow, actor, project=project, ref=ref)
        repo = sessions_of(uow)
        # The turn first: on PostgreSQL each statement of a read sees the newest commit, so a
        # turn read as ended guarantees that the reply, the proposals and the session's status
        # written in the same transaction are there for the reads after it.
        turn = repo.latest_turn(session.id)
        session = repo.get(session.id) or session
        return SessionScreen(
            session=session, project_id=access.project.id, project_key=access.project.key,
            project_name=access.project.name, can_write=access.role.includes(Role.WRITE),
            messages=tuple(_shown(m) for m in repo.messages(session.id)),
            proposals=tuple(repo.proposals(session.id)),
            current_files=_current_files(uow, session), turn=turn,
            warnings=tuple(session_warnings(uow, session)), reads=model_reads(uow, session),
        )  # fmt: skip

    return db.read(work)


def _shown(message: Message) -> ShownMessage:
    """A message as the page shows it: the model's reply as prose, with its notes."""
    shown = message.content
    notes: tuple[str, ...] = ()
    if message.role == "assistant":
        parsed = parse_reply(message.content)
        shown, notes = parsed.text, tuple(parsed.notes)
    return ShownMessage(message.id, message.role, shown, notes, message.author, message.created_at)


def _current_files(uow: UnitOfWork, session: Session) -> dict[str, str | None]:
    """Each pending file proposal's file as it is now (None: a new file), for the diff."""
    files: dict[str, str | None] = {}
    for proposal in sessions_of(uow).proposals(session.id, [SessionProposalStatus.PENDING]):
        if proposal.kind is SessionProposalKind.FILE and proposal.path:
            existing = files_of(uow).get_by_path(session.project_id, proposal.path)
            files[proposal.id] = (
                None if existing is None else uow.blobs.read(existing.digest).decode(
                    "utf-8", errors="replace")
            )  # fmt: skip
    return files


def _open(
    uow: UnitOfWork, actor: Actor, project: str, ref: str, action: str
) -> tuple[Session, ProjectAccess]:
    require_signed_in_person(actor, action)
    return find_session(
        uow, actor, project=project, ref=ref, scope=Scope.SPECS_WRITE, role=Role.WRITE,
        for_update=True,
    )  # fmt: skip


def _idle(uow: UnitOfWork, session: Session, limit: int) -> None:
    """Raises: Conflict while a turn runs; LimitExceeded once the session ran its turns."""
    if sessions_of(uow).queued_or_running(session.id) is not None:
        raise RevisionConflict(
            "The model is still writing its reply; wait for it, then go on.",
            {"sessionId": session.id, "status": session.status.value},
        )
    if session.turn_count >= limit:
        raise LimitExceeded(
            f"This session has run its {limit} turns; start a new session to go on.",
            {"limit": limit, "actual": session.turn_count},
        )


def send_message(
    db: Database, actor: Actor, *, project: str, ref: str, text: str, turn_limit: int
) -> Turn:
    """The person writes; what still waited (questions, a choice) is set aside, proposed files
    stay open. Queues the model's turn.

    Raises:
        Conflict (a turn runs), LimitExceeded, ValidationFailed, NotFound, PermissionDenied.
    """
    message = check_message(text, "message")

    def work(uow: UnitOfWork) -> Turn:
        session, access = _open(uow, actor, project, ref, "Writing in a spec session")
        _idle(uow, session, turn_limit)
        sessions_of(uow).supersede_pending(session.id, uow.now)
        return do_queue_turn(uow, actor, session, access, text=message)

    return db.write(work)


def resend(db: Database, actor: Actor, *, project: str, ref: str, turn_limit: int) -> Turn:
    """Run the last message again after a turn failed (a provider configured meanwhile).

    Raises:
        ValidationFailed: the last turn did not fail. Conflict, LimitExceeded, NotFound.
    """

    def work(uow: UnitOfWork) -> Turn:
        session, access = _open(uow, actor, project, ref, "Sending again")
        _idle(uow, session, turn_limit)
        last = sessions_of(uow).latest_turn(session.id)
        if last is None or last.status is not TurnStatus.FAILED:
            raise ValidationFailed(
                "Only a failed turn can be sent again; this session's last turn did not fail.",
                {"field": "turn"},
            )
        return do_queue_turn(uow, actor, session, access, text=None)

    return db.write(work)


def _proposal(
    uow: UnitOfWork, session: Session, proposal_id: str, kind: SessionProposalKind
) -> SessionProposal:
    found = sessions_of(uow).proposal(proposal_id)
    if found is None or found.session_id != session.id or found.kind is not kind:
        raise NotFound(
            f"No {kind.value} proposal {proposal_id!r} in this session.",
            {"resource": "sessionProposal", "ref": proposal_id},
        )
    if found.status is not SessionProposalStatus.PENDING:
        raise RevisionConflict(
            f"This proposal was already decided ({found.status.value}).",
            {"proposalId": found.id, "status": found.status.value},
        )
    return found


def _decided(
    uow: UnitOfWork,
    actor: Actor,
    session: Session,
    access: ProjectAccess,
    proposal: SessionProposal,
    *,
    status: SessionProposalStatus,
    message: str,
    feedback: str | None = None,
    result: dict[str, Any] | None = None,
    turn_limit: int,
) -> Decided:
    """Close the proposal; once none waits, tell the model what the person decided."""
    repo = sessions_of(uow)
    if not repo.decide(
        proposal.id,
        status,
        decided_by=stamp_of(uow, actor),
        decided_at=uow.now,
        feedback=feedback,
        result={**(result or {}), "message": message},
    ):
        raise RevisionConflict("This proposal was decided meanwhile.", {"proposalId": proposal.id})  # fmt: skip
    still = repo.proposals(session.id, [SessionProposalStatus.PENDING])
    if still:
        kinds = {p.kind for p in still}
        repo.change(session.id, pending_action=pending_action_of(kinds, running=False).value,
                    updated_at=uow.now)  # fmt: skip
        return Decided(None, len(still))
    if session.turn_count >= turn_limit:
        repo.change(session.id, pending_action="none", updated_at=uow.now)
        return Decided(None, 0)
    decided = [
        str(p.result["message"])
        for p in repo.proposals(session.id, [SessionProposalStatus.ACCEPTED, SessionProposalStatus.SENT_BACK,
                                             SessionProposalStatus.ANSWERED])
        if p.turn_id == proposal.turn_id and p.result and p.result.get("message")
    ]  # fmt: skip
    turn = do_queue_turn(uow, actor, session, access, text="\n\n".join(decided) or message)
    return Decided(turn.id, 0)


def answer_questions(
    db: Database,
    actor: Actor,
    *,
    project: str,
    ref: str,
    proposal_id: str,
    answers: dict[str, Any],
    turn_limit: int,
) -> Decided:
    """The person's answers to the interview form.

    Raises:
        ValidationFailed (an answer not among its options), Conflict, NotFound.
    """

    def work(uow: UnitOfWork) -> Decided:
        session, access = _open(uow, actor, project, ref, "Answering a session's questions")
        proposal = _proposal(uow, session, proposal_id, SessionProposalKind.QUESTIONS)
        text = answers_message(proposal.body["questions"], answers)
        return _decided(uow, actor, session, access, proposal, status=SessionProposalStatus.ANSWERED,
                        message=text, result={"answers": answers}, turn_limit=turn_limit)  # fmt: skip

    return db.write(work)


def choose(
    db: Database,
    actor: Actor,
    *,
    project: str,
    ref: str,
    proposal_id: str,
    option: str,
    turn_limit: int,
) -> Decided:
    """The option the person picked.

    Raises:
        ValidationFailed (not an option), Conflict, NotFound.
    """

    def work(uow: UnitOfWork) -> Decided:
        session, access = _open(uow, actor, project, ref, "Choosing in a session")
        proposal = _proposal(uow, session, proposal_id, SessionProposalKind.CHOICE)
        options = list(proposal.body["options"])
        if option not in options:
            raise ValidationFailed.field("option", f"{option!r} is not an option.", options)
        return _decided(uow, actor, session, access, proposal, status=SessionProposalStatus.ANSWERED,
                        message=f"I choose: {option}", result={"option": option},
                        turn_limit=turn_limit)  # fmt: skip

    return db.write(work)


def decide_review(
    db: Database,
    actor: Actor,
    *,
    project: str,
    ref: str,
    proposal_id: str,
    accepted: list[str],
    turn_limit: int,
) -> Decided:
    """Which review findings the person takes (the others are dismissed).

    Raises:
        ValidationFailed (an unknown finding), Conflict, NotFound.
    """

    def work(uow: UnitOfWork) -> Decided:
        session, access = _open(uow, actor, project, ref, "Deciding on review findings")
        proposal = _proposal(uow, session, proposal_id, SessionProposalKind.REVIEW)
        items = {item["id"]: item for item in proposal.body["items"]}
        unknown = [i for i in accepted if i not in items]
        if unknown:
            raise ValidationFailed.field("accepted", f"{unknown[0]!r} is not a finding.",
                                         sorted(items))  # fmt: skip
        taken = [items[i]["text"] for i in items if i in accepted]
        dismissed = [items[i]["text"] for i in items if i not in accepted]
        lines = ["Review findings:"]
        lines += [f"- apply: {t}" for t in taken] + [f"- dismiss: {t}" for t in dismissed]
        return _decided(uow, actor, session, access, proposal, status=SessionProposalStatus.ACCEPTED,
                        message="\n".join(lines), result={"accepted": accepted},
                        turn_limit=turn_limit)  # fmt: skip

    return db.write(work)


def accept_file(
    db: Database, actor: Actor, *, project: str, ref: str, proposal_id: str, turn_limit: int
) -> Decided:
    """Save a proposed file as the person's revision, noting the session it came from. A file
    saved by someone since it was proposed is not overwritten: the person sends the proposal
    back instead, and the model proposes it again from the newer text.

    Raises:
        RevisionConflict (the file moved on), AlreadyExists (a file appeared at the path),
        Conflict, NotFound, PermissionDenied.
    """

    def work(uow: UnitOfWork) -> Decided:
        session, access = _open(uow, actor, project, ref, "Accepting a proposed spec file")
        proposal = _proposal(uow, session, proposal_id, SessionProposalKind.FILE)
        assert proposal.path is not None  # noqa: S101 - every file proposal has its path
        content = str(proposal.body["content"]).encode("utf-8")
        via = {"sessionId": session.id, "sessionTitle": session.title, "proposalId": proposal.id}
        if proposal.base_version is None:
            file = do_create_file(uow, actor, access=access, path=proposal.path,
                                  content=content, via=via)  # fmt: skip
            revision, version = 1, file.content_version
        else:
            current = files_of(uow).get_by_path(session.project_id, proposal.path)
            if current is None:
                raise NotFound(
                    f"{proposal.path} is gone (deleted since it was proposed); send the "
                    "proposal back.", {"resource": "specFile", "ref": proposal.path},
                )  # fmt: skip
            file, saved = do_update_file(uow, actor, file=current, access=access,
                                         content=content, expected=proposal.base_version,
                                         via=via)  # fmt: skip
            revision, version = saved.revision, saved.content_version
        done = _decided(
            uow, actor, session, access, proposal, status=SessionProposalStatus.ACCEPTED,
            message=f"I accepted {proposal.path}; it is saved (revision {revision}).",
            result={"fileId": file.id, "revision": revision, "contentVersion": version},
            turn_limit=turn_limit,
        )  # fmt: skip
        return replace(done, file_id=file.id, revision=revision)

    return db.write(work)


def send_back_file(
    db: Database,
    actor: Actor,
    *,
    project: str,
    ref: str,
    proposal_id: str,
    feedback: str,
    turn_limit: int,
) -> Decided:
    """Return a proposed file with what should change; nothing is saved.

    Raises:
        ValidationFailed (no feedback), LimitExceeded, Conflict, NotFound.
    """
    said = feedback.strip()
    if not said or "\x00" in said:
        raise ValidationFailed.field("feedback", "say what should change.")
    if len(said) > MAX_FEEDBACK:
        raise LimitExceeded(
            f"feedback: {len(said)} characters is over the limit of {MAX_FEEDBACK}.",
            {"field": "feedback", "limit": MAX_FEEDBACK, "actual": len(said)},
        )

    def work(uow: UnitOfWork) -> Decided:
        session, access = _open(uow, actor, project, ref, "Sending a proposed file back")
        proposal = _proposal(uow, session, proposal_id, SessionProposalKind.FILE)
        return _decided(
            uow, actor, session, access, proposal, status=SessionProposalStatus.SENT_BACK,
            message=f"Please change {proposal.path} and propose it again:\n{said}",
            feedback=said, turn_limit=turn_limit,
        )  # fmt: skip

    return db.write(work)


def session_choices(db: Database, actor: Actor, *, project: str) -> SessionChoices:
    """What the new-session and default-model forms offer: the configured models (never a
    provider or where its key is), the project's default, and what the actor may do here.

    Raises:
        NotFound.
    """

    def work(uow: UnitOfWork) -> SessionChoices:
        access = access_project(uow, actor, project)
        repo = config_of(uow)
        return SessionChoices(
            models_of(repo), repo.project_model(access.project.id),
            can_write=access.role.includes(Role.WRITE),
            can_admin=access.role.includes(Role.ADMIN),
        )  # fmt: skip

    return db.read(work)


def owner_model_config(db: Database, actor: Actor) -> ModelConfig:
    """Every provider and model for the owner's settings page (`list_config` checks no one:
    the CLI calls it too); where a key is read from, never a key.

    Raises:
        PermissionDenied: not the server's owner, or through a token.
    """

    def work(uow: UnitOfWork) -> ModelConfig:
        user = uow.users.get(actor.user_id)
        if user is None or not user.is_owner or actor.token is not None:
            raise PermissionDenied(
                "Only the server's owner configures model providers.", {"requiredRole": "owner"}
            )
        return config_read(config_of(uow))

    return db.read(work)
