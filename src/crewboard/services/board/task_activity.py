"""Everything said and linked on one task, in one read: notes, outputs, questions, repositories.

It gathers from `notes` and `repos`, which is why it is a module of its own: `repos` builds on
`notes`, and this read sits above both.
"""

from __future__ import annotations

from typing import Any

from crewboard.domain.identity.records import Actor
from crewboard.services.board import repos
from crewboard.services.board.notes import (
    AGENT_UPDATE,
    COMMENT,
    comment_view,
    notes_of,
    output_preview_view,
    question_view,
    task_ref_view,
)
from crewboard.services.board.task_lookup import access_task
from crewboard.services.identity.access import ANY_WORKSPACE, WorkspaceRef
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork

ACTIVITY_ROWS = 50  # rows per section of task_activity


def task_activity(
    db: Database, actor: Actor, task: str, *, workspace_id: WorkspaceRef = ANY_WORKSPACE
) -> dict[str, Any]:
    """Everything said and linked on a task, each section newest first (at most 50 rows) with
    its total: comments, agent updates, outputs (newest version per name, previewed),
    questions with their answers, repository links and status reports.

    Raises:
        NotFound: the task is not open to the actor.
    """

    def work(uow: UnitOfWork) -> dict[str, Any]:
        found, project = access_task(uow, actor, task, workspace_id=workspace_id)
        notes = notes_of(uow)
        sections: dict[str, Any] = {"task": task_ref_view(found, project)}
        for name, kind in (("comments", COMMENT), ("agentUpdates", AGENT_UPDATE)):
            rows, total = notes.comments(found.id, kinds=(kind,), limit=ACTIVITY_ROWS, offset=0)
            sections[name] = {"items": [comment_view(c) for c in rows], "total": total}
        outputs, total = notes.latest_outputs(found.id, limit=ACTIVITY_ROWS, offset=0)
        sections["outputs"] = {
            "items": [output_preview_view(o) for o in outputs],
            "total": total,
        }
        questions, total = notes.task_questions(found.id, limit=ACTIVITY_ROWS)
        sections["questions"] = {"items": [question_view(q) for q in questions], "total": total}
        return sections | repos.task_repo_sections_dict(uow, found, limit=ACTIVITY_ROWS)

    return db.read(work)
