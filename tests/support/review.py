"""A project ready for the review loop: an AI seat, an accepted record, a task, an agent token."""

from __future__ import annotations

from crewboard.contract.projects import present
from crewboard.domain.identity.records import User
from crewboard.domain.memory import MemoryRecord
from crewboard.services.board import tasks
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.services.memory import records as memory
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork
from tests.support.factories import make_project

AGENT_SCOPES = ["read", "tasks.manage", "drafts.create", "messages.write", "team.manage"]


def review_world(db: Database, owner: User, key: str = "CRW") -> dict[str, str]:
    """Project `key` (collections general, architecture) with a seat "Coder", a record in
    architecture/decisions, a ready_for_ai task for the seat naming that record, and an agent
    token that can hand in. Answers their ids and the token's secret."""
    make_project(db, owner, key, collections=["general", "architecture"])
    actor = person_actor(owner)
    seat = present.add_team_role(db, actor, project=key, name="Coder", role="Backend", kind="ai")

    def file(uow: UnitOfWork) -> MemoryRecord:
        project = uow.projects.get_with_role(key, owner.id)[0]
        return memory.file_record(
            uow,
            actor,
            project,
            title="Sessions live in Redis",
            summary="Where login sessions are kept",
            content="Login sessions are stored in Redis with a 30 minute expiry.",
            collection="architecture",
            document="decisions",
            source_draft_id=None,
        )

    record = db.write(file)
    made = tasks.create_task(
        db,
        actor,
        project=key,
        workspace_id=None,
        idempotency_key="task-1",
        title="Fix the login redirect after session expiry",
        brief="After the session expires the login page loops. Fix the redirect.",
        status="ready_for_ai",
        assignee_id=seat["id"],
        assignee_type="ai",
        context_item_ids=[record.id],
    )
    secret = tokens.issue_token(db, actor, kind="agent", project=key, scopes=AGENT_SCOPES).secret
    return {
        "seat": seat["id"],
        "record": record.id,
        "task": made.body["task"]["id"],
        "secret": secret,
        "owner": owner.email,
    }
