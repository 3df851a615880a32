"""The token matrix: every kind of token over every write tool and REST write route.

Kinds (tests/support/token_matrix.py): personal or agent × unlimited or limited to project A ×
role cap none, read, write or admin, each holding every scope so that only the limits decide.
Their person is admin of A and of B. Each write is aimed outside the limit (at B, or at a
throwaway project where the write would destroy B), at A while naming a task, role or
repository of B ("mixed"; and reversed: at B naming A's), and at A. The rules:

- outside the limit: refused (NOT_FOUND or PERMISSION_DENIED), nothing changed, and the same
  answer as the same call naming a project or task that does not exist;
- mixed: refused for every token with nothing changed; for a limited token, the answer the
  call gets when the foreign thing does not exist;
- within the limit but over the role cap: PERMISSION_DENIED, nothing changed;
- within the limit and the role: not refused (deleting an active project names the refusal
  it gets instead); create_project only for a personal token without limit or lower cap.

`MCP` and `REST` map each write tool and route to the function building its valid arguments;
a new write without an entry fails `test_the_matrix_names_every_write_tool_and_rest_write_route`.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from contextlib import closing
from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx2
import pytest

from crewboard.api.common import Endpoint
from crewboard.api.operations import path_arguments
from crewboard.api.routes import all_endpoints
from crewboard.config import Settings
from crewboard.contract.catalogue import default_catalogue
from crewboard.contract.specs import present as files
from crewboard.domain.identity.access import Role, TokenKind
from crewboard.domain.identity.records import Actor
from crewboard.domain.ids import new_id
from crewboard.services.github import settings as github
from crewboard.services.sessions import bridges
from crewboard.services.specs import file_lookup
from crewboard.storage.database import Database
from tests.conftest import ONLY_SQLITE, POSTGRESQL_IN_THE_SLOW_RUN
from tests.support import spec_calls
from tests.support.databases import Reader
from tests.support.factories import make_user
from tests.support.mcp_client import MODES, mcp_client
from tests.support.server import free_port, running_server
from tests.support.token_matrix import (
    KINDS,
    WEBHOOK_URL,
    Answer,
    Doors,
    Http,
    Kind,
    Request,
    Spot,
    Tool,
    World,
    fingerprint,
    furnish,
    issue,
    key,
)

pytestmark = pytest.mark.anyio

WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
OUTSIDE = frozenset({"NOT_FOUND", "PERMISSION_DENIED"})
DENIED = frozenset({"PERMISSION_DENIED"})
HUMAN = frozenset({"HUMAN_IDENTITY_REQUIRED"})
# A write on A naming B's task may be refused as "not a task of A" (VALIDATION): that says no
# more about B than about a task that does not exist, which the ghost comparison checks.
MIXED = OUTSIDE | {"VALIDATION"}
# An unlimited token may get any refusal on a mixed call, but a refusal it must be.
REFUSALS = MIXED | {
    "HUMAN_IDENTITY_REQUIRED",
    "LIMIT_EXCEEDED",
    "ALREADY_EXISTS",
    "REVISION_CONFLICT",
    "IDEMPOTENCY_CONFLICT",
    "CLAIM_LOST",
}
# What the default run covers (both kinds, both limits, every cap, a kind the issuer refuses);
# the other eleven run under the slow marker.
REPRESENTATIVE = {
    "personal-unlimited-uncapped",
    "personal-limited-read",
    "personal-limited-admin",
    "agent-limited-write",
    "agent-unlimited-read",
}


# --- the table: valid arguments for every write --------------------------------------------


@dataclass(frozen=True)
class Aim:
    """Where one call points: the project it names (`home`) and the one its references name
    (`other`: the same project, but for mixed calls)."""

    world: World
    home: Spot
    other: Spot

    def revision(self, spot: Spot) -> int:
        return self.world.task_revision(spot)

    def state_revision(self) -> int:
        return self.world.state_revision(self.home)


Build = Callable[[Aim], Request]
Hook = Callable[[World, Spot], None]


def _nothing(_spot: Spot) -> frozenset[str]:
    return frozenset()


@dataclass(frozen=True)
class Entry:
    build: Build  # valid arguments naming `home`, and `other` where references go
    mixed: tuple[Build, ...] = ()  # builds whose references are worth aiming elsewhere
    role: Role = Role.WRITE  # the role the write needs on the project
    prepare: Hook | None = None  # run as the person before the call
    cleanup: Hook | None = None  # run as the person after it
    outside: Callable[[World], Spot] | None = None  # where to aim outside the limit (default B)
    # Codes a call within the limit and the role may answer instead of going through.
    allowed: Callable[[Spot], frozenset[str]] = _nothing
    anywhere: bool = False  # not on a project: create_project
    person_only: bool = False  # speaks in a person's name (handoffs): no agent token may
    # The person's own, on no project (notifications): every personal token may, whatever its
    # project limit or role cap; no agent token may.
    own: bool = False


def _on(spot: Spot, **more: Any) -> dict[str, Any]:
    return {"projectId": spot.project_id, "workspaceId": None, **more}


def _keyed(spot: Spot, **more: Any) -> dict[str, Any]:
    return _on(spot, idempotencyKey=key(), **more)


def _on_claim(spot: Spot) -> dict[str, Any]:
    return {"taskId": spot.task_id, "workspaceId": None}


def _lost(_spot: Spot) -> frozenset[str]:
    return frozenset({"CLAIM_LOST"})


def _on_task(spot: Spot, **more: Any) -> dict[str, Any]:
    return {"taskId": spot.task_id, "workspaceId": None, "idempotencyKey": key(), **more}


_DAYS = itertools.count()


def _fresh_day() -> str:
    """A day no handoff of the person's has taken yet (one handoff per person and day)."""
    return (date(2001, 1, 1) + timedelta(days=next(_DAYS))).isoformat()


def _on_handoff(at: Aim, **more: Any) -> dict[str, Any]:
    """`other`'s handoff. A handoff (or action item) names its project itself, so these calls
    have no mixed form: aimed outside the limit, they name B's handoff."""
    return {"handoffId": at.other.handoff_id, "workspaceId": None, **more}


def _edit_handoff(at: Aim) -> Tool:
    version = at.world.handoff_version(at.other)
    return Tool("update_handoff", _on_handoff(at, expectedUpdatedAt=version, recipients=[]))


def _add_item(at: Aim) -> Tool:
    return Tool(
        "create_handoff_action_item", _on_handoff(at, text="Follow up", idempotencyKey=key())
    )


def _edit_item(at: Aim) -> Tool:
    version = at.world.item_version(at.other)
    arguments = {"actionItemId": at.other.action_item_id, "workspaceId": None,
                 "expectedUpdatedAt": version, "status": "open"}  # fmt: skip
    return Tool("update_handoff_action_item", arguments)


def _rest_edit_handoff(at: Aim) -> Http:
    body = {"expectedUpdatedAt": at.world.handoff_version(at.other), "recipients": []}
    return Http("PATCH", f"{V}/handoffs/{at.other.handoff_id}", body)


def _rest_add_item(at: Aim) -> Http:
    return Http("POST", f"{V}/handoffs/{at.other.handoff_id}/action-items", {"text": "Follow"})


def _rest_edit_item(at: Aim) -> Http:
    body = {"expectedUpdatedAt": at.world.item_version(at.other), "status": "open"}
    return Http("PATCH", f"{V}/handoff-action-items/{at.other.action_item_id}", body)


def _no_webhooks(world: World, spot: Spot) -> None:
    world.clear_webhooks(spot)


def _archive(world: World, spot: Spot) -> None:
    world.set_archived(spot, True)


def _unarchive(world: World, spot: Spot) -> None:
    world.set_archived(spot, False)


def _github_set_up(world: World, spot: Spot) -> None:
    """GitHub set up on the project, so that disconnecting it has something to undo."""
    if not spot.ghost:
        github.configure_github(world.db, world.person, spot.project_id)


def _active_refused(spot: Spot) -> frozenset[str]:
    """Deleting an active project is refused after the access check: archive it first."""
    return frozenset() if spot.archived else frozenset({"VALIDATION"})


def _patch(at: Aim, patch: dict[str, Any], task: Spot) -> Tool:
    revision = at.revision(task)
    arguments = _keyed(at.home, taskId=task.task_id, expectedRevision=revision, patch=patch)
    return Tool("update_task", arguments)


def _assign(at: Aim) -> Tool:
    """The home task to the other project's AI role (the same project but for mixed calls)."""
    arguments = _on_task(
        at.home, expectedRevision=at.revision(at.home), assigneeId=at.other.role_id
    )
    return Tool("assign_task", arguments)


def _hand_in(at: Aim) -> Tool:
    arguments = _keyed(
        at.home,
        taskId=at.other.task_id,
        expectedRevision=at.revision(at.other),
        contextReceiptId=None,
        title="Done",
        content="The result.",
    )
    return Tool("submit_result", arguments)


def _draft(at: Aim) -> Tool:
    project = {} if at.home is at.other else {"projectId": at.home.project_id}
    fields = {"taskId": at.other.task_id, "title": "Draft", "content": "Text."}
    return Tool("create_draft", {**project, **fields})


def _statuses(at: Aim, ref: str) -> Tool:
    changes = [{"taskId": ref, "status": "ready_for_ai"}]
    # A task of another project is refused in its outcome; the call itself goes through.
    return Tool("set_task_status", _keyed(at.home, changes=changes), per_item=at.home != at.other)


def _plan(at: Aim, **change: Any) -> Tool:
    return Tool("update_tasks", _keyed(at.home, **change))


def _message(at: Aim, **more: Any) -> Tool:
    return Tool("post_message", _keyed(at.home, participantId=at.world.user.id, **more))


def _on_file(at: Aim, **more: Any) -> dict[str, Any]:
    """A call on `home` naming `other`'s spec file (the same project but for mixed calls)."""
    return _on(at.home, fileId=at.other.file_id, **more)


def _save_file(at: Aim) -> Tool:
    version = at.world.file_version(at.other)
    arguments = _on_file(at, expectedVersion=version, content="# Plan\nBy a token.\n")
    return Tool("update_spec_file", {**arguments, "idempotencyKey": key()})


def _on_artifact(at: Aim, **more: Any) -> dict[str, Any]:
    """A call on `home` naming `other`'s artifact, from the revision count it has now."""
    count = at.world.artifact_count(at.other)
    return _keyed(at.home, artifactId=at.other.artifact_id, expectedVersion=count, **more)


def _revise(at: Aim) -> Tool:
    files = [{"path": "index.html", "content": f"<h1>{key()}</h1>\n"}]
    return Tool("write_artifact_revision", _on_artifact(at, files=files))


def _rollback(at: Aim) -> Tool:
    return Tool("rollback_artifact", _on_artifact(at, revision=1))


def _trash_file(at: Aim) -> Tool:
    return Tool("move_spec_file_to_trash", _on_file(at))


def _restore_file(at: Aim) -> Tool:
    return Tool("restore_spec_file_from_trash", _on_file(at))


def _trashed(world: World, spot: Spot) -> None:
    world.set_trashed(spot, True)


def _restored(world: World, spot: Spot) -> None:
    world.set_trashed(spot, False)


def _free_token(world: World) -> Actor:
    """The matrix's token (the one token the world's person holds) without its limits: what
    it writes through the services before a call is its own, wherever the call aims."""
    [token] = world.db.read(lambda uow: uow.tokens.list(world.user.id))
    return Actor(world.user.id, token.scopes, replace(token, project_id=None, role=None))


def _file_text(world: World, spot: Spot) -> str:
    """The whole text of the spot's spec file now: a passage found once, whatever was saved."""
    read = files.read_spec_file(
        world.db, world.person, project=spot.project_id,
        ref=file_lookup.FileRef(file_id=spot.file_id), include_trashed=True,
    )  # fmt: skip
    return str(read["text"])


def _thread(world: World, spot: Spot, actor: Actor) -> dict[str, Any]:
    made = spec_calls.create_spec_file_comment_thread(
        world.db, actor, project=spot.project_id, workspace_id=None,
        ref=file_lookup.FileRef(file_id=spot.file_id), anchor_quote=_file_text(world, spot),
        anchor_prefix=None, anchor_suffix=None, body="Why?", idempotency_key=None,
    )  # fmt: skip
    return dict(made.body["thread"])


def _start_thread(at: Aim) -> Tool:
    quote = "# Plan" if at.other.ghost else _file_text(at.world, at.other)
    arguments = _on_file(at, anchorQuote=quote, body="A token's note.", idempotencyKey=key())
    return Tool("create_spec_file_comment_thread", arguments)


def _reply(at: Aim) -> Tool:
    """A reply to a thread the person started on `other`'s file."""
    thread = new_id("sct") if at.other.ghost else _thread(at.world, at.other, at.world.person)["id"]
    return Tool("reply_spec_file_comment_thread", _keyed(at.home, threadId=thread, body="Yes."))


def _own_comment(at: Aim) -> dict[str, Any]:
    """A comment of the token's own on `other`'s file: its id and contentVersion."""
    if at.other.ghost:
        return {"commentId": new_id("scm"), "expectedVersion": new_id("scv")}
    first = _thread(at.world, at.other, _free_token(at.world))["comments"][0]
    return {"commentId": first["id"], "expectedVersion": first["contentVersion"]}


def _edit_comment(at: Aim) -> Tool:
    return Tool("update_spec_file_comment", _on(at.home, body="Edited.", **_own_comment(at)))


def _delete_comment(at: Aim) -> Tool:
    own = _own_comment(at)
    return Tool("delete_spec_file_comment", _on(at.home, commentId=own["commentId"]))


def _session(at: Aim, tool: str, **more: Any) -> Tool:
    """A call on `home` naming `other`'s spec session (the same project but for mixed calls)."""
    return Tool(tool, _on(at.home, sessionId=at.other.session_id, **more))


def _start_session(at: Aim) -> Tool:
    """A session on `home` working on `other`'s spec file."""
    arguments = _keyed(
        at.home, mode="edit", prompt="Tighten the plan.", specFileIds=[at.other.file_id]
    )
    return Tool("start_spec_session", arguments)


def _rename_session(at: Aim) -> Tool:
    return _session(at, "rename_spec_session", title=f"Renamed {key()}")


def _archive_session(at: Aim) -> Tool:
    return _session(at, "archive_spec_session")


def _unarchive_session(at: Aim) -> Tool:
    return _session(at, "unarchive_spec_session")


def _delete_session(at: Aim) -> Tool:
    """A delete of a session of `other`'s made and archived for it (deletes take archived
    sessions only)."""
    ref = at.world.archived_session(at.other)
    return Tool("delete_spec_session", _on(at.home, sessionId=ref))


def _session_archived(world: World, spot: Spot) -> None:
    world.set_session_archived(spot, True)


def _session_active(world: World, spot: Spot) -> None:
    world.set_session_archived(spot, False)


MCP: dict[str, Entry] = {
    "create_project": Entry(
        lambda at: Tool(
            "create_project",
            {
                "workspaceId": None,
                "key": at.world.fresh_key(),
                "name": "By a token",
                "idempotencyKey": key(),
            },
        ),
        role=Role.ADMIN,
        anywhere=True,
    ),
    "update_project": Entry(
        lambda at: Tool("update_project", _on(at.home, phase="matrix")), role=Role.ADMIN
    ),
    "archive_project": Entry(
        lambda at: Tool("archive_project", _on(at.home)), role=Role.ADMIN, cleanup=_unarchive
    ),
    "unarchive_project": Entry(
        lambda at: Tool("unarchive_project", _on(at.home)),
        role=Role.ADMIN,
        prepare=_archive,
        cleanup=_unarchive,
    ),
    "delete_project": Entry(
        lambda at: Tool("delete_project", _on(at.home)),
        role=Role.ADMIN,
        outside=World.throwaway,
        allowed=_active_refused,
    ),
    "configure_github": Entry(
        lambda at: Tool("configure_github", _on(at.home, onMerge="review")),
        role=Role.ADMIN,
        person_only=True,
    ),
    "disconnect_github": Entry(
        lambda at: Tool("disconnect_github", _on(at.home)),
        role=Role.ADMIN,
        person_only=True,
        prepare=_github_set_up,
    ),
    "update_project_state": Entry(
        lambda at: Tool(
            "update_project_state",
            _on(at.home, content="Rewritten.", expectedRevision=at.state_revision()),
        )
    ),
    "create_task": Entry(
        lambda at: Tool("create_task", _keyed(at.home, title="Made by a token")),
        mixed=(
            lambda at: Tool(
                "create_task", _keyed(at.home, title="Sub", parentTaskId=at.other.task_id)
            ),
            lambda at: Tool(
                "create_task", _keyed(at.home, title="Late", blockedByTaskIds=[at.other.task_id])
            ),
            lambda at: Tool(
                "create_task",
                _keyed(at.home, title="For AI", assigneeId=at.other.role_id, assigneeType="ai"),
            ),
        ),
    ),
    "update_task": Entry(
        lambda at: _patch(at, {"title": "Renamed"}, at.other),
        mixed=(
            lambda at: _patch(at, {"title": "Renamed"}, at.other),
            lambda at: _patch(at, {"parentTaskId": at.other.task_id}, at.home),
            lambda at: _patch(at, {"blockedByTaskIds": [at.other.task_id]}, at.home),
            lambda at: _patch(at, {"assigneeId": at.other.role_id}, at.home),
        ),
    ),
    "assign_task": Entry(_assign, mixed=(_assign,)),
    # The token's own claim on the home task: taken, renewed, let go. A renewal or release
    # with no claim of the token's to act on is refused CLAIM_LOST, and changes nothing.
    "claim_task": Entry(lambda at: Tool("claim_task", _on_claim(at.home))),
    "renew_claims": Entry(lambda at: Tool("renew_claims", _on_claim(at.home)), allowed=_lost),
    "release_task": Entry(lambda at: Tool("release_task", _on_claim(at.home)), allowed=_lost),
    "claim_next_task": Entry(lambda at: Tool("claim_next_task", _on(at.home))),
    # A check-in reads (and renews claims the caller holds): a read-capped token may check in.
    "get_updates": Entry(lambda at: Tool("get_updates", _on(at.home)), role=Role.READ),
    "update_tasks": Entry(
        lambda at: _plan(at, taskIds=[at.other.task_id], priority="high"),
        mixed=(
            lambda at: _plan(at, taskIds=[at.other.task_id], priority="low"),
            lambda at: _plan(at, taskIds=[at.other.task_key], priority="low"),
            lambda at: _plan(
                at,
                taskIds=[at.home.task_id],
                addRelationships=[{"type": "blocks", "taskId": at.other.task_id}],
            ),
            lambda at: _plan(at, taskIds=[at.home.task_id], removeRelationships=[at.other.task_id]),
            lambda at: _plan(at, taskIds=[at.home.task_id], assigneeId=at.other.role_id),
        ),
    ),
    "set_task_status": Entry(
        lambda at: _statuses(at, at.other.task_id),
        mixed=(
            lambda at: _statuses(at, at.other.task_id),
            lambda at: _statuses(at, at.other.task_key),
        ),
    ),
    "post_comment": Entry(lambda at: Tool("post_comment", _on_task(at.home, content="A comment."))),
    "agent_update": Entry(lambda at: Tool("agent_update", _on_task(at.home, content="Halfway."))),
    "save_output": Entry(
        lambda at: Tool("save_output", _on_task(at.home, name="out.md", content="# Out"))
    ),
    "ask_question": Entry(
        lambda at: Tool("ask_question", _on_task(at.home, question="Which one?"))
    ),
    "propose_repo_change": Entry(
        lambda at: Tool(
            "propose_repo_change",
            _on_task(at.home, repoId=at.other.repo_id, branch="feature/x"),
        ),
        mixed=(
            lambda at: Tool(
                "propose_repo_change",
                _on_task(at.home, repoId=at.other.repo_id, branch="feature/y"),
            ),
        ),
    ),
    "report_repo_status": Entry(
        lambda at: Tool(
            "report_repo_status", _on_task(at.home, repoId=at.other.repo_id, tests="passed")
        ),
        mixed=(
            lambda at: Tool(
                "report_repo_status", _on_task(at.home, repoId=at.other.repo_id, tests="failed")
            ),
        ),
    ),
    "submit_result": Entry(_hand_in, mixed=(_hand_in,)),
    "create_draft": Entry(_draft, mixed=(_draft,)),
    "propose_task": Entry(lambda at: Tool("propose_task", _on(at.home, title="An idea"))),
    "propose_task_update": Entry(
        lambda at: Tool(
            "propose_task_update",
            {"taskId": at.home.task_id, "workspaceId": None, "changes": {"title": "Better"}},
        )
    ),
    "propose_task_delete": Entry(
        lambda at: Tool(
            "propose_task_delete",
            {"taskId": at.home.task_id, "workspaceId": None, "reason": "Done."},
        )
    ),
    "propose_role": Entry(
        lambda at: Tool("propose_role", _on(at.home, name="Editor", role="Editor"))
    ),
    "propose_composition": Entry(
        lambda at: Tool("propose_composition", _on(at.home, seats=[{"role": "Illustrator"}]))
    ),
    "post_message": Entry(
        lambda at: _message(at, body="Hello."),
        mixed=(
            lambda at: _message(at, body="About it", taskId=at.other.task_id),
            lambda at: Tool(
                "post_message", _keyed(at.home, participantId=at.other.role_id, body="Hi")
            ),
        ),
    ),
    "upload_spec_file": Entry(
        lambda at: Tool(
            "upload_spec_file", _keyed(at.home, path=f"matrix/{key()}.md", content="# New\n")
        )
    ),
    "update_spec_file": Entry(_save_file, mixed=(_save_file,)),
    "upload_attachment": Entry(
        lambda at: Tool(
            "upload_attachment",
            _keyed(at.home, name=f"{key()}.txt", contentBase64="bm90ZXMK"),  # "notes\n"
        )
    ),
    "move_spec_file_to_trash": Entry(_trash_file, mixed=(_trash_file,), cleanup=_restored),
    "restore_spec_file_from_trash": Entry(
        _restore_file, mixed=(_restore_file,), prepare=_trashed, cleanup=_restored
    ),
    "create_artifact": Entry(
        lambda at: Tool(
            "create_artifact",
            _keyed(at.home, slug=f"m-{key()}", files=[{"path": "a.html", "content": "<p>\n"}]),
        )
    ),
    "write_artifact_revision": Entry(_revise, mixed=(_revise,)),
    "create_handoff": Entry(
        lambda at: Tool("create_handoff", _keyed(at.home, completed="Done.", date=_fresh_day())),
        person_only=True,
    ),
    "update_handoff": Entry(_edit_handoff, person_only=True),
    "create_handoff_action_item": Entry(_add_item, person_only=True),
    "update_handoff_action_item": Entry(_edit_item, person_only=True),
    "rollback_artifact": Entry(_rollback, mixed=(_rollback,)),
    # A stream token only reads: the read role makes one, for projects within the limit.
    "create_stream_token": Entry(
        lambda at: Tool("create_stream_token", {"projectIds": [at.home.project_id]}),
        role=Role.READ,
    ),
    "revoke_stream_token": Entry(
        lambda at: Tool("revoke_stream_token", {"streamTokenId": at.world.stream_token(at.home)}),
        role=Role.READ,
    ),
    # Webhooks are the project admins': each call makes its own, and the project's are
    # deleted after it (a project holds a bounded number).
    "create_webhook": Entry(
        lambda at: Tool("create_webhook", _on(at.home, url=WEBHOOK_URL, events=["task.*"])),
        role=Role.ADMIN,
        cleanup=_no_webhooks,
    ),
    "update_webhook": Entry(
        lambda at: Tool(
            "update_webhook", {"webhookId": at.world.webhook(at.home), "description": "m"}
        ),
        role=Role.ADMIN,
        cleanup=_no_webhooks,
    ),
    "delete_webhook": Entry(
        lambda at: Tool("delete_webhook", {"webhookId": at.world.webhook(at.home)}),
        role=Role.ADMIN,
        cleanup=_no_webhooks,
    ),
    "rotate_webhook_secret": Entry(
        lambda at: Tool("rotate_webhook_secret", {"webhookId": at.world.webhook(at.home)}),
        role=Role.ADMIN,
        cleanup=_no_webhooks,
    ),
    "redeliver_webhook": Entry(
        lambda at: Tool("redeliver_webhook", {"deliveryId": at.world.webhook_delivery(at.home)}),
        role=Role.ADMIN,
        cleanup=_no_webhooks,
    ),
    "ping_webhook": Entry(
        lambda at: Tool("ping_webhook", {"webhookId": at.world.webhook(at.home)}),
        role=Role.ADMIN,
        cleanup=_no_webhooks,
    ),
    "create_spec_file_comment_thread": Entry(_start_thread, mixed=(_start_thread,)),
    "reply_spec_file_comment_thread": Entry(_reply, mixed=(_reply,)),
    "update_spec_file_comment": Entry(_edit_comment, mixed=(_edit_comment,)),
    "delete_spec_file_comment": Entry(_delete_comment, mixed=(_delete_comment,)),
    "start_spec_session": Entry(_start_session, mixed=(_start_session,)),
    "rename_spec_session": Entry(_rename_session, mixed=(_rename_session,)),
    "archive_spec_session": Entry(
        _archive_session, mixed=(_archive_session,), cleanup=_session_active
    ),
    "unarchive_spec_session": Entry(
        _unarchive_session,
        mixed=(_unarchive_session,),
        prepare=_session_archived,
        cleanup=_session_active,
    ),
    "delete_spec_session": Entry(_delete_session, mixed=(_delete_session,)),
}

V = "/api/v1"
P = f"{V}/projects/{{project}}"
T = f"{V}/tasks/{{task}}"


def _project(spot: Spot, tail: str = "") -> str:
    return f"{V}/projects/{spot.key}{tail}"


def _task(spot: Spot, tail: str = "") -> str:
    """REST names tasks by key (MCP by id), so both ways of naming one are aimed at."""
    return f"{V}/tasks/{spot.task_key}{tail}"


def _also_project(at: Aim, body: dict[str, Any]) -> dict[str, Any]:
    """A write on `other`'s task that names `home` as its project too, when they differ."""
    return body if at.home is at.other else {**body, "projectId": at.home.key}


def _result(at: Aim) -> Http:
    body = {
        "workspaceId": None,
        "expectedRevision": at.revision(at.other),
        "contextReceiptId": None,
        "title": "Done",
        "content": "The result.",
    }
    return Http("POST", _task(at.other, "/results"), _also_project(at, body))


def _rest_draft(at: Aim) -> Http:
    body = {"title": "Draft", "content": "Text."}
    return Http("POST", _task(at.other, "/drafts"), _also_project(at, body))


def _card(at: Aim, kind: str, **fields: Any) -> Http:
    body = {"kind": kind, "workspaceId": None, **fields}
    return Http("POST", _project(at.home, "/proposals"), body)


def _spec(at: Aim, tail: str = "") -> str:
    """REST names the project in the path and the file after it: `home`'s path, `other`'s file."""
    return _project(at.home, f"/specs/{at.other.file_id}{tail}")


def _rest_save_file(at: Aim) -> Http:
    body = {"content": "# Plan\nBy REST.\n", "expectedVersion": at.world.file_version(at.other)}
    return Http("PUT", _spec(at), body)


def _rest_artifact(at: Aim, tail: str, **body: Any) -> Http:
    """`home`'s path, `other`'s artifact, from the revision count it has now."""
    count = at.world.artifact_count(at.other)
    path = _project(at.home, f"/artifacts/{at.other.artifact_id}{tail}")
    return Http("POST", path, {"expectedVersion": count, **body})


def _rest_revise(at: Aim) -> Http:
    return _rest_artifact(at, "/revisions", files=[{"path": "index.html", "content": "<p>\n"}])


def _rest_rollback(at: Aim) -> Http:
    return _rest_artifact(at, "/rollback", revision=1)


def _rest_trash_file(at: Aim) -> Http:
    return Http("POST", _spec(at, "/trash"), {"workspaceId": None})


def _rest_restore_file(at: Aim) -> Http:
    return Http("POST", _spec(at, "/restore"), {"workspaceId": None})


def _rest_start_thread(at: Aim) -> Http:
    quote = "# Plan" if at.other.ghost else _file_text(at.world, at.other)
    return Http("POST", _spec(at, "/threads"), {"anchorQuote": quote, "body": "By REST."})


def _rest_reply(at: Aim) -> Http:
    """A reply (on `home`'s path) to a thread the person started on `other`'s file."""
    thread = new_id("sct") if at.other.ghost else _thread(at.world, at.other, at.world.person)["id"]
    return Http("POST", _project(at.home, f"/threads/{thread}/replies"), {"body": "Yes."})


def _rest_edit_comment(at: Aim) -> Http:
    own = _own_comment(at)
    body = {"body": "Edited.", "expectedVersion": own["expectedVersion"]}
    return Http("PATCH", _project(at.home, f"/comments/{own['commentId']}"), body, keyed=False)


def _rest_delete_comment(at: Aim) -> Http:
    own = _own_comment(at)
    return Http("DELETE", _project(at.home, f"/comments/{own['commentId']}"), keyed=False)


def _rest_session(at: Aim, method: str, tail: str = "", body: dict[str, Any] | None = None) -> Http:
    """`home`'s path, `other`'s spec session."""
    path = _project(at.home, f"/sessions/{at.other.session_id}{tail}")
    return Http(method, path, body if body is not None else {"workspaceId": None}, keyed=False)


def _rest_start_session(at: Aim) -> Http:
    body = {"mode": "edit", "prompt": "Tighten the plan.", "specFileIds": [at.other.file_id]}
    return Http("POST", _project(at.home, "/sessions"), body)


def _rest_rename_session(at: Aim) -> Http:
    return _rest_session(at, "PATCH", body={"workspaceId": None, "title": f"Renamed {key()}"})


def _rest_archive_session(at: Aim) -> Http:
    return _rest_session(at, "POST", "/archive")


def _rest_unarchive_session(at: Aim) -> Http:
    return _rest_session(at, "POST", "/unarchive")


def _rest_delete_session(at: Aim) -> Http:
    ref = at.world.archived_session(at.other)
    path = _project(at.home, f"/sessions/{ref}")
    return Http("DELETE", path, {"workspaceId": None}, keyed=False)


# The bridge each project's calls act on, registered by the person just before each call.
_BRIDGES: dict[str, str] = {}


def _bridge_of(world: World, spot: Spot) -> None:
    made = bridges.register_bridge(
        world.db, world.person, project=spot.key, folder="matrix", client=None, node=None
    )
    _BRIDGES[spot.key] = made.bridge.id


def _rest_bridge(at: Aim, method: str, tail: str = "", body: dict[str, Any] | None = None) -> Http:
    """The person's bridge in `home` (one of the right shape that names nothing for a ghost)."""
    ref = new_id("brg") if at.home.ghost else _BRIDGES[at.home.key]
    return Http(method, f"{V}/bridges/{ref}{tail}", body, keyed=False)


REST: dict[tuple[str, str], tuple[Entry, ...]] = {
    ("POST", f"{P}/bridges"): (
        Entry(lambda at: Http("POST", _project(at.home, "/bridges"), {"folder": "m"}, keyed=False)),
    ),
    ("POST", f"{V}/bridges/{{bridge}}/exchange"): (
        Entry(
            lambda at: _rest_bridge(at, "POST", "/exchange", {"waitSeconds": 0}),
            prepare=_bridge_of,
        ),
    ),
    ("DELETE", f"{V}/bridges/{{bridge}}"): (
        Entry(lambda at: _rest_bridge(at, "DELETE"), prepare=_bridge_of),
    ),
    ("POST", f"{V}/projects"): (
        Entry(
            lambda at: Http(
                "POST",
                f"{V}/projects",
                {"workspaceId": None, "key": at.world.fresh_key(), "name": "By REST"},
            ),
            role=Role.ADMIN,
            anywhere=True,
        ),
    ),
    ("PATCH", P): (
        Entry(
            lambda at: Http("PATCH", _project(at.home), {"workspaceId": None, "phase": "rest"}),
            role=Role.ADMIN,
        ),
    ),
    ("DELETE", P): (
        Entry(
            lambda at: Http("DELETE", _project(at.home), keyed=False),
            role=Role.ADMIN,
            outside=World.throwaway,
            allowed=_active_refused,
        ),
    ),
    ("POST", f"{P}/archive"): (
        Entry(
            lambda at: Http("POST", _project(at.home, "/archive"), {"workspaceId": None}),
            role=Role.ADMIN,
            cleanup=_unarchive,
        ),
    ),
    ("POST", f"{P}/unarchive"): (
        Entry(
            lambda at: Http("POST", _project(at.home, "/unarchive"), {"workspaceId": None}),
            role=Role.ADMIN,
            prepare=_archive,
            cleanup=_unarchive,
        ),
    ),
    ("PUT", f"{P}/state"): (
        Entry(
            lambda at: Http(
                "PUT",
                _project(at.home, "/state"),
                {"content": "By REST.", "expectedRevision": at.state_revision()},
            )
        ),
    ),
    ("POST", f"{P}/state/versions/{{revision}}/restore"): (
        Entry(
            lambda at: Http(
                "POST",
                _project(at.home, "/state/versions/1/restore"),
                {"expectedRevision": at.state_revision()},
            )
        ),
    ),
    ("POST", f"{P}/tasks"): (
        Entry(
            lambda at: Http(
                "POST", _project(at.home, "/tasks"), {"workspaceId": None, "title": "By REST"}
            ),
            mixed=(
                lambda at: Http(
                    "POST",
                    _project(at.home, "/tasks"),
                    {"workspaceId": None, "title": "Sub", "parentTaskId": at.other.task_id},
                ),
            ),
        ),
    ),
    ("PATCH", T): (
        Entry(
            lambda at: Http(
                "PATCH",
                _task(at.home),
                {"title": "By REST", "expectedRevision": at.revision(at.home)},
            ),
            mixed=(
                lambda at: Http(
                    "PATCH",
                    _task(at.home),
                    {
                        "blockedByTaskIds": [at.other.task_id],
                        "expectedRevision": at.revision(at.home),
                    },
                ),
            ),
        ),
    ),
    ("POST", f"{T}/comments"): (
        Entry(
            lambda at: Http(
                "POST", _task(at.home, "/comments"), {"workspaceId": None, "content": "Hi."}
            )
        ),
    ),
    ("POST", f"{T}/outputs"): (
        Entry(
            lambda at: Http(
                "POST",
                _task(at.home, "/outputs"),
                {"workspaceId": None, "name": "rest.md", "content": "# R"},
            )
        ),
    ),
    ("POST", f"{T}/results"): (Entry(_result, mixed=(_result,)),),
    ("POST", f"{T}/drafts"): (Entry(_rest_draft, mixed=(_rest_draft,)),),
    ("POST", f"{P}/messages"): (
        Entry(
            lambda at: Http(
                "POST",
                _project(at.home, "/messages"),
                {"workspaceId": None, "participantId": at.world.user.id, "body": "Hello."},
            ),
            mixed=(
                lambda at: Http(
                    "POST",
                    _project(at.home, "/messages"),
                    {
                        "workspaceId": None,
                        "participantId": at.world.user.id,
                        "body": "About it",
                        "taskId": at.other.task_id,
                    },
                ),
            ),
        ),
    ),
    ("POST", f"{P}/proposals"): (
        Entry(lambda at: _card(at, "task", title="An idea")),
        Entry(
            lambda at: _card(at, "task_update", taskId=at.other.task_id, changes={"title": "B"}),
            mixed=(
                lambda at: _card(
                    at, "task_update", taskId=at.other.task_id, changes={"title": "B"}
                ),
            ),
        ),
        Entry(
            lambda at: _card(at, "task_delete", taskId=at.other.task_id),
            mixed=(lambda at: _card(at, "task_delete", taskId=at.other.task_id),),
        ),
        Entry(lambda at: _card(at, "role", name="Editor", role="Editor")),
        Entry(lambda at: _card(at, "composition", seats=[{"role": "Illustrator"}])),
    ),
    ("POST", f"{P}/specs"): (
        Entry(
            lambda at: Http(
                "POST",
                _project(at.home, "/specs"),
                {"workspaceId": None, "path": f"matrix/{key()}.md", "content": "# New\n"},
            )
        ),
    ),
    ("PUT", f"{P}/specs/{{file}}"): (Entry(_rest_save_file, mixed=(_rest_save_file,)),),
    ("POST", f"{P}/specs/{{file}}/trash"): (
        Entry(_rest_trash_file, mixed=(_rest_trash_file,), cleanup=_restored),
    ),
    ("POST", f"{P}/specs/{{file}}/restore"): (
        Entry(_rest_restore_file, mixed=(_rest_restore_file,), prepare=_trashed, cleanup=_restored),
    ),
    ("POST", f"{P}/specs/{{file}}/threads"): (
        Entry(_rest_start_thread, mixed=(_rest_start_thread,)),
    ),
    ("POST", f"{P}/threads/{{thread}}/replies"): (Entry(_rest_reply, mixed=(_rest_reply,)),),
    ("PATCH", f"{P}/comments/{{comment}}"): (
        Entry(_rest_edit_comment, mixed=(_rest_edit_comment,)),
    ),
    ("DELETE", f"{P}/comments/{{comment}}"): (
        Entry(_rest_delete_comment, mixed=(_rest_delete_comment,)),
    ),
    ("POST", f"{P}/sessions"): (Entry(_rest_start_session, mixed=(_rest_start_session,)),),
    ("PATCH", f"{P}/sessions/{{session}}"): (
        Entry(_rest_rename_session, mixed=(_rest_rename_session,)),
    ),
    ("POST", f"{P}/sessions/{{session}}/archive"): (
        Entry(_rest_archive_session, mixed=(_rest_archive_session,), cleanup=_session_active),
    ),
    ("POST", f"{P}/sessions/{{session}}/unarchive"): (
        Entry(
            _rest_unarchive_session,
            mixed=(_rest_unarchive_session,),
            prepare=_session_archived,
            cleanup=_session_active,
        ),
    ),
    ("DELETE", f"{P}/sessions/{{session}}"): (
        Entry(_rest_delete_session, mixed=(_rest_delete_session,)),
    ),
    ("PUT", f"{P}/session-settings"): (
        Entry(
            lambda at: Http(
                "PUT", _project(at.home, "/session-settings"), {"modelId": None}, keyed=False
            ),
            role=Role.ADMIN,
        ),
    ),
    ("POST", f"{P}/artifacts"): (
        Entry(
            lambda at: Http(
                "POST",
                _project(at.home, "/artifacts"),
                {"slug": f"m-{key()}", "files": [{"path": "a.html", "content": "<p>\n"}]},
            )
        ),
    ),
    ("POST", f"{P}/artifacts/{{artifact}}/revisions"): (
        Entry(_rest_revise, mixed=(_rest_revise,)),
    ),
    ("POST", f"{P}/artifacts/{{artifact}}/rollback"): (
        Entry(_rest_rollback, mixed=(_rest_rollback,)),
    ),
    ("POST", f"{P}/handoffs"): (
        Entry(
            lambda at: Http(
                "POST", _project(at.home, "/handoffs"), {"completed": "x", "date": _fresh_day()}
            ),
            person_only=True,
        ),
    ),
    ("PATCH", f"{V}/handoffs/{{handoff}}"): (Entry(_rest_edit_handoff, person_only=True),),
    ("POST", f"{V}/handoffs/{{handoff}}/action-items"): (Entry(_rest_add_item, person_only=True),),
    ("PATCH", f"{V}/handoff-action-items/{{item}}"): (Entry(_rest_edit_item, person_only=True),),
    ("POST", f"{V}/notifications/read"): (
        Entry(lambda _at: Http("POST", f"{V}/notifications/read", {"all": True}), own=True),
    ),
    ("PUT", f"{V}/notifications/settings"): (
        Entry(lambda _at: Http("PUT", f"{V}/notifications/settings", {"inApp": True}), own=True),
    ),
    ("POST", f"{P}/attachments"): (
        Entry(
            lambda at: Http(
                "POST",
                _project(at.home, "/attachments"),
                {"name": f"{key()}.txt", "contentBase64": "bm90ZXMK"},  # "notes\n"
            )
        ),
    ),
}


def _over_rest(build: Build, endpoint: Endpoint) -> Build:
    """An MCP entry's call sent to its operation's generated route: the path names what the
    arguments name, the key goes in the Idempotency-Key header, the rest is the body."""
    operation = default_catalogue().find(endpoint.operation or "")
    assert operation is not None
    filled = path_arguments(endpoint.path, operation.args)

    def made(at: Aim) -> Request:
        tool = build(at)
        assert isinstance(tool, Tool)
        arguments = dict(tool.arguments)
        path = endpoint.path
        for name, argument in filled.items():
            path = path.replace(f"{{{name}}}", quote(str(arguments.pop(argument)), safe=""))
        keyed = arguments.pop("idempotencyKey", None) is not None
        body = arguments if endpoint.method in ("POST", "PUT", "PATCH") else None
        return Http(endpoint.method, path, body, keyed=keyed, per_item=tool.per_item)

    return made


# The routes built from an operation's declaration carry its MCP entry's calls over REST.
REST.update(
    {
        (e.method, e.path): (
            replace(
                MCP[e.operation],
                build=_over_rest(MCP[e.operation].build, e),
                mixed=tuple(_over_rest(m, e) for m in MCP[e.operation].mixed),
            ),
        )
        for e in all_endpoints()
        if e.operation in MCP and e.method in WRITE_METHODS and (e.method, e.path) not in REST
    }
)


def entries() -> Iterator[tuple[str, Entry]]:
    for name, entry in MCP.items():
        yield f"mcp {name}", entry
    for (method, path), group in REST.items():
        for index, entry in enumerate(group):
            yield f"rest {method} {path}" + (f" #{index}" if len(group) > 1 else ""), entry


# --- running the matrix for one token -------------------------------------------------------


@dataclass
class Run:
    world: World
    kind: Kind
    doors: Doors
    reader: Reader
    problems: list[str] = field(default_factory=list)

    def aim(self, home: Spot, other: Spot | None = None) -> Aim:
        return Aim(self.world, home, other or home)

    async def call(self, label: str, request: Request) -> tuple[Answer, bool]:
        """Send `request`; its answer and whether the database stayed as it was."""
        before = fingerprint(self.reader)
        answer = await self.doors.send(request)
        after = fingerprint(self.reader)
        if request.per_item:  # the call as a whole goes through: the ledger keeps its key
            before.pop("idempotency_keys")
            after.pop("idempotency_keys")
        if answer.code is not None and answer.code not in REFUSALS:
            self.fail(label, request, answer, "no internal or protocol error")
        return answer, before == after

    async def send(self, label: str, entry: Entry, at: Aim) -> tuple[Request, Answer, bool]:
        """Build the call for `at` after the entry's preparation, send it, clean up."""
        hooked = not at.home.ghost
        if entry.prepare is not None and hooked:
            entry.prepare(self.world, at.home)
        request = entry.build(at)
        answer, unchanged = await self.call(label, request)
        if entry.cleanup is not None and hooked:
            entry.cleanup(self.world, at.home)
        return request, answer, unchanged

    def fail(self, label: str, request: Request, answer: Answer, wanted: str) -> None:
        self.problems.append(
            f"{self.kind} | {label} | answered {answer} | wanted {wanted} | sent {request} | "
            f"answer {str(answer.detail)[:300]}"
        )

    async def refused(self, label: str, entry: Entry, at: Aim, codes: frozenset[str]) -> Answer:
        request, answer, unchanged = await self.send(label, entry, at)
        if answer.code not in codes:
            self.fail(label, request, answer, f"a refusal in {sorted(codes)}")
        elif not unchanged:
            self.fail(label, request, answer, "nothing changed, but the database did")
        return answer

    async def like_ghost(self, label: str, entry: Entry, answer: Answer, ghostly: Aim) -> None:
        """The same call naming something that does not exist must get the same answer."""
        request, ghost, _ = await self.send(label, entry, ghostly)
        if ghost.code != answer.code:
            wanted = f"{ghost}, what this same call naming nothing that exists gets"
            self.fail(f"{label} [vs nothing]", request, answer, wanted)

    async def reached(self, label: str, entry: Entry, spot: Spot) -> None:
        """A call the token's limits allow on `spot`: refused only over the role cap."""
        if not self.kind.holds(entry.role):
            await self.refused(label, entry, self.aim(spot), DENIED)
            return
        request, answer, _ = await self.send(label, entry, self.aim(spot))
        allowed = entry.allowed(spot)
        if answer.code is not None and answer.code not in allowed:
            self.fail(label, request, answer, f"success (or one of {sorted(allowed)})")

    async def entry(self, label: str, entry: Entry) -> None:
        """Every call the matrix makes of one entry: outside, mixed both ways, inside."""
        world = self.world
        if entry.anywhere:
            await self.anywhere(label, entry)
            return
        if entry.own:
            await self.own(label, entry)
            return
        away = entry.outside(world) if entry.outside is not None else world.b
        if entry.person_only and self.kind.kind is TokenKind.AGENT:
            for spot in (away, world.a):
                await self.refused(f"{label} [agent]", entry, self.aim(spot), HUMAN)
            return
        if self.kind.limited:
            answer = await self.refused(f"{label} [outside]", entry, self.aim(away), OUTSIDE)
            await self.like_ghost(f"{label} [outside]", entry, answer, self.aim(world.ghost))
        else:
            await self.reached(f"{label} [B]", entry, away)
        for index, build in enumerate(entry.mixed):
            mixed = Entry(build)
            await self.mixed(f"{label} [mixed {index}]", mixed, world.a, world.b)
            await self.mixed(f"{label} [mixed {index} reversed]", mixed, world.b, world.a)
        await self.reached(f"{label} [A]", entry, world.a)

    async def anywhere(self, label: str, entry: Entry) -> None:
        """create_project: only a personal token without a limit or a cap below admin."""
        if not self.kind.creates_projects:
            await self.refused(label, entry, self.aim(self.world.a), DENIED)
            return
        request, answer, _ = await self.send(label, entry, self.aim(self.world.a))
        if answer.code is not None:
            self.fail(label, request, answer, "success")

    async def own(self, label: str, entry: Entry) -> None:
        """The person's own notifications: refused to an agent token, else not refused."""
        if self.kind.kind is TokenKind.AGENT:
            await self.refused(f"{label} [agent]", entry, self.aim(self.world.a), HUMAN)
            return
        request, answer, _ = await self.send(label, entry, self.aim(self.world.a))
        if answer.code is not None:
            self.fail(label, request, answer, "success")

    async def mixed(self, label: str, entry: Entry, home: Spot, other: Spot) -> None:
        """A write on `home` naming something of `other`: refused for every token.

        For a limited token it is the answer the call gets when the foreign thing does not
        exist; when `home` is the one outside the limit, the outside refusal.
        """
        world = self.world
        if not self.kind.limited:
            await self.refused(label, entry, self.aim(home, other), REFUSALS)
            return
        inside = home is world.a
        answer = await self.refused(
            label, entry, self.aim(home, other), MIXED if inside else OUTSIDE
        )
        ghostly = self.aim(home, world.ghost) if inside else self.aim(world.ghost, other)
        await self.like_ghost(label, entry, answer, ghostly)


# --- the tests ------------------------------------------------------------------------------


def test_the_matrix_names_every_write_tool_and_rest_write_route() -> None:
    tools = {tool.name for tool in default_catalogue() if not tool.read_only}
    # A signed webhook (GitHub's) takes no token at all: test_github_webhook holds it.
    routes = {
        (e.method, e.path) for e in all_endpoints() if e.method in WRITE_METHODS and not e.signed
    }
    hint = "add an entry building valid arguments to MCP or REST in tests/e2e/test_token_matrix.py"
    assert not tools - set(MCP), f"write tools without an entry, {hint}: {sorted(tools - set(MCP))}"
    assert not routes - set(REST), (
        f"write routes without an entry, {hint}: {sorted(routes - set(REST))}"
    )
    assert not set(MCP) - tools, f"entries for tools that are gone: {sorted(set(MCP) - tools)}"
    assert not set(REST) - routes, f"entries for routes that are gone: {sorted(set(REST) - routes)}"


@pytest.fixture
def world(db: Database) -> World:
    user = make_user(db, "lead@example.com")
    return World(db, user, furnish(db, user, "AAA"), furnish(db, user, "BBB"))


async def check_token(kind: Kind, world: World, tmp_path: Path) -> None:
    """Serve the app once, then make every call of the matrix with a token of `kind`."""
    secret = issue(world, kind)
    mode = MODES[KINDS.index(kind) % len(MODES)]
    headers = {"Authorization": f"Bearer {secret}"}
    # No session runner and no wait for a first reply: a spec session's first turn stays
    # queued, so nothing writes behind a call's back between the two fingerprints around it.
    settings = Settings(
        data_dir=tmp_path,
        port=free_port(),
        session_runners=0,
        session_first_turn_wait=0,
        webhook_allow_networks="127.0.0.1/32",
    )
    with running_server(settings, world.db) as base:
        async with (
            mcp_client(base, secret, mode) as client,
            httpx2.AsyncClient(base_url=base, headers=headers, timeout=30) as http,
        ):
            with closing(Reader(world.db)) as reader:
                run = Run(world, kind, Doors(client, http), reader)
                for label, entry in entries():
                    await run.entry(label, entry)
    assert not run.problems, f"{len(run.problems)} calls broke a rule:\n" + "\n".join(run.problems)


@POSTGRESQL_IN_THE_SLOW_RUN  # access rules do not hang on the database
@pytest.mark.parametrize("kind", [k for k in KINDS if str(k) in REPRESENTATIVE], ids=str)
async def test_token_acts_only_within_its_limits(kind: Kind, world: World, tmp_path: Path) -> None:
    await check_token(kind, world, tmp_path)


@pytest.mark.slow
@ONLY_SQLITE  # access rules do not depend on the database; the quick run covers both
@pytest.mark.parametrize("kind", [k for k in KINDS if str(k) not in REPRESENTATIVE], ids=str)
async def test_every_other_token_acts_only_within_its_limits(
    kind: Kind, world: World, tmp_path: Path
) -> None:
    await check_token(kind, world, tmp_path)
