"""Everything said and linked on one task, in one read: notes, outputs, questions, repositories.

It gathers from `notes` and `repos`, which is why it is a module of its own: `repos` builds on
`notes`, and this read sits above both. contract/board/present.py words it.
"""

from __future__ import annotations

from crewboard.domain.board.reads import TaskActivity
from crewboard.domain.identity.records import Actor
from crewboard.services.board import repos
from crewboard.services.board.notes import AGENT_UPDATE, COMMENT, noted_task, notes_of
from crewboard.services.board.task_lookup import access_task
from crewboard.services.identity.access import ANY_WORKSPACE, WorkspaceRef
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork

ACTIVITY_ROWS = 50  # rows per section of task_activity


def task_activity(
    db: Database, actor: Actor, task: str, *, workspace_id: WorkspaceRef = ANY_WORKSPACE
) -> TaskActivity:
    """Everything said and linked on a task, each part newest first (at most 50 rows) with
    its total: comments, agent updates, outputs (newest version per name, previewed),
    questions with their answers, repository links and status reports.

    Raises:
        NotFound: the task is not open to the actor.
    """

    def work(uow: UnitOfWork) -> TaskActivity:
        found, project = access_task(uow, actor, task, workspace_id=workspace_id)
        notes = notes_of(uow)
        comments, comments_total = notes.comments(
            found.id, kinds=(COMMENT,), limit=ACTIVITY_ROWS, offset=0
        )
        updates, updates_total = notes.comments(
            found.id, kinds=(AGENT_UPDATE,), limit=ACTIVITY_ROWS, offset=0
        )
        outputs, outputs_total = notes.latest_outputs(found.id, limit=ACTIVITY_ROWS, offset=0)
        questions, questions_total = notes.task_questions(found.id, limit=ACTIVITY_ROWS)
        return TaskActivity(
            task=noted_task(found, project),
            comments=tuple(comments),
            comments_total=comments_total,
            agent_updates=tuple(updates),
            agent_updates_total=updates_total,
            outputs=tuple(outputs),
            outputs_total=outputs_total,
            questions=tuple(questions),
            questions_total=questions_total,
            repos=repos.task_repo_sections(uow, found, limit=ACTIVITY_ROWS),
        )

    return db.read(work)
