"""A person's code bridge (`crewboard reverse`), as the REST routes drive it: register one for
a project, exchange (answers to the calls it took, for new calls, waiting up to 25 seconds),
close it. The turn's side, and why everything goes through the database, is in `code.py`.

An exchange waits on the event loop, holding no database connection and no worker thread:
its looks at the database are short reads in a worker thread, every 0.1 s or at once when a
call is queued in this process (the bell).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import anyio
from anyio import to_thread

from crewboard.domain import code_tools
from crewboard.domain.code_tools import summary_of
from crewboard.domain.identity.access import Role, Scope
from crewboard.domain.identity.records import Actor
from crewboard.domain.ids import new_id
from crewboard.errors import Conflict, Gone, LimitExceeded, NotFound, ValidationFailed
from crewboard.services.identity.access import access_project
from crewboard.services.sessions.code import (
    CALL_TIMEOUT,
    POLL,
    BridgeView,
    bell_of,
    bridge_key,
    bridge_view,
    queued_key,
    wait_until,
)
from crewboard.storage.database import Database
from crewboard.storage.sessions.bridges import BridgeRepository, CallRepository, notify_nodes
from crewboard.storage.uow import UnitOfWork

WAIT_DEFAULT = 20  # seconds an exchange waits for a call, unless it says otherwise
WAIT_MOST = 25
MAX_ANSWERS = 50  # answers one exchange may carry
MAX_CALLS = 50  # calls one exchange hands out
MAX_FOLDER = 200
MAX_CLIENT = 100
KEEP_ENDED = timedelta(days=1)  # a closed or replaced bridge is forgotten after this


@dataclass(frozen=True)
class Registered:
    bridge: BridgeView
    project_key: str
    wait_seconds: int = WAIT_DEFAULT


@dataclass(frozen=True)
class BridgeAnswer:
    """A bridge's answer to one call: a result, or an error {"code", "message"}."""

    call_id: str
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None

    def stored(self) -> dict[str, Any]:
        return {"result": self.result} if self.error is None else {"error": self.error}


@dataclass(frozen=True)
class CallOut:
    """A call handed to a bridge."""

    call_id: str
    tool: str
    arguments: dict[str, Any]


def _bridge_missing(ref: str) -> NotFound:
    return NotFound(
        f"No code bridge {ref!r} of yours; run `crewboard reverse` to connect one.",
        {"resource": "codeBridge", "ref": ref},
    )


def _own_bridge(uow: UnitOfWork, actor: Actor, ref: str, *, current: bool = True) -> dict[str, Any]:
    """The actor's bridge (locked until the transaction ends); with `current`, refused once
    replaced or closed.

    Raises:
        NotFound: no such bridge, another person's, or its project is not open to the actor.
        PermissionDenied: the token may not write the project's specs.
        Conflict: replaced by a newer bridge (details.reason "replaced").
        Gone: closed.
    """
    found = None
    if ref.startswith("brg_") and "\x00" not in ref and len(ref) <= 64:
        found = BridgeRepository(uow.conn).get(ref, for_update=True)
    if found is None or found["user_id"] != actor.user_id:
        raise _bridge_missing(ref)
    try:
        access = access_project(
            uow, actor, found["project_id"], scope=Scope.SPECS_WRITE, role=Role.WRITE
        )
    except NotFound:
        raise _bridge_missing(ref) from None
    if current and found["replaced_at"] is not None:
        raise Conflict(
            f"This code bridge was replaced: another `crewboard reverse` for project "
            f"{access.project.key} connected after it. Only the newest one answers.",
            {"reason": "replaced", "bridgeId": ref},
        )
    if current and found["closed_at"] is not None:
        raise Gone(
            "This code bridge was closed; register a new one to answer code calls again.",
            {"reason": "closed", "bridgeId": ref},
        )
    return found


def _check_text(field: str, value: str | None, most: int, *, least: int = 0) -> None:
    """Raises: ValidationFailed naming the field."""
    if value is None:
        return
    if "\x00" in value:
        raise ValidationFailed.field(field, "contains a NUL character.")
    if not least <= len(value) <= most:
        raise ValidationFailed.field(field, f"{least} to {most} characters.")


def register_bridge(
    db: Database, actor: Actor, *, project: str, folder: str, client: str | None, node: str | None
) -> Registered:
    """A new bridge of the actor's for the project. It replaces their older one there (whose
    next exchange is refused with CONFLICT), and every call that one took but did not answer
    goes back to the queue at once.

    Raises:
        NotFound, PermissionDenied (the write role and the specs.write scope, as starting a
        session), ValidationFailed.
    """
    _check_text("folder", folder, MAX_FOLDER, least=1)
    _check_text("client", client, MAX_CLIENT)

    def work(uow: UnitOfWork) -> tuple[Registered, int]:
        access = access_project(uow, actor, project, scope=Scope.SPECS_WRITE, role=Role.WRITE)
        pid = access.project.id
        uow.serialize(f"code_bridge:{actor.user_id}:{pid}")  # one current bridge each
        bridges = BridgeRepository(uow.conn)
        requeued = CallRepository(uow.conn).requeue(
            bridges.replace_current(actor.user_id, pid, uow.now)
        )
        bridges.prune(actor.user_id, pid, uow.now - KEEP_ENDED)
        row = {
            "id": new_id("brg"), "project_id": pid, "user_id": actor.user_id,
            "token_id": actor.token.id if actor.token else None, "folder": folder,
            "client": client, "node": (node or None), "connected_at": uow.now,
            "last_seen_at": uow.now, "closed_at": None, "replaced_at": None,
        }  # fmt: skip
        bridges.add(row)
        notify_nodes(uow.conn, [bridge_key(actor.user_id, pid), queued_key(actor.user_id, pid)])
        return Registered(bridge_view(row), access.project.key), requeued

    made, requeued = db.write(work)
    bell = bell_of(db)
    bell.ring(bridge_key(actor.user_id, made.bridge.project_id))
    if requeued:
        bell.ring(queued_key(actor.user_id, made.bridge.project_id))
    return made


def check_answers(answers: Sequence[BridgeAnswer]) -> None:
    """At most MAX_ANSWERS, each call once, each a result or a well-formed error, each at
    most 256 KiB of JSON.

    Raises:
        ValidationFailed, LimitExceeded: naming the answer.
    """
    if len(answers) > MAX_ANSWERS:
        raise LimitExceeded.over("answers", len(answers), MAX_ANSWERS, "answers")
    seen: set[str] = set()
    for n, answer in enumerate(answers):
        where = f"answers[{n}]"
        if answer.call_id in seen:
            raise ValidationFailed.field(f"{where}.callId", "answers a call already answered.")
        seen.add(answer.call_id)
        if (answer.result is None) == (answer.error is None):
            raise ValidationFailed.field(where, "send either result or error.")
        problem = None if answer.error is None else code_tools.check_error(answer.error)
        if problem is not None:
            raise ValidationFailed.field(f"{where}.error", problem)
        size = code_tools.answer_size(answer.stored())
        if size > code_tools.MAX_ANSWER_BYTES:
            raise LimitExceeded.over(where, size, code_tools.MAX_ANSWER_BYTES, "bytes of JSON")


def _store_answers(
    db: Database, actor: Actor, bridge_id: str, answers: Sequence[BridgeAnswer]
) -> tuple[dict[str, Any], list[str]]:
    """Check the bridge, store its answers, mark it seen; the bridge and the calls answered
    (an answer to a call the turn gave up on is dropped)."""

    def work(uow: UnitOfWork) -> tuple[dict[str, Any], list[str]]:
        bridge = _own_bridge(uow, actor, bridge_id)
        calls = CallRepository(uow.conn)
        held = calls.of_ids([a.call_id for a in answers]) if answers else {}
        for n, answer in enumerate(answers):
            row = held.get(answer.call_id)
            if row is None or row["bridge_id"] != bridge["id"]:
                raise ValidationFailed.field(
                    f"answers[{n}].callId", f"{answer.call_id!r} is not a call this bridge took."
                )
        stored = []
        for answer in answers:
            summary = summary_of(held[answer.call_id]["tool"], answer.stored())
            if calls.answer(
                answer.call_id, bridge["id"], answer=answer.stored(), summary=summary, now=uow.now
            ):
                stored.append(answer.call_id)
        BridgeRepository(uow.conn).seen(bridge["id"], uow.now)
        notify_nodes(uow.conn, [f"answered:{call_id}" for call_id in stored])
        return bridge, stored

    return db.write(work)


def _take(db: Database, actor: Actor, bridge: dict[str, Any], stale: timedelta) -> list[CallOut]:
    """Calls for the bridge, taken; a read first, so that an idle poll takes no write lock."""
    user_id, project_id = bridge["user_id"], bridge["project_id"]
    if not db.read(
        lambda uow: CallRepository(uow.conn).any_takeable(user_id, project_id, uow.now - stale)
    ):
        return []

    def work(uow: UnitOfWork) -> list[CallOut]:
        _own_bridge(uow, actor, bridge["id"])  # locked: a register replacing it waits, or won
        rows = CallRepository(uow.conn).take(
            user_id, project_id, bridge_id=bridge["id"], now=uow.now,
            taken_before=uow.now - stale, limit=MAX_CALLS,
        )  # fmt: skip
        return [CallOut(r["id"], r["tool"], dict(r["arguments"])) for r in rows]

    return db.write(work)


async def exchange(
    db: Database,
    actor: Actor,
    bridge_id: str,
    answers: Sequence[BridgeAnswer],
    wait: float,
    *,
    taken_for: float = CALL_TIMEOUT,
    poll: float = POLL,
) -> list[CallOut]:
    """Store the bridge's answers, then hand it the calls waiting for it: at once when there
    are some, else as soon as one is queued, or none after `wait` seconds. A call another
    take left unanswered for `taken_for` seconds (the `bridge_call_timeout` setting) is
    handed out again.

    Raises:
        NotFound, PermissionDenied, Conflict (replaced), Gone (closed), ValidationFailed,
        LimitExceeded.
    """
    if not 0 <= wait <= WAIT_MOST:
        raise ValidationFailed.field("waitSeconds", f"from 0 to {WAIT_MOST} seconds.")
    await to_thread.run_sync(check_answers, answers)  # up to 12 MiB of JSON to measure
    stale = timedelta(seconds=taken_for)
    deadline = anyio.current_time() + wait
    bridge, stored = await to_thread.run_sync(_store_answers, db, actor, bridge_id, answers)
    bell = bell_of(db)
    for call_id in stored:
        bell.ring(f"answered:{call_id}")
    key = queued_key(bridge["user_id"], bridge["project_id"])
    found = await wait_until(
        bell, key, deadline, lambda: _take(db, actor, bridge, stale) or None, poll,
        stoppable=True,
    )  # fmt: skip
    return found or []


def close_bridge(db: Database, actor: Actor, bridge_id: str) -> None:
    """End the bridge (a clean exit; closing it again changes nothing). The calls it took
    and did not answer go back to the queue for the person's next bridge.

    Raises:
        NotFound, PermissionDenied.
    """

    def work(uow: UnitOfWork) -> int:
        bridge = _own_bridge(uow, actor, bridge_id, current=False)
        BridgeRepository(uow.conn).close(bridge["id"], uow.now)
        return CallRepository(uow.conn).requeue([bridge["id"]])

    db.write(work)
