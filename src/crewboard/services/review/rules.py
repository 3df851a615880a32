"""Acceptance rules: a project admin lets hand-ins be accepted without review.

A rule takes every hand-in of its project (`all`), those on tasks of one type (`task_type`)
or those of one AI role (`ai_role`). Only a person turns rules on or off, never a token.
"""

from __future__ import annotations

from crewboard.domain.board.tasks import AssigneeType, Task, TaskType
from crewboard.domain.identity.access import Role, parse_enum
from crewboard.domain.identity.records import Actor
from crewboard.domain.ids import new_id
from crewboard.domain.projects import SeatKind
from crewboard.domain.review import AcceptanceRule, RuleMatch
from crewboard.errors import AlreadyExists, ValidationFailed
from crewboard.services.identity.access import (
    access_owned,
    access_project,
    not_open,
    require_signed_in_person,
)
from crewboard.services.memory import records as memory
from crewboard.services.review.decisions import drafts_of
from crewboard.services.views import actor_stamp
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork

# A more specific rule wins when several match a hand-in.
_PRECEDENCE = (RuleMatch.AI_ROLE, RuleMatch.TASK_TYPE, RuleMatch.ALL)


def _check_value(
    uow: UnitOfWork, project_id: str, match: RuleMatch, value: str | None
) -> str | None:
    if match is RuleMatch.ALL:
        if value is not None:
            raise ValidationFailed.field("value", "a rule matching all hand-ins takes no value.")
        return None
    if match is RuleMatch.TASK_TYPE:
        if value is None:
            raise ValidationFailed.field(
                "value", "name the task type.", [t.value for t in TaskType]
            )
        return str(parse_enum(value, TaskType, "value"))
    seats = [s for s in uow.team.list(project_id) if s.kind is SeatKind.AI]
    if value not in {s.id for s in seats}:
        raise ValidationFailed.field(
            "value", "name one of the project's AI roles by id.", [s.id for s in seats]
        )
    return value


def add_rule(
    db: Database,
    actor: Actor,
    project: str,
    *,
    match: str,
    value: str | None = None,
    collection: str | None = None,
    document: str | None = None,
) -> AcceptanceRule:
    """Turn on an acceptance rule (a person with the admin role on the project).

    Raises:
        PermissionDenied: through a token, or below the admin role. NotFound: the project.
        ValidationFailed: an unknown match, a value that does not fit it, an unknown
            collection or document. AlreadyExists: the same rule is on already.
    """
    require_signed_in_person(actor, "Turning on an acceptance rule")
    kind = parse_enum(match, RuleMatch, "match")
    doc = memory.check_document(document, "document") if document is not None else None

    def work(uow: UnitOfWork) -> AcceptanceRule:
        proj = access_project(uow, actor, project, role=Role.ADMIN).project
        checked = _check_value(uow, proj.id, kind, value)
        repo = drafts_of(uow)
        if any(r.match == kind and r.value == checked for r in repo.rules(proj.id)):
            raise AlreadyExists(
                f"{proj.key} already has an acceptance rule for {kind}"
                + (f" {checked}" if checked else "")
                + "; remove it first to change where it files results.",
                {"match": str(kind), "value": checked},
            )
        rule = AcceptanceRule(
            id=new_id("rul"),
            project_id=proj.id,
            match=kind,
            value=checked,
            collection=(
                memory.resolve_collection(proj, collection, "collection")
                if collection is not None
                else None
            ),
            document=str(doc) if doc is not None else None,
            created_by=actor_stamp(actor),
            created_at=uow.now,
        )
        repo.add_rule(rule)
        uow.record_event(
            "acceptance_rule.added",
            actor=actor.as_payload(),
            payload={"rule": rule.as_payload()},
            project_id=proj.id,
            workspace_id=proj.workspace_id,
        )
        return rule

    result: AcceptanceRule = db.write(work)
    return result


def list_rules(db: Database, actor: Actor, project: str) -> list[AcceptanceRule]:
    """A project's acceptance rules, oldest first.

    Raises:
        NotFound: the project is not open to the actor.
    """

    def work(uow: UnitOfWork) -> list[AcceptanceRule]:
        proj = access_project(uow, actor, project).project
        return list(drafts_of(uow).rules(proj.id))

    result: list[AcceptanceRule] = db.read(work)
    return result


_rule_not_found = not_open("rule", "list the project's rules.", noun="acceptance rule")


def remove_rule(db: Database, actor: Actor, rule_id: str) -> AcceptanceRule:
    """Turn an acceptance rule off; what it accepted earlier stays accepted.

    Raises:
        PermissionDenied: through a token, or below the admin role. NotFound: no such rule.
    """
    require_signed_in_person(actor, "Turning off an acceptance rule")

    def work(uow: UnitOfWork) -> AcceptanceRule:
        repo = drafts_of(uow)
        rule, proj = access_owned(
            uow, actor, rule_id, repo.get_rule, _rule_not_found, role=Role.ADMIN
        )
        repo.remove_rule(rule.id)
        uow.record_event(
            "acceptance_rule.removed",
            actor=actor.as_payload(),
            payload={"rule": rule.as_payload()},
            project_id=proj.id,
            workspace_id=proj.workspace_id,
        )
        return rule

    result: AcceptanceRule = db.write(work)
    return result


def matching_rule(
    uow: UnitOfWork, project_id: str, task: Task, role_id: str | None
) -> AcceptanceRule | None:
    """The rule that takes a hand-in on `task` (by `role_id` or the task's AI role), if any."""
    roles: set[str | None] = {role_id} - {None}
    if task.assignee_type is AssigneeType.AI and task.assignee_id:
        roles.add(task.assignee_id)
    wanted: dict[RuleMatch, set[str | None]] = {
        RuleMatch.ALL: {None},
        RuleMatch.TASK_TYPE: {str(task.type)},
        RuleMatch.AI_ROLE: roles,
    }
    rules = drafts_of(uow).rules(project_id)
    for kind in _PRECEDENCE:
        for rule in rules:
            if rule.match == kind and rule.value in wanted[kind]:
                return rule
    return None
