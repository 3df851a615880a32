"""MCP resources: what an agent can read, addressed by `crewboard://` URIs.

    crewboard://projects/{projectKey}/state                a project's state page (markdown)
    crewboard://projects/{projectKey}/tasks/{taskKey}      a task, as get_task answers it (JSON)
    crewboard://projects/{projectKey}/documents/{name}     a project document (markdown)
    crewboard://projects/{projectKey}/memory/{recordId}    an accepted memory record (markdown)

A task is JSON because it is the answer get_task gives (without the context pack): the ids,
key, revision and workspaceId an agent passes to the write tools come exactly as the tools
name them, and the task's own markdown (brief, description) stays apart from any wrapper.
The texts are markdown with a short header saying what they are and how to change them.

Each kind is listed and read when the caller's token could call the tool that reads the same
thing (get_project_state, get_task, get_project_memory), whatever toolsets it narrowed
tools/list to (they keep an agent's context small; resources cost nothing until read), and
the services check the project as for those tools. Anything the caller cannot open answers as a URI that names nothing: the
protocol's resource-not-found error (-32602 with the URI in `data`). Every answer fits the
48 KiB budget: a long text is cut and says which tool call reads on from the cut.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from anyio import to_thread
from mcp import MCPError
from mcp.server.context import ServerRequestContext
from mcp.types import (
    INVALID_PARAMS,
    ListResourcesResult,
    ListResourceTemplatesResult,
    PaginatedRequestParams,
    ReadResourceRequestParams,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    TextResourceContents,
)

from crewboard.contract import memory_present
from crewboard.contract.board import present as board_present
from crewboard.contract.board.fitting import cut_fields, fit_task_answer
from crewboard.contract.catalogue import Catalogue
from crewboard.contract.projects import present
from crewboard.contract.reply import RESPONSE_BUDGET, compact, fit_rows
from crewboard.domain.identity.naming import name_of
from crewboard.domain.identity.records import Actor
from crewboard.domain.validation import INT32_MAX
from crewboard.errors import CrewboardError
from crewboard.mcp.caller import Caller
from crewboard.mcp.render import unexpected
from crewboard.services.board import queries as task_queries
from crewboard.services.board.readables import (
    RECORDS,
    Part,
    Position,
    Readable,
    list_readables,
)
from crewboard.services.memory.records import record_not_found
from crewboard.services.text_windows import fitting_chars, text_size
from crewboard.storage.database import Database

log = logging.getLogger("crewboard.mcp")

MARKDOWN = "text/markdown"
JSON = "application/json"
PAGE = 100  # resources per resources/list page (fewer when their JSON would pass the budget)
TEXT_BUDGET = RESPONSE_BUDGET - 2048  # bytes of a text as a JSON string; the rest is envelope
NOTE_ROOM = 600  # bytes kept for the line saying where a cut text goes on
FIT_ROUNDS = 4
LIST_BUDGET = RESPONSE_BUDGET - 4096
MAX_URI = 1000  # characters of a URI worth looking up; an error echoes at most this many
MAX_CURSOR = 200
SUMMARY_CHARS = 200  # of a record's summary, as its description in the list

URI = re.compile(
    r"crewboard://projects/(?P<project>[^/?#]+)/(?:(?P<state>state)|tasks/(?P<task>[^/?#]+)"
    r"|documents/(?P<document>[^/?#]+)|memory/(?P<record>[^/?#]+))"
)


@dataclass(frozen=True)
class Kind:
    """One kind of resource: its template, and the read tool (and part) it goes with."""

    template: ResourceTemplate
    tool: str
    part: Part


def _template(name: str, title: str, path: str, mime: str, description: str) -> ResourceTemplate:
    return ResourceTemplate(
        name=name,
        title=title,
        uri_template=f"crewboard://projects/{{projectKey}}/{path}",
        mime_type=mime,
        description=description,
    )


KINDS = {
    "state": Kind(
        _template(
            "state-page",
            "Project state page",
            "state",
            MARKDOWN,
            "Where the project stands and what comes next, with the revision to edit it from.",
        ),
        "get_project_state",
        "state",
    ),
    "task": Kind(
        _template(
            "task",
            "Task",
            "tasks/{taskKey}",
            JSON,
            "A task by key (CRW-12): get_task's answer without the context pack.",
        ),
        "get_task",
        "tasks",
    ),
    "document": Kind(
        _template(
            "project-document",
            "Project document",
            "documents/{document}",
            MARKDOWN,
            "Accepted text of overview, context, decisions, notes or legal (asset rights).",
        ),
        "get_project_memory",
        "memory",
    ),
    "record": Kind(
        _template(
            "memory-record",
            "Memory record",
            "memory/{recordId}",
            MARKDOWN,
            "An accepted memory record (mem_…): settled project knowledge.",
        ),
        "get_project_memory",
        "memory",
    ),
}


@dataclass(frozen=True)
class Target:
    kind: str
    project: str
    ref: str


class Resources:
    """The resources/list, resources/templates/list and resources/read handlers."""

    def __init__(self, db: Database, tools: Catalogue, caller: Callable[[], Caller]) -> None:
        self.db = db
        self.tools = tools
        self.caller = caller

    def _parts(self, actor: Actor) -> frozenset[Part]:
        return frozenset(kind.part for kind in KINDS.values() if self._may_read(actor, kind))

    def _may_read(self, actor: Actor, kind: Kind) -> bool:
        """Whether the caller's token could call the tool that reads the same thing."""
        tool = self.tools.find(kind.tool)
        return tool is not None and tool.needs <= actor.scopes

    async def list_resources(
        self, _ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams | None
    ) -> ListResourcesResult:
        actor = self.caller().actor
        start = decode_cursor(params.cursor if params else None)
        rows, following = await to_thread.run_sync(
            lambda: list_readables(
                self.db, actor, start=start, limit=PAGE, parts=self._parts(actor)
            )
        )
        listed = [resource_of(row) for row in rows]
        dumped = [r.model_dump(by_alias=True, exclude_none=True) for r in listed]
        kept = len(fit_rows(dumped, LIST_BUDGET))
        if kept < len(rows):
            following = rows[kept].position
        return ListResourcesResult(
            resources=listed[:kept],
            next_cursor=encode_cursor(following) if following is not None else None,
            ttl_ms=0,
            cache_scope="private",
        )

    async def list_templates(
        self, _ctx: ServerRequestContext[Any, Any], _params: PaginatedRequestParams | None
    ) -> ListResourceTemplatesResult:
        parts = self._parts(self.caller().actor)
        return ListResourceTemplatesResult(
            resource_templates=[kind.template for kind in KINDS.values() if kind.part in parts],
            ttl_ms=0,
            cache_scope="private",
        )

    async def read_resource(
        self, _ctx: ServerRequestContext[Any, Any], params: ReadResourceRequestParams
    ) -> ReadResourceResult:
        caller = self.caller()
        uri = params.uri
        target = parse_uri(uri)
        if target is None or not self._may_read(caller.actor, KINDS[target.kind]):
            raise resource_not_found(uri)
        try:
            text = await to_thread.run_sync(read_text, self.db, caller.actor, target)
        except CrewboardError:
            raise resource_not_found(uri) from None
        except Exception as error:
            raise unexpected(error, f"reading the resource {uri[:MAX_URI]}") from None
        mime = KINDS[target.kind].template.mime_type
        return ReadResourceResult(
            contents=[TextResourceContents(uri=uri, mime_type=mime, text=text)],
            ttl_ms=0,
            cache_scope="private",
        )


def resource_not_found(uri: str) -> MCPError:
    """The protocol's answer for a URI that names nothing the caller can open."""
    return MCPError(
        code=INVALID_PARAMS,
        message="Resource not found: no resource with that URI is open to you; "
        "resources/list and resources/templates/list show what you can read.",
        data={"uri": uri[:MAX_URI]},
    )


def parse_uri(uri: str) -> Target | None:
    if len(uri) > MAX_URI or (match := URI.fullmatch(uri)) is None:
        return None
    project = match["project"]
    if match["state"]:
        return Target("state", project, "")
    for kind in ("task", "document", "record"):
        if match[kind]:
            return Target(kind, project, match[kind])
    return None  # pragma: no cover - the pattern has no other branch


def uri_of(kind: str, project: str, ref: str = "") -> str:
    base = f"crewboard://projects/{project}"
    paths = {"state": "state", "task": "tasks", "document": "documents", "record": "memory"}
    return f"{base}/state" if kind == "state" else f"{base}/{paths[kind]}/{ref}"


# --- the list ------------------------------------------------------------------------------


def resource_of(row: Readable) -> Resource:
    key = row.project_key
    uri = uri_of(row.kind, key, row.ref)
    if row.kind == "state":
        return Resource(
            uri=uri,
            name=f"{key}/state",
            title=f"{key} state page",
            description=f"Where {key} stands and what comes next ({row.detail}).",
            mime_type=MARKDOWN,
        )
    if row.kind == "document":
        return Resource(
            uri=uri,
            name=f"{key}/documents/{row.ref}",
            title=f"{key} {row.title}",
            description=f"Accepted project document, {row.detail}.",
            mime_type=MARKDOWN,
        )
    if row.kind == "task":
        return Resource(
            uri=uri,
            name=row.ref,
            title=f"{row.ref} {row.title}",
            description=row.detail,
            mime_type=JSON,
        )
    summary = row.detail.strip() or "Accepted memory record."
    if len(summary) > SUMMARY_CHARS:
        summary = summary[: SUMMARY_CHARS - 1].rstrip() + "…"
    return Resource(
        uri=uri,
        name=f"{key}/memory/{row.ref}",
        title=row.title,
        description=summary,
        mime_type=MARKDOWN,
    )


def encode_cursor(position: Position) -> str:
    raw = json.dumps([position.project, position.part, position.offset], separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_cursor(cursor: str | None) -> Position:
    """Raises: MCPError (invalid params) for a cursor this server did not hand out."""
    if cursor is None:
        return Position()
    position = _position_in(cursor) if len(cursor) <= MAX_CURSOR else None
    if position is None:
        raise MCPError(
            code=INVALID_PARAMS,
            message="Invalid cursor: pass the nextCursor of the previous resources/list page, "
            "or none to start again.",
            data={"field": "cursor"},
        )
    return position


def _position_in(cursor: str) -> Position | None:
    try:
        values = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    except (ValueError, binascii.Error):
        return None
    if not (
        isinstance(values, list)
        and len(values) == 3
        and all(type(v) is int and 0 <= v <= INT32_MAX for v in values)
        and values[1] <= RECORDS
    ):
        return None
    return Position(*values)


# --- reading -------------------------------------------------------------------------------


def read_text(db: Database, actor: Actor, target: Target) -> str:
    """The resource's text.

    Raises:
        CrewboardError: the services' refusals (NotFound, PermissionDenied, ValidationFailed).
    """
    project, ref = target.project, target.ref
    if target.kind == "state":
        return state_text(present.get_project_state(db, actor, project=project))
    if target.kind == "task":
        found = task_queries.get_task(
            db, actor, task=ref, project=project, include_context_pack=False
        )
        return task_text(board_present.get_task_view(found, None))
    if target.kind == "document":
        return document_text(memory_present.get_document(db, actor, project, ref), project)
    page = memory_present.get_project_memory(db, actor, project=project, ids=[ref], limit=1)
    if not page["records"]:
        raise record_not_found(ref)
    return record_text(page["records"][0], project)


def state_text(page: dict[str, Any]) -> str:
    """The state page (at most 5000 characters: it always fits) under a line on its revision."""
    revision = page["revision"]
    author = page.get("updatedBy")
    who = name_of(author) if isinstance(author, dict) else None
    saved = (
        f"Revision {revision}, saved {page['updatedAt']}" + (f" by {who}" if who else "") + "."
        if revision
        else "Nobody has written it yet (revision 0)."
    )
    how = (
        f" Change it with update_project_state: the whole new text, expectedRevision {revision}."
        if page.get("canEdit")
        else ""
    )
    content = page["content"] or "_The state page is empty._"
    return f"# State page\n\n{saved}{how}\n\n---\n\n{content}"


def document_text(doc: dict[str, Any], project: str) -> str:
    updated = f", updated {doc['updatedAt']}" if doc.get("updatedAt") else ""
    header = (
        f"# {doc['title']}\n\nProject document `{doc['name']}`, version {doc['version']}"
        f"{updated}. Accepted memory: people edit it; hand changes in with submit_result."
        "\n\n---\n\n"
    )
    if not doc.get("content"):
        return header + "_Nobody has written this document yet._"
    resume = {"projectId": project, "document": doc["name"]}
    return _with_cut_note(header, doc["content"], doc.get("contentLength"), resume)


def record_text(record: dict[str, Any], project: str) -> str:
    facts = [f"status {record['status']}", f"version {record['version']}"]
    if record.get("collection"):
        facts.append(f"collection {record['collection']}")
    if record.get("document"):
        facts.append(f"filed in {record['document']}")
    facts.append(f"updated {record['updatedAt']}")
    summary = f"{record['summary']}\n\n" if record.get("summary") else ""
    header = (
        f"# {record['title']}\n\nAccepted memory record `{record['id']}`: {', '.join(facts)}."
        f"\n\n{summary}---\n\n"
    )
    resume = {"projectId": project, "ids": [record["id"]]}
    return _with_cut_note(header, record.get("content", ""), record.get("contentLength"), resume)


def _with_cut_note(header: str, text: str, whole: int | None, resume: dict[str, Any]) -> str:
    """`header` and as much of `text` as fits, then where to read on when it was cut.

    `whole` is the text's full length when a service already cut it.
    """
    total = max(whole or 0, len(text))
    room = TEXT_BUDGET - text_size(header) - NOTE_ROOM
    shown = text[: fitting_chars(text, room)]
    if len(shown) >= total:
        return header + shown
    resume = {**resume, "contentOffset": len(shown)}
    return (
        f"{header}{shown}\n\n---\n\n_Cut here: the text is {total} characters and this shows "
        f"the first {len(shown)}. Read on with get_project_memory {compact(resume)}._"
    )


def task_text(whole: dict[str, Any]) -> str:
    """get_task's answer as compact JSON within the budget once sent as a JSON string.

    The fitting is get_task's own (contract/board/fitting.py); as this JSON travels inside a
    string, its escapes count twice, so the budget shrinks by what overflows until it fits.
    """
    budget = TEXT_BUDGET - NOTE_ROOM
    for _ in range(FIT_ROUNDS):
        fitted = fit_task_answer(whole, budget)
        cut = cut_fields(fitted)
        task = fitted["task"]
        if cut:
            fitted["note"] = " ".join(
                f"{field} is cut at {len(task[field])} of {task[f'{field}Length']} characters: "
                "read on with get_task "
                f"{compact({'taskId': task['key'], 'textField': field, 'textOffset': len(task[field])})}."
                for field in cut
            )
        text = compact(fitted)
        over = text_size(text) - TEXT_BUDGET
        if over <= 0:
            return text
        budget -= over
    task = whole["task"]
    return compact(
        {
            "task": {name: task[name] for name in ("id", "key", "projectId", "workspaceId")}
            | {"title": task["title"], "status": task["status"], "revision": task["revision"]},
            "note": "This task is too large for one resource: read it with get_task "
            f"{compact({'taskId': task['key']})}.",
        }
    )
