"""Moving in from other tools: task-master, Backlog.md, GitHub issues and Linear exports become
tasks of a project, in one transaction per import.

Each imported task keeps its origin in `externalReferenceIds` (`github:owner/repo#42`…) and a
line "Imported from …" at the end of its description, its creation time from the file where
the file has one, and history coverage `partial`: Crewboard did not see how the task got to
where it is, so no lifecycle event is made up from its current status or assignee.

Importing the same file again matches tasks by that external reference within the project:
a task whose source item has not changed is left alone (no revision, no event); one whose
item changed gets the changed fields as one revision with the usual events. The fields a
file sets are the file's: a change made to them in Crewboard is set back by a re-import of an
older file. A dry run does the whole import and rolls it back, so its report is exact.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from crewboard.domain.board.imports import SOURCE_NAMES, ImportedTask, SourceFiles, parse
from crewboard.domain.board.imports.model import assignee_label, person_handle
from crewboard.domain.board.tasks import AssigneeType, Relation, Task, TaskStatus, TaskType
from crewboard.domain.identity.access import Role, Scope
from crewboard.domain.identity.records import Actor
from crewboard.domain.ids import new_id
from crewboard.domain.projects import Project
from crewboard.domain.validation import check_email
from crewboard.errors import ValidationFailed
from crewboard.services.board.task_checks import CHECKS
from crewboard.services.board.task_lookup import render_task
from crewboard.services.board.task_updates import check_no_parent_cycle
from crewboard.services.board.tasks import apply_links, camel, event_task, save_task, touch_related
from crewboard.services.identity.access import access_project
from crewboard.services.views import actor_stamp
from crewboard.storage.board.tasks import TaskFilter
from crewboard.storage.database import Database
from crewboard.storage.sequences import TASK_NUMBERS
from crewboard.storage.uow import UnitOfWork

Progress = Callable[[str, int], None]
SCAN_PAGE = 500


def _no_progress(step: str, count: int) -> None:
    """No one is watching."""


@dataclass
class ImportReport:
    """What an import did (or, dry, would do)."""

    source: str
    project: str
    dry_run: bool
    created: list[dict[str, Any]] = field(default_factory=list)
    updated: list[dict[str, Any]] = field(default_factory=list)
    unchanged: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)
    missing_references: list[dict[str, str]] = field(default_factory=list)
    unmapped_people: list[str] = field(default_factory=list)
    owned_by_importer: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """The report on the wire (camelCase), counts first."""
        return {
            "source": self.source,
            "project": self.project,
            "dryRun": self.dry_run,
            "counts": {
                "created": len(self.created),
                "updated": len(self.updated),
                "unchanged": len(self.unchanged),
                "skipped": len(self.skipped),
            },
            "created": self.created,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "skipped": self.skipped,
            "missingReferences": self.missing_references,
            "unmappedPeople": self.unmapped_people,
            "ownedByImporter": self.owned_by_importer,
        }


def import_tasks(
    db: Database,
    actor: Actor,
    *,
    project: str,
    source: str,
    files: SourceFiles,
    user_map: dict[str, str] | None = None,
    dry_run: bool = False,
    advance: Progress | None = None,
) -> ImportReport:
    """Import another tool's tasks into `project` (one transaction), or report what would happen.

    `user_map` maps a person as the source names them (login, email or name) to the email of
    a member of the project.

    Raises:
        ValidationFailed: a malformed file (naming file and line or field), an item twice in
            it, a `user_map` entry that is not a member's email.
        NotFound, PermissionDenied: the project is not open to the actor for writing tasks.
    """
    parsed = parse(source, files)
    seen: set[str] = set()
    for item in parsed.tasks:
        if item.external_id in seen:
            raise ValidationFailed.field(
                "externalId", f"{item.external_id} appears twice in the file; each item once."
            )
        seen.add(item.external_id)
    people = {_key(k): check_email(v) for k, v in (user_map or {}).items()}
    step = advance or _no_progress

    def work(uow: UnitOfWork) -> ImportReport:
        uow.long_transaction()  # a big file is one long transaction
        report = ImportReport(source, project, dry_run)
        report.skipped = [{"ref": s.ref, "reason": s.reason} for s in parsed.skipped]
        _Import(uow, actor, project=project, people=people, report=report, advance=step).run(
            parsed.tasks
        )
        return report

    return db.rehearse(work) if dry_run else db.write(work)


def _key(handle: str) -> str:
    """How a person is matched: as the parsers write a handle (no @), in any case."""
    return person_handle(handle).lower()


class _Import:
    """One import's work inside its transaction."""

    def __init__(
        self,
        uow: UnitOfWork,
        actor: Actor,
        *,
        project: str,
        people: dict[str, str],
        report: ImportReport,
        advance: Progress,
    ) -> None:
        self.uow = uow
        self.actor = actor
        self.project: Project = access_project(
            uow, actor, project, scope=Scope.TASKS_MANAGE, role=Role.WRITE
        ).project
        self.report = report
        self.advance = advance
        self.people = self._resolve_people(people)

    def _resolve_people(self, people: dict[str, str]) -> dict[str, str]:
        """Handle → user id of a member; every project member also by their own email."""
        members = {
            user.email.lower(): user.id for user, _ in self.uow.projects.members(self.project.id)
        }
        resolved = dict(members)
        for handle, email in people.items():
            if email not in members:
                raise ValidationFailed.field(
                    "mapUser",
                    f"{handle}={email}: {email} is not a member of {self.project.key}; map people "
                    "to members (crewboard project add-member first).",
                )
            resolved[handle] = members[email]
        return resolved

    # --- the whole import --------------------------------------------------------------------

    def run(self, items: list[ImportedTask]) -> None:
        existing = self._existing()
        ids: dict[str, str] = {ref: task.id for ref, task in existing.items()}
        fresh: list[tuple[ImportedTask, Task]] = []
        for item in items:
            current = existing.get(item.external_id)
            if current is None:
                task = self._insert(item)
                ids[item.external_id] = task.id
                fresh.append((item, task))
            self.advance("tasks", 1)
        before = set(existing)
        new_ids = {task.id for _, task in fresh}
        for item in items:
            if item.external_id in before:
                self._update(item, existing[item.external_id], ids, new_ids)
        touched: dict[str, int] = {}
        for item, task in fresh:
            touched |= self._link_new(item, task, ids, before={existing[r].id for r in before})
            self.advance("links", 1)
        touch_related(self.uow, self.actor, self.project, touched)
        self._announce(fresh)

    def _existing(self) -> dict[str, Task]:
        """The project's tasks that came from this source, by external reference."""
        prefix = f"{self.report.source}:"
        found: dict[str, Task] = {}
        after: tuple[int, str] | None = None
        while True:
            rows, _ = self.uow.tasks.search(
                TaskFilter(project_ids=[self.project.id]), limit=SCAN_PAGE, after=after
            )
            for task in rows:
                for ref in task.external_reference_ids:
                    if ref.startswith(prefix):
                        found.setdefault(ref, task)
            if len(rows) < SCAN_PAGE:
                return found
            after = (rows[-1].number, rows[-1].project_id)

    # --- the fields a file sets ----------------------------------------------------------------

    def _wanted(self, item: ImportedTask) -> dict[str, Any]:
        """The task fields `item` sets, checked as create_task checks them."""
        mapped: list[str] = []
        labels = list(item.labels)
        for handle in item.people:
            user_id = self.people.get(_key(handle))
            if user_id is None:
                labels.append(assignee_label(handle))
                if handle not in self.report.unmapped_people:
                    self.report.unmapped_people.append(handle)
            elif user_id not in mapped:
                mapped.append(user_id)
        wanted: dict[str, Any] = {
            "title": CHECKS["title"](item.title),
            "description": CHECKS["description"](item.description),
            "status": item.status,
            "priority": item.priority,
            "labels": CHECKS["labels"](labels[:20]),
            "cycle": CHECKS["cycle"](item.cycle),
            "due_date": item.due_date,
        }
        if mapped:
            wanted |= {"assignee_id": mapped[0], "assignee_type": AssigneeType.HUMAN}
        return wanted

    def _owner_if_started(self, item: ImportedTask, task: Task) -> Task:
        """A task in progress names who does it: with no person mapped, the importer."""
        if task.status is TaskStatus.IN_PROGRESS and not (task.assignee_id or task.human_owner_id):
            self.report.owned_by_importer.append(item.external_id)
            return replace(task, human_owner_id=self.actor.user_id)
        return task

    # --- new tasks -------------------------------------------------------------------------------

    def _insert(self, item: ImportedTask) -> Task:
        uow, project = self.uow, self.project
        wanted = self._wanted(item)
        stamp = actor_stamp(self.actor)
        created = min(item.created_at, uow.now) if item.created_at else uow.now
        task = Task(
            id=new_id("tsk"),
            project_id=project.id,
            number=0,
            type=TaskType.GENERAL,
            brief="",
            assignee_id=wanted.pop("assignee_id", None),
            assignee_type=wanted.pop("assignee_type", None),
            human_owner_id=None,
            tags=(),
            start_date=None,
            story_points=None,
            parent_task_id=None,
            context_refs=(),
            context_item_ids=(),
            external_reference_ids=(item.external_id,),
            output_destination=None,
            board_order=uow.tasks.next_board_order(project.id, item.status.value),
            revision=1,
            coverage="partial",
            created_by=stamp,
            updated_by=stamp,
            created_at=created,
            updated_at=uow.now,
            **wanted,
        )
        task = self._owner_if_started(item, task)
        task = replace(task, number=uow.sequences.take_next(project.id, TASK_NUMBERS))
        uow.tasks.add(task)
        self.report.created.append(self._entry(item, task))
        return task

    def _link_new(
        self, item: ImportedTask, task: Task, ids: dict[str, str], *, before: set[str]
    ) -> dict[str, int]:
        """A new task's parent and blockers, once every task of the file has its id; the tasks
        that were there before the import and whose relationships changed (to touch)."""
        parent = self._resolve(item, "parent", [item.parent] if item.parent else [], ids)
        if parent:
            task = replace(task, parent_task_id=parent[0])
            check_no_parent_cycle(self.uow, self.project, task.id, parent[0])
            self.uow.tasks.replace(task, task.revision)
        blockers = tuple(self._resolve(item, "blockedBy", list(item.blocked_by), ids))
        if not blockers:
            return {}
        _, others = apply_links(self.uow, self.project, task, blockers)
        return {other: count for other, count in others.items() if other in before}

    def _resolve(
        self, item: ImportedTask, what: str, refs: list[str], ids: dict[str, str]
    ) -> list[str]:
        found = []
        for ref in refs:
            if ref in ids and ids[ref] != ids.get(item.external_id):
                found.append(ids[ref])
            elif ref not in ids:
                self.report.missing_references.append(
                    {"externalId": item.external_id, "field": what, "ref": ref}
                )
        return list(dict.fromkeys(found))

    def _announce(self, fresh: list[tuple[ImportedTask, Task]]) -> None:
        """A task.created event per new task, with its final parent and relationships."""
        for _, made in fresh:
            task = self.uow.tasks.get(made.id) or made
            view = render_task(self.uow, task, self.project)
            self.uow.record_event(
                "task.created",
                actor=self.actor.as_payload(),
                payload={"task": event_task(view)},
                project_id=self.project.id,
                workspace_id=self.project.workspace_id,
            )

    # --- tasks imported before --------------------------------------------------------------------

    def _update(
        self, item: ImportedTask, current: Task, ids: dict[str, str], new_ids: set[str]
    ) -> None:
        wanted = self._wanted(item)
        parent = self._resolve(item, "parent", [item.parent] if item.parent else [], ids)
        if parent:
            wanted["parent_task_id"] = parent[0]
        changed = sorted(camel(k) for k, v in wanted.items() if getattr(current, k) != v)
        blockers = self._resolve(item, "blockedBy", list(item.blocked_by), ids)
        links = self.uow.tasks.links_of([current.id])[current.id]
        had = {link.other_id for link in links if link.relation is Relation.BLOCKED_BY}
        if not changed and set(blockers) == had:
            self.report.unchanged.append(self._entry(item, current))
            return
        updated = self._owner_if_started(item, replace(current, **wanted))
        if updated.parent_task_id and updated.parent_task_id != current.parent_task_id:
            check_no_parent_cycle(self.uow, self.project, current.id, updated.parent_task_id)
        if updated.status is not current.status:
            updated = replace(
                updated,
                board_order=self.uow.tasks.next_board_order(self.project.id, updated.status.value),
            )
        counts, others = apply_links(self.uow, self.project, current, tuple(blockers))
        if set(blockers) != had:
            changed.append("blockedByTaskIds")
        saved = save_task(
            self.uow, self.actor, self.project, current, updated, changed=changed, blockers=counts
        )
        # A task made by this import is announced whole at the end, not touched.
        old = {other: count for other, count in others.items() if other not in new_ids}
        touch_related(self.uow, self.actor, self.project, old)
        self.report.updated.append(self._entry(item, saved) | {"changed": changed})

    def _entry(self, item: ImportedTask, task: Task) -> dict[str, Any]:
        return {
            "externalId": item.external_id,
            "key": f"{self.project.key}-{task.number}",
            "title": task.title,
        }


def source_name(source: str) -> str:
    """The tool's own name (task-master, Backlog.md…) for messages."""
    return SOURCE_NAMES.get(source, source)
