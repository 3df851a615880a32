"""The activity stream: the work log of the projects an actor can open, with the AI hand-ins and
what people decided about each, newest first, or oldest first after a cursor to keep polling.

A cursor is "act_" and an event id in base 36: entries after it are the events written later.
Hand-in entries carry the draft's id and current status, never its text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from crewboard.domain.identity.records import Actor
from crewboard.domain.review import ActivityEntry, ActivityPage, EventRow, HandIn
from crewboard.errors import ValidationFailed
from crewboard.services.board.task_lookup import access_task
from crewboard.services.identity.access import ANY_WORKSPACE, WorkspaceRef, open_projects
from crewboard.services.paging import check_limit
from crewboard.storage.database import Database
from crewboard.storage.review.activity import ActivityRepository, EventQuery
from crewboard.storage.uow import UnitOfWork

MAX_LIMIT = 100
MAX_CURSOR = 200
CURSOR = re.compile(r"^act_([0-9a-z]{1,13})$")
HAND_IN = "draft."
ANSWER = "task.question_answered"
# What `mine` lists: this token's hand-ins with their decisions, and answers to its questions.
MINE = (HAND_IN, ANSWER)
# Identity and access bookkeeping, and a person clearing their own inbox: not what a team
# follows.
# Notifications are one person's, not the project's story.
NOISE = ("user.", "token.", "workspace.", "message.dismissed", "notification.")
_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"

# --- cursors -------------------------------------------------------------------------------


def cursor_of(event_id: int) -> str:
    digits = ""
    value = event_id
    while True:
        value, rest = divmod(value, 36)
        digits = _DIGITS[rest] + digits
        if value == 0:
            return f"act_{digits}"


def parse_cursor(since: str, field: str = "since") -> int:
    """Raises: ValidationFailed naming `field` for anything list_activity did not issue."""
    match = CURSOR.match(since) if len(since) <= MAX_CURSOR else None
    if match is None:
        raise ValidationFailed.field(
            field,
            "is not a cursor from list_activity; pass the cursor an earlier answer gave, "
            "or leave it out for the newest entries.",
        )
    return int(match.group(1), 36)


# --- entries -------------------------------------------------------------------------------


def entry_of(event: EventRow, actor: Actor, hand_ins: dict[str, HandIn]) -> ActivityEntry:
    """One event as an activity entry: a hand-in's with its draft as it is now; `mine` for a
    token's own hand-ins and the answers to its questions."""
    token = actor.token.id if actor.token else None
    if event.type == ANSWER:
        return ActivityEntry(event, None, token is not None and token == event.token_id)
    if not event.type.startswith(HAND_IN):
        return ActivityEntry(event, None, False)
    draft = hand_ins.get(str(event.payload.get("draftId")))
    mine = token is not None and token in (event.token_id, draft.token_id if draft else None)
    return ActivityEntry(event, draft, mine)


def list_activity(
    db: Database,
    actor: Actor,
    *,
    project: str | None = None,
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
    limit: int = 20,
    since: str | None = None,
    mine: bool = False,
    task: str | None = None,
) -> ActivityPage:
    """Activity entries and the cursor to poll from next.

    Without `since`: the newest entries, newest first. With it: the entries after it, oldest
    first. The cursor is the newest entry's (or `since` when nothing is new; act_0 at first).
    `mine`: only this token's hand-ins and the decisions about them, and the answers to the
    questions it asked. `task`: id or key.

    Raises:
        ValidationFailed: limit outside 1-100 or a cursor list_activity did not issue.
        NotFound: the project or task is not open to the actor.
    """
    check_limit(limit, MAX_LIMIT)
    after_id = parse_cursor(since) if since is not None else None

    def work(uow: UnitOfWork) -> ActivityPage:
        ids = list(open_projects(uow, actor, project, workspace_id))
        task_id = None
        if task is not None:
            found, owner = access_task(uow, actor, task, workspace_id=workspace_id)
            if project is not None and owner.id not in ids:
                ids = []
            task_id = found.id
        if mine and actor.token is None:
            ids = []  # a person's own hand-ins: none, hand-ins come through tokens
        query = EventQuery(
            project_ids=ids,
            limit=limit,
            noise=NOISE,
            task_id=task_id,
            token_id=actor.token.id if mine and actor.token else None,
            only_prefixes=MINE if mine else (),
            after_id=after_id,
        )
        repo = ActivityRepository(uow.conn)
        events = repo.events(query)
        hand_ins = repo.hand_ins(
            str(e.payload["draftId"])
            for e in events
            if e.type.startswith(HAND_IN) and e.payload.get("draftId")
        )
        entries = tuple(entry_of(e, actor, hand_ins) for e in events)
        return ActivityPage(entries, next_cursor(entries, since, oldest_first=after_id is not None))

    result: ActivityPage = db.read(work)
    return result


def next_cursor(entries: Sequence[ActivityEntry], since: str | None, *, oldest_first: bool) -> str:
    """The newest entry's cursor; `since` (or act_0) when there is none."""
    if not entries:
        return since or cursor_of(0)
    newest = entries[-1] if oldest_first else entries[0]
    return cursor_of(newest.event.id)
