"""What a project's settings page shows, read in one transaction.

The project itself (with the viewer's role and how its handoffs go), its acceptance rules, and
the choices a rule can name: the task types, the project documents and the project's active AI
roles.
"""

from __future__ import annotations

from dataclasses import dataclass

from crewboard.domain.board.tasks import TaskType
from crewboard.domain.identity.records import Actor
from crewboard.domain.memory import ProjectDocument
from crewboard.domain.projects import SeatKind, TeamRole, ViewedProject
from crewboard.domain.review import AcceptanceRule, RuleMatch
from crewboard.services.identity.access import access_project
from crewboard.services.review.decisions import drafts_of
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork


@dataclass(frozen=True)
class ProjectSettings:
    """The settings page: the project, its rules, and what a rule may name."""

    project: ViewedProject
    rules: tuple[AcceptanceRule, ...]
    ai_roles: tuple[TeamRole, ...]
    task_types: tuple[str, ...] = tuple(t.value for t in TaskType)
    documents: tuple[str, ...] = tuple(d.value for d in ProjectDocument)
    rule_matches: tuple[str, ...] = tuple(m.value for m in RuleMatch)


def project_settings(db: Database, actor: Actor, project: str) -> ProjectSettings:
    """The project, its rules and what a rule may name.

    Raises:
        NotFound: the project is not open to the actor.
    """

    def work(uow: UnitOfWork) -> ProjectSettings:
        access = access_project(uow, actor, project)
        proj = access.project
        return ProjectSettings(
            project=ViewedProject(proj, access.role, uow.projects.handoff_settings(proj.id)),
            rules=tuple(drafts_of(uow).rules(proj.id)),
            ai_roles=tuple(s for s in uow.team.list(proj.id) if s.kind is SeatKind.AI),
        )

    result: ProjectSettings = db.read(work)
    return result
