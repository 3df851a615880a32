"""Board tasks in words: the one place that turns the typed task reads of `services/board`
(domain/board/reads.py) into the camelCase answers every door gives (MCP, REST, the CLI's JSON,
the MCP resources and the web page), cuts list rows to their columns and fits get_task's answer
to the reply budget (contract/board/fitting.py)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import date, datetime
from typing import Any

from crewboard.contract.board.fitting import fit_task_answer, pack_room
from crewboard.contract.board.present_notes import (
    comment_view,
    noted_task_view,
    notes_section_view,
    output_preview_view,
    question_view,
    repos_section_view,
)
from crewboard.domain.board.claims import HeldClaim
from crewboard.domain.board.context import ContextPack
from crewboard.domain.board.reads import (
    AgentBrief,
    ChecklistItem,
    Readiness,
    TaskActivity,
    TaskRead,
    TaskShown,
    TaskSource,
    TaskText,
)
from crewboard.domain.projects import Project, TeamRole
from crewboard.services.board.claims import claim_view
from crewboard.services.board.queries import BoardLine, TaskColumns, TaskLine, TaskPage
from crewboard.services.board.views import (
    BOARD_COLUMNS,
    BOARD_NAME_CHARS,
    BOARD_ROW_CHARS,
    BOARD_TAG_CHARS,
    BOARD_TITLE_MIN,
    CLAIM_FIELD,
    FIELD_COLUMNS,
    ROW_TEXT_LIMITS,
    TITLE_CHARS,
    task_key,
    task_view,
)
from crewboard.services.projects.team import team_role_view
from crewboard.services.text_windows import ANSWER_BUDGET, window
from crewboard.services.views import iso

ROLE_FIELDS = ("id", "name", "kind", "model", "effort", "rank")


# --- get_task ----------------------------------------------------------------------------------


def get_task_view(
    found: TaskRead | TaskText | AgentBrief, budget: int | None = ANSWER_BUDGET
) -> dict[str, Any]:
    """get_task's answer: the whole task (within `budget` bytes; None: all of it), one window
    of its text, or the plain text for a subagent."""
    if isinstance(found, AgentBrief):
        return {"format": "agent_brief", "text": agent_brief_text(found)}
    if isinstance(found, TaskText):
        return text_window_view(found, budget or ANSWER_BUDGET)
    return task_answer(found, budget)


# --- claims ------------------------------------------------------------------------------------


def held_claim_view(held: HeldClaim) -> dict[str, Any]:
    """A task's live claim as get_task shows it: the claim (fence, holder ids, lease) and the
    holder's names: `by` (its seat, else its token, else its person) and each of them."""
    view = claim_view(held.claim)
    view["holder"] |= {
        "by": held.name,
        "person": held.person,
        "tokenName": held.token_name,
        "seatName": held.seat_name,
    }
    return view


def holder_words(held: HeldClaim) -> str:
    """Who holds a claim, in words: the seat or token, and the person behind it."""
    if held.name == held.person:
        return held.person
    return f"{held.name} (for {held.person})"


def claim_line(held: HeldClaim) -> str:
    """The line an agent brief carries while a claim holds the task."""
    return (
        f"Claimed by {holder_words(held)} until {iso(held.claim.expires_at)} "
        f"(fence {held.claim.fence}); leave it to them unless you hold it."
    )


def agent_brief_text(brief: AgentBrief) -> str:
    """The brief's text with its claim line after the task's first line."""
    if brief.claim is None:
        return brief.text
    first, _, rest = brief.text.partition("\n")
    return "\n".join(filter(None, [first, claim_line(brief.claim), rest]))


def pack_room_within(budget: int) -> Callable[[TaskRead], int]:
    """What get_task's service asks: the bytes the answer within `budget` leaves the pack."""
    return lambda read: pack_room(whole_task_view(read), budget, subtasks_total=read.subtasks_total)


def task_answer(read: TaskRead, budget: int | None) -> dict[str, Any]:
    """The whole task with its pack (if read with one), fitted to `budget` unless None."""
    view = whole_task_view(read)
    pack = None if read.pack is None else pack_view(read.pack)
    if budget is not None:
        return fit_task_answer(view, budget, subtasks_total=read.subtasks_total, pack=pack)
    return view if pack is None else view | pack


def pack_view(pack: ContextPack) -> dict[str, Any]:
    """The context pack with its receipt id, or the reason it has none."""
    view: dict[str, Any] = {"contextPack": pack.pack}
    if pack.no_receipt is not None:
        view["contextReceiptUnavailable"] = {"reason": pack.no_receipt}
    elif pack.receipt_id is not None:
        view["contextReceiptId"] = pack.receipt_id
    return view


def whole_task_view(read: TaskRead) -> dict[str, Any]:
    """get_task's full answer without its context pack, nothing cut."""
    task = read.shown.task
    view = with_source(task_view(read.shown), read.source)
    claim = {} if read.claim is None else {"claim": held_claim_view(read.claim)}
    return {
        "task": view,
        **claim,
        "lifecycle": {
            "coverage": task.coverage,
            "createdAt": iso(task.created_at),
            "latestEventAt": iso(read.latest_event_at),
            "eventCount": read.event_count,
            "status": str(task.status),
            "assigneeId": task.assignee_id,
            "assigneeType": task.assignee_type and str(task.assignee_type),
            "humanOwnerId": task.human_owner_id,
        },
        "assigneeRole": None if read.role is None else role_view(read.role),
        "checklist": [checklist_item_view(item) for item in read.checklist],
        "relationships": view["relationships"],
        "subtasks": [
            {"id": s.id, "number": s.number, "title": s.title, "status": str(s.status)}
            for s in read.subtasks
        ],
        "readiness": readiness_view(read.readiness),
        "notes": notes_section_view(read.notes),
    }


def role_view(role: TeamRole) -> dict[str, Any]:
    """The team role a task is assigned to, with the model, effort and rank it asks for."""
    view = team_role_view(role)
    return {name: view[name] for name in ROLE_FIELDS}


def checklist_item_view(item: ChecklistItem) -> dict[str, Any]:
    return {"text": item.text, "state": item.state}


def readiness_view(ready: Readiness) -> dict[str, Any]:
    return {
        "ready": not ready.reasons,
        "reasons": list(ready.reasons),
        "openBlockerIds": list(ready.open_blocker_ids),
        "openSubtasks": ready.open_subtasks,
        "openChecklistItems": ready.open_checklist_items,
        "finished": ready.finished,
    }


def task_activity_view(activity: TaskActivity) -> dict[str, Any]:
    """Everything said and linked on a task: each part as {items, total}, newest first."""
    parts: list[tuple[str, list[dict[str, Any]], int]] = [
        ("comments", [comment_view(c) for c in activity.comments], activity.comments_total),
        (
            "agentUpdates",
            [comment_view(c) for c in activity.agent_updates],
            activity.agent_updates_total,
        ),
        ("outputs", [output_preview_view(o) for o in activity.outputs], activity.outputs_total),
        ("questions", [question_view(q) for q in activity.questions], activity.questions_total),
    ]
    sections: dict[str, Any] = {"task": noted_task_view(activity.task)}
    sections |= {name: {"items": items, "total": total} for name, items, total in parts}
    return sections | repos_section_view(activity.repos)


def text_window_view(text: TaskText, budget: int) -> dict[str, Any]:
    """One window of the task's brief or description within `budget` bytes: taskId, key,
    revision, field, offset, text, length, nextOffset.

    Raises:
        ValidationFailed: (textOffset) past the end of the text.
    """
    task = text.task
    head = {"taskId": task.id, "key": task_key(text.project, task), "revision": task.revision}
    if text.claim is not None:
        head["claim"] = held_claim_view(text.claim)
    return window(
        {**head, "field": text.field},
        getattr(task, text.field),
        offset=text.offset,
        limit=text.limit,
        budget=budget,
        offset_field="textOffset",
    )


def with_source(row: dict[str, Any], source: TaskSource | None) -> dict[str, Any]:
    """The row with where its task stands in a tasks.md file (what set_task_status'
    expectedVersions takes), when it came from one."""
    if source is not None:
        row["sourceFileId"] = source.file_id
        row["sourcePath"] = source.path
        row["sourceLine"] = source.line
        row["contentVersion"] = source.content_version
    return row


# --- list_tasks --------------------------------------------------------------------------------


def task_rows(page: TaskPage) -> list[dict[str, Any]]:
    """The page's rows cut to its columns."""
    return [_row(page, row) for row in page.rows]


def _row(page: TaskPage, found: TaskShown | TaskLine | BoardLine | TaskColumns) -> Any:
    if isinstance(found, BoardLine):
        return board_row(found, page.projects[found.project_id], page.names)
    if isinstance(found, TaskColumns):
        return columns_row(found, page.projects[found.project_id], page.columns)
    if isinstance(found, TaskShown):
        row = list_row(
            task_view(found), page.columns, coverage=found.task.coverage, exact=page.exact
        )
        if (held := page.claims.get(found.task.id)) is not None:
            row |= claimed_columns(held)
        if page.exact:  # the named columns only
            return row
        return with_source(row, page.sources.get(found.task.id))
    return with_source(
        compact_row(found, page.projects[found.project_id]), page.sources.get(found.id)
    )


def task_page_view(page: TaskPage, shown: list[dict[str, Any]]) -> dict[str, Any]:
    """The answer showing the leading rows `shown` of the page, continued by offset and cursor."""
    more = page.has_more(len(shown))
    following = page.offset + len(shown)
    head = {"columns": list(BOARD_COLUMNS)} if page.columns is BOARD_COLUMNS else {}
    return {
        **head,
        "tasks": shown,
        "total": page.total,
        "nextOffset": following if more else None,
        "nextCursor": page.cursor_after(len(shown)),
        "hasMore": more,
    }


def list_row(
    full: dict[str, Any], fields: tuple[str, ...], *, coverage: str, exact: bool = False
) -> dict[str, Any]:
    """A list row of the chosen columns, with the title cut to 240 characters and the brief
    and description to 500. A projection's row also carries id, projectId, workspaceId and
    historyCoverage, each text's `<name>Truncated` flag, and the numbers beside the parent's
    and blockers' ids. An `exact` row (`fields` named its columns) carries the key and those
    columns only, and a text's flag only when it was cut."""
    if exact:
        row: dict[str, Any] = {"key": full["key"]}
    else:
        row = {
            "id": full["id"],
            "projectId": full["projectId"],
            "workspaceId": full["workspaceId"],
            "historyCoverage": coverage,
        }
    for name in fields:
        if name in ROW_TEXT_LIMITS:
            text, limit = full[name], ROW_TEXT_LIMITS[name]
            row[name] = text[:limit]
            if not exact or len(text) > limit:
                row[f"{name}Truncated"] = len(text) > limit
        elif exact and name != CLAIM_FIELD:
            row[name] = full[name]
        elif name == "parentTaskId":
            row["parentTaskId"] = full["parentTaskId"]
            row["parentNumber"] = full["parentNumber"]
        elif name == CLAIM_FIELD:
            continue  # claimed_columns, only for a claimed task
        elif name == "blockedByTaskIds":
            row["blockedByTaskIds"] = full["blockedByTaskIds"]
            row["blockedByNumbers"] = full["blockedByNumbers"]
        else:
            row[name] = full[name]
    return row


def claimed_columns(held: HeldClaim) -> dict[str, Any]:
    """A list row's two claim columns: who holds the task, and until when."""
    return {"claimedBy": held.name, "claimedUntil": iso(held.claim.expires_at)}


def columns_row(found: TaskColumns, project: Project, fields: tuple[str, ...]) -> dict[str, Any]:
    """A row of named fields read from the task's columns alone: the key and those fields,
    worded as `task_view` words them (the title cut as in `list_row`)."""
    row: dict[str, Any] = {"key": f"{project.key}-{found.number}"}
    for name in fields:
        if name == "key":
            continue
        value = found.values[FIELD_COLUMNS[name]]
        if name == "title":
            row["title"] = value[:TITLE_CHARS]
            if len(value) > TITLE_CHARS:
                row["titleTruncated"] = True
        elif isinstance(value, datetime):
            row[name] = iso(value)
        elif isinstance(value, date):
            row[name] = value.isoformat()
        elif name in ("tags", "labels"):
            row[name] = list(value)
        else:
            row[name] = value
    return row


def board_row(line: BoardLine, project: Project, names: Mapping[str, str]) -> list[Any]:
    """A board projection row, in BOARD_COLUMNS' order: key, title, status, the assignee's
    name (null: nobody), tags (whole while they fit, then "+N"), priority, due date (null:
    none). The title takes the room the other columns leave of BOARD_ROW_CHARS (at least
    BOARD_TITLE_MIN characters), cut ending in "…": a row stays within BOARD_ROW_CHARS unless
    its other columns alone are long (a long key and name, many tags, a due date)."""
    assignee = line.assignee_id and board_cut(
        names.get(line.assignee_id, line.assignee_id), BOARD_NAME_CHARS
    )
    key, tags, due = f"{project.key}-{line.number}", _some_tags(line.tags), line.due_date
    # The row's JSON less the title's text, counted rather than dumped (a page has 500 rows):
    # brackets, six commas, quotes; text needing escapes may take a character or two more.
    others = 22 + len(key) + len(line.status) + len(line.priority)
    others += len(assignee) if assignee else 2  # null is two characters more than ""
    others += sum(len(tag) + 3 for tag in tags) - (1 if tags else 0) + (10 if due else 2)
    title = board_cut(line.title, max(BOARD_TITLE_MIN, BOARD_ROW_CHARS - others))
    return [key, title, line.status, assignee, tags, line.priority, due and due.isoformat()]


def board_cut(text: str, limit: int) -> str:
    """`text` as it is when it has at most `limit` characters, else cut to at most `limit`
    ending in "…" (no space before it)."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _some_tags(tags: Sequence[str]) -> list[str]:
    """The leading tags whose names fit BOARD_TAG_CHARS together, and "+N" for the rest."""
    shown: list[str] = []
    used = 0
    for tag in tags:
        if used + len(tag) > BOARD_TAG_CHARS and shown:
            break
        shown.append(board_cut(tag, BOARD_TAG_CHARS))
        used += len(tag)
    if len(shown) < len(tags):
        shown.append(f"+{len(tags) - len(shown)}")
    return shown


def compact_row(task: TaskLine, project: Project) -> dict[str, Any]:
    """A compact list row (COMPACT_FIELDS), built from the task's line without the full view."""
    row: dict[str, Any] = {
        "key": f"{project.key}-{task.number}",
        "title": task.title[:TITLE_CHARS],
        "status": task.status,
        "priority": task.priority,
    }
    if len(task.title) > TITLE_CHARS:
        row["titleTruncated"] = True
    if task.assignee_id is not None:
        row["assigneeId"] = task.assignee_id
    if task.due_date is not None:
        row["dueDate"] = task.due_date.isoformat()
    row["revision"] = task.revision
    if task.coverage != "complete":
        row["historyCoverage"] = task.coverage
    return row
