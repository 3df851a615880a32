"""The AI seat an agent token acts as: chosen when the token is made, stored on it.

A seat is a team role of kind ai of the token's project. The token's name does not decide
it. A token that stores no seat (made before seats were chosen, or made without one) acts as
its project's only AI seat when there is exactly one, else as none. A stored seat that is
archived later leaves the token acting as no seat; the listing says so.

Shared by the identity area (issuing and listing tokens) and every area that stamps what an
agent does, so it sits beside `views`, outside the areas.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from crewboard.domain.identity.access import TokenKind
from crewboard.domain.identity.records import Actor, ApiToken, SeatState, TokenSeat
from crewboard.domain.projects import SeatKind, TeamRole, acting_seat
from crewboard.errors import ValidationFailed
from crewboard.storage.uow import UnitOfWork


def ai_seats(uow: UnitOfWork, project_id: str) -> list[TeamRole]:
    """The project's active AI seats, in team order."""
    return [r for r in uow.team.list(project_id) if r.kind is SeatKind.AI]


def ai_seats_of_projects(uow: UnitOfWork, project_ids: Iterable[str]) -> list[TeamRole]:
    """The active AI seats of several projects, in one query."""
    return [r for r in uow.team.list_many(sorted(set(project_ids))) if r.kind is SeatKind.AI]


def ai_seat_of(uow: UnitOfWork, actor: Actor) -> TeamRole | None:
    """The AI seat an agent token acts as (see the module); None for anyone but an agent token
    bound to one project."""
    if not actor.is_agent or actor.project_cap is None or actor.token is None:
        return None
    return acting_seat(actor.token.seat_id, ai_seats(uow, actor.project_cap))


def check_seat(uow: UnitOfWork, project_id: str | None, kind: TokenKind, seat: str) -> str:
    """The id of the seat `seat` names (its id or its name, any case) among the project's
    active AI seats.

    Raises:
        ValidationFailed: naming `seat`: no project, not an agent token, or no such AI seat
            (with the seats there are), or a name two seats share.
    """
    if project_id is None:
        raise ValidationFailed.field(
            "seat", "a seat belongs to one project's team: name the project too."
        )
    if kind is not TokenKind.AGENT:
        raise ValidationFailed.field(
            "seat", "only an agent token acts as an AI seat; make it with kind agent."
        )
    seats = ai_seats(uow, project_id)
    wanted = seat.strip()
    named = [s for s in seats if wanted == s.id or wanted.casefold() == s.name.casefold()]
    if len(named) == 1:
        return named[0].id
    accepted = [f"{s.name} ({s.id})" for s in seats]
    if named:
        raise ValidationFailed.field(
            "seat", f"{len(named)} AI seats are named {wanted!r}; give the seat's id.", accepted
        )
    raise ValidationFailed.field(
        "seat",
        f"{wanted!r} is not an active AI seat of this project."
        + ("" if seats else " It has none: add one on the team page first."),
        accepted,
    )


def token_seats(uow: UnitOfWork, tokens: Sequence[ApiToken]) -> dict[str, TokenSeat]:
    """The seat of each agent token bound to a project, by token id, in two queries."""
    agents = [t for t in tokens if t.kind is TokenKind.AGENT and t.project_id is not None]
    seats = ai_seats_of_projects(uow, (t.project_id for t in agents if t.project_id))
    by_project: dict[str, list[TeamRole]] = {}
    for s in seats:
        by_project.setdefault(s.project_id, []).append(s)
    stored = {t.seat_id for t in agents if t.seat_id} - {s.id for s in seats}
    gone = {r.id: r for r in _roles(uow, agents, stored)}
    return {t.id: _seat_of(t, by_project.get(str(t.project_id), []), gone) for t in agents}


def _roles(uow: UnitOfWork, tokens: Sequence[ApiToken], ids: set[str]) -> list[TeamRole]:
    """The (archived) roles `ids` names, looked up in their tokens' projects."""
    found = (uow.team.get(str(t.project_id), str(t.seat_id)) for t in tokens if t.seat_id in ids)
    return [r for r in found if r is not None]


def _seat_of(token: ApiToken, seats: list[TeamRole], gone: dict[str, TeamRole]) -> TokenSeat:
    acting = acting_seat(token.seat_id, seats)
    if acting is not None:
        state = SeatState.CHOSEN if token.seat_id else SeatState.ONLY
        return TokenSeat(state, acting.id, acting.name)
    if token.seat_id is None:
        return TokenSeat(SeatState.NONE)
    lost = gone.get(token.seat_id)
    return TokenSeat(SeatState.REMOVED, token.seat_id, lost.name if lost else None)
