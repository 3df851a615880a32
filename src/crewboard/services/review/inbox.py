"""A person's inbox: what waits for them across the projects they can open.

Hand-ins to review, proposal cards to accept or dismiss, questions to answer and messages
addressed to them (or to a seat they hold), newest first, with a count of each kind; each item
says whether this person has read it (`read`), and `unread` counts those they have not.
"""

from __future__ import annotations

from typing import Any

from crewboard.domain.identity.records import Actor
from crewboard.services.board.notes import notes_of, question_view, task_ref_view
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
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork

MAX_ITEMS = 200
KINDS = ("hand_in", "proposal", "question", "message")


def inbox(
    db: Database, actor: Actor, *, project: str | None = None, limit: int = 50
) -> dict[str, Any]:
    """Everything waiting for this person, newest first, and how many of each kind.

    Raises:
        PermissionDenied: through a token (the inbox is where a person decides).
        ValidationFailed: limit outside 1–200. NotFound: an unknown project.
    """
    require_signed_in_person(actor, "Reading the review inbox")
    check_limit(limit, MAX_ITEMS)

    def work(uow: UnitOfWork) -> dict[str, Any]:
        projects = open_projects(uow, actor, project, ANY_WORKSPACE)
        ids = list(projects)
        mine = addressees(uow, actor, ids)
        items = [
            *({**d, "kind": "hand_in"} for d in waiting_drafts(uow, ids)),
            *(
                {**p, "kind": "proposal", "proposalKind": p["kind"]}
                for p in pending_proposals(uow, ids)
            ),
            *({**q, "kind": "question"} for q in _open_questions(uow, projects)),
            *(
                {**m, "kind": "message"}
                for m in recent_messages(uow, ids, MAX_ITEMS)
                if m["participantId"] in mine
            ),
        ]
        items.sort(key=lambda item: str(item["createdAt"]), reverse=True)
        counts = {kind: sum(1 for item in items if item["kind"] == kind) for kind in KINDS}
        read = read_items(uow, actor, (item["id"] for item in items))
        for item in items:
            item["read"] = (item["kind"], item["id"]) in read
        return {
            "projects": [{"id": p.id, "key": p.key, "name": p.name} for p in projects.values()],
            "counts": counts,
            "total": len(items),
            "unread": sum(1 for item in items if not item["read"]),
            "items": items[:limit],
        }

    return db.read(work)


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
