"""Proposal cards: an agent suggests a task, a change to one, a deletion, a role or a whole
team; a person accepts (the card is applied in one transaction) or dismisses (nothing changes).

Agents propose with tasks.manage or team.manage and the write role. Only a person signed in
directly decides (never through a token): write role for task cards, admin for team cards,
as adding a seat by hand needs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple, Required, TypedDict, Unpack

from crewboard.domain.board.tasks import MAX_LONG_TEXT, MAX_TITLE, Task, TaskType
from crewboard.domain.identity.access import Role, Scope, parse_enum
from crewboard.domain.identity.records import Actor
from crewboard.domain.ids import new_id
from crewboard.domain.projects import Project
from crewboard.domain.review import (
    CardMade,
    Proposal,
    ProposalKind,
    ProposalPage,
    ProposalRow,
    ProposalStatus,
)
from crewboard.domain.validation import check_text
from crewboard.errors import NotFound, ValidationFailed
from crewboard.services.board.task_lookup import access_task
from crewboard.services.board.views import task_key
from crewboard.services.idempotency import Ack, KeyedResult, do_keyed_write
from crewboard.services.identity.access import (
    ANY_WORKSPACE,
    WorkspaceRef,
    access_owned,
    access_project,
    not_open,
    open_projects,
    require_signed_in_person,
)
from crewboard.services.paging import check_page
from crewboard.services.projects.team import MAX_ROLE_NAME, MAX_ROLE_TEXT
from crewboard.services.review.proposal_cards import (
    MAX_REASON,
    TEAM_KINDS,
    apply_card,
    check_changes,
    check_seats,
    hint_text,
    optional_text,
)
from crewboard.services.views import actor_stamp, iso, stamp_of
from crewboard.storage.database import Database
from crewboard.storage.review.proposals import ProposalRepository
from crewboard.storage.uow import UnitOfWork

MAX_PAGE = 200

Build = Callable[[UnitOfWork, Project, Task | None], tuple[dict[str, Any], str]]
Answer = Callable[[ProposalRow], dict[str, Any]]


def proposals_of(uow: UnitOfWork) -> ProposalRepository:
    return ProposalRepository(uow.conn)


def _rows(uow: UnitOfWork, found: list[Proposal]) -> list[ProposalRow]:
    keys: dict[str, str] = {}
    for project_id in {p.project_id for p in found}:
        project = uow.projects.get(project_id)
        keys[project_id] = project.key if project else "?"
    numbers = uow.tasks.numbers_of(p.task_id for p in found if p.task_id)
    return [_row(p, keys[p.project_id], numbers.get(p.task_id or "")) for p in found]


def _row(proposal: Proposal, project_key: str, number: int | None) -> ProposalRow:
    key = f"{project_key}-{number}" if number is not None else None
    made = proposal.result or {}
    if made.get("taskId") in (None, proposal.task_id) and key:
        return ProposalRow(proposal, proposal.task_id, key)
    # A card that made a task points at it; one that removed its task keeps the old key.
    return ProposalRow(proposal, made.get("taskId") or proposal.task_id, made.get("taskKey") or key)


def _card_title(kind: ProposalKind, payload: dict[str, Any], task: Task | None) -> str:
    if task is not None:
        return task.title
    if kind is ProposalKind.COMPOSITION:
        return f"{len(payload['seats'])} seats"
    return str(payload.get("title") or payload.get("name") or "")


# --- agent side: proposing --------------------------------------------------------------------


class Keyed(TypedDict, total=False):
    """What every `propose_*` takes beside its card: where, the retry key, how to word it."""

    workspace_id: WorkspaceRef
    idempotency_key: str | None
    answer: Required[Answer]


class _Card(NamedTuple):
    """A card to propose: its kind, its (project, task) target (either may be None), the
    arguments the retry ledger compares, and how to build its payload and reason."""

    kind: ProposalKind
    target: tuple[str | None, str | None]
    arguments: dict[str, Any]
    build: Build


def _propose(db: Database, actor: Actor, card: _Card, keyed: Keyed) -> KeyedResult:
    """Write one pending card (keyed); `answer` words the card, and the ledger keeps that
    answer for a retry."""
    kind, (project, task), arguments, build = card
    scope = Scope.TEAM_MANAGE if kind in TEAM_KINDS else Scope.TASKS_MANAGE
    workspace_id = keyed.get("workspace_id", ANY_WORKSPACE)

    def work(uow: UnitOfWork) -> KeyedResult:
        def perform() -> Ack:
            found, proj = _proposal_target(
                uow, actor, scope=scope, project=project, task=task, workspace_id=workspace_id
            )
            payload, reason = build(uow, proj, found)
            proposal = Proposal(
                id=new_id("prp"),
                project_id=proj.id,
                kind=kind,
                task_id=found.id if found else None,
                payload=payload,
                reason=reason,
                status=ProposalStatus.PENDING,
                author=stamp_of(uow, actor),
                token_id=actor.token.id if actor.token else None,
                result=None,
                decided_by=None,
                decided_at=None,
                created_at=uow.now,
            )
            proposals_of(uow).add(proposal)
            row = _row(proposal, proj.key, found.number if found else None)
            _record(
                uow, actor, "proposal.created", proj, row, title=_card_title(kind, payload, found)
            )
            return Ack(
                keyed["answer"](row),
                resource_type="proposal",
                resource_id=proposal.id,
                project_id=proj.id,
            )

        return do_keyed_write(
            uow,
            actor,
            key=keyed.get("idempotency_key"),
            operation=f"propose_{kind.value}",
            arguments={"workspaceId": workspace_id, **arguments},
            perform=perform,
        )

    return db.write(work)


def _project_card(
    kind: ProposalKind, project: str, payload: dict[str, Any], reason: str = ""
) -> _Card:
    """A card on a project (no task) whose payload is fixed before the project is looked up."""
    return _Card(
        kind, (project, None), {"project": project, **payload}, lambda *_: (payload, reason)
    )


def _proposal_target(
    uow: UnitOfWork,
    actor: Actor,
    *,
    scope: Scope,
    project: str | None,
    task: str | None,
    workspace_id: WorkspaceRef,
) -> tuple[Task | None, Project]:
    if task is not None:
        found, proj = access_task(
            uow,
            actor,
            task,
            project=project,
            scope=scope,
            role=Role.WRITE,
            workspace_id=workspace_id,
        )
        return found, proj
    access = access_project(
        uow, actor, project or "", scope=scope, role=Role.WRITE, workspace_id=workspace_id
    )
    return None, access.project


def _record(
    uow: UnitOfWork,
    actor: Actor,
    event: str,
    project: Project,
    row: ProposalRow,
    **extra: Any,
) -> None:
    uow.record_event(
        event,
        actor=actor.as_payload(),
        payload={
            "proposalId": row.proposal.id,
            "kind": row.proposal.kind,
            "taskId": row.task_id,
            "taskKey": row.task_key,
            **extra,
        },
        project_id=project.id,
        workspace_id=project.workspace_id,
    )


def propose_task(
    db: Database,
    actor: Actor,
    *,
    project: str,
    title: str,
    description: str | None = None,
    type_hint: str | None = None,
    role_hint: str | None = None,
    **keyed: Unpack[Keyed],
) -> KeyedResult:
    """Propose a new task; on accept it lands in backlog, assigned when roleHint names a role.

    Raises:
        ValidationFailed, LimitExceeded, NotFound, PermissionDenied, IdempotencyConflict.
    """
    payload = {
        "title": check_text("title", title, max_length=MAX_TITLE, required=True),
        "description": optional_text("description", description, MAX_LONG_TEXT),
        "typeHint": parse_enum(type_hint, TaskType, "typeHint").value if type_hint else None,
        "roleHint": hint_text("roleHint", role_hint),
    }
    return _propose(db, actor, _project_card(ProposalKind.TASK, project, payload), keyed)


def propose_task_update(
    db: Database,
    actor: Actor,
    *,
    task: str,
    changes: dict[str, Any],
    reason: str | None = None,
    project: str | None = None,
    **keyed: Unpack[Keyed],
) -> KeyedResult:
    """Propose changes to a task; the card keeps each field's value now and the proposed one.

    Raises:
        ValidationFailed: no field, an unknown field or value, or nothing differs from now.
        LimitExceeded, NotFound, PermissionDenied, IdempotencyConflict.
    """
    wanted = check_changes(changes)
    why = optional_text("reason", reason, MAX_REASON)

    def build(uow: UnitOfWork, proj: Project, found: Task | None) -> tuple[dict[str, Any], str]:
        assert found is not None  # noqa: S101 - a task target always resolves to a task
        diff = {
            name: {"from": _current_value(uow, proj, found, name), "to": value}
            for name, value in wanted.items()
        }
        moved = {name: d for name, d in diff.items() if d["from"] != d["to"]}
        if not moved:
            raise ValidationFailed.field(
                "changes", f"every value is already what {task_key(proj, found)} has now."
            )
        return {"changes": moved}, why

    arguments = {"task": task, "project": project, "changes": wanted, "reason": why}
    card = _Card(ProposalKind.TASK_UPDATE, (project, task), arguments, build)
    return _propose(db, actor, card, keyed)


def _current_value(uow: UnitOfWork, project: Project, task: Task, name: str) -> str | None:
    values: dict[str, str] = {
        "title": task.title,
        "description": task.description,
        "status": task.status.value,
        "priority": task.priority.value,
        "typeHint": task.type.value,
    }
    if name in values:
        return values[name]
    if task.assignee_id is None:
        return None
    if task.assignee_id.startswith("rol_"):
        seat = uow.team.get(project.id, task.assignee_id)
        return seat.name if seat else task.assignee_id
    user = uow.users.get(task.assignee_id)
    return user.display_name if user else task.assignee_id


def propose_task_delete(
    db: Database,
    actor: Actor,
    *,
    task: str,
    reason: str | None = None,
    project: str | None = None,
    **keyed: Unpack[Keyed],
) -> KeyedResult:
    """Propose deleting a task; only a person's accept removes it.

    Raises:
        ValidationFailed, LimitExceeded, NotFound, PermissionDenied, IdempotencyConflict.
    """
    why = optional_text("reason", reason, MAX_REASON)
    return _propose(
        db,
        actor,
        _Card(
            ProposalKind.TASK_DELETE,
            (project, task),
            {"task": task, "project": project, "reason": why},
            lambda _uow, _proj, found: (
                {"title": found.title, "status": found.status.value} if found else {},
                why,
            ),
        ),
        keyed,
    )


def propose_role(
    db: Database,
    actor: Actor,
    *,
    project: str,
    name: str,
    role: str,
    description: str | None = None,
    **keyed: Unpack[Keyed],
) -> KeyedResult:
    """Propose one team role; on accept it is a human seat nobody holds yet.

    Raises:
        ValidationFailed, LimitExceeded, NotFound, PermissionDenied, IdempotencyConflict.
    """
    payload = {
        "name": check_text("name", name, max_length=MAX_ROLE_NAME, required=True),
        "role": check_text("role", role, max_length=MAX_ROLE_TEXT, required=True),
        "description": optional_text("description", description, MAX_REASON) or None,
    }
    return _propose(db, actor, _project_card(ProposalKind.ROLE, project, payload), keyed)


def propose_composition(
    db: Database,
    actor: Actor,
    *,
    project: str,
    seats: list[dict[str, Any]],
    rationale: str | None = None,
    **keyed: Unpack[Keyed],
) -> KeyedResult:
    """Propose a whole team (1-12 seats) as one card; one accept adds every seat.

    Raises:
        ValidationFailed, LimitExceeded, NotFound, PermissionDenied, IdempotencyConflict.
    """
    checked = check_seats(seats)
    why = optional_text("rationale", rationale, MAX_REASON)
    payload = {"seats": checked, "rationale": why or None}
    return _propose(
        db, actor, _project_card(ProposalKind.COMPOSITION, project, payload, why), keyed
    )


# --- person side: deciding ---------------------------------------------------------------------


proposal_not_found = not_open("proposal", "list the proposals of a project to see them.")


def _decidable(uow: UnitOfWork, actor: Actor, proposal_id: str) -> tuple[Proposal, Project]:
    found = None if "\x00" in proposal_id else proposals_of(uow).get(proposal_id)
    if found is None:
        raise proposal_not_found(proposal_id)
    team = found.kind in TEAM_KINDS
    try:
        access = access_project(
            uow,
            actor,
            found.project_id,
            scope=Scope.TEAM_MANAGE if team else Scope.TASKS_MANAGE,
            role=Role.ADMIN if team else Role.WRITE,
        )
    except NotFound:
        raise proposal_not_found(proposal_id) from None
    if found.status is not ProposalStatus.PENDING:
        raise _already_decided(found)
    return found, access.project


def _already_decided(proposal: Proposal) -> ValidationFailed:
    return ValidationFailed(
        f"Proposal {proposal.id} is already {proposal.status}; a card is decided only once.",
        {
            "field": "proposalId",
            "status": proposal.status,
            "decidedBy": proposal.decided_by,
            "decidedAt": iso(proposal.decided_at),
        },
    )


def _decide(
    db: Database,
    actor: Actor,
    proposal_id: str,
    status: ProposalStatus,
    apply: Callable[[UnitOfWork, Actor, Project, Proposal], CardMade] | None,
) -> ProposalRow:
    def work(uow: UnitOfWork) -> ProposalRow:
        found, project = _decidable(uow, actor, proposal_id)
        repo = proposals_of(uow)
        # Claim first: a second decider waits on the row, then finds it decided.
        if not repo.claim_decision(
            found.id, status=status.value, decided_by=actor_stamp(actor), at=uow.now
        ):
            raise _already_decided(repo.get(found.id) or found)
        if apply is not None:
            repo.set_result(found.id, apply(uow, actor, project, found).as_payload())
        decided = repo.get(found.id)
        assert decided is not None  # noqa: S101 - written just above in this transaction
        (row,) = _rows(uow, [decided])
        _record(uow, actor, f"proposal.{status.value}", project, row, result=decided.result)
        return row

    result: ProposalRow = db.write(work)
    return result


def accept_proposal(db: Database, actor: Actor, proposal_id: str) -> ProposalRow:
    """Apply a pending card in one transaction and mark it accepted with what it made.

    Raises:
        PermissionDenied: through any token, or without the role the card needs.
        NotFound: no such proposal open to the actor, or its task is gone.
        ValidationFailed: the card was already decided, or its change no longer fits the task.
    """
    require_signed_in_person(actor, "Accepting a proposal")
    return _decide(db, actor, proposal_id, ProposalStatus.ACCEPTED, apply_card)


def dismiss_proposal(db: Database, actor: Actor, proposal_id: str) -> ProposalRow:
    """Mark a pending card dismissed; nothing else changes.

    Raises:
        PermissionDenied: through any token, or without the role the card needs.
        NotFound: no such proposal. ValidationFailed: it was already decided.
    """
    require_signed_in_person(actor, "Dismissing a proposal")
    return _decide(db, actor, proposal_id, ProposalStatus.DISMISSED, None)


# --- reading -----------------------------------------------------------------------------------


def get_proposal(db: Database, actor: Actor, proposal_id: str) -> ProposalRow:
    """One proposal card, on a project the actor can open.

    Raises:
        NotFound: no such proposal open to the actor.
    """

    def work(uow: UnitOfWork) -> ProposalRow:
        found, _ = access_owned(uow, actor, proposal_id, proposals_of(uow).get, proposal_not_found)
        return _rows(uow, [found])[0]

    result: ProposalRow = db.read(work)
    return result


def list_proposals(
    db: Database,
    actor: Actor,
    *,
    project: str | None = None,
    status: str | None = None,
    limit: int = 50,
    offset: int = 0,
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
) -> ProposalPage:
    """Proposal cards of the projects open to the actor (or one), newest first, paged.

    Raises:
        ValidationFailed: an unknown status or a bad page. NotFound: an unknown project.
    """
    wanted = parse_enum(status, ProposalStatus, "status").value if status is not None else None
    check_page(limit, offset, MAX_PAGE)

    def work(uow: UnitOfWork) -> ProposalPage:
        ids = list(open_projects(uow, actor, project, workspace_id))
        rows, total = proposals_of(uow).page(ids, status=wanted, limit=limit, offset=offset)
        return ProposalPage(tuple(_rows(uow, rows)), total, offset)

    result: ProposalPage = db.read(work)
    return result


def pending_proposals(uow: UnitOfWork, project_ids: list[str]) -> list[ProposalRow]:
    """The cards waiting for a decision in these projects, newest first (for the inbox)."""
    rows, _ = proposals_of(uow).page(
        project_ids, status=ProposalStatus.PENDING.value, limit=MAX_PAGE, offset=0
    )
    return _rows(uow, rows)
