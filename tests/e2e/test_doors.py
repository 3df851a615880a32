"""Every operation of the catalogue, through each door it has: MCP, REST and the CLI.

One scenario per operation: its main path, built on a project seeded once for the module (a
task, a spec file with a comment thread, an attachment, an artifact, a handoff with an action
item, a spec session, a stream token), with a check on the answer; and its main refusal (a bad
value, or an id that does not exist), which must carry the same code and name the same field on
every door. A write that uses its target up (a delete, an archive, a versioned update) makes a
target of its own first, so the doors do not trip over one another.
"""

# The scenario table's lambdas share one signature (world, tag), and most use one of the two.
# ruff: noqa: ARG005

from __future__ import annotations

import base64
import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest

from crewboard.config import Settings
from crewboard.contract.catalogue import default_catalogue
from crewboard.domain.identity.access import Scope
from crewboard.domain.identity.records import User
from crewboard.services.board import repos
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.conftest import BACKENDS
from tests.support.doors import Door, DoorApp, McpDoor, Outcome, door
from tests.support.factories import make_project, make_user
from tests.support.oauth import module_database
from tests.support.server import free_port, running_server

__all__ = ["door"]  # the fixture, imported by name

EMAIL = "owner@example.com"
ALL_SCOPES = [scope.value for scope in Scope]
SPEC = "# Spec\n\nThe first line of the spec.\nThe second line.\n"
NOWHERE = "no-such-id-0000"
HOOK = "http://127.0.0.1:9/hook"  # loopback, allowed by the server's settings; a closed port
W: dict[str, Any] = {"workspaceId": None}


@dataclass
class World:
    """The seeded project and a way to make more: `make` runs an operation over MCP (a client
    of its own, not the door under test) and answers its body."""

    seeder: McpDoor
    door: Door | None = None  # the door under test, for what only its caller may change
    owner_id: str = ""
    task: str = ""
    task_key: str = ""
    other_key: str = ""
    other_task: str = ""
    file: str = ""
    thread: str = ""
    attachment: str = ""
    artifact: str = ""
    handoff: str = ""
    action_item: str = ""
    session: str = ""
    stream_token: str = ""
    webhook: str = ""
    seat: str = ""
    repo: str = ""
    numbers: Iterator[int] = field(default_factory=itertools.count)

    def make(self, op: str, arguments: dict[str, Any], via: Door | None = None) -> Any:
        got = (via or self.seeder).call(op, arguments)
        assert got.ok, f"making with {op}: {got}"
        return got.body

    def tag(self, door: str) -> str:
        """A name no other call of the module uses."""
        return f"{door}-{next(self.numbers)}"

    def new_task(self, tag: str) -> dict[str, Any]:
        return dict(self.make("create_task", {
            "projectId": "CRW", **W, "idempotencyKey": f"task-{tag}", "title": f"Task {tag}",
        })["task"])  # fmt: skip

    def new_file(self, tag: str) -> dict[str, Any]:
        return dict(self.make("upload_spec_file", {
            "projectId": "CRW", **W, "path": f"made/{tag}.md", "content": SPEC,
        })["file"])  # fmt: skip

    def new_thread(self, tag: str, *, own: bool = False) -> dict[str, Any]:
        """A comment thread; `own`: started through the door under test, whose caller alone
        may change its first comment."""
        return dict(self.make("create_spec_file_comment_thread", {
            "projectId": "CRW", **W, "fileId": self.file,
            "anchorQuote": "The second line.", "body": f"Comment {tag}",
        }, self.door if own else None)["thread"])  # fmt: skip

    def new_artifact(self, tag: str) -> dict[str, Any]:
        return dict(self.make("create_artifact", {
            "projectId": "CRW", **W, "slug": f"site-{tag}",
            "files": [{"path": "index.html", "content": "<p>one</p>\n"}],
        })["artifact"])  # fmt: skip

    def fresh_day(self) -> str:
        """A date no other handoff of the module has (one handoff per person and day)."""
        return (date(2020, 1, 1) + timedelta(days=next(self.numbers))).isoformat()

    def new_handoff(self, tag: str) -> dict[str, Any]:
        return dict(self.make("create_handoff", {
            "projectId": "CRW", **W, "completed": f"Done {tag}", "date": self.fresh_day(),
        })["handoff"])  # fmt: skip

    def new_session(self, tag: str) -> str:
        return str(self.make("start_spec_session", {
            "projectId": "CRW", **W, "mode": "generate", "prompt": f"Write spec {tag}.",
        })["sessionId"])  # fmt: skip

    def new_project(self, tag: str) -> str:
        key = "P" + tag.replace("-", "").upper()[:8]
        self.make("create_project", {**W, "key": key, "name": f"Project {tag}"})
        return key


Args = Callable[[World, str], dict[str, Any]]
Check = Callable[[Any, World], object]


@dataclass(frozen=True)
class Scenario:
    """An operation's main path (arguments, and a check on the answer) and its main refusal
    (arguments, the code, and the field it names; None when it names none)."""

    main: Args
    check: Check
    refuse: Args
    code: str
    field: str | None = None
    # Why a door has no refusal to check (the CLI cannot be given a wrong value to a command
    # that takes none); None: every door has one.
    no_refusal: dict[str, str] | None = None


def _unknown_project(_w: World, _t: str) -> dict[str, Any]:
    return {"projectId": "NOPE", **W}


def _project_only(_w: World, _t: str) -> dict[str, Any]:
    return {"projectId": "CRW"}


# --- arguments that need a target of their own -------------------------------------------


def _github_project(w: World, t: str) -> dict[str, Any]:
    key = w.new_project(t)
    w.make("configure_github", {"projectId": key, **W})
    return {"projectId": key, **W}


def _archived_project(w: World, t: str) -> dict[str, Any]:
    key = w.new_project(t)
    w.make("archive_project", {"projectId": key, **W})
    return {"projectId": key, **W}


def _update_task(w: World, t: str) -> dict[str, Any]:
    made = w.new_task(t)
    return {
        "projectId": "CRW", **W, "idempotencyKey": f"k-{t}", "taskId": made["id"],
        "expectedRevision": made["revision"], "patch": {"title": f"Renamed {t}"},
    }  # fmt: skip


def _assign_task(w: World, t: str) -> dict[str, Any]:
    made = w.new_task(t)
    return {
        "taskId": made["id"], **W, "idempotencyKey": f"k-{t}",
        "expectedRevision": made["revision"], "assigneeId": w.owner_id, "assigneeType": "human",
    }  # fmt: skip


def _claimed(w: World, t: str) -> str:
    """A new task claimed through the door under test: only its caller holds the claim."""
    made = w.new_task(t)
    w.make("claim_task", {"taskId": made["id"], **W}, w.door)
    return str(made["id"])


def _claim_next(w: World, t: str) -> dict[str, Any]:
    """claim_next_task's arguments, once a new task is ready for it to find."""
    w.make("create_task", {
        "projectId": "CRW", **W, "idempotencyKey": f"ready-{t}", "title": f"Ready {t}",
        "status": "ready_for_ai",
    })  # fmt: skip
    return {"projectId": "CRW", **W, "leaseSeconds": 60}


def _submit_result(w: World, t: str) -> dict[str, Any]:
    made = w.new_task(t)
    return {
        "projectId": "CRW", "taskId": made["id"], **W, "idempotencyKey": f"k-{t}",
        "expectedRevision": made["revision"], "contextReceiptId": None,
        "title": f"Result {t}", "content": "The result.",
    }  # fmt: skip


def _saved_output(w: World, t: str) -> dict[str, Any]:
    output = w.make("save_output", {
        "taskId": w.task, **W, "idempotencyKey": f"out-{t}", "name": f"read-{t}.md",
        "content": "Line one.\nLine two.\n",
    })["output"]  # fmt: skip
    return {"taskId": w.task, "outputId": output["id"]}


def _update_spec_file(w: World, t: str) -> dict[str, Any]:
    made = w.new_file(t)
    return {
        "projectId": "CRW", **W, "fileId": made["id"], "expectedVersion": made["contentVersion"],
        "content": SPEC + f"Edited {t}.\n",
    }  # fmt: skip


def _trashed_file(w: World, t: str) -> dict[str, Any]:
    made = w.new_file(t)
    w.make("move_spec_file_to_trash", {"projectId": "CRW", **W, "fileId": made["id"]})
    return {"projectId": "CRW", **W, "fileId": made["id"]}


def _first_comment(thread: dict[str, Any]) -> str:
    return str(thread["comments"][0]["id"])


def _update_comment(w: World, t: str) -> dict[str, Any]:
    comment = w.new_thread(t, own=True)["comments"][0]
    return {
        "projectId": "CRW", **W, "commentId": comment["id"],
        "expectedVersion": comment["contentVersion"], "body": f"Edited {t}",
    }  # fmt: skip


def _archived_session(w: World, t: str) -> dict[str, Any]:
    session = w.new_session(t)
    w.make("archive_spec_session", {"projectId": "CRW", **W, "sessionId": session})
    return {"projectId": "CRW", **W, "sessionId": session}


def _artifact_revision(w: World, t: str) -> dict[str, Any]:
    made = w.new_artifact(t)
    return {
        "projectId": "CRW", **W, "artifactId": made["id"], "expectedVersion": made["revisionCount"],
        "files": [{"path": "about.html", "content": f"<p>{t}</p>\n"}],
    }  # fmt: skip


def _artifact_rollback(w: World, t: str) -> dict[str, Any]:
    made = w.new_artifact(t)
    second = w.make("write_artifact_revision", {
        "projectId": "CRW", **W, "artifactId": made["id"], "expectedVersion": made["revisionCount"],
        "files": [{"path": "about.html", "content": "<p>two</p>\n"}],
    })["artifact"]  # fmt: skip
    return {
        "projectId": "CRW", **W, "artifactId": made["id"], "revision": 1,
        "expectedVersion": second["revisionCount"],
    }  # fmt: skip


def _update_handoff(w: World, t: str) -> dict[str, Any]:
    made = w.new_handoff(t)
    return {
        "handoffId": made["id"], **W, "expectedUpdatedAt": made["updatedAt"],
        "blockers": f"Blocked {t}",
    }  # fmt: skip


def _update_action_item(w: World, t: str) -> dict[str, Any]:
    item = w.make("create_handoff_action_item", {"handoffId": w.handoff, **W, "text": f"Item {t}"})[
        "actionItem"
    ]
    return {
        "actionItemId": item["id"], **W, "expectedUpdatedAt": item["updatedAt"],
        "status": "done",
    }  # fmt: skip


def _new_webhook(w: World, t: str) -> str:
    made = w.make("create_webhook", {
        "projectId": "CRW", "url": HOOK, "events": ["task.*"], "description": f"Hook {t}",
    })  # fmt: skip
    return str(made["webhook"]["id"])


def _ping(w: World, t: str) -> str:
    return str(w.make("ping_webhook", {"webhookId": w.webhook})["delivery"]["id"])


def _new_stream_token(w: World, t: str) -> str:
    made = w.make("create_stream_token", {"projectIds": ["CRW"], "name": f"Gone {t}"})
    return str(made["streamToken"]["id"])


# A table read row by row: each scenario keeps its dense layout.
# fmt: off
SCENARIOS: dict[str, Scenario] = {
    # --- projects -------------------------------------------------------------------------
    "list_projects": Scenario(
        lambda w, t: {"q": "crw"},
        lambda b, w: "CRW" in [p["key"] for p in b["projects"]],
        lambda w, t: {"q": "x" * 201}, "LIMIT_EXCEEDED", "q",
    ),
    "get_project": Scenario(
        _project_only,
        lambda b, w: b["project"]["key"] == "CRW"
        and w.file in [f["id"] for f in b["specFiles"]]
        and w.attachment in [a["id"] for a in b["attachments"]]
        and w.session in [s["id"] for s in b["activeSessions"]],
        lambda w, t: {"projectId": "NOPE"}, "NOT_FOUND",
    ),
    "create_project": Scenario(
        lambda w, t: {**W, "key": "N" + t.replace("-", "").upper()[:8], "name": f"New {t}"},
        lambda b, w: b["project"]["name"].startswith("New "),
        lambda w, t: {**W, "key": "bad key!", "name": "Bad"}, "VALIDATION", "key",
    ),
    "update_project": Scenario(
        lambda w, t: {"projectId": "CRW", **W, "goal": f"Goal {t}"},
        lambda b, w: b["project"]["goal"].startswith("Goal "),
        lambda w, t: {"projectId": "CRW", **W, "shiftTimeZoneA": "Mars/Olympus"},
        "VALIDATION", "shiftTimeZoneA",
    ),
    "archive_project": Scenario(
        lambda w, t: {"projectId": w.new_project(t), **W},
        lambda b, w: b["project"]["archivedAt"] is not None,
        _unknown_project, "NOT_FOUND",
    ),
    "unarchive_project": Scenario(
        _archived_project,
        lambda b, w: b["project"]["archivedAt"] is None,
        _unknown_project, "NOT_FOUND",
    ),
    "delete_project": Scenario(
        _archived_project,
        lambda b, w: b["deleted"] is True,
        _unknown_project, "NOT_FOUND",
    ),
    "get_github_settings": Scenario(
        _project_only,
        lambda b, w: b["webhookUrl"].endswith("/api/v1/projects/CRW/github") and "secret" not in b,
        lambda w, t: {"projectId": "NOPE"}, "NOT_FOUND",
    ),
    "configure_github": Scenario(
        lambda w, t: {"projectId": w.new_project(t), **W, "syncIssues": True},
        lambda b, w: b["configured"] is True and len(b["secret"]) == 64 and b["syncIssues"],
        lambda w, t: {"projectId": "CRW", **W, "onMerge": "sideways"}, "VALIDATION", "onMerge",
    ),
    "disconnect_github": Scenario(
        _github_project,
        lambda b, w: b["configured"] is False,
        _unknown_project, "NOT_FOUND",
    ),
    "get_project_state": Scenario(
        _project_only, lambda b, w: b["content"] == "" or b["revision"] >= 1,
        lambda w, t: {"projectId": "NOPE"}, "NOT_FOUND",
    ),
    "update_project_state": Scenario(
        lambda w, t: {
            "projectId": "CRW", **W, "content": f"State {t}",
            "expectedRevision": w.make("get_project_state", {"projectId": "CRW"})["revision"],
        },
        lambda b, w: "State " in str(b),
        lambda w, t: {"projectId": "CRW", **W, "content": "x", "expectedRevision": -1},
        "VALIDATION", "expectedRevision",
    ),
    "list_team": Scenario(
        _project_only, lambda b, w: w.owner_id in str(b),
        lambda w, t: {"projectId": "NOPE"}, "NOT_FOUND",
    ),
    # --- board ----------------------------------------------------------------------------
    "list_tasks": Scenario(
        lambda w, t: {"projectId": "CRW", "includeDetails": True},
        lambda b, w: w.task_key in [x["key"] for x in b["tasks"]]
        and all("description" in x for x in b["tasks"]),
        # The seeded spec file is no tasks.md.
        lambda w, t: {"projectId": "CRW", "file": w.file}, "VALIDATION", "file",
    ),
    "list_assignee_tasks": Scenario(
        lambda w, t: {"assigneeId": w.owner_id, "projectId": "CRW"},
        lambda b, w: w.other_key in [x["key"] for x in b["tasks"]],
        lambda w, t: {"assigneeId": w.owner_id, "limit": 0}, "VALIDATION", "limit",
    ),
    "get_task": Scenario(
        lambda w, t: {"taskId": w.task}, lambda b, w: b["task"]["id"] == w.task,
        lambda w, t: {"taskId": NOWHERE}, "NOT_FOUND",
    ),
    "create_task": Scenario(
        lambda w, t: {"projectId": "CRW", **W, "idempotencyKey": f"k-{t}", "title": f"Made {t}"},
        lambda b, w: b["task"]["title"].startswith("Made "),
        lambda w, t: {
            "projectId": "CRW", **W, "idempotencyKey": f"bad-{t}", "title": "x", "priority": "whenever",
        },
        "VALIDATION", "priority",
    ),
    "update_task": Scenario(
        _update_task,
        lambda b, w: b["task"]["title"].startswith("Renamed "),
        lambda w, t: {
            "projectId": "CRW", **W, "idempotencyKey": f"bad-{t}", "taskId": NOWHERE,
            "expectedRevision": 1, "patch": {"title": "x"},
        },
        "NOT_FOUND",
    ),
    "assign_task": Scenario(
        _assign_task,
        lambda b, w: b["task"]["assigneeId"] == w.owner_id,
        lambda w, t: {
            "taskId": w.task, **W, "idempotencyKey": f"bad-{t}", "expectedRevision": 1,
            "assigneeType": "robot",
        },
        "VALIDATION", "assigneeType",
    ),
    "claim_task": Scenario(
        lambda w, t: {"taskId": w.new_task(t)["id"], **W, "leaseSeconds": 60},
        lambda b, w: b["claim"]["fence"] >= 1 and b["claim"]["key"].startswith("CRW-"),
        lambda w, t: {"taskId": w.task, **W, "leaseSeconds": 5}, "VALIDATION", "leaseSeconds",
    ),
    "release_task": Scenario(
        lambda w, t: {"taskId": _claimed(w, t), **W},
        lambda b, w: b["claim"]["ended"] == "released",
        lambda w, t: {"taskId": w.new_task(t)["id"], **W}, "CLAIM_LOST",
    ),
    "renew_claims": Scenario(
        lambda w, t: {"taskId": _claimed(w, t), **W},
        lambda b, w: len(b["claims"]) == 1 and b["claims"][0]["fence"] >= 1,
        lambda w, t: {"taskId": NOWHERE, **W}, "NOT_FOUND",
    ),
    "claim_next_task": Scenario(
        _claim_next,
        lambda b, w: b["claim"]["fence"] >= 1,
        lambda w, t: {"projectId": "CRW", **W, "leaseSeconds": 4000},
        "VALIDATION", "leaseSeconds",
    ),
    "get_updates": Scenario(
        lambda w, t: {"projectId": "CRW", **W},
        lambda b, w: isinstance(b["updates"], list) and bool(b["nextCursor"]),
        lambda w, t: {"projectId": "CRW", **W, "cursor": "not-a-cursor"}, "VALIDATION", "cursor",
    ),
    "update_tasks": Scenario(
        lambda w, t: {
            "projectId": "CRW", **W, "idempotencyKey": f"k-{t}", "taskIds": [w.task],
            "addLabels": [f"l-{t}"],
        },
        lambda b, w: b["updated"] == 1,
        lambda w, t: {
            "projectId": "CRW", **W, "idempotencyKey": f"bad-{t}", "taskIds": [w.task],
            "priority": "whenever",
        },
        "VALIDATION", "priority",
    ),
    "set_task_status": Scenario(
        lambda w, t: {
            "projectId": "CRW", **W, "idempotencyKey": f"k-{t}",
            "changes": [{"taskId": w.new_task(t)["id"], "status": "blocked"}],
        },
        lambda b, w: [o["ok"] for o in b["outcomes"]] == [True],
        lambda w, t: {
            "projectId": "CRW", **W, "idempotencyKey": f"bad-{t}",
            "changes": [{"taskId": w.task, "status": "finished"}],
        },
        "VALIDATION", "changes.0.status",
    ),
    "list_task_events": Scenario(
        lambda w, t: {"taskId": w.task}, lambda b, w: len(b["events"]) >= 1,
        lambda w, t: {"taskId": w.task, "limit": 0}, "VALIDATION", "limit",
    ),
    "get_week": Scenario(
        lambda w, t: {"projectId": "CRW", "week": "2026-03-02"},
        lambda b, w: "2026-03-02" in str(b),
        lambda w, t: {"projectId": "CRW", "timeZone": "Mars/Olympus"}, "VALIDATION", "timeZone",
    ),
    "get_board_summary": Scenario(
        lambda w, t: {"projectId": "CRW"},
        lambda b, w: b["project"] == "CRW" and b["total"] >= 1 and "backlog" in b["columns"],
        lambda w, t: {"projectId": "NOPE"}, "NOT_FOUND",
    ),
    "post_comment": Scenario(
        lambda w, t: {"taskId": w.task, **W, "idempotencyKey": f"k-{t}", "content": f"Note {t}"},
        lambda b, w: b["comment"]["kind"] == "comment",
        lambda w, t: {"taskId": NOWHERE, **W, "idempotencyKey": f"bad-{t}", "content": "x"},
        "NOT_FOUND",
    ),
    "agent_update": Scenario(
        lambda w, t: {"taskId": w.task, **W, "idempotencyKey": f"k-{t}", "content": f"Upd {t}"},
        lambda b, w: b["agentUpdate"]["kind"] == "agent_update",
        lambda w, t: {"taskId": NOWHERE, **W, "idempotencyKey": f"bad-{t}", "content": "x"},
        "NOT_FOUND",
    ),
    "save_output": Scenario(
        lambda w, t: {
            "taskId": w.task, **W, "idempotencyKey": f"k-{t}", "name": f"out-{t}.md",
            "content": "Output.",
        },
        lambda b, w: b["output"]["name"].startswith("out-"),
        lambda w, t: {
            "taskId": NOWHERE, **W, "idempotencyKey": f"bad-{t}", "name": "o.md", "content": "x",
        },
        "NOT_FOUND",
    ),
    "ask_question": Scenario(
        lambda w, t: {"taskId": w.task, **W, "idempotencyKey": f"k-{t}", "question": f"Why {t}?"},
        lambda b, w: b["question"]["status"] == "open",
        lambda w, t: {"taskId": NOWHERE, **W, "idempotencyKey": f"bad-{t}", "question": "x"},
        "NOT_FOUND",
    ),
    "list_task_notes": Scenario(
        lambda w, t: {"taskId": w.task}, lambda b, w: "notes" in b,
        lambda w, t: {"taskId": w.task, "limit": 0}, "VALIDATION", "limit",
    ),
    "read_output": Scenario(
        _saved_output, lambda b, w: b["text"] == "Line one.\nLine two.\n",
        lambda w, t: {"taskId": w.task, "outputId": NOWHERE}, "NOT_FOUND",
    ),
    "list_task_repos": Scenario(
        lambda w, t: {"projectId": "CRW"}, lambda b, w: "repos" in b,
        lambda w, t: {"projectId": "NOPE"}, "NOT_FOUND",
    ),
    "propose_repo_change": Scenario(
        lambda w, t: {
            "taskId": w.task, **W, "idempotencyKey": f"k-{t}", "repoId": w.repo, "branch": f"b-{t}",
        },
        lambda b, w: b["link"]["repoId"] == w.repo,
        lambda w, t: {
            "taskId": NOWHERE, **W, "idempotencyKey": f"bad-{t}", "repoId": "web", "branch": "b",
        },
        "NOT_FOUND",
    ),
    "report_repo_status": Scenario(
        lambda w, t: {
            "taskId": w.task, **W, "idempotencyKey": f"k-{t}", "repoId": w.repo,
            "tests": "passed", "summary": f"Green {t}",
        },
        lambda b, w: b["report"]["tests"] == "passed",
        lambda w, t: {
            "taskId": NOWHERE, **W, "idempotencyKey": f"bad-{t}", "repoId": w.repo, "summary": "x",
        },
        "NOT_FOUND",
    ),
    # --- review ---------------------------------------------------------------------------
    "submit_result": Scenario(
        _submit_result,
        lambda b, w: b["draft"]["title"].startswith("Result "),
        lambda w, t: {
            "projectId": "CRW", "taskId": NOWHERE, **W, "idempotencyKey": f"bad-{t}",
            "expectedRevision": 1, "contextReceiptId": None, "title": "x", "content": "x",
        },
        "NOT_FOUND",
    ),
    "create_draft": Scenario(
        lambda w, t: {"taskId": w.task, "title": f"Draft {t}", "content": "Draft text."},
        lambda b, w: b["draft"]["taskId"] == w.task,
        lambda w, t: {"taskId": NOWHERE, "title": "x", "content": "x"}, "NOT_FOUND",
    ),
    "propose_task": Scenario(
        lambda w, t: {"projectId": "CRW", **W, "title": f"Proposed {t}"}, lambda b, w: b["proposal"]["kind"] == "task",
        lambda w, t: {"projectId": "NOPE", **W, "title": "x"}, "NOT_FOUND",
    ),
    "propose_task_update": Scenario(
        lambda w, t: {"taskId": w.task, **W, "changes": {"title": f"Better {t}"}},
        lambda b, w: b["proposal"]["kind"] == "task_update",
        lambda w, t: {"taskId": NOWHERE, **W, "changes": {"title": "x"}}, "NOT_FOUND",
    ),
    "propose_task_delete": Scenario(
        lambda w, t: {"taskId": w.other_task, **W, "reason": f"Dup {t}"}, lambda b, w: b["proposal"]["kind"] == "task_delete",
        lambda w, t: {"taskId": NOWHERE, **W}, "NOT_FOUND",
    ),
    "propose_role": Scenario(
        lambda w, t: {"projectId": "CRW", **W, "name": f"Role {t}", "role": "Reviews things."},
        lambda b, w: b["proposal"]["kind"] == "role",
        lambda w, t: {"projectId": "NOPE", **W, "name": "x", "role": "x"}, "NOT_FOUND",
    ),
    "propose_composition": Scenario(
        lambda w, t: {"projectId": "CRW", **W, "seats": [{"role": f"Writes {t}", "typeHint": "ai"}]},
        lambda b, w: b["proposal"]["kind"] == "composition",
        lambda w, t: {"projectId": "CRW", **W, "seats": [{"role": "x", "typeHint": "robot"}]},
        "VALIDATION", "seats.0.typeHint",
    ),
    "get_project_memory": Scenario(
        _project_only, lambda b, w: b["documents"] == [] and b["total"] == 0,
        lambda w, t: {"projectId": "CRW", "limit": 0}, "VALIDATION", "limit",
    ),
    "list_activity": Scenario(
        _project_only, lambda b, w: len(b["entries"]) >= 1,
        lambda w, t: {"projectId": "CRW", "limit": 0}, "VALIDATION", "limit",
    ),
    "post_message": Scenario(
        lambda w, t: {"projectId": "CRW", **W, "participantId": w.seat, "body": f"Hi {t}"},
        lambda b, w: b["message"]["participantId"] == w.seat,
        lambda w, t: {"projectId": "CRW", **W, "participantId": NOWHERE, "body": "x"},
        "NOT_FOUND", "participantId",
    ),
    # --- specs ----------------------------------------------------------------------------
    "list_spec_files": Scenario(
        _project_only, lambda b, w: w.file in [f["id"] for f in b["files"]],
        lambda w, t: {"projectId": "CRW", "limit": 0}, "VALIDATION", "limit",
    ),
    "get_spec_file": Scenario(
        lambda w, t: {"projectId": "CRW", "fileId": w.file},
        lambda b, w: b["file"]["id"] == w.file,
        lambda w, t: {"projectId": "CRW", "fileId": NOWHERE}, "NOT_FOUND",
    ),
    "read_spec_file": Scenario(
        lambda w, t: {"projectId": "CRW", "fileId": w.file},
        lambda b, w: "The first line" in str(b),
        lambda w, t: {"projectId": "CRW", "fileId": NOWHERE}, "NOT_FOUND",
    ),
    "upload_spec_file": Scenario(
        lambda w, t: {"projectId": "CRW", **W, "path": f"up/{t}.md", "content": SPEC},
        lambda b, w: b["file"]["path"].startswith("up/"),
        lambda w, t: {"projectId": "NOPE", **W, "path": "x.md", "content": SPEC}, "NOT_FOUND",
    ),
    "update_spec_file": Scenario(
        _update_spec_file,
        lambda b, w: b["file"]["path"].startswith("made/"),
        lambda w, t: {
            "projectId": "CRW", **W, "fileId": NOWHERE, "expectedVersion": "1", "content": "x",
        },
        "NOT_FOUND",
    ),
    "move_spec_file_to_trash": Scenario(
        lambda w, t: {"projectId": "CRW", **W, "fileId": w.new_file(t)["id"]},
        lambda b, w: b["file"]["path"].startswith("made/"),
        lambda w, t: {"projectId": "CRW", **W, "fileId": NOWHERE}, "NOT_FOUND",
    ),
    "restore_spec_file_from_trash": Scenario(
        _trashed_file,
        lambda b, w: b["file"]["path"].startswith("made/"),
        lambda w, t: {"projectId": "CRW", **W, "fileId": NOWHERE}, "NOT_FOUND",
    ),
    "download_spec_file": Scenario(
        lambda w, t: {"projectId": "CRW", "fileId": w.file, "folder": f"downloads/{t}"},
        lambda b, w: "spec.md" in str(b),
        lambda w, t: {"projectId": "CRW", "fileId": NOWHERE}, "NOT_FOUND",
    ),
    "list_attachments": Scenario(
        _project_only, lambda b, w: w.attachment in [a["id"] for a in b["attachments"]],
        lambda w, t: {"projectId": "CRW", "limit": 0}, "VALIDATION", "limit",
    ),
    "get_attachment": Scenario(
        lambda w, t: {"projectId": "CRW", "attachmentId": w.attachment},
        lambda b, w: b["attachment"]["id"] == w.attachment,
        lambda w, t: {"projectId": "CRW", "attachmentId": NOWHERE}, "NOT_FOUND",
    ),
    "read_attachment": Scenario(
        lambda w, t: {"projectId": "CRW", "attachmentId": w.attachment},
        lambda b, w: "Notes" in str(b),
        lambda w, t: {"projectId": "CRW", "attachmentId": NOWHERE}, "NOT_FOUND",
    ),
    "upload_attachment": Scenario(
        lambda w, t: {
            "projectId": "CRW", **W, "name": f"n-{t}.txt",
            "contentBase64": base64.b64encode(b"More notes.\n").decode(),
        },
        lambda b, w: b["attachment"]["name"].startswith("n-"),
        lambda w, t: {"projectId": "NOPE", **W, "name": "x.txt", "contentBase64": "eA=="},
        "NOT_FOUND",
    ),
    "list_spec_file_comments": Scenario(
        lambda w, t: {"projectId": "CRW", "fileId": w.file},
        lambda b, w: w.thread in str(b),
        lambda w, t: {"projectId": "CRW", "fileId": w.file, "status": "maybe"},
        "VALIDATION", "status",
    ),
    "create_spec_file_comment_thread": Scenario(
        lambda w, t: {
            "projectId": "CRW", **W, "fileId": w.file, "anchorQuote": "The first line",
            "body": f"Thread {t}",
        },
        lambda b, w: b["thread"]["id"],
        lambda w, t: {
            "projectId": "CRW", **W, "fileId": NOWHERE, "anchorQuote": "x", "body": "x",
        },
        "NOT_FOUND",
    ),
    "reply_spec_file_comment_thread": Scenario(
        lambda w, t: {"projectId": "CRW", **W, "threadId": w.thread, "body": f"Reply {t}"},
        lambda b, w: w.thread in str(b) and "Reply " in str(b),
        lambda w, t: {"projectId": "CRW", **W, "threadId": NOWHERE, "body": "x"}, "NOT_FOUND",
    ),
    "update_spec_file_comment": Scenario(
        _update_comment,
        lambda b, w: "Edited" in str(b),
        lambda w, t: {
            "projectId": "CRW", **W, "commentId": NOWHERE, "expectedVersion": "1", "body": "x",
        },
        "NOT_FOUND",
    ),
    "delete_spec_file_comment": Scenario(
        lambda w, t: {"projectId": "CRW", **W, "commentId": _first_comment(w.new_thread(t, own=True))},
        lambda b, w: b["outcome"] == "threadDeleted",
        lambda w, t: {"projectId": "CRW", **W, "commentId": NOWHERE}, "NOT_FOUND",
    ),
    # --- spec sessions --------------------------------------------------------------------
    "list_spec_sessions": Scenario(
        _project_only, lambda b, w: w.session in str(b),
        lambda w, t: {"projectId": "CRW", "archiveFilter": "some"}, "VALIDATION", "archiveFilter",
    ),
    "get_spec_session": Scenario(
        lambda w, t: {"projectId": "CRW", "sessionId": w.session},
        lambda b, w: w.session in str(b),
        lambda w, t: {"projectId": "CRW", "sessionId": NOWHERE}, "NOT_FOUND",
    ),
    "start_spec_session": Scenario(
        lambda w, t: {"projectId": "CRW", **W, "mode": "generate", "prompt": f"Spec {t}."},
        lambda b, w: b["sessionId"],
        lambda w, t: {"projectId": "CRW", **W, "mode": "rewrite", "prompt": "x"},
        "VALIDATION", "mode",
    ),
    "rename_spec_session": Scenario(
        lambda w, t: {"projectId": "CRW", **W, "sessionId": w.session, "title": f"Title {t}"},
        lambda b, w: "Title " in str(b),
        lambda w, t: {"projectId": "CRW", **W, "sessionId": NOWHERE, "title": "x"}, "NOT_FOUND",
    ),
    "archive_spec_session": Scenario(
        lambda w, t: {"projectId": "CRW", **W, "sessionId": w.new_session(t)}, lambda b, w: b["session"]["id"],
        lambda w, t: {"projectId": "CRW", **W, "sessionId": NOWHERE}, "NOT_FOUND",
    ),
    "unarchive_spec_session": Scenario(
        _archived_session, lambda b, w: b["session"]["id"],
        lambda w, t: {"projectId": "CRW", **W, "sessionId": NOWHERE}, "NOT_FOUND",
    ),
    "delete_spec_session": Scenario(
        _archived_session, lambda b, w: b["deleted"] is True,
        lambda w, t: {"projectId": "CRW", **W, "sessionId": NOWHERE}, "NOT_FOUND",
    ),
    # --- artifacts ------------------------------------------------------------------------
    "list_artifacts": Scenario(
        _project_only, lambda b, w: w.artifact in [a["id"] for a in b["artifacts"]],
        lambda w, t: {"projectId": "CRW", "limit": 0}, "VALIDATION", "limit",
    ),
    "get_artifact": Scenario(
        lambda w, t: {"projectId": "CRW", "artifactId": w.artifact},
        lambda b, w: b["artifact"]["id"] == w.artifact,
        lambda w, t: {"projectId": "CRW", "artifactId": NOWHERE}, "NOT_FOUND",
    ),
    "read_artifact_file": Scenario(
        lambda w, t: {"projectId": "CRW", "artifactId": w.artifact, "path": "index.html"},
        lambda b, w: "<p>one</p>" in str(b),
        lambda w, t: {"projectId": "CRW", "artifactId": w.artifact, "path": "none.html"},
        "NOT_FOUND", "path",
    ),
    "create_artifact": Scenario(
        lambda w, t: {
            "projectId": "CRW", **W, "slug": f"new-{t}",
            "files": [{"path": "index.html", "content": "<p>new</p>\n"}],
        },
        lambda b, w: b["artifact"]["slug"].startswith("new-"),
        lambda w, t: {"projectId": "CRW", **W, "slug": f"bad-{t}", "files": []},
        "VALIDATION", "files",
    ),
    "write_artifact_revision": Scenario(
        _artifact_revision,
        lambda b, w: b["artifact"]["revisionCount"] == 2,
        lambda w, t: {
            "projectId": "CRW", **W, "artifactId": NOWHERE, "expectedVersion": 1,
            "files": [{"path": "a.html", "content": "x"}],
        },
        "NOT_FOUND",
    ),
    "rollback_artifact": Scenario(
        _artifact_rollback,
        lambda b, w: b["artifact"]["revisionCount"] == 3,
        lambda w, t: {
            "projectId": "CRW", **W, "artifactId": NOWHERE, "revision": 1, "expectedVersion": 2,
        },
        "NOT_FOUND",
    ),
    # --- handoffs -------------------------------------------------------------------------
    "create_handoff": Scenario(
        lambda w, t: {
            "projectId": "CRW", **W, "completed": f"Done {t}",
            "date": w.fresh_day(), "linkedTaskIds": [w.task],
        },
        lambda b, w: b["handoff"]["completed"].startswith("Done "),
        lambda w, t: {"projectId": "CRW", **W, "completed": "x", "sourceTimeZone": "Mars/Olympus"},
        "VALIDATION", "sourceTimeZone",
    ),
    "update_handoff": Scenario(
        _update_handoff,
        lambda b, w: b["handoff"]["blockers"].startswith("Blocked "),
        lambda w, t: {
            "handoffId": NOWHERE, **W, "expectedUpdatedAt": "2026-03-02T09:00:00Z",
            "blockers": "x",
        },
        "NOT_FOUND",
    ),
    "list_handoffs": Scenario(
        _project_only, lambda b, w: w.handoff in [h["id"] for h in b["handoffs"]],
        lambda w, t: {"projectId": "CRW", "limit": 0}, "VALIDATION", "limit",
    ),
    "get_handoff": Scenario(
        lambda w, t: {"handoffId": w.handoff}, lambda b, w: b["handoff"]["id"] == w.handoff,
        lambda w, t: {"handoffId": NOWHERE}, "NOT_FOUND",
    ),
    "list_handoff_action_items": Scenario(
        lambda w, t: {"handoffId": w.handoff},
        lambda b, w: w.action_item in str(b),
        lambda w, t: {"handoffId": w.handoff, "limit": 0}, "VALIDATION", "limit",
    ),
    "get_handoff_action_item": Scenario(
        lambda w, t: {"actionItemId": w.action_item},
        lambda b, w: w.action_item in str(b),
        lambda w, t: {"actionItemId": NOWHERE}, "NOT_FOUND",
    ),
    "create_handoff_action_item": Scenario(
        lambda w, t: {"handoffId": w.handoff, **W, "text": f"Item {t}"},
        lambda b, w: b["actionItem"]["text"].startswith("Item "),
        lambda w, t: {"handoffId": w.handoff, **W, "text": "x", "status": "someday"},
        "VALIDATION", "status",
    ),
    "update_handoff_action_item": Scenario(
        _update_action_item,
        lambda b, w: b["actionItem"]["status"] == "done",
        lambda w, t: {
            "actionItemId": NOWHERE, **W, "expectedUpdatedAt": "2026-03-02T09:00:00Z",
            "status": "done",
        },
        "NOT_FOUND",
    ),
    # --- stream tokens --------------------------------------------------------------------
    "create_stream_token": Scenario(
        lambda w, t: {"projectIds": ["CRW"], "name": f"Stream {t}"},
        lambda b, w: b["streamToken"]["id"],
        lambda w, t: {"projectIds": ["CRW"], "lifetimeSeconds": 0},
        "VALIDATION", "lifetimeSeconds",
    ),
    "list_stream_tokens": Scenario(
        lambda w, t: {"projectId": "CRW", "limit": 200}, lambda b, w: w.stream_token in str(b),
        lambda w, t: {"limit": 201}, "VALIDATION", "limit",
    ),
    "revoke_stream_token": Scenario(
        lambda w, t: {"streamTokenId": _new_stream_token(w, t)}, lambda b, w: b["streamToken"]["name"].startswith("Gone "),
        lambda w, t: {"streamTokenId": NOWHERE}, "NOT_FOUND",
    ),
    # --- webhooks -------------------------------------------------------------------------
    "create_webhook": Scenario(
        lambda w, t: {"projectId": "CRW", **W, "url": HOOK, "events": ["task.*"], "description": f"Made {t}"},
        lambda b, w: b["secret"].startswith("whsec_") and b["webhook"]["events"] == ["task.*"],
        lambda w, t: {"projectId": "CRW", **W, "url": HOOK, "events": ["token.*"]}, "VALIDATION", "events",
    ),
    "list_webhooks": Scenario(
        lambda w, t: {"projectId": "CRW"},
        lambda b, w: w.webhook in str(b) and "secret" not in str(b), _unknown_project, "NOT_FOUND",
    ),
    "get_webhook": Scenario(
        lambda w, t: {"webhookId": w.webhook},
        lambda b, w: b["webhook"]["id"] == w.webhook and "secret" not in b["webhook"],
        lambda w, t: {"webhookId": NOWHERE}, "NOT_FOUND",
    ),
    "update_webhook": Scenario(
        lambda w, t: {"webhookId": _new_webhook(w, t), **W, "description": f"Changed {t}", "active": False},
        lambda b, w: b["webhook"]["state"] == "paused" and b["webhook"]["description"].startswith("Changed "),
        lambda w, t: {"webhookId": w.webhook, **W, "events": ["nope.*"]}, "VALIDATION", "events",
    ),
    "delete_webhook": Scenario(
        lambda w, t: {"webhookId": _new_webhook(w, t)},
        lambda b, w: b["deleted"] is True,
        lambda w, t: {"webhookId": NOWHERE}, "NOT_FOUND",
    ),
    "rotate_webhook_secret": Scenario(
        lambda w, t: {"webhookId": w.webhook, **W},
        lambda b, w: b["secret"].startswith("whsec_") and b["webhook"]["id"] == w.webhook,
        lambda w, t: {"webhookId": NOWHERE, **W}, "NOT_FOUND",
    ),
    "list_webhook_deliveries": Scenario(
        lambda w, t: {"webhookId": w.webhook, "limit": 200},
        lambda b, w: b["total"] >= 1 and b["deliveries"][0]["webhookId"] == w.webhook,
        lambda w, t: {"webhookId": w.webhook, "limit": 201}, "VALIDATION", "limit",
    ),
    "redeliver_webhook": Scenario(
        lambda w, t: {"deliveryId": _ping(w, t), **W},
        lambda b, w: b["delivery"]["kind"] == "redelivery",
        lambda w, t: {"deliveryId": NOWHERE, **W}, "NOT_FOUND",
    ),
    "ping_webhook": Scenario(
        lambda w, t: {"webhookId": w.webhook, **W},
        lambda b, w: b["delivery"]["kind"] == "ping" and b["delivery"]["eventType"] == "webhook.ping",
        lambda w, t: {"webhookId": NOWHERE, **W}, "NOT_FOUND",
    ),
}
# fmt: on


# --- the served app ----------------------------------------------------------------------


@pytest.fixture(scope="module", params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """The backend, for the module: one served app per backend."""
    return str(request.param)


@pytest.fixture(scope="module")
def module_db(backend: str, request: pytest.FixtureRequest) -> Iterator[Database]:
    with module_database(backend, request) as db:
        yield db


@pytest.fixture(scope="module")
def owner(module_db: Database) -> User:
    """The instance's owner, who owns project CRW; every door acts as them."""
    user = make_user(module_db, EMAIL, is_owner=True)
    make_project(module_db, user, "CRW")
    return user


@pytest.fixture(scope="module")
def door_app(
    module_db: Database, owner: User, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[DoorApp]:
    """The app served over HTTP on the module's database, with no spec session runner (a
    session starts and waits), and the CLI pointed at the same database."""
    secret = tokens.issue_token(
        module_db, person_actor(owner), kind="personal", scopes=ALL_SCOPES
    ).secret
    data_dir = tmp_path_factory.mktemp("doors")
    settings = Settings(
        data_dir=data_dir,
        port=free_port(),
        session_runners=0,
        session_first_turn_wait=0,
        webhook_allow_networks="127.0.0.1/32",
    )
    env = {
        "CREWBOARD_DATA_DIR": str(data_dir),
        "CREWBOARD_DATABASE_URL": module_db.url.render_as_string(hide_password=False),
        "CREWBOARD_CONFIG_FILE": None,
        "CREWBOARD_SESSION_RUNNERS": "0",
        "CREWBOARD_SESSION_FIRST_TURN_WAIT": "0",
        "CREWBOARD_WEBHOOK_ALLOW_NETWORKS": "127.0.0.1/32",
    }
    with running_server(settings, module_db) as base:
        yield DoorApp(
            url=base, secret=secret, email=EMAIL, cli_env=env, cli_folder=data_dir / "work"
        )


@pytest.fixture(scope="module")
def world(door_app: DoorApp, module_db: Database, owner: User) -> Iterator[World]:
    """Project CRW seeded for every scenario, through MCP (a client of its own)."""
    seeder = McpDoor(door_app)
    made = World(seeder, owner_id=owner.id)
    try:
        yield _seed(made, module_db, owner)
    finally:
        seeder.close()


def _seed(w: World, db: Database, owner: User) -> World:
    # A repository is added by an admin outside any operation of the catalogue.
    added = repos.add_repo(db, person_actor(owner), "CRW", "web", "https://git.example.com/web")
    w.repo = added.id
    first = w.new_task("seed")
    w.task, w.task_key = first["id"], first["key"]
    other = w.make("create_task", {
        "projectId": "CRW", **W, "idempotencyKey": "seed-2", "title": "Owned task",
        "assigneeId": w.owner_id, "assigneeType": "human",
    })["task"]  # fmt: skip
    w.other_task, w.other_key = other["id"], other["key"]
    made = w.make(
        "upload_spec_file", {"projectId": "CRW", **W, "path": "docs/spec.md", "content": SPEC}
    )
    w.file = made["file"]["id"]
    w.thread = w.new_thread("seed")["id"]
    w.attachment = w.make("upload_attachment", {
        "projectId": "CRW", **W, "name": "notes.txt",
        "contentBase64": base64.b64encode(b"Notes for the spec.\n").decode(),
    })["attachment"]["id"]  # fmt: skip
    w.artifact = w.new_artifact("seed")["id"]
    w.handoff = w.new_handoff("seed")["id"]
    w.action_item = w.make(
        "create_handoff_action_item", {"handoffId": w.handoff, **W, "text": "Check the rollout."}
    )["actionItem"]["id"]
    w.session = w.new_session("seed")
    w.stream_token = _new_stream_token(w, "seed")
    w.webhook = _new_webhook(w, "seed")
    _ping(w, "seed")  # the log has an entry
    w.seat = w.owner_id  # a participant of the project's conversation
    return w


# --- the tests ---------------------------------------------------------------------------


def test_every_operation_has_a_scenario() -> None:
    names = [op.name for op in default_catalogue()]
    missing = [name for name in names if name not in SCENARIOS]
    assert not missing, f"add a scenario to SCENARIOS in {Path(__file__).name} for {missing}"
    stale = sorted(set(SCENARIOS) - set(names))
    assert not stale, f"scenarios of operations the catalogue no longer has: {stale}"


OPS = sorted(SCENARIOS)

# Where a door departs from the agreed conventions: (operation, door, "main" or "refusal") →
# how. Those cases are expected to fail, strictly: once the door is fixed, its row must go.
DIFFERENCES: dict[tuple[str, str, str], str] = {}

# Where a door answers the record bare instead of under its key (hand-written CLI commands):
# (operation, door) → the key MCP puts it under. The check then runs on the record rewrapped.
BARE: dict[tuple[str, str], str] = {}


def _expect_difference(request: pytest.FixtureRequest, op: str, door: Door, case: str) -> None:
    reason = DIFFERENCES.get((op, door.name, case))
    if reason is not None:
        request.applymarker(pytest.mark.xfail(reason=reason, strict=True))


@pytest.mark.parametrize("op", OPS)
def test_main_path(request: pytest.FixtureRequest, door: Door, world: World, op: str) -> None:
    _expect_difference(request, op, door, "main")
    scenario = SCENARIOS[op]
    world.door = door
    arguments = scenario.main(world, world.tag(door.name))
    got = door.call(op, arguments)
    assert got.ok, f"{op} over {door.name} refused: {got.code} {got.message}"
    body = got.body
    if (key := BARE.get((op, door.name))) is not None:
        assert not (isinstance(body, dict) and key in body), (
            f"{op} over {door.name} now answers under {key}: remove its row from BARE"
        )
        body = {key: body}
    try:
        passed = scenario.check(body, world)
    except (KeyError, IndexError, TypeError) as error:
        raise AssertionError(f"{op} over {door.name} answered {body}") from error
    assert passed, f"{op} over {door.name} answered {body}"


@pytest.mark.parametrize("op", OPS)
def test_main_refusal(request: pytest.FixtureRequest, door: Door, world: World, op: str) -> None:
    _expect_difference(request, op, door, "refusal")
    scenario = SCENARIOS[op]
    if scenario.no_refusal and door.name in scenario.no_refusal:
        pytest.skip(f"{op} over {door.name}: {scenario.no_refusal[door.name]}")
    got: Outcome = door.call(op, scenario.refuse(world, world.tag(door.name)))
    assert not got.ok, f"{op} over {door.name} took what it should refuse: {got.body}"
    assert (got.code, got.field) == (scenario.code, scenario.field), (
        f"{op} over {door.name}: {got.code} naming {got.field}: {got.message}"
    )
    assert got.message


# Reads whose answer on a door is shaped unlike MCP's (hand-written routes and commands):
# (operation, door) → how. Expected to fail, strictly, until the door answers as MCP does.
SHAPE_DIFFERENCES: dict[tuple[str, str], str] = {}


def shape(body: Any) -> Any:
    """The fields an answer has: its keys, and the keys of an object or of a list's rows
    under each (the values differ from call to call; the fields should not)."""
    if not isinstance(body, dict):
        return type(body).__name__
    found: dict[str, Any] = {}
    for key, value in body.items():
        if isinstance(value, dict):
            found[key] = sorted(value)
        elif isinstance(value, list) and value and isinstance(value[0], dict):
            found[key] = sorted(value[0])
        else:
            found[key] = None
    return found


READS = [op.name for op in default_catalogue() if op.read_only and op.name in SCENARIOS]


@pytest.mark.parametrize("op", READS)
def test_a_read_answers_as_mcp_does(
    request: pytest.FixtureRequest, door: Door, world: World, op: str
) -> None:
    """The same read over this door and over MCP answers the same fields."""
    if door.name == "mcp":
        pytest.skip("MCP is what the other doors are held to")
    reason = SHAPE_DIFFERENCES.get((op, door.name))
    if reason is not None:
        request.applymarker(pytest.mark.xfail(reason=reason, strict=True))
    arguments = SCENARIOS[op].main(world, world.tag(door.name))
    got = door.call(op, arguments)
    assert got.ok, f"{op} over {door.name} refused: {got.code} {got.message}"
    body = got.body
    if (key := BARE.get((op, door.name))) is not None:
        body = {key: body}
    assert shape(body) == shape(world.make(op, arguments)), f"{op} over {door.name}"
