"""MCP prompts: the common flows as messages that name the exact tool calls to make.

    start_session    (projectId)  the state page, then what to read and how to save it again
    take_next_task   (projectId)  the ready tasks with an assignee, and how to claim one
    hand_in_result   (taskId)     the submit_result call for that task, filled in

A prompt is offered to a caller who is shown every tool it relies on (the same list as
tools/list); steps about other tools it is shown are added when it has them. Arguments are
checked as a tool's are: an unknown prompt, a missing, unknown or overlong argument, or a
project or task the caller cannot open is refused with invalid params (-32602), saying which.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from anyio import to_thread
from mcp import MCPError
from mcp.server.context import ServerRequestContext
from mcp.types import (
    INVALID_PARAMS,
    GetPromptRequestParams,
    GetPromptResult,
    ListPromptsResult,
    PaginatedRequestParams,
    Prompt,
    PromptArgument,
    PromptMessage,
    TextContent,
)

from crewboard.contract.board import present as board_present
from crewboard.contract.operation import Operation
from crewboard.contract.projects import present
from crewboard.contract.reply import RESPONSE_BUDGET, compact
from crewboard.domain.identity.records import Actor
from crewboard.errors import CrewboardError
from crewboard.mcp.caller import Caller
from crewboard.mcp.render import unexpected
from crewboard.services.board import queries as task_queries
from crewboard.services.text_windows import fitting_chars
from crewboard.storage.database import Database

log = logging.getLogger("crewboard.mcp")

MAX_ARGUMENT = 200  # characters of a projectId or taskId, as the tools take them
CANDIDATES = 5  # ready tasks a take_next_task prompt names
READY_SCAN = 50  # ready tasks looked at to pick those by priority
TEXT_BUDGET = RESPONSE_BUDGET - 2048
PRIORITY_ORDER = {"high": 0, "medium": 1, "low": 2}

PROJECT_ARG = PromptArgument(
    name="projectId", description="The project's key (e.g. CRW) or id.", required=True
)
TASK_ARG = PromptArgument(
    name="taskId", description="The task's key (e.g. CRW-12) or id.", required=True
)


@dataclass(frozen=True)
class Expansion:
    """What a prompt expands with: the caller, its arguments and the tools it is shown."""

    db: Database
    actor: Actor
    args: Mapping[str, str]
    shown: frozenset[str]


@dataclass(frozen=True)
class PromptDef:
    prompt: Prompt
    needs: frozenset[str]  # the tools the prompt's steps cannot do without
    expand: Callable[[Expansion], str]


# --- the prompts -----------------------------------------------------------------------------


def start_session(ex: Expansion) -> str:
    project = present.describe_project(ex.db, ex.actor, ex.args["projectId"])["project"]
    page = present.get_project_state(ex.db, ex.actor, project=project["id"])
    key, revision = project["key"], page["revision"]
    lines = [
        f"Start a work session on project {key} ({project['name']}).",
        "",
        f"Its state page, revision {revision}, as get_project_state "
        f"{compact({'projectId': key})} reads it:",
        "",
        "<state-page>",
        page["content"] or "(empty: nobody has written it yet)",
        "</state-page>",
        "",
        "Work from it:",
    ]
    steps = []
    if "list_tasks" in ex.shown:
        steps.append(
            "See the work waiting for you: list_tasks "
            + compact(
                {"projectId": key, "status": ["in_progress", "ready_for_ai"], "assignee": "me"}
            )
            + "."
        )
    if "get_task" in ex.shown:
        steps.append(
            'Read a task whole before working on it: get_task {"taskId": "<key, e.g. '
            f'{key}-12>"}}. Its brief and context pack are newer than any note of yours.'
        )
    if "get_project_memory" in ex.shown:
        steps.append(
            "Check what people accepted as settled: get_project_memory "
            + compact({"projectId": key, "includeContent": False})
            + "."
        )
    if "update_project_state" in ex.shown and page.get("canEdit"):
        steps.append(
            "Before you stop, rewrite the whole page: update_project_state "
            + compact(
                {
                    "projectId": key,
                    "expectedRevision": revision,
                    "content": "<the whole new page>",
                }
            )
            + ". If someone saved meanwhile it is refused: read it again, merge, save from "
            "the new revision."
        )
    return "\n".join([*lines, *_numbered(steps)])


def take_next_task(ex: Expansion) -> str:
    project = present.describe_project(ex.db, ex.actor, ex.args["projectId"])["project"]
    key = project["key"]
    query = {"projectId": key, "status": "ready_for_ai"}
    page = task_queries.list_tasks(
        ex.db,
        ex.actor,
        project=project["id"],
        statuses=["ready_for_ai"],
        fields=["key", "title", "priority", "assigneeId", "revision"],
        limit=READY_SCAN,
    )
    # Moving a task to in_progress needs an assignee: the ones nobody holds wait for a person.
    held = [row for row in board_present.task_rows(page) if row.get("assigneeId")]
    ready = sorted(held, key=lambda row: PRIORITY_ORDER.get(row["priority"], 3))[:CANDIDATES]
    lines = [f"Take the next ready task on project {key}.", ""]
    if not ready:
        lines.append(
            f"No task of {key} is ready with an assignee now (list_tasks {compact(query)} "
            f"finds {page.total} ready in all). Ask a person to assign one rather than "
            "taking it unasked."
        )
        return "\n".join(lines)
    lines += [
        f"Ready and assigned, the highest priority first ({page.total} ready in all: "
        f"list_tasks {compact(query)}):",
        *(
            f"- {row['key']} {row['title']} ({row['priority']} priority, assigned to "
            f"{row['assigneeId']}, revision {row['revision']})"
            for row in ready
        ),
        "",
        "If you already have a task in progress, finish that one first. Otherwise take the "
        "first one assigned to you or to your role (list_team names the roles):",
    ]
    first = ready[0]
    steps = [
        f"Read it whole: get_task {compact({'taskId': first['key']})}. Its brief and context "
        "pack are your inputs; keep its revision and contextReceiptId for the hand-in.",
        "Claim it: set_task_status "
        + compact(
            {
                "projectId": key,
                "idempotencyKey": f"claim-{first['key']}-r{first['revision']}",
                "changes": [{"taskId": first["key"], "status": "in_progress"}],
                "expectedVersions": {first["key"]: first["revision"]},
            }
        )
        + " (with the key and revision of the task you took). If its outcome is an error, "
        "someone changed the task meanwhile: read it again or take the next one.",
        "Do the work, then hand it in with submit_result (the hand_in_result prompt fills "
        "the call in)."
        if "submit_result" in ex.shown
        else "Do the work; handing it in takes a token that may submit results.",
    ]
    return "\n".join([*lines, *_numbered(steps)])


def hand_in_result(ex: Expansion) -> str:
    found = task_queries.get_task(
        ex.db, ex.actor, task=ex.args["taskId"], include_context_pack=False
    )
    task = board_present.get_task_view(found)["task"]
    key, revision = task["key"], task["revision"]
    project_key = key.rsplit("-", 1)[0]
    call = {
        "projectId": project_key,
        "taskId": key,
        "idempotencyKey": f"hand-in-{key}-r{revision}",
        "expectedRevision": revision,
        "contextReceiptId": "<contextReceiptId of your get_task read, or null>",
        "title": "<a short title>",
        "summary": "<one line on what the result is>",
        "content": "<the result in markdown, as the reviewer reads it>",
        "references": [
            {"kind": "commit", "value": "<sha>"},
            {"kind": "branch", "value": "<branch>"},
            {"kind": "tests", "value": "<e.g. 212 pass>"},
        ],
    }
    lines = [
        f"Hand in your finished work on {key} {task['title']} "
        f"(now {task['status']}, revision {revision}).",
        "",
    ]
    steps = [
        "Write the result as the reviewer will read it: what you did, how to check it, what "
        "is left.",
        f"Call submit_result {compact(call)}. expectedRevision is the revision you worked "
        f"from ({revision} is the task's revision now) and contextReceiptId comes from that "
        "same get_task read; drop the references you have none of.",
        "The answer says whether the task moved to review (taskNotMovedReason says why not). "
        "A person decides on the draft: never call it accepted.",
    ]
    return "\n".join([*lines, *_numbered(steps)])


def _numbered(steps: list[str]) -> list[str]:
    return [f"{n}. {step}" for n, step in enumerate(steps, start=1)]


PROMPTS: tuple[PromptDef, ...] = (
    PromptDef(
        Prompt(
            name="start_session",
            title="Start a work session",
            description="Begin from the project's state page: where it stands, what to read "
            "next, and how to save the page before you stop.",
            arguments=[PROJECT_ARG],
        ),
        frozenset({"get_project_state"}),
        start_session,
    ),
    PromptDef(
        Prompt(
            name="take_next_task",
            title="Take the next ready task",
            description="The project's ready tasks that have an assignee, highest priority "
            "first, and the calls that read and claim one.",
            arguments=[PROJECT_ARG],
        ),
        frozenset({"list_tasks", "get_task", "set_task_status"}),
        take_next_task,
    ),
    PromptDef(
        Prompt(
            name="hand_in_result",
            title="Hand in a result",
            description="The submit_result call for a finished task, filled in with its "
            "project, workspace and revision.",
            arguments=[TASK_ARG],
        ),
        frozenset({"submit_result", "get_task"}),
        hand_in_result,
    ),
)


# --- the handlers ------------------------------------------------------------------------------


class Prompts:
    """The prompts/list and prompts/get handlers."""

    def __init__(
        self,
        db: Database,
        caller: Callable[[], Caller],
        shown: Callable[[Caller], Awaitable[list[Operation]]],
    ) -> None:
        self.db = db
        self.caller = caller
        self.shown = shown

    async def _offered(self, caller: Caller) -> tuple[list[PromptDef], frozenset[str]]:
        shown = frozenset(tool.name for tool in await self.shown(caller))
        return [p for p in PROMPTS if p.needs <= shown], shown

    async def list_prompts(
        self, _ctx: ServerRequestContext[Any, Any], _params: PaginatedRequestParams | None
    ) -> ListPromptsResult:
        offered, _ = await self._offered(self.caller())
        return ListPromptsResult(
            prompts=[p.prompt for p in offered], ttl_ms=0, cache_scope="private"
        )

    async def get_prompt(
        self, _ctx: ServerRequestContext[Any, Any], params: GetPromptRequestParams
    ) -> GetPromptResult:
        caller = self.caller()
        offered, shown = await self._offered(caller)
        found = next((p for p in offered if p.prompt.name == params.name), None)
        if found is None:
            raise _refused(
                f"Unknown prompt {params.name[:MAX_ARGUMENT]!r}; prompts/list shows the ones "
                "open to you.",
                {"field": "name", "accepted": [p.prompt.name for p in offered]},
            )
        args = check_arguments(found.prompt, params.arguments or {})
        ex = Expansion(self.db, caller.actor, args, shown)
        try:
            text = await to_thread.run_sync(found.expand, ex)
        except CrewboardError as error:
            raise _refused(error.message, {"code": error.code, **error.details}) from None
        except Exception as error:
            raise unexpected(error, f"expanding the prompt {found.prompt.name}") from None
        text = text[: fitting_chars(text, TEXT_BUDGET)]
        return GetPromptResult(
            description=found.prompt.description,
            messages=[PromptMessage(role="user", content=TextContent(type="text", text=text))],
        )


def check_arguments(prompt: Prompt, given: Mapping[str, str]) -> dict[str, str]:
    """The arguments, checked against the prompt's.

    Raises:
        MCPError: invalid params naming the argument: unknown, missing, empty or too long.
    """
    accepted = [a.name for a in prompt.arguments or []]
    for name in given:
        if name not in accepted:
            raise _refused(
                f"{prompt.name} takes no argument {name[:MAX_ARGUMENT]!r}.",
                {"field": name[:MAX_ARGUMENT], "accepted": accepted},
            )
    for name in accepted:
        value = given.get(name, "").strip()
        if not value:
            raise _refused(f"{prompt.name} needs the argument {name}.", {"field": name})
        if len(value) > MAX_ARGUMENT:
            raise _refused(
                f"{name}: at most {MAX_ARGUMENT} characters; got {len(value)}.",
                {"field": name, "limit": MAX_ARGUMENT, "actual": len(value)},
            )
    return {name: given[name].strip() for name in accepted}


def _refused(message: str, data: dict[str, Any]) -> MCPError:
    return MCPError(code=INVALID_PARAMS, message=message, data=data)
