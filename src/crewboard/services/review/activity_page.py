"""The activity stream as a person reads it in the web app: one project's entries, filtered by
kind and by who acted, a page at a time going back in time, each actor shown as itself.

An agent shows as the AI seat its token acts as (or the token's name), for the person whose
token it is; a person acting through a personal token, with that token's name. Token names
and seats are resolved at read time for the whole page in a fixed number of queries.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from crewboard.domain.identity.records import Actor, User
from crewboard.domain.projects import TeamRole, acting_seat
from crewboard.domain.review import ActivityRead, AgentChoice, EventRow, ShownEntry, TokenName
from crewboard.errors import ValidationFailed
from crewboard.services.identity.access import ANY_WORKSPACE, open_projects
from crewboard.services.paging import check_limit
from crewboard.services.review.activity import (
    HAND_IN,
    MAX_LIMIT,
    NOISE,
    cursor_of,
    entry_of,
    parse_cursor,
)
from crewboard.services.seats import ai_seats
from crewboard.storage.database import Database
from crewboard.storage.review.activity import ActivityRepository, EventQuery
from crewboard.storage.uow import UnitOfWork

# The kinds a reader filters by, each the event type prefixes it covers.
KINDS: dict[str, tuple[str, ...]] = {
    "tasks": ("task.created", "task.updated", "task.deleted"),
    "notes": (
        "task.comment_posted",
        "task.agent_update_posted",
        "task.output_saved",
        "task.repo_",
    ),
    "questions": ("task.question_",),
    "hand_ins": (HAND_IN,),
    "proposals": ("proposal.",),
    "messages": ("message.",),
    "project": ("state.", "team.", "project."),
}
OPERATOR = "the server operator"


@dataclass(frozen=True)
class _Names:
    """Who the page's actors are: people by id, tokens by id, the project's active AI seats."""

    people: dict[str, str]
    tokens: dict[str, TokenName]
    seats: list[TeamRole]

    def seat_of(self, token: TokenName) -> TeamRole | None:
        """The seat an agent token acts as, by the rule its hand-ins are stamped with."""
        return acting_seat(token.seat_id, self.seats)

    def stamp(self, actor: dict[str, Any]) -> dict[str, Any]:
        """The actor of an event as the inbox's stamps name it (kind, person, token, seat)."""
        kind = actor.get("kind")
        user_id = actor.get("userId")
        shown: dict[str, Any] = {
            "kind": kind,
            "userId": user_id,
            "displayName": OPERATOR if kind == "operator" else self.people.get(str(user_id)),
        }
        if kind == "integration":  # named by the integration ("GitHub"), not the person
            shown["integration"] = actor.get("integration")
        token = self.tokens.get(str(actor.get("tokenId")))
        if token is None:
            return shown
        shown["tokenName"] = token.name
        seat = self.seat_of(token) if kind == "agent_token" else None
        return shown | ({"roleId": seat.id, "roleName": seat.name} if seat else {})

    def agent(self, token: TokenName) -> AgentChoice:
        """An agent token as a choice of the "who" filter."""
        seat = self.seat_of(token)
        return AgentChoice(
            id=token.id,
            name=seat.name if seat else token.name,
            token_name=token.name,
            owner=self.people.get(token.user_id),
            revoked=token.revoked_at is not None,
        )


def read_activity(
    db: Database,
    actor: Actor,
    *,
    project: str,
    kind: str | None = None,
    who: str | None = None,
    before: str | None = None,
    limit: int = 50,
) -> ActivityRead:
    """One page of a project's activity, newest first, before the entry `before` (a cursor from
    an earlier page): entries with `by` (who acted, resolved), `older` (the cursor of the page
    after this one, or None), `now`, and the people and agents the `who` filter accepts.

    `kind`: one of KINDS. `who`: a member's user id (their own work, directly or through a
    personal token) or an agent token id of the project.

    Raises:
        ValidationFailed: an unknown kind, a `who` that is neither a member nor an agent of the
            project, a `before` that is not an activity cursor, or a limit outside 1-100.
        NotFound: the project is not open to the actor.
    """
    check_limit(limit, MAX_LIMIT)
    prefixes = _kind_prefixes(kind)
    before_id = parse_cursor(before, "before") if before else None

    def work(uow: UnitOfWork) -> ActivityRead:
        (project_id,) = open_projects(uow, actor, project, ANY_WORKSPACE)
        members = [user for user, _ in uow.projects.members(project_id)]
        query = EventQuery(
            project_ids=[project_id],
            limit=limit + 1,
            noise=NOISE,
            only_prefixes=prefixes,
            token_id=who if who and not who.startswith("usr_") else None,
            person_id=who if who and who.startswith("usr_") else None,
            before_id=before_id,
        )
        repo = ActivityRepository(uow.conn)
        events = repo.events(query)
        shown = events[:limit]
        names = _names(uow, repo, project_id, members, shown)
        agents = [t for t in names.tokens.values() if _agent_of(t, project_id)]
        _check_who(who, members, agents)
        hand_ins = repo.hand_ins(
            str(e.payload["draftId"])
            for e in shown
            if e.type.startswith(HAND_IN) and e.payload.get("draftId")
        )
        return ActivityRead(
            entries=tuple(
                ShownEntry(entry_of(e, actor, hand_ins), names.stamp(e.actor), _changed_fields(e))
                for e in shown
            ),
            older=cursor_of(shown[-1].id) if len(events) > limit else None,
            now=uow.now,
            people=tuple((u.id, u.display_name) for u in members),
            agents=tuple(
                sorted(
                    (names.agent(t) for t in agents), key=lambda a: (a.revoked, a.name.casefold())
                )
            ),
        )

    result: ActivityRead = db.read(work)
    return result


def _changed_fields(event: EventRow) -> list[str]:
    """The fields a task change changed, by their wire names (the page words them)."""
    changed = event.payload.get("changed") if event.type == "task.updated" else None
    return [str(name) for name in changed] if isinstance(changed, list) else []


def _kind_prefixes(kind: str | None) -> tuple[str, ...]:
    """Raises: ValidationFailed naming `kind` and the kinds there are."""
    if kind is None:
        return ()
    if kind not in KINDS:
        raise ValidationFailed.field("kind", f"{kind!r} is not a kind of activity.", list(KINDS))
    return KINDS[kind]


def _agent_of(token: TokenName, project_id: str) -> bool:
    return token.kind == "agent" and token.project_id == project_id


def _check_who(who: str | None, members: list[User], agents: list[TokenName]) -> None:
    """Raises: ValidationFailed naming `who` unless a member or an agent of the project."""
    if who is None or who in {u.id for u in members} | {t.id for t in agents}:
        return
    raise ValidationFailed.field(
        "who", f"{who!r} is neither a member nor an agent of this project; pick one from the list."
    )


def _names(
    uow: UnitOfWork,
    repo: ActivityRepository,
    project_id: str,
    members: list[User],
    events: Iterable[EventRow],
) -> _Names:
    events = list(events)
    people = {u.id: u.display_name for u in members}
    tokens = {t.id: t for t in repo.tokens(project_id, (e.token_id for e in events if e.token_id))}
    # People who have left the project still name their old rows (and their tokens' owners).
    gone = {str(e.actor.get("userId")) for e in events if e.actor.get("userId")}
    gone |= {t.user_id for t in tokens.values()}
    for user_id in sorted(gone - set(people)):
        user = uow.users.get(user_id)
        if user is not None:
            people[user.id] = user.display_name
    return _Names(people, tokens, ai_seats(uow, project_id))
