"""Session rows: configured providers and models, sessions, their messages, turns and
proposals."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Row, and_, delete, func, insert, or_, select, update

from crewboard.domain.sessions import (
    ArchiveFilter,
    Language,
    Message,
    Mode,
    PendingAction,
    Session,
    SessionProposal,
    SessionProposalKind,
    SessionProposalStatus,
    Status,
    Turn,
    TurnStatus,
)
from crewboard.storage.rows import record_from_row, record_values
from crewboard.storage.sessions.tables import (
    code_calls,
    project_session_settings,
    session_models,
    session_providers,
    spec_session_messages,
    spec_session_proposals,
    spec_session_turns,
    spec_sessions,
)

_s, _m, _t, _p = (
    spec_sessions.c,
    spec_session_messages.c,
    spec_session_turns.c,
    spec_session_proposals.c,
)


def _session(row: Row[Any]) -> Session:
    return record_from_row(
        Session,
        row,
        mode=Mode(row.mode),
        language=Language(row.language),
        status=Status(row.status),
        pending_action=PendingAction(row.pending_action),
        attachment_ids=tuple(row.attachment_ids),
        spec_file_ids=tuple(row.spec_file_ids),
        created_by=dict(row.created_by),
        last_error=dict(row.last_error) if row.last_error else None,
        notices=tuple(dict(n) for n in row.notices or ()),
    )


def _turn(row: Row[Any]) -> Turn:
    return record_from_row(
        Turn, row, status=TurnStatus(row.status), error=dict(row.error) if row.error else None
    )


def _proposal(row: Row[Any]) -> SessionProposal:
    return record_from_row(
        SessionProposal,
        row,
        kind=SessionProposalKind(row.kind),
        status=SessionProposalStatus(row.status),
        body=dict(row.body),
        decided_by=dict(row.decided_by) if row.decided_by else None,
        result=dict(row.result) if row.result else None,
    )


def _message(row: Row[Any]) -> Message:
    return record_from_row(Message, row, author=dict(row.author) if row.author else None)


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


class ModelConfigRepository:
    """Providers and models (server-wide), and each project's default model."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def providers(self) -> list[dict[str, Any]]:
        rows = self.conn.execute(select(session_providers).order_by(session_providers.c.id))
        return [dict(row._mapping) for row in rows]

    def provider(self, provider_id: str) -> dict[str, Any] | None:
        row = self.conn.execute(
            select(session_providers).where(session_providers.c.id == provider_id)
        ).first()
        return dict(row._mapping) if row else None

    def put_provider(self, values: dict[str, Any]) -> None:
        """Add the provider, or replace the one of that id (keeping its created_at)."""
        existing = self.provider(values["id"])
        if existing is None:
            self.conn.execute(insert(session_providers).values(**values))
        else:
            changes = {k: v for k, v in values.items() if k not in ("id", "created_at")}
            self.conn.execute(
                update(session_providers)
                .where(session_providers.c.id == values["id"])
                .values(**changes)
            )

    def delete_provider(self, provider_id: str) -> bool:
        done = self.conn.execute(
            delete(session_providers).where(session_providers.c.id == provider_id)
        )
        return done.rowcount > 0

    def models(self) -> list[dict[str, Any]]:
        rows = self.conn.execute(select(session_models).order_by(session_models.c.id))
        return [dict(row._mapping) for row in rows]

    def model(self, model_id: str) -> dict[str, Any] | None:
        row = self.conn.execute(
            select(session_models).where(session_models.c.id == model_id)
        ).first()
        return dict(row._mapping) if row else None

    def put_model(self, values: dict[str, Any]) -> None:
        if values.get("is_default"):  # one default server-wide
            self.conn.execute(update(session_models).values(is_default=False))
        if self.model(values["id"]) is None:
            self.conn.execute(insert(session_models).values(**values))
        else:
            changes = {k: v for k, v in values.items() if k not in ("id", "created_at")}
            self.conn.execute(
                update(session_models).where(session_models.c.id == values["id"]).values(**changes)
            )

    def delete_model(self, model_id: str) -> bool:
        done = self.conn.execute(delete(session_models).where(session_models.c.id == model_id))
        return done.rowcount > 0

    def project_model(self, project_id: str) -> str | None:
        return self.conn.execute(
            select(project_session_settings.c.model_id).where(
                project_session_settings.c.project_id == project_id
            )
        ).scalar()

    def set_project_model(self, project_id: str, model_id: str | None, now: datetime) -> None:
        table = project_session_settings
        done = self.conn.execute(
            update(table)
            .where(table.c.project_id == project_id)
            .values(model_id=model_id, updated_at=now)
        )
        if done.rowcount == 0:
            self.conn.execute(
                insert(table).values(project_id=project_id, model_id=model_id, updated_at=now)
            )


class SessionRepository:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    # --- sessions ---------------------------------------------------------------------------

    def add(self, session: Session) -> None:
        self.conn.execute(
            insert(spec_sessions).values(
                **record_values(
                    session,
                    spec_sessions,
                    mode=session.mode.value,
                    language=session.language.value,
                    status=session.status.value,
                    pending_action=session.pending_action.value,
                    attachment_ids=list(session.attachment_ids),
                    spec_file_ids=list(session.spec_file_ids),
                    notices=[dict(n) for n in session.notices],
                )
            )
        )

    def get(self, session_id: str, *, for_update: bool = False) -> Session | None:
        query = select(spec_sessions).where(_s.id == session_id)
        row = self.conn.execute(query.with_for_update() if for_update else query).first()
        return _session(row) if row else None

    def page(
        self,
        project_id: str,
        *,
        archive: ArchiveFilter,
        status: Status | None,
        query: str | None,
        limit: int,
        offset: int,
    ) -> tuple[list[Session], int]:
        """One page, most recently changed first, and how many match in all."""
        where = [_s.project_id == project_id]
        if archive is ArchiveFilter.ACTIVE:
            where.append(_s.archived_at.is_(None))
        elif archive is ArchiveFilter.ARCHIVED:
            where.append(_s.archived_at.is_not(None))
        if status is not None:
            where.append(_s.status == status.value)
        if query:
            where.append(func.lower(_s.title).like(f"%{_escape_like(query.lower())}%", "\\"))
        total = self.conn.execute(select(func.count()).where(*where)).scalar_one()
        rows = self.conn.execute(
            select(spec_sessions)
            .where(*where)
            .order_by(_s.updated_at.desc(), _s.id.desc())
            .limit(limit)
            .offset(offset)
        )
        return [_session(row) for row in rows], int(total)

    def change(self, session_id: str, **values: Any) -> None:
        self.conn.execute(update(spec_sessions).where(_s.id == session_id).values(**values))

    def add_notice(self, session_id: str, notice: dict[str, str]) -> bool:
        """Add a notice to the session's (once per code); False when it had one of that code."""
        row = self.conn.execute(
            select(_s.notices).where(_s.id == session_id).with_for_update()
        ).first()
        notices = [dict(n) for n in (row.notices if row else None) or ()]
        if row is None or any(n.get("code") == notice.get("code") for n in notices):
            return False
        self.change(session_id, notices=[*notices, dict(notice)])
        return True

    def add_usage(
        self, session_id: str, *, input_tokens: int, output_tokens: int, seconds: float
    ) -> None:
        self.conn.execute(
            update(spec_sessions)
            .where(_s.id == session_id)
            .values(
                input_tokens=_s.input_tokens + input_tokens,
                output_tokens=_s.output_tokens + output_tokens,
                provider_seconds=_s.provider_seconds + seconds,
            )
        )

    def delete(self, session_id: str) -> None:
        tables = (code_calls, spec_session_proposals, spec_session_turns, spec_session_messages)
        for table in tables:
            self.conn.execute(delete(table).where(table.c.session_id == session_id))
        self.conn.execute(delete(spec_sessions).where(_s.id == session_id))

    # --- messages ---------------------------------------------------------------------------

    def add_message(self, message: Message) -> None:
        self.conn.execute(
            insert(spec_session_messages).values(**record_values(message, spec_session_messages))
        )

    def messages(self, session_id: str) -> list[Message]:
        rows = self.conn.execute(
            select(spec_session_messages).where(_m.session_id == session_id).order_by(_m.seq)
        )
        return [_message(row) for row in rows]

    # --- turns ------------------------------------------------------------------------------

    def add_turn(self, turn: Turn) -> None:
        self.conn.execute(
            insert(spec_session_turns).values(
                **record_values(
                    turn, spec_session_turns, status=turn.status.value, claim=None, lease_until=None
                )
            )
        )

    def turn(self, turn_id: str) -> Turn | None:
        row = self.conn.execute(select(spec_session_turns).where(_t.id == turn_id)).first()
        return _turn(row) if row else None

    def latest_turn(self, session_id: str) -> Turn | None:
        row = self.conn.execute(
            select(spec_session_turns)
            .where(_t.session_id == session_id)
            .order_by(_t.seq.desc())
            .limit(1)
        ).first()
        return _turn(row) if row else None

    def turns(self, session_id: str) -> list[Turn]:
        rows = self.conn.execute(
            select(spec_session_turns).where(_t.session_id == session_id).order_by(_t.seq)
        )
        return [_turn(row) for row in rows]

    def any_due(self, now: datetime) -> bool:
        """Whether a turn waits for a runner (a read, before opening a write to claim it)."""
        due = or_(
            _t.status == TurnStatus.QUEUED.value,
            and_(_t.status == TurnStatus.RUNNING.value, _t.lease_until < now),
        )
        found = self.conn.execute(select(spec_session_turns.c.id).where(due).limit(1)).first()
        return found is not None

    def claim_due(
        self, now: datetime, *, claim: str, lease_until: datetime, limit: int
    ) -> list[Turn]:
        """Take up to `limit` queued turns, and running ones whose runner stopped renewing
        (its node died), holding them for `claim` until `lease_until`.

        On PostgreSQL rows another node is claiming are skipped (SKIP LOCKED); SQLite runs one
        write at a time."""
        due = or_(
            _t.status == TurnStatus.QUEUED.value,
            and_(_t.status == TurnStatus.RUNNING.value, _t.lease_until < now),
        )
        rows = self.conn.execute(
            select(spec_session_turns.c.id)
            .where(due)
            .order_by(_t.queued_at, _t.id)
            .limit(limit)
            .with_for_update(skip_locked=True)
        ).all()
        ids = [row.id for row in rows]
        if not ids:
            return []
        self.conn.execute(
            update(spec_session_turns)
            .where(_t.id.in_(ids))
            .values(
                status=TurnStatus.RUNNING.value,
                claim=claim,
                lease_until=lease_until,
                started_at=now,
                attempts=_t.attempts + 1,
                partial="",
            )
        )
        found = self.conn.execute(select(spec_session_turns).where(_t.id.in_(ids)))
        return sorted((_turn(row) for row in found), key=lambda t: (t.queued_at, t.id))

    def renew(self, turn_id: str, claim: str, *, lease_until: datetime, partial: str) -> bool:
        """Extend the lease and save the reply so far; False when the claim was lost."""
        done = self.conn.execute(
            update(spec_session_turns)
            .where(_t.id == turn_id, _t.claim == claim, _t.status == TurnStatus.RUNNING.value)
            .values(lease_until=lease_until, partial=partial)
        )
        return done.rowcount > 0

    def finish(self, turn_id: str, claim: str | None, **values: Any) -> bool:
        """End a turn held by `claim` (None: a queued turn no runner took); False when another
        runner holds it now or it has ended already - its result is then not written."""
        held = (
            and_(_t.status == TurnStatus.QUEUED.value)
            if claim is None
            else and_(_t.claim == claim, _t.status == TurnStatus.RUNNING.value)
        )
        done = self.conn.execute(
            update(spec_session_turns)
            .where(_t.id == turn_id, held)
            .values(claim=None, lease_until=None, **values)
        )
        return done.rowcount > 0

    def queued_or_running(self, session_id: str) -> Turn | None:
        row = self.conn.execute(
            select(spec_session_turns)
            .where(
                _t.session_id == session_id,
                _t.status.in_([TurnStatus.QUEUED.value, TurnStatus.RUNNING.value]),
            )
            .limit(1)
        ).first()
        return _turn(row) if row else None

    # --- proposals --------------------------------------------------------------------------

    def add_proposal(self, proposal: SessionProposal) -> None:
        self.conn.execute(
            insert(spec_session_proposals).values(
                **record_values(
                    proposal,
                    spec_session_proposals,
                    kind=proposal.kind.value,
                    status=proposal.status.value,
                    decided_at=None,
                    decided_by=None,
                    feedback=None,
                    result=None,
                )
            )
        )

    def proposals(
        self, session_id: str, statuses: Sequence[SessionProposalStatus] | None = None
    ) -> list[SessionProposal]:
        where = [_p.session_id == session_id]
        if statuses is not None:
            where.append(_p.status.in_([s.value for s in statuses]))
        rows = self.conn.execute(
            select(spec_session_proposals).where(*where).order_by(_p.created_at, _p.id)
        )
        return [_proposal(row) for row in rows]

    def proposal(self, proposal_id: str) -> SessionProposal | None:
        row = self.conn.execute(select(spec_session_proposals).where(_p.id == proposal_id)).first()
        return _proposal(row) if row else None

    def decide(self, proposal_id: str, status: SessionProposalStatus, **values: Any) -> bool:
        """Close a pending proposal; False when someone decided it first."""
        done = self.conn.execute(
            update(spec_session_proposals)
            .where(_p.id == proposal_id, _p.status == SessionProposalStatus.PENDING.value)
            .values(status=status.value, **values)
        )
        return done.rowcount > 0

    def supersede_pending(self, session_id: str, now: datetime) -> int:
        """Close what still waits when the person moves the conversation on by writing."""
        done = self.conn.execute(
            update(spec_session_proposals)
            .where(
                _p.session_id == session_id,
                _p.status == SessionProposalStatus.PENDING.value,
                _p.kind != SessionProposalKind.FILE.value,  # a proposed file stays until decided
            )
            .values(status=SessionProposalStatus.SUPERSEDED.value, decided_at=now)
        )
        return done.rowcount
