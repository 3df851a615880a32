"""A person's inbox: what waits for them across the projects they can open.

Hand-ins to review, proposal cards to accept or dismiss, questions to answer and messages
addressed to them (or to a seat they hold), newest first, with a count of each kind; each item
says whether this person has read it (`read`), and `unread` counts those they have not.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from crewboard.domain.identity.records import Actor
from crewboard.domain.review import InboxItem, InboxPage
from crewboard.services.board.note_views import question_view
from crewboard.services.board.notes import notes_of, task_ref_view
from crewboard.services.identity.access import (
    ANY_WORKSPACE,
    open_projects,
    require_signed_in_person,
)
from crewboard.services.paging import check_limit
from crewboard.services.review.drafts import waiting_drafts
from crewboard.services.review.messages import addressees, recent_messages
from crewboard.services.review.proposals import pending_proposals
from crewboard.services.review.reads import read_items
from crewboard.services.views import iso
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork

MAX_ITEMS = 200
KINDS = ("hand_in", "proposal", "question", "message")


def inbox(db: Database, actor: Actor, *, project: str | None = None, limit: int = 50) -> InboxPage:
    """Everything waiting for this person, newest first, and how many of each kind.

    Raises:
        PermissionDenied: through a token (the inbox is where a person decides).
        ValidationFailed: limit outside 1–200. NotFound: an unknown project.
    """
    require_signed_in_person(actor, "Reading the review inbox")
    check_limit(limit, MAX_ITEMS)

    def work(uow: UnitOfWork) -> InboxPage:
        projects = open_projects(uow, actor, project, ANY_WORKSPACE)
        ids = list(projects)
        mine = addressees(uow, actor, ids)
        items = [
            *(
                InboxItem("hand_in", d.draft.id, iso(d.draft.created_at) or "", d)
                for d in waiting_drafts(uow, ids)
            ),
            *(
                InboxItem("proposal", p.proposal.id, iso(p.proposal.created_at) or "", p)
                for p in pending_proposals(uow, ids)
            ),
            *(
                InboxItem("question", q["id"], str(q["createdAt"]), q)
                for q in _open_questions(uow, projects)
            ),
            *(
                InboxItem("message", m.id, iso(m.created_at) or "", m)
                for m in recent_messages(uow, ids, MAX_ITEMS)
                if m.participant_id in mine
            ),
        ]
        items.sort(key=lambda item: item.created_at, reverse=True)
        counts = {kind: sum(1 for item in items if item.kind == kind) for kind in KINDS}
        read = read_items(uow, actor, (item.id for item in items))
        items = [replace(item, read=(item.kind, item.id) in read) for item in items]
        return InboxPage(
            projects=tuple(projects.values()),
            counts=counts,
            total=len(items),
            unread=sum(1 for item in items if not item.read),
            items=tuple(items[:limit]),
        )

    result: InboxPage = db.read(work)
    return result


def _open_questions(uow: UnitOfWork, projects: dict[str, Any]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for project in projects.values():
        rows, _ = notes_of(uow).open_questions(project.id, limit=MAX_ITEMS, offset=0)
        tasks = uow.tasks.get_many(q.task_id for q in rows)
        for question in rows:
            view = question_view(question)
            found.append(
                {
                    **view,
                    "createdAt": view["askedAt"],
                    "task": task_ref_view(tasks[question.task_id], project),
                }
            )
    return found
