"""The session runner: one per process, it runs the spec session turns queued in the database.

A turn is a row; starting a session or sending a message queues one in the writer's
transaction. Runners claim queued turns under a lease (on PostgreSQL with `FOR UPDATE SKIP
LOCKED`, so two nodes never claim one), call the model, and write the reply, its proposals and
the tokens spent in one transaction that first checks the claim is still theirs. While the
model writes, the runner saves the reply so far and renews the lease every few tenths of a
second, so the session page can stream it from any node.

A node that dies mid-turn stops renewing; once the lease runs out another runner (or this one,
restarted) claims the turn again and runs it from the start. The finishing write names the
claim, so a runner that lost its turn never writes a second reply: a turn completes once.

Every reader of the project sees what a turn leaves (its error on the session, the turn and
the event; the reply so far and the reply), so the runner is where that text is scrubbed
before it is stored: of the provider's key and base-URL password in any encoding, and (in
errors) of credentials in URLs (`crewboard.domain.redaction`). `_fail` is the one writer of a
turn's error; `_renew` and `_finish` the writers of its reply.

A session whose workflow reads code first waits (its lease renewed) for its creator's
`crewboard reverse` bridge, then runs its rounds with the code tools (`turn_loop.py`).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import anyio
from anyio import to_thread

from crewboard.config import Settings
from crewboard.domain.files import normalise_path
from crewboard.domain.ids import new_id
from crewboard.domain.redaction import Redactor
from crewboard.domain.sessions import (
    Message,
    PendingAction,
    Session,
    SessionProposal,
    SessionProposalKind,
    SessionProposalStatus,
    Status,
    Turn,
    TurnStatus,
    over_budget,
    parse_reply,
    pending_action_of,
)
from crewboard.errors import CrewboardError
from crewboard.services.sessions.code import CODE_TOOLS, BridgeGone
from crewboard.services.sessions.context import prepare
from crewboard.services.sessions.models import NoModel, ResolvedModel, resolve_model
from crewboard.services.sessions.notices import (
    bridge_command,
    creator_id,
    no_tools_notice,
    reads_code,
)
from crewboard.services.sessions.providers import (
    Completion,
    ModelProvider,
    ModelRequest,
    ProviderConfig,
    ProviderError,
    redactor_for,
)
from crewboard.services.sessions.providers.adapters import provider_for
from crewboard.services.sessions.sessions import TURN_QUEUED, sessions_of
from crewboard.services.sessions.turn_loop import CodeTools, Reading, Reply, Rounds
from crewboard.services.specs.file_lookup import files_of
from crewboard.services.supervisor import LoopHealth, Wakeup, run_pass
from crewboard.storage.database import Database
from crewboard.storage.uow import EventRecord, UnitOfWork

log = logging.getLogger(__name__)

POLL = 2.0  # seconds: the longest a queued turn waits when nothing wakes the runner
FLUSH = 0.25  # seconds between saves of a streaming reply
TURN_ENDED = "spec_session.turn_ended"
DEADLINE_GRACE = 1.0  # seconds past the turn's deadline before its rounds are cut short

ProviderFactory = Callable[[ProviderConfig], ModelProvider]


@dataclass(frozen=True)
class Outcome:
    """How one turn went, for the caller that waits on it and for the benchmarks."""

    turn_id: str
    status: TurnStatus
    written: bool  # False: another runner holds the turn now; nothing was written
    seconds: float  # the whole turn on this runner
    provider_seconds: float  # of which waiting on the provider

    @property
    def overhead(self) -> float:
        return self.seconds - self.provider_seconds


@dataclass(frozen=True)
class _Job:
    turn: Turn
    session: Session
    model: ResolvedModel
    request: ModelRequest
    redactor: Redactor  # the provider's secrets, kept out of all the turn stores
    project_key: str
    reads_code: bool  # its workflow reads code, and its model takes tools


class SessionRunner:
    def __init__(
        self,
        db: Database,
        settings: Settings,
        *,
        providers: ProviderFactory = provider_for,
        poll: float = POLL,
        code: CodeTools | None = None,
    ) -> None:
        self.db = db
        self.settings = settings
        self.providers = providers
        self.poll = poll
        # The way to a person's code for code-reading workflows (None: none read code here).
        self.code = code
        self.claim_prefix = f"{settings.node_name or 'node'}:{new_id('run')}"
        self.lease = timedelta(seconds=settings.session_turn_lease)
        self._wakeup = Wakeup()
        self._running: set[str] = set()
        db.add_event_listener(self._heard)

    def _heard(self, events: list[EventRecord]) -> None:
        """A commit in this process (called in the writer's thread): wake on a queued turn."""
        if any(e.type in (TURN_QUEUED, "spec_session.started") for e in events):
            self.wake()

    def wake(self) -> None:
        self._wakeup.wake()

    async def run(self, health: LoopHealth | None = None) -> None:
        """Claim and run turns whenever woken, and every `poll` seconds; until cancelled. A
        claim that fails (the database is away for a moment) backs off and tries again; a
        turn cut short by it is claimed again once its lease runs out."""
        health = health or LoopHealth("sessions")
        health.wake = self.wake
        self._wakeup.bind()
        room = self.settings.session_runners
        async with anyio.create_task_group() as tasks:

            async def start_claimed() -> None:
                free = room - len(self._running)
                for turn in await to_thread.run_sync(self._claim, free) if free > 0 else []:
                    self._running.add(turn.id)
                    tasks.start_soon(self._run_claimed, turn)

            while True:
                await self._wakeup.wait(await run_pass(health, start_claimed, self.poll))

    async def _run_claimed(self, turn: Turn) -> None:
        try:
            await self.run_turn(turn)
        except Exception:
            log.exception("sessions: turn %s failed unexpectedly", turn.id)
        finally:
            self._running.discard(turn.id)
            self.wake()  # room for the next one

    async def drain(self) -> list[Outcome]:
        """Run every turn due now, one after another (tests and `crewboard` commands)."""
        done: list[Outcome] = []
        while turns := await to_thread.run_sync(self._claim, 1):
            done.append(await self.run_turn(turns[0]))
        return done

    def _claim(self, limit: int) -> list[Turn]:
        # Most passes find nothing: a read says so without taking SQLite's write lock.
        if not self.db.read(lambda uow: sessions_of(uow).any_due(uow.now)):
            return []

        def work(uow: UnitOfWork) -> list[Turn]:
            return sessions_of(uow).claim_due(
                uow.now, claim=self._claim_of(), lease_until=uow.now + self.lease, limit=limit
            )

        return self.db.write(work)

    def _claim_of(self) -> str:
        return self.claim_prefix

    # --- one turn -------------------------------------------------------------------------------

    async def run_turn(self, turn: Turn) -> Outcome:
        """Run a claimed turn to its end: the reply written, or the failure recorded."""
        started = time.perf_counter()
        prepared = await to_thread.run_sync(self._prepare, turn)
        if isinstance(prepared, dict):  # could not run: no model, no key, over budget
            written = await to_thread.run_sync(self._fail, turn, prepared)
            return Outcome(turn.id, TurnStatus.FAILED, written, time.perf_counter() - started, 0.0)
        reply = Reply()
        lost = anyio.Event()
        redactor = prepared.redactor
        provider = self.providers(prepared.model.provider)
        ended: Completion | dict[str, Any] | None = None
        try:
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(self._keep, turn, reply, lost, tasks.cancel_scope, redactor)
                ended = await self._rounds(prepared, provider, reply)
                tasks.cancel_scope.cancel()
        finally:
            await _close(provider)
        if lost.is_set() or ended is None:
            return Outcome(turn.id, TurnStatus.RUNNING, False, time.perf_counter() - started, 0.0)
        if isinstance(ended, dict):
            written = await to_thread.run_sync(self._fail, turn, ended, redactor)
            return Outcome(turn.id, TurnStatus.FAILED, written, time.perf_counter() - started, 0.0)
        written = await to_thread.run_sync(self._finish, prepared, ended)
        return Outcome(
            turn.id, TurnStatus.DONE, written, time.perf_counter() - started,
            ended.provider_seconds,
        )  # fmt: skip

    async def _rounds(
        self, job: _Job, provider: ModelProvider, reply: Reply
    ) -> Completion | dict[str, Any]:
        """The turn's reply, or why it failed: the wait for a bridge, then the model's rounds,
        all within the turn's deadline."""
        seconds = self.settings.session_turn_deadline
        deadline = anyio.current_time() + seconds
        with anyio.CancelScope(deadline=deadline + DEADLINE_GRACE):
            try:
                reading = await self._reading(job, deadline)
                if isinstance(reading, dict):
                    return reading
                return await Rounds(
                    provider, job.request, reply, deadline=deadline, reading=reading,
                    on_no_tools=lambda: to_thread.run_sync(self._no_tools, job),
                ).run()  # fmt: skip
            except ProviderError as failed:
                return {"code": "provider_failed", "providerCode": failed.code,
                        "status": failed.status, "message": str(failed)}  # fmt: skip
            except BridgeGone as gone:
                return {"code": "bridge_gone", "message": gone.message}
        # Out of the scope without a return: something ignored the deadline, and the scope cut it.
        return {"code": "turn_deadline",
                "message": f"The turn took longer than its {seconds:g} seconds "
                "(CREWBOARD_SESSION_TURN_DEADLINE)."}  # fmt: skip

    async def _reading(self, job: _Job, deadline: float) -> Reading | dict[str, Any] | None:
        """Where the turn's code calls go (None: it reads no code), once its creator's bridge
        is connected; waiting up to `session_bridge_wait` for it (a failure when none came)."""
        if not job.reads_code or self.code is None:
            return None
        user_id = creator_id(job.session)
        wait = self.settings.session_bridge_wait
        until = min(deadline, anyio.current_time() + wait)
        if user_id is None or await self.code.wait_for_bridge(
            project_id=job.session.project_id, user_id=user_id, deadline=until
        ) is None:  # fmt: skip
            return {"code": "no_bridge",
                    "message": f"No `crewboard reverse` connected for the person who started "
                    f"this session in project {job.project_key} within {wait:g} seconds, and "
                    f"this session reads the code through it. Run "
                    f"`{bridge_command(job.project_key)}` on the machine with the code, then "
                    "send the message again."}  # fmt: skip
        return Reading(
            code=self.code, tools=CODE_TOOLS, session_id=job.session.id, project_id=job.session.project_id,
            user_id=user_id, turn_id=job.turn.id, calls=self.settings.session_code_calls,
            chars=self.settings.session_code_chars,
        )  # fmt: skip

    def _no_tools(self, job: _Job) -> None:
        """The session's notice that its model takes no tools (once; the next turns offer none)."""
        notice = no_tools_notice(job.model.model)
        self.db.write(lambda uow: sessions_of(uow).add_notice(job.session.id, notice))

    async def _keep(
        self,
        turn: Turn,
        reply: Reply,
        lost: anyio.Event,
        scope: anyio.CancelScope,
        redactor: Redactor,
    ) -> None:
        """Save the reply so far and renew the lease until cancelled; stop the turn if another
        runner has taken it over (this node was presumed dead)."""
        saved = -1
        last_renew = time.monotonic()
        renew_every = self.lease.total_seconds() / 3
        while True:
            await anyio.sleep(FLUSH)
            if reply.changes == saved and time.monotonic() - last_renew < renew_every:
                continue
            saved, partial = reply.changes, redactor.secrets_in(reply.text)
            held = await to_thread.run_sync(self._renew, turn, partial)
            last_renew = time.monotonic()
            if not held:
                lost.set()
                scope.cancel()
                return

    def _renew(self, turn: Turn, partial: str) -> bool:
        def work(uow: UnitOfWork) -> bool:
            return sessions_of(uow).renew(
                turn.id, self._claim_of(), lease_until=uow.now + self.lease, partial=partial
            )

        return self.db.write(work)

    def _prepare(self, turn: Turn) -> _Job | dict[str, Any]:
        def work(uow: UnitOfWork) -> _Job | dict[str, Any]:
            session = sessions_of(uow).get(turn.session_id)
            if session is None:
                return {"code": "session_gone", "message": "The session was deleted."}
            why = over_budget(
                session, turn_limit=self.settings.session_turn_limit + 1,
                token_budget=self.settings.session_token_budget,
            )  # fmt: skip
            if why is not None:
                return {"code": "budget_reached", "message": f"The session stopped: {why}."}
            try:
                model = resolve_model(uow, chosen=session.model_id, project_id=session.project_id)
            except NoModel as error:
                return {"code": error.code, "message": error.message}
            made = prepare(uow, session)
            request = ModelRequest(
                model=model.model, system=made.system, messages=made.messages,
                max_tokens=model.max_tokens,
            )  # fmt: skip
            project = uow.projects.get(session.project_id)
            return _Job(
                turn=turn, session=session, model=model, request=request,
                redactor=redactor_for(model.provider),
                project_key=project.key if project else session.project_id,
                reads_code=reads_code(session),
            )  # fmt: skip

        return self.db.read(work)

    def _fail(self, turn: Turn, failure: dict[str, Any], redactor: Redactor | None = None) -> bool:
        """Record the turn's failure: every text in it scrubbed first (without a provider's
        secrets to look for, still of credentials in URLs)."""
        error: dict[str, Any] = (redactor or Redactor()).value(failure)

        def work(uow: UnitOfWork) -> bool:
            repo = sessions_of(uow)
            claim = None if turn.claim is None else self._claim_of()
            if not repo.finish(turn.id, claim, status=TurnStatus.FAILED.value, error=error,
                               finished_at=uow.now):  # fmt: skip
                return False
            session = repo.get(turn.session_id)
            if session is None:
                return True
            stopped = error["code"] == "budget_reached"
            repo.change(
                session.id, status=(Status.STOPPED if stopped else Status.FAILED).value,
                pending_action=_pending(uow, session.id).value, last_error=error,
                updated_at=uow.now,
            )  # fmt: skip
            _ended(uow, session, turn, TurnStatus.FAILED, error)
            return True

        return self.db.write(work)

    def _finish(self, job: _Job, completion: Completion) -> bool:
        def work(uow: UnitOfWork) -> bool:
            repo = sessions_of(uow)
            turn = job.turn
            usage = completion.usage
            if not repo.finish(
                turn.id, self._claim_of(), status=TurnStatus.DONE.value, finished_at=uow.now,
                partial="", model_id=job.model.id, input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens, provider_seconds=completion.provider_seconds,
            ):  # fmt: skip
                return False  # another runner took the turn over: its reply counts, not ours
            session = repo.get(turn.session_id, for_update=True)
            if session is None:
                return True
            said = job.redactor.secrets_in(completion.text)
            reply = parse_reply(said)
            repo.add_message(
                Message(id=new_id("ssm"), session_id=session.id, seq=session.message_count + 1,
                        role="assistant", content=said, author=None,
                        created_at=uow.now)
            )  # fmt: skip
            repo.supersede_pending(session.id, uow.now)
            for proposal in _proposals(uow, session, turn, reply):
                repo.add_proposal(proposal)
            repo.add_usage(
                session.id, input_tokens=usage.input_tokens, output_tokens=usage.output_tokens,
                seconds=completion.provider_seconds,
            )  # fmt: skip
            values: dict[str, Any] = {
                "message_count": session.message_count + 1, "status": Status.WAITING.value,
                "pending_action": _pending(uow, session.id).value, "last_error": None,
                "updated_at": uow.now,
            }  # fmt: skip
            if reply.title:
                values["title"] = reply.title
            repo.change(session.id, **values)
            _ended(uow, session, turn, TurnStatus.DONE, None)
            return True

        return self.db.write(work)


def _pending(uow: UnitOfWork, session_id: str) -> PendingAction:
    kinds = {
        p.kind for p in sessions_of(uow).proposals(session_id, [SessionProposalStatus.PENDING])
    }
    return pending_action_of(kinds, running=False)


def _proposals(uow: UnitOfWork, session: Session, turn: Turn, reply: Any) -> list[SessionProposal]:
    """What the reply asks of the person, as proposals. A file proposal records the version of
    the file it replaces, so accepting it later cannot overwrite a newer save."""
    made: list[SessionProposal] = []

    def add(kind: SessionProposalKind, body: dict[str, Any], path: str | None = None,
            base: str | None = None) -> None:  # fmt: skip
        made.append(SessionProposal(
            id=new_id("spr"), session_id=session.id, project_id=session.project_id,
            turn_id=turn.id, kind=kind, status=SessionProposalStatus.PENDING, body=body, path=path,
            base_version=base, created_at=uow.now,
        ))  # fmt: skip

    for raw_path, content in reply.files:
        try:
            path = normalise_path(raw_path)
        except CrewboardError:
            reply.notes.append(f"a proposed file's path {raw_path!r} is not usable")
            continue
        existing = files_of(uow).get_by_path(session.project_id, path)
        base = existing.content_version if existing is not None else None
        add(
            SessionProposalKind.FILE,
            {"content": content, "exists": existing is not None},
            path,
            base,
        )
    if reply.questions:
        add(SessionProposalKind.QUESTIONS, {"questions": [q.view() for q in reply.questions]})
    if reply.choice:
        add(SessionProposalKind.CHOICE, reply.choice)
    if reply.review:
        add(SessionProposalKind.REVIEW, {"items": reply.review})
    return made


def _ended(uow: UnitOfWork, session: Session, turn: Turn, status: TurnStatus, error: Any) -> None:
    uow.record_event(
        TURN_ENDED,
        actor={"kind": "spec_session", "userId": None, "tokenId": None},
        payload={"sessionId": session.id, "turnId": turn.id, "status": status.value,
                 "error": error},
        project_id=session.project_id,
    )  # fmt: skip


async def _close(provider: ModelProvider) -> None:
    close = getattr(provider, "aclose", None)
    if close is not None:
        with contextlib.suppress(Exception):
            await close()
