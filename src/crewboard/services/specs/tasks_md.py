"""`tasks.md` files and the board, in sync both ways.

File → board: every save of a spec file named `tasks.md` (`upload_spec_file`,
`update_spec_file`) runs `do_sync_tasks` in its transaction. Each checkbox line is a task:
a line that matches a task the file made before (same title, else a similar one; see
`domain/tasks_md.match`) updates it (title, details as its description, the status its box
says when the box moved to another group, its line), a new line makes a task, and a task
whose line is gone is closed: status `done` and no source line any more (the board has no
cancelled status; `done` takes it off the active columns, and `sourceLine: null` with its
`sourceFileId` kept says it left the file rather than being finished there). The web's edit
page asks the person first (`check_leaving_choices`): each such task moves to Done, or stays
on the board as it is, no longer in the file (a task that left its file is no longer among
its tasks: later saves leave it alone).

Board → file: `TasksMdFiles` is the board's `TaskSourceFiles` hook, registered on the Database
by `install` (create_app, the CLI). A status change of a task from a file rewrites its box:
one new revision per file per call, saved by whoever moved the task.

The trash bin: trashing a `tasks.md` leaves its tasks on the board as they are, and their
status changes do not touch the file while it is there; restoring it writes the board's
statuses into its boxes (`do_restore_boxes`), so the two agree again.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from crewboard.domain.board.tasks import MAX_LONG_TEXT, MAX_TITLE, Task, TaskStatus
from crewboard.domain.files import FileKind, kind_of, normalise_path
from crewboard.domain.identity.records import Actor
from crewboard.domain.projects import Project
from crewboard.domain.specs import SpecFile
from crewboard.domain.tasks_md import (
    BOX_OF,
    STATUS_OF_BOX,
    Box,
    Known,
    TaskItem,
    is_tasks_file,
    match,
    parse,
    set_box,
    status_for_box,
)
from crewboard.errors import CrewboardError, NotFound, RevisionConflict, ValidationFailed
from crewboard.services.board.task_sources import SourceFile, register
from crewboard.services.board.tasks import do_add_source_task, save_task
from crewboard.services.specs.comment_anchors import do_reanchor_threads
from crewboard.services.specs.revisions import new_revision, record_save
from crewboard.services.views import iso, who_of
from crewboard.storage.database import Database, LostRace
from crewboard.storage.specs.files import SpecFileRepository
from crewboard.storage.uow import UnitOfWork


def install(db: Database) -> None:
    """Let the board rewrite the boxes of tasks that come from `tasks.md` files."""
    register(db, TasksMdFiles())


# --- file → board --------------------------------------------------------------------------


def do_sync_tasks(
    uow: UnitOfWork,
    actor: Actor,
    *,
    project: Project,
    file: SpecFile,
    content: bytes,
    keep: frozenset[str] = frozenset(),
) -> dict[str, list[str]]:
    """Make the board say what a just-saved `tasks.md` says; the ids of the tasks created,
    updated, closed and kept. A task whose line left the file is closed, unless `keep` names
    it: then it stays on the board as it is, no longer in the file. Any other file, or a binary
    save, changes nothing."""
    result: dict[str, list[str]] = {"created": [], "updated": [], "closed": [], "kept": []}
    if not is_tasks_file(file.path) or kind_of(content) is not FileKind.TEXT:
        return result
    items = parse(content)
    tasks = uow.tasks.of_source_files([file.id])
    by_id = {task.id: task for task in tasks}
    found = match([Known(t.id, t.title, t.source_line or 0) for t in tasks], items)
    lines: list[tuple[str, int | None]] = []
    for i, item in enumerate(items):
        task_id = found.get(i)
        if task_id is None:
            made = do_add_source_task(
                uow, actor, project, title=item.title[:MAX_TITLE],
                description=item.details[:MAX_LONG_TEXT], status=STATUS_OF_BOX[item.box],
                source_file_id=file.id, source_line=item.line,
            )  # fmt: skip
            result["created"].append(made.id)
            continue
        task = by_id[task_id]
        if _follow_line(uow, actor, project, task, item):
            result["updated"].append(task.id)
        if task.source_line != item.line:
            lines.append((task.id, item.line))
    for task in tasks:
        if task.id in found.values():
            continue
        if task.id in keep:
            result["kept"].append(task.id)
        else:
            _close(uow, actor, project, task)
            result["closed"].append(task.id)
        lines.append((task.id, None))
    # A line that only moved (lines added or removed above it) is layout, like board order:
    # no new task revision, no event of its own.
    uow.tasks.set_source_lines(lines)
    return result


LEAVING_CHOICES = ("done", "keep")  # what may become of a task whose line a save removes


def tasks_leaving(uow: UnitOfWork, file: SpecFile, content: bytes) -> list[Task]:
    """The tasks whose lines saving `content` as `file` would remove, in line order (none for
    a file that is not a `tasks.md`)."""
    if not is_tasks_file(file.path) or kind_of(content) is not FileKind.TEXT:
        return []
    tasks = uow.tasks.of_source_files([file.id])
    found = match([Known(t.id, t.title, t.source_line or 0) for t in tasks], parse(content))
    kept = set(found.values())
    return [t for t in tasks if t.id not in kept]


def check_leaving_choices(
    uow: UnitOfWork,
    project: Project,
    file: SpecFile,
    content: bytes,
    choices: Mapping[str, str],
) -> frozenset[str]:
    """The tasks to keep on the board, when every task whose line the save removes has a
    choice (`done`: close it, as any save does; `keep`: leave it on the board as it is).

    Raises:
        ValidationFailed: a task leaving the file has no choice (details list them all, with
            key, title and status), or its choice is not one of LEAVING_CHOICES.
    """
    leaving = tasks_leaving(uow, file, content)
    for task in leaving:
        choice = choices.get(task.id)
        if choice is not None and choice not in LEAVING_CHOICES:
            raise ValidationFailed.field(
                "removedTasks",
                f"“{choice}” is not a choice for {project.key}-{task.number}, whose line this "
                "save removes.",
                list(LEAVING_CHOICES),
            )
    missing = [t for t in leaving if t.id not in choices]
    if missing:
        shown = [
            {
                "id": t.id,
                "key": f"{project.key}-{t.number}",
                "title": t.title,
                "status": t.status.value,
                "line": t.source_line,
            }
            for t in missing
        ]
        names = "; ".join(f"{t['key']} “{t['title']}”" for t in shown)
        raise ValidationFailed(
            f"removedTasks: this save removes the lines of {names}. Choose for each whether "
            "its task moves to Done or stays on the board, no longer in the file. Accepted "
            f"values: {', '.join(LEAVING_CHOICES)}.",
            {"field": "removedTasks", "accepted": list(LEAVING_CHOICES), "tasks": shown},
        )
    return frozenset(t.id for t in leaving if choices[t.id] == "keep")


def _follow_line(
    uow: UnitOfWork, actor: Actor, project: Project, task: Task, item: TaskItem
) -> bool:
    """Give `task` its line's title, details and box; whether it changed (and was saved)."""
    status = status_for_box(task.status, item.box)
    updated = replace(
        task,
        title=item.title[:MAX_TITLE],
        description=item.details[:MAX_LONG_TEXT],
        status=status,
        source_line=item.line,
    )
    if (
        updated.status is TaskStatus.IN_PROGRESS
        and updated.assignee_id is None
        and updated.human_owner_id is None
    ):
        # The board's rule: a task in progress names who does the work. A box the file turned
        # to `[-]` on a task nobody has names whoever saved the file.
        updated = replace(updated, human_owner_id=actor.user_id)
    changed = [  # as task.updated events name fields (camelCase)
        name
        for name, attr in (
            ("title", "title"),
            ("description", "description"),
            ("status", "status"),
            ("humanOwnerId", "human_owner_id"),
        )
        if getattr(updated, attr) != getattr(task, attr)
    ]
    if not changed:
        return False
    if status is not task.status:
        updated = replace(updated, board_order=uow.tasks.next_board_order(project.id, status.value))
    save_task(uow, actor, project, task, updated, changed=changed)
    return True


def _close(uow: UnitOfWork, actor: Actor, project: Project, task: Task) -> None:
    """A task whose line left the file: done, unless it already shows `[x]` (the caller takes
    it off its line)."""
    status = status_for_box(task.status, Box.DONE)
    if status is not task.status:
        order = uow.tasks.next_board_order(project.id, status.value)
        updated = replace(task, status=status, board_order=order)
        save_task(uow, actor, project, task, updated, changed=["status"])


# --- board → file --------------------------------------------------------------------------


class TasksMdFiles:
    """The board's TaskSourceFiles: what it asks of the `tasks.md` files its tasks come from."""

    def refusals(
        self,
        uow: UnitOfWork,
        project: Project,  # noqa: ARG002 - the protocol's; file ids are unique across projects
        file_ids: Iterable[str],
        expected: Mapping[str, str],
    ) -> dict[str, CrewboardError]:
        repo = SpecFileRepository(uow.conn)
        refused: dict[str, CrewboardError] = {}
        for file_id in file_ids:
            wanted = expected.get(file_id)
            file = repo.get(file_id)
            if wanted is None or file is None or file.content_version == wanted:
                continue
            refused[file_id] = _changed_since(file, wanted)
        return refused

    def statuses_changed(
        self, uow: UnitOfWork, actor: Actor, project: Project, tasks: list[Task]
    ) -> None:
        by_file: dict[str, list[Task]] = defaultdict(list)
        for task in tasks:
            if task.source_file_id is not None and task.source_line is not None:
                by_file[task.source_file_id].append(task)
        for file_id, own in sorted(by_file.items()):
            _rewrite_boxes(uow, actor, project, file_id, own)

    def describe(self, uow: UnitOfWork, file_ids: Iterable[str]) -> dict[str, SourceFile]:
        repo = SpecFileRepository(uow.conn)
        found: dict[str, SourceFile] = {}
        for file_id in set(file_ids):
            file = repo.get(file_id)
            if file is not None:
                found[file_id] = SourceFile(file.path, file.content_version)
        return found

    def find(self, uow: UnitOfWork, project_ids: Sequence[str], ref: str) -> list[str]:
        repo = SpecFileRepository(uow.conn)
        if ref.startswith("spf_") and not any(c in ref for c in "/.\x00"):  # an id, not a path
            file = repo.get(ref)
            found = [file] if file is not None and file.project_id in project_ids else []
        else:
            path = normalise_path(ref, "file")
            found = repo.at_path(project_ids, path)
        if not found:
            raise NotFound(
                f"No spec file {ref!r} here; list_spec_files shows a project's files.",
                {"resource": "specFile", "field": "file", "ref": ref},
            )
        tasks_files = [file.id for file in found if is_tasks_file(file.path)]
        if not tasks_files:
            raise ValidationFailed.field(
                "file", f"{found[0].path} is not a tasks.md file; name a tasks.md by id or path."
            )
        return tasks_files


def do_restore_boxes(uow: UnitOfWork, actor: Actor, project: Project, file: SpecFile) -> None:
    """A `tasks.md` just taken out of the trash bin: its boxes show the board again.

    While the file was in the trash its boxes were not rewritten (a trashed file gets no new
    revisions), and the board went on; the restore writes one revision, by the restorer, with
    every box showing its task's status now. A file whose boxes already agree is left alone."""
    if not is_tasks_file(file.path):
        return
    linked = [task for task in uow.tasks.of_source_files([file.id]) if task.source_line]
    if linked:
        _rewrite_boxes(uow, actor, project, file.id, linked)


def _changed_since(file: SpecFile, expected: str) -> RevisionConflict:
    by = file.updated_by
    who = who_of(by)
    return RevisionConflict(
        f"{file.path} changed since you read it: {who} saved revision {file.revision_count} at "
        f"{iso(file.updated_at)}, so this task's box was not rewritten and its status was not "
        "changed. List the tasks again for the new contentVersion, then retry.",
        {
            "field": f"expectedVersions.{file.id}",
            "fileId": file.id,
            "path": file.path,
            "expectedVersion": expected,
            "currentVersion": file.content_version,
            "currentRevision": file.revision_count,
            "updatedBy": by,
            "updatedAt": iso(file.updated_at),
        },
    )


def _rewrite_boxes(
    uow: UnitOfWork, actor: Actor, project: Project, file_id: str, tasks: list[Task]
) -> None:
    """One new revision of the file with these tasks' boxes showing their statuses (none when
    every box already does). A file in the trash bin, binary now, or whose line no longer holds
    a box is left as it is: the board change stands."""
    repo = SpecFileRepository(uow.conn)
    file = repo.get(file_id)
    if file is None or file.trashed_at is not None or file.kind is not FileKind.TEXT:
        return
    content = uow.blobs.read(file.digest)
    by_line = {item.line: item for item in parse(content)}
    text = content
    for task in tasks:
        item = by_line.get(task.source_line or 0)
        want = BOX_OF[task.status]
        if item is None or item.box is want:
            continue
        text = set_box(text, item, want)  # one byte: every other offset stays
    if text == content:
        return
    saved = new_revision(
        uow, actor, file_id=file.id, project_id=file.project_id,
        number=file.revision_count + 1, content=text,
    )  # fmt: skip
    if not repo.advance(saved, expected_version=file.content_version):
        raise LostRace(_changed_since(repo.get(file.id) or file, file.content_version))
    repo.add_revision(saved)
    updated = repo.get(file.id)
    assert updated is not None  # noqa: S101 - just written in this transaction
    record_save(
        uow, actor, workspace_id=project.workspace_id, kind="spec_file.updated",
        file=updated, saved=saved,
    )  # fmt: skip
    do_reanchor_threads(
        uow, actor, file=file, saved=saved, content=text, workspace_id=project.workspace_id
    )
