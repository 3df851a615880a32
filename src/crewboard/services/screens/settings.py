"""What a project's settings page shows, read in one transaction.

The project itself (with the viewer's role), its acceptance rules, and the choices a rule can
name: the task types and the project's active AI roles.
"""

from __future__ import annotations

from typing import Any

from crewboard.domain.board.tasks import TaskType
from crewboard.domain.identity.records import Actor
from crewboard.domain.memory import ProjectDocument
from crewboard.domain.projects import SeatKind
from crewboard.domain.review import RuleMatch
from crewboard.services.identity.access import access_project
from crewboard.services.projects.projects import with_handoffs
from crewboard.services.review.decisions import drafts_of
from crewboard.services.views import project_view
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork


def project_settings(db: Database, actor: Actor, project: str) -> dict[str, Any]:
    """The project, its rules and what a rule may name.

    Raises:
        NotFound: the project is not open to the actor.
    """

    def work(uow: UnitOfWork) -> dict[str, Any]:
        access = access_project(uow, actor, project)
        proj = access.project
        seats = [s for s in uow.team.list(proj.id) if s.kind is SeatKind.AI]
        return {
            "project": with_handoffs(uow, project_view(proj, access.role)),
            "rules": [r.as_payload() for r in drafts_of(uow).rules(proj.id)],
            "aiRoles": [{"id": s.id, "name": s.name, "role": s.role} for s in seats],
            "taskTypes": [t.value for t in TaskType],
            "documents": [d.value for d in ProjectDocument],
            "ruleMatches": [m.value for m in RuleMatch],
        }

    result: dict[str, Any] = db.read(work)
    return result
