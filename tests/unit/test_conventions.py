"""One set of argument conventions, held by the contract rather than by each tool.

- A call written the way a reference product documents it (its tool name, its argument names,
  snake_case or camelCase) finds one of our tools and validates.
- workspaceId is taken wherever a project is named, and required nowhere but create_project;
  tools/list shows it only where it is required or chooses projects (it is otherwise a check).
- An argument sent under two names must carry one value.
- Messages name only tools that exist and arguments some tool takes.
"""

from __future__ import annotations

import ast
import re
import typing
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from crewboard.contract.args import Args, input_schema, other_names, validate_arguments
from crewboard.contract.catalogue import TOOL_ALIASES, default_catalogue
from crewboard.domain import code_tools
from crewboard.errors import ValidationFailed

CATALOGUE = default_catalogue()
SRC = Path(__file__).resolve().parents[2] / "src" / "crewboard"

P, F, T = "CRW", "docs/exports.md", "CRW-12"

# Calls as the reference pages show them (myspec-mcp-tools.md writes snake_case names;
# pencil-mcp-task-workflows.md and legevio-mcp-tools.md camelCase). Where our tool needs an
# argument the page leaves out (an idempotencyKey, a project key), it is added after `|`.
MYSPEC_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("list_spec_file", {"project_id": P, "path": "docs", "trashed": True, "limit": 50, "offset": 0}),
    ("get_spec_file", {"project_id": P, "path": F}),
    ("read_spec_file", {"project_id": P, "path": F, "offset": 1, "limit": 2000, "revision": 2}),
    ("download_spec_file", {"project_id": P, "path": F, "overwrite": True}),
    ("upload_spec_file", {"project_id": P, "path": F, "content": "# Exports"}),
    ("upload_spec_file", {"project_id": P, "path": F, "local_file_path": "specs/exports.md"}),
    ("update_spec_file", {"project_id": P, "path": F, "content": "x", "expected_version": "v7"}),
    ("move_spec_file_to_trash", {"project_id": P, "path": F}),
    ("restore_spec_file_from_trash", {"project_id": P, "path": F}),
    ("list_attachments", {"project_id": P, "limit": 50, "offset": 0}),
    ("get_attachment", {"project_id": P, "attachment_id": "att_1"}),
    ("read_attachment", {"project_id": P, "attachment_id": "att_1", "offset": 1, "limit": 100}),
    ("upload_attachment", {"project_id": P, "name": "a.png", "content_base64": "AA==", "override": True}),
    ("list_spec_sessions", {"project_id": P, "archive_filter": "all", "status": "running", "query": "x"}),
    ("get_spec_session", {"project_id": P, "session_id": "ses_1", "include_context": True}),
    ("start_spec_session", {
        "project_id": P, "mode": "generate", "prompt": "A login page.", "workflow_id": "w",
        "language": "ja", "model_id": "m", "attachment_ids": ["att_1"],
        "spec_file_ids": ["spf_1"], "session_title": "Login",
    }),
    ("rename_spec_session", {"project_id": P, "session_id": "ses_1", "title": "New"}),
    ("archive_spec_session", {"project_id": P, "session_id": "ses_1"}),
    ("unarchive_spec_session", {"project_id": P, "session_id": "ses_1"}),
    ("delete_spec_session", {"project_id": P, "session_id": "ses_1"}),
    ("list_artifacts", {"project_id": P}),
    ("get_artifact", {"project_id": P, "artifact_id": "login-mockup", "revision": 2}),
    ("read_artifact_file", {"project_id": P, "artifact_id": "a", "path": "index.html", "offset": 1}),
    ("write_artifact_revision", {
        "project_id": P, "artifact_id": "a", "base_revision": 2, "remove": ["app.js"],
        "expected_version": 2,
    }),
    ("rollback_artifact", {"project_id": P, "artifact_id": "a", "revision": 1, "expected_version": 3}),
    ("list_spec_file_comments", {"project_id": P, "path": F, "status": "orphaned"}),
    ("create_spec_file_comment_thread", {
        "project_id": P, "path": F, "anchor_quote": "ten minutes", "anchor_prefix": "after ",
        "anchor_suffix": ".", "body": "Short.",
    }),
    ("reply_spec_file_comment_thread", {"project_id": P, "thread_id": "sct_1", "body": "Yes."}),
    ("update_spec_file_comment", {
        "project_id": P, "comment_id": "scm_1", "body": "Edited.", "expected_version": "c1",
    }),
    ("delete_spec_file_comment", {"project_id": P, "comment_id": "scm_1"}),
    ("list_tasks", {"project_id": P, "status": "in_progress", "assignee": "me", "cycle": "c", "label": "l"}),
    ("list_task_assignees", {"project_id": P}),
    ("update_tasks", {
        "project_id": P, "task_ids": [T], "add_relationships": [{"type": "blocks", "task_id": "CRW-2"}],
        "remove_relationships": ["CRW-3"], "idempotency_key": "k",
    }),
    ("set_task_status", {
        "project_id": P, "changes": [{"task_id": T, "status": "done"}],
        "expected_versions": {"spf_1": "v1"}, "idempotency_key": "k",
    }),
    ("list_projects", {"limit": 20, "offset": 0}),
    ("get_project", {"project_id": P}),
    ("create_project", {"name": "Exports", "description": "d", "key": "EXP", "workspace_id": None}),
    ("update_project", {"project_id": P, "name": "N", "description": "d", "type": "brownfield"}),
    ("archive_project", {"project_id": P}),
    ("unarchive_project", {"project_id": P}),
    ("delete_project", {"project_id": P}),
    ("list_stream_tokens", {}),
    ("revoke_stream_token", {"stream_token_id": "stk_1"}),
]  # fmt: skip

PENCIL_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("list_tasks", {"status": "in_progress"}),
    ("list_tasks", {"projection": "summary"}),
    ("list_tasks", {"assigneeId": "me"}),  # as get_week names the filter
    ("list_assignee_tasks", {"assigneeId": "me", "projection": "summary"}),
    ("get_task_context", {"taskId": T}),
    ("post_comment", {"taskId": "task_123", "content": "**Update**", "idempotencyKey": "k"}),
    ("save_output", {"taskId": "task_123", "name": "audit.md", "content": "# Audit", "idempotencyKey": "k"}),
    ("propose_repo_change", {
        "repoId": "repo_123", "taskId": "task_123", "branch": "agent/fix-login",
        "targetBranch": "main", "title": "Fix login redirect", "summary": "Guard.",
        "prUrl": "https://github.com/acme/app/pull/42", "idempotencyKey": "k",
    }),
    ("list_task_events", {
        "taskId": "T-123", "eventTypes": ["assignment_changed", "status_changed", "blocker_changed"],
        "since": "2026-08-01T00:00:00Z", "until": "2026-09-01T00:00:00Z", "limit": 50,
    }),
    ("list_task_events", {"humanAssigneeId": "usr_1", "agentAssigneeId": "rol_1"}),
    ("create_handoff", {
        "teamId": "your-team-id", "completed": "Released.", "inProgress": "Monitoring rollout.",
        "blockers": "", "nextSteps": "Review the metrics.", "idempotencyKey": "api-rollout",
    }),
    ("list_handoffs", {"teamId": P, "author": "a@example.com", "since": "2026-09-01"}),
    ("list_handoff_action_items", {"teamId": P, "date": "2026-09-22"}),
    ("assign_task", {"taskId": T, "humanAssigneeId": None, "expectedRevision": 3, "idempotencyKey": "k"}),
    ("create_task", {"projectId": P, "title": "T", "humanAssigneeId": "usr_1", "idempotencyKey": "k"}),
    ("update_task", {
        "projectId": P, "taskId": T, "expectedRevision": 2, "idempotencyKey": "k",
        "patch": {"humanAssigneeId": None},
    }),
]  # fmt: skip

# Every top-level parameter legevio-mcp-tools.md documents, by tool.
LEGEVIO_PARAMETERS: dict[str, list[str]] = {
    "list_projects": ["projectId", "workspaceId"],
    "list_tasks": [
        "projectId", "workspaceId", "status", "number", "q", "parentTaskId", "tag", "fields",
        "limit", "offset", "order", "updatedSince",
    ],
    "get_task": ["projectId", "workspaceId", "taskId", "number", "includeContextPack", "format"],
    "get_week": ["projectId", "workspaceId", "week", "timeZone", "assigneeId"],
    "get_project_memory": [
        "projectId", "workspaceId", "document", "collection", "includeContent", "ids", "limit",
        "offset",
    ],
    "list_team": ["projectId", "workspaceId"],
    "get_project_state": ["projectId", "workspaceId"],
    "list_activity": ["projectId", "workspaceId", "limit", "since", "mine", "taskId"],
    "create_task": [
        "projectId", "workspaceId", "idempotencyKey", "title", "description", "brief", "type",
        "status", "priority", "assigneeId", "assigneeType", "contextItemIds",
        "externalReferenceIds", "contextRefs", "outputDestination", "tags", "dueDate",
        "parentTaskId", "blockedByTaskIds",
    ],
    "update_task": [
        "projectId", "workspaceId", "idempotencyKey", "taskId", "expectedRevision", "patch",
    ],
    "update_project_state": ["projectId", "workspaceId", "content", "expectedRevision"],
    "submit_result": [
        "projectId", "workspaceId", "taskId", "idempotencyKey", "expectedRevision",
        "contextReceiptId", "title", "summary", "content", "collection", "document",
        "references",
    ],
    "create_draft": [
        "projectId", "workspaceId", "idempotencyKey", "contextReceiptId", "taskId", "title",
        "summary", "content", "collection", "document",
    ],
    "propose_task": ["projectId", "title", "description", "typeHint", "roleHint"],
    "post_message": [
        "projectId", "workspaceId", "idempotencyKey", "participantId", "body", "taskId",
    ],
    "propose_task_update": ["taskId", "changes", "reason"],
    "propose_task_delete": ["taskId", "reason"],
    "propose_role": ["projectId", "name", "role", "description"],
    "propose_composition": ["projectId", "rationale", "seats"],
}  # fmt: skip


def accepted_names(model: type[Args]) -> set[str]:
    """The names a model takes: its camelCase names and every other name it accepts."""
    return {f.alias or n for n, f in model.model_fields.items()} | set(other_names(model))


@pytest.mark.parametrize(
    ("name", "arguments"),
    MYSPEC_CALLS + PENCIL_CALLS,
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_a_call_shaped_as_a_reference_shows_it_finds_a_tool_and_validates(
    name: str, arguments: dict[str, Any]
) -> None:
    tool = CATALOGUE.find(name)
    assert tool is not None, name
    validate_arguments(tool.args, arguments)


@pytest.mark.parametrize("name", sorted(LEGEVIO_PARAMETERS))
def test_every_parameter_the_reference_documents_is_an_argument(name: str) -> None:
    tool = CATALOGUE.find(name)
    assert tool is not None, name
    assert set(LEGEVIO_PARAMETERS[name]) <= accepted_names(tool.args)


def test_a_tool_alias_runs_its_tool_and_is_not_listed() -> None:
    for alias, name in TOOL_ALIASES.items():
        found = CATALOGUE.find(alias)
        assert found is not None, alias
        assert found.name == name, alias
        assert alias not in CATALOGUE.names
    assert CATALOGUE.find("list_spec_filez") is None


def test_workspace_id_is_offered_wherever_a_project_is_named_and_required_only_on_create() -> None:
    # Handoff reads name a handoff or a project's day, and the handoff services (shared with
    # the web app) check no workspace on a read; stream tokens name several projects.
    exempt = {
        "list_handoffs", "get_handoff", "list_handoff_action_items", "get_handoff_action_item",
        "create_stream_token", "list_stream_tokens", "revoke_stream_token",
        "delete_webhook",  # a DELETE route takes no query string; the webhook names its project
    }  # fmt: skip
    listed = {"create_project", "list_projects", "get_project_memory"}
    for tool in CATALOGUE:
        schema = input_schema(tool.args)
        if tool.name in exempt:
            continue
        assert "workspaceId" in schema["properties"], tool.name
        required = "workspaceId" in schema.get("required", [])
        assert required is (tool.name == "create_project"), tool.name
        assert ("workspaceId" in tool.schema()["properties"]) is (tool.name in listed), tool.name


def test_an_argument_sent_under_two_names_must_carry_one_value() -> None:
    create = CATALOGUE.find("create_task")
    assert create is not None
    base = {"projectId": P, "title": "T", "idempotencyKey": "k"}
    same = validate_arguments(create.args, {**base, "humanOwnerId": "u", "humanAssigneeId": "u"})
    assert same.human_owner_id == "u"  # type: ignore[attr-defined]
    with pytest.raises(ValidationFailed) as caught:
        validate_arguments(create.args, {**base, "humanOwnerId": "u", "human_assignee_id": "v"})
    assert caught.value.details["field"] == "humanOwnerId"
    assert "human_assignee_id" in caught.value.message
    with pytest.raises(ValidationFailed):
        validate_arguments(create.args, {**base, "project_id": "OTHER"})


def test_an_unknown_argument_is_still_refused() -> None:
    read = CATALOGUE.find("read_spec_file")
    assert read is not None
    with pytest.raises(ValidationError):
        validate_arguments(read.args, {"projectId": P, "path": F, "colour": "red"})
    with pytest.raises(ValidationError):  # a snake_case name of no field
        validate_arguments(read.args, {"projectId": P, "path": F, "file_name": F})


def test_other_names_never_shadow_a_real_argument() -> None:
    for tool in CATALOGUE:
        for model in _models(tool.args):
            wire = {f.alias or n for n, f in model.model_fields.items()}
            assert not set(other_names(model)) & wire, (tool.name, model.__name__)


def _models(model: type[Args], seen: set[type[Args]] | None = None) -> set[type[Args]]:
    """`model` and every argument model nested in its fields."""
    seen = set() if seen is None else seen
    if model in seen:
        return seen
    seen.add(model)

    def walk(annotation: Any) -> None:
        if isinstance(annotation, type) and issubclass(annotation, Args):
            _models(annotation, seen)
        for inner in typing.get_args(annotation):
            walk(inner)

    for field in model.model_fields.values():
        walk(field.annotation)
    return seen


# --- messages name only what exists -----------------------------------------------------------

TOOL_WORD = re.compile(r"(?<![\w./{$-])([a-z]+(?:_[a-z]+)+)(?![\w(/-])")
QUOTED_CAMEL = re.compile(r"[`'\"]([a-z]+(?:[A-Z][a-z0-9]*)+)[`'\"]")
# Words shaped like a tool name that name something else: a format value, a token kind, a
# column, an OpenAPI operation id, a ledger operation, a prompt.
NOT_TOOLS = {
    "agent_brief", "agent_token", "read_at", "get_projects_project_events", "set_task_parent",
    "start_session", "claim_lost",  # a check-in's kind of update
    "list_item_open",  # a markdown-it token type
    # The tools a spec session's model reads code with, through a person's bridge: a second
    # catalogue, of the model's, not MCP's (crewboard.domain.code_tools).
    code_tools.LIST_FOLDER, code_tools.READ_FILE, code_tools.SEARCH_TEXT,
}  # fmt: skip


def _strings(tree: ast.AST) -> list[ast.Constant]:
    """The string literals of a module that are not docstrings or `__all__` (which name
    functions, not tools)."""
    docs: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            docs.add(id(body[0].value))
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            docs.update(id(n) for n in ast.walk(node.value))
    return [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs
    ]


def _messages(tree: ast.AST) -> list[ast.Constant]:
    """The literals that make up error messages: the first argument of a raised error, the
    problem given to `ValidationFailed.field`."""
    parts: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and node.exc.args:
            parts.append(node.exc.args[0])
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "field":
            parts.extend(node.args[1:2])
    return [
        n
        for part in parts
        for n in ast.walk(part)
        if isinstance(n, ast.Constant) and isinstance(n.value, str)
    ]


def _all_arguments() -> set[str]:
    names: set[str] = set()
    for tool in CATALOGUE:
        for model in _models(tool.args):
            names |= {f.alias or n for n, f in model.model_fields.items()}
    return names


def test_text_names_only_tools_that_exist() -> None:
    tools = set(CATALOGUE.names)
    verbs = {name.split("_")[0] for name in tools}
    fields = {n for tool in CATALOGUE for m in _models(tool.args) for n in m.model_fields}
    wrong: list[str] = []
    for path in sorted(SRC.rglob("*.py")):
        for node in _strings(ast.parse(path.read_text(encoding="utf-8"))):
            for word in TOOL_WORD.findall(node.value):
                if word.split("_")[0] not in verbs or word in tools | fields | NOT_TOOLS:
                    continue
                if path.name == "catalogue.py" and word in TOOL_ALIASES:
                    continue  # where the reference products' names are declared
                wrong.append(f"{path.relative_to(SRC)}:{node.lineno}: {word}")
    assert not wrong, "names no tool:\n" + "\n".join(wrong)


def test_error_messages_quote_only_arguments_that_exist() -> None:
    arguments = _all_arguments()
    wrong: list[str] = []
    for path in sorted(SRC.rglob("*.py")):
        for node in _messages(ast.parse(path.read_text(encoding="utf-8"))):
            for word in QUOTED_CAMEL.findall(node.value):
                if word not in arguments:
                    wrong.append(f"{path.relative_to(SRC)}:{node.lineno}: {word}")
    assert not wrong, "names no argument:\n" + "\n".join(wrong)


def test_the_walk_finds_a_tool_that_does_not_exist() -> None:
    """The two walks above can fail: a message naming list_spec_file is caught."""
    tree = ast.parse('raise NotFound("No such file; list_spec_file shows them, `specFile`.")')
    [message] = _messages(tree)
    assert TOOL_WORD.findall(message.value) == ["list_spec_file"]
    assert "list_spec_file" not in CATALOGUE.names
    assert QUOTED_CAMEL.findall(message.value) == ["specFile"]
    assert "specFile" not in _all_arguments()
