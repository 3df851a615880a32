"""Ticking a checkbox line of a spec file: the web page's box, saved as the file's next
revision from the revision the page showed. In a `tasks.md` the save moves the line's task on
the board, as any save of the file does (tasks_md.do_sync_tasks)."""

from __future__ import annotations

from dataclasses import dataclass

from crewboard.domain.files import FileKind
from crewboard.domain.identity.access import Role, Scope
from crewboard.domain.identity.records import Actor
from crewboard.domain.specs import SourceTask, SpecFile
from crewboard.domain.tasks_md import Box, is_tasks_file, parse, set_box
from crewboard.errors import ValidationFailed
from crewboard.services.identity.access import WorkspaceRef
from crewboard.services.specs.file_lookup import FileRef, find_file
from crewboard.services.specs.file_saves import conflict_of, do_update_file
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork

BOX_NAMES = {"done": Box.DONE, "in_progress": Box.IN_PROGRESS, "pending": Box.PENDING}


@dataclass(frozen=True)
class BoxSet:
    """A box after a tick: the file now, whether a revision was saved, and the line's task on
    the board (a `tasks.md` line's; None for any other file)."""

    file: SpecFile
    saved: bool
    box: Box
    task: SourceTask | None


def check_box_name(name: str) -> Box:
    """Raises: ValidationFailed naming the accepted values."""
    found = BOX_NAMES.get(name)
    if found is None:
        raise ValidationFailed.field("box", f"“{name}” is not a box.", list(BOX_NAMES))
    return found


def set_spec_file_box(
    db: Database,
    actor: Actor,
    *,
    project: str,
    workspace_id: WorkspaceRef,
    ref: FileRef,
    line: int,
    box: Box,
    expected_version: str,
) -> BoxSet:
    """Show `box` on the checkbox line `line` of a file still at `expected_version`: one byte
    changes, in a new revision (none when the box already shows it).

    Raises:
        RevisionConflict: the file changed since that version (nothing saved; details name
            who saved it and when). ValidationFailed: the line holds no box, or the file is
            not text. NotFound (a trashed file too), PermissionDenied.
    """
    ref = ref.check()

    def work(uow: UnitOfWork) -> BoxSet:
        file, access = find_file(
            uow, actor, project=project, ref=ref, scope=Scope.SPECS_WRITE, role=Role.WRITE,
            workspace_id=workspace_id,
        )  # fmt: skip
        if file.content_version != expected_version:
            raise conflict_of(file, expected_version)
        if file.kind is not FileKind.TEXT:
            raise ValidationFailed.field("line", f"{file.path} is not text: it has no boxes.")
        content = uow.blobs.read(file.digest)
        item = next((i for i in parse(content) if i.line == line), None)
        if item is None:
            raise ValidationFailed.field(
                "line", f"line {line} of {file.path} is not a checkbox line (- [ ] title)."
            )
        saved = item.box is not box
        if saved:
            file, _revision = do_update_file(
                uow, actor, file=file, access=access, content=set_box(content, item, box),
                expected=expected_version,
            )  # fmt: skip
        return BoxSet(file, saved, box, _task_on(uow, file, line, access.project.key))

    return db.write(work)


def _task_on(uow: UnitOfWork, file: SpecFile, line: int, key: str) -> SourceTask | None:
    if not is_tasks_file(file.path):
        return None
    for task in uow.tasks.of_source_files([file.id]):
        if task.source_line == line:
            return SourceTask(task.id, f"{key}-{task.number}", task.title, task.status.value, line)
    return None
