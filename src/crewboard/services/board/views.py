"""A task's checklist, readiness and agent brief, the list columns, and the task's wire form
(which write answers and contract/board/present.py share)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from crewboard.domain.board.reads import ChecklistItem, Readiness, TaskShown
from crewboard.domain.board.tasks import PREVIEW_CHARS, Relation, Task, TaskStatus
from crewboard.domain.projects import Project, TeamRole
from crewboard.services.views import iso

CHECKBOX = re.compile(r"^\s*[-*]\s+\[( |x|X|-)\]\s+(.+?)\s*$", re.MULTILINE)
FINISHED = frozenset({TaskStatus.APPROVED, TaskStatus.DONE})
AGENT_BRIEF_LIMIT = 3000
AGENT_BRIEF_TEXT = 1500  # the brief's share, so what follows it still fits
AGENT_BRIEF_RECORD = 240
CLAIM_LINE_ROOM = 240  # what get_task's agent brief keeps free for the line naming its holder
# The summary projection's column naming a task's live claim: its rows carry claimedBy and
# claimedUntil, and only while a claim holds the task. Not a column `fields` picks: each enum
# value costs the default toolset's tools/list characters.
CLAIM_FIELD = "claimedBy"


def task_key(project: Project, task: Task) -> str:
    return f"{project.key}-{task.number}"


def task_view(shown: TaskShown) -> dict[str, Any]:
    """The whole task as answers and write acknowledgements carry it (camelCase)."""
    task, project, links, numbers = shown.task, shown.project, shown.links, shown.numbers
    blocked_by = [link.other_id for link in links if link.relation is Relation.BLOCKED_BY]
    return {
        "id": task.id,
        "key": task_key(project, task),
        "number": task.number,
        "projectId": task.project_id,
        "workspaceId": project.workspace_id,
        "title": task.title,
        "description": task.description,
        "brief": task.brief,
        "type": str(task.type),
        "status": str(task.status),
        "priority": str(task.priority),
        "assigneeId": task.assignee_id,
        "assigneeType": task.assignee_type and str(task.assignee_type),
        "humanOwnerId": task.human_owner_id,
        "tags": list(task.tags),
        "labels": list(task.labels),
        "dueDate": task.due_date and task.due_date.isoformat(),
        "startDate": task.start_date and task.start_date.isoformat(),
        "storyPoints": task.story_points,
        "cycle": task.cycle,
        "parentTaskId": task.parent_task_id,
        "parentNumber": numbers.get(task.parent_task_id) if task.parent_task_id else None,
        "blockedByTaskIds": blocked_by,
        "blockedByNumbers": [numbers.get(other) for other in blocked_by],
        "relationships": [
            {
                "type": str(link.relation),
                "taskId": link.other_id,
                "number": numbers.get(link.other_id),
            }
            for link in links
        ],
        "contextRefs": list(task.context_refs),
        "contextItemIds": list(task.context_item_ids),
        "externalReferenceIds": list(task.external_reference_ids),
        "outputDestination": task.output_destination,
        "boardOrder": task.board_order,
        "revision": task.revision,
        "createdAt": iso(task.created_at),
        "updatedAt": iso(task.updated_at),
        "updatedBy": task.updated_by,
    }


LIST_FIELDS = (
    "number",
    "key",
    "boardOrder",
    "tags",
    "labels",
    "dueDate",
    "parentTaskId",
    "blockedByTaskIds",
    "title",
    "status",
    "priority",
    "type",
    "assigneeId",
    "assigneeType",
    "updatedAt",
    "revision",
    "brief",
    "description",
    "humanOwnerId",
    "startDate",
    "createdAt",
)
# The list columns that are columns of the task table, with theirs: a row of only these (and
# the key) is read from those columns alone, without loading whole tasks.
FIELD_COLUMNS = {
    "number": "number",
    "boardOrder": "board_order",
    "tags": "tags",
    "labels": "labels",
    "dueDate": "due_date",
    "parentTaskId": "parent_task_id",
    "title": "title",
    "status": "status",
    "priority": "priority",
    "type": "type",
    "assigneeId": "assignee_id",
    "assigneeType": "assignee_type",
    "updatedAt": "updated_at",
    "revision": "revision",
    "humanOwnerId": "human_owner_id",
    "startDate": "start_date",
    "createdAt": "created_at",
}
DEFAULT_LIST_FIELDS = (
    "number",
    "key",
    "title",
    "status",
    "priority",
    "type",
    "assigneeId",
    "assigneeType",
    "tags",
    "dueDate",
    "parentTaskId",
    "blockedByTaskIds",
    "revision",
    "updatedAt",
    "description",
)


# The summary projection: what finding work needs (who holds a task too), no long text.
SUMMARY_FIELDS = (
    "number",
    "key",
    "title",
    "status",
    "priority",
    "assigneeId",
    "assigneeType",
    "humanOwnerId",
    "dueDate",
    "startDate",
    "createdAt",
    "updatedAt",
    CLAIM_FIELD,
)
# The compact projection, an agent's default: what choosing a task takes and nothing else.
# The key names the task in every tool, the revision is what update_task needs; assignee
# and due date only when set, the history coverage only when not complete, the title's
# truncation flag only when it was cut. About 120 characters for a 40-character title, so a
# page of 200 rows is under 30 KB (the board projection, below, reads whole boards).
COMPACT_FIELDS = ("key", "title", "status", "priority", "assigneeId", "dueDate", "revision")
COMPACT_OPTIONAL = frozenset({"assigneeId", "dueDate"})
# The board projection: the whole board in few calls. Each row is an array in these columns
# (the answer names them once), up to 500 rows a page. A row holds at most BOARD_ROW_CHARS
# characters of JSON unless its other columns crowd the title below BOARD_TITLE_MIN: the
# title takes the room the rest leaves (cut ending in "…"), the assignee is a name, tags are
# kept whole while they fit BOARD_TAG_CHARS, then "+N" says how many more. About 70
# characters for a 30-character title and one tag: a page holds 466 to 500 rows within the
# answer's budget, so 1,000 tasks come in two or three calls and 5,000 in at most eleven.
BOARD_COLUMNS = ("key", "title", "status", "assignee", "tags", "priority", "due")
BOARD_ROW_CHARS = 100
BOARD_TITLE_MIN = 32
BOARD_NAME_CHARS = 16
BOARD_TAG_CHARS = 16
LIST_TEXT_FIELDS = ("brief", "description")
TITLE_CHARS = 240
# Text cut in list rows (full text: get_task), each with its `<name>Truncated` flag. With
# these bounds one row always fits the response budget, whatever columns it carries.
ROW_TEXT_LIMITS = {"title": TITLE_CHARS, "brief": PREVIEW_CHARS, "description": PREVIEW_CHARS}


def checklist(task: Task) -> tuple[ChecklistItem, ...]:
    """Markdown checkboxes in the brief and description: `- [ ]` open, `- [x]` done, `- [-]` doing."""
    return tuple(
        ChecklistItem(label, {" ": "open", "-": "in_progress"}.get(mark, "done"))
        for source in (task.brief, task.description)
        for mark, label in CHECKBOX.findall(source)
    )


def readiness(
    task: Task, blockers: list[Task], open_subtasks: int, items: Sequence[ChecklistItem]
) -> Readiness:
    """Whether the task can be finished: no open blocker, no open subtask, no open checklist item."""
    open_blockers = [b for b in blockers if b.status not in FINISHED]
    open_items = sum(1 for item in items if item.state != "done")
    reasons = []
    if open_blockers:
        reasons.append(f"{len(open_blockers)} blocking task(s) not finished")
    if open_subtasks:
        reasons.append(f"{open_subtasks} subtask(s) not finished")
    if open_items:
        reasons.append(f"{open_items} checklist item(s) open")
    return Readiness(
        reasons=tuple(reasons),
        open_blocker_ids=tuple(b.id for b in open_blockers),
        open_subtasks=open_subtasks,
        open_checklist_items=open_items,
        finished=task.status in FINISHED,
    )


def agent_brief(
    project: Project,
    task: Task,
    parent: Task | None,
    blockers: list[Task],
    state_text: str,
    *,
    named: Sequence[tuple[str, str]] = (),
    role: TeamRole | None = None,
    questions: tuple[int, int] = (0, 0),
    limit: int = AGENT_BRIEF_LIMIT,
) -> str:
    """The task as plain text for a subagent's prompt, at most 3000 characters.

    `named` holds (title, text) of the accepted records the task names; each is shown by its
    title and first lines. `questions`: how many of the task's questions are answered and open.
    """
    parts = [f"Task {task_key(project, task)}: {task.title}", f"Status: {task.status}"]
    if role is not None:
        parts.append(_role_line(role))
    if any(questions):
        parts.append(
            f"Questions to people: {questions[0]} answered, {questions[1]} open "
            "(read them with get_task or list_task_notes)"
        )
    if task.brief or task.description:
        parts.append(f"Brief:\n{_clip(task.brief or task.description, AGENT_BRIEF_TEXT)}")
    if parent is not None:
        parts.append(f"Part of {task_key(project, parent)}: {parent.title}")
    if blockers:
        parts.append(
            "Blocked by:\n"
            + "\n".join(f"- {task_key(project, b)} {b.title} ({b.status})" for b in blockers)
        )
    if named:
        parts.append(
            "Project memory this task names:\n"
            + "\n".join(f"- {title}: {_first_lines(text)}" for title, text in named)
        )
    if state_text:
        parts.append(f"Project state:\n{state_text}")
    text = "\n\n".join(parts)
    if len(text) <= limit:
        return text
    return text[: limit - 40].rstrip() + "\n… (cut; read the task with get_task)"


def _role_line(role: TeamRole) -> str:
    line = f"Assigned to: {role.name} ({role.kind} role)"
    if role.model:
        effort = f" at {role.effort} effort" if role.effort else ""
        line += f"; run it on {role.model}{effort}, rank {role.rank}"
    return line


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _first_lines(text: str, lines: int = 3) -> str:
    """The first non-empty lines of a record, on one line, clipped."""
    kept = [line.strip() for line in text.splitlines() if line.strip()][:lines]
    return _clip(" ".join(kept), AGENT_BRIEF_RECORD)
