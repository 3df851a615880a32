"""The token matrix's world and doors: kinds of token, projects to aim at, requests, answers.

tests/e2e/test_token_matrix.py holds the table of writes and the rules; this module builds
what they run against: a person who is admin of projects A and B (each with a task, an AI
role, a repository, a saved state page, a spec file and a spec session), a token of each kind,
both doors over real HTTP, and a fingerprint of the database to tell that a refused call
changed nothing.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field, replace
from typing import Any

import httpx2
from mcp import Client, MCPError

from crewboard.contract.projects import present
from crewboard.contract.sessions.present import started_answer
from crewboard.contract.specs import present as files
from crewboard.domain.handoffs import Bodies
from crewboard.domain.identity.access import ALL_SCOPES, Role, TokenKind
from crewboard.domain.identity.records import Actor, ApiToken, User
from crewboard.domain.identity.tokens import (
    display_prefix,
    generate_token_secret,
    hash_token_secret,
)
from crewboard.domain.ids import new_id
from crewboard.domain.sessions import Mode
from crewboard.services.artifacts.artifacts import FileInput
from crewboard.services.board import repos, tasks
from crewboard.services.identity import stream_tokens, tokens
from crewboard.services.identity.users import person_actor
from crewboard.services.sessions import sessions
from crewboard.services.specs import file_lookup
from crewboard.services.webhooks import deliveries, subscriptions
from crewboard.storage import tables
from crewboard.storage.database import Database
from tests.support import artifact_calls, handoff_calls, spec_calls
from tests.support.databases import Reader
from tests.support.factories import make_project
from tests.support.mcp_client import body_of

# --- the kinds of token ---------------------------------------------------------------------


@dataclass(frozen=True)
class Kind:
    kind: TokenKind
    limited: bool
    cap: Role | None

    def __str__(self) -> str:
        limit = "limited" if self.limited else "unlimited"
        return f"{self.kind}-{limit}-{self.cap or 'uncapped'}"

    @property
    def issuable(self) -> bool:
        """Whether `tokens.issue_token` makes such a token (else it is written to storage)."""
        return self.limited or (self.kind is TokenKind.PERSONAL and self.cap is None)

    def holds(self, role: Role) -> bool:
        """Whether the token's role on a project of its person (an admin) includes `role`."""
        return self.cap is None or self.cap.includes(role)

    @property
    def creates_projects(self) -> bool:
        return (
            self.kind is TokenKind.PERSONAL and not self.limited and self.cap in (None, Role.ADMIN)
        )


KINDS = [
    Kind(kind, limited, cap)
    for kind in TokenKind
    for limited in (False, True)
    for cap in (None, Role.READ, Role.WRITE, Role.ADMIN)
]


# --- the world: one person, projects A and B with something of everything ------------------


@dataclass(frozen=True)
class Spot:
    """One project a call can aim at, and the things in it that writes name."""

    project_id: str
    key: str
    task_id: str
    task_key: str
    role_id: str
    repo_id: str
    file_id: str
    artifact_id: str
    handoff_id: str
    action_item_id: str
    session_id: str
    archived: bool = False
    ghost: bool = False


def ghost_spot() -> Spot:
    """Ids of the right shape that name nothing."""
    return Spot(
        project_id=new_id("prj"),
        key="GHOST",
        task_id=new_id("tsk"),
        task_key="GHOST-1",
        role_id=new_id("rol"),
        repo_id=new_id("rep"),
        file_id=new_id("spf"),
        artifact_id=new_id("art"),
        handoff_id=new_id("hof"),
        action_item_id=new_id("hai"),
        session_id=new_id("ses"),
        ghost=True,
    )


@dataclass
class World:
    db: Database
    user: User
    a: Spot
    b: Spot
    ghost: Spot = field(default_factory=ghost_spot)
    made: int = 0

    @property
    def person(self) -> Actor:
        return person_actor(self.user)

    def fresh_key(self, prefix: str = "N") -> str:
        self.made += 1
        return f"{prefix}{self.made}{uuid.uuid4().hex[:4].upper()}"[:10]

    def task_revision(self, spot: Spot) -> int:
        found = self.db.read(lambda uow: uow.tasks.get(spot.task_id))
        return found.revision if found is not None else 1

    def state_revision(self, spot: Spot) -> int:
        if spot.ghost:
            return 1
        return int(self.db.read(lambda uow: uow.state.get(spot.project_id).revision))

    def file_version(self, spot: Spot) -> str:
        """The spec file's contentVersion now (one of the right shape for a ghost)."""
        if spot.ghost:
            return "cv_000000000000000000000000"
        found = files.get_spec_file(
            self.db,
            self.person,
            project=spot.project_id,
            ref=file_lookup.FileRef(file_id=spot.file_id),
            include_trashed=True,
        )
        return str(found["file"]["contentVersion"])

    def artifact_count(self, spot: Spot) -> int:
        """The artifact's revision count now (1 for a ghost)."""
        if spot.ghost:
            return 1
        found = artifact_calls.get_artifact(
            self.db, self.person, project=spot.project_id, ref=spot.artifact_id
        )
        return int(found["artifact"]["revisionCount"])

    def handoff_version(self, spot: Spot) -> str:
        """The handoff's updatedAt now (one of the right shape for a ghost)."""
        if spot.ghost:
            return GHOST_VERSION
        found = handoff_calls.get_handoff(self.db, self.person, handoff_id=spot.handoff_id)
        return str(found["handoff"]["updatedAt"])

    def item_version(self, spot: Spot) -> str:
        """The action item's updatedAt now (one of the right shape for a ghost)."""
        if spot.ghost:
            return GHOST_VERSION
        found = handoff_calls.get_handoff_action_item(
            self.db, self.person, item_id=spot.action_item_id
        )
        return str(found["actionItem"]["updatedAt"])

    def stream_token(self, spot: Spot) -> str:
        """A new stream token of the person's following `spot`'s project (an id of the right
        shape for a ghost)."""
        if spot.ghost:
            return new_id("stk")
        made = stream_tokens.create_stream_token(self.db, self.person, projects=[spot.project_id])
        return str(made["streamToken"]["id"])

    def webhook(self, spot: Spot) -> str:
        """A new webhook of `spot`'s project (an id of the right shape for a ghost); its
        address is loopback, which the matrix's server allows, on a closed port."""
        if spot.ghost:
            return new_id("whk")
        made = subscriptions.create_webhook(
            self.db, self.person, spot.project_id, url=WEBHOOK_URL, events=["task.created"]
        )
        return made.webhook.id

    def webhook_delivery(self, spot: Spot) -> str:
        """A logged delivery (a ping) of a new webhook of `spot`'s project."""
        if spot.ghost:
            return new_id("whd")
        return deliveries.ping_webhook(self.db, self.person, self.webhook(spot)).id

    def clear_webhooks(self, spot: Spot) -> None:
        """Delete `spot`'s webhooks, so the matrix's many calls stay under a project's cap."""
        if spot.ghost:
            return
        for made in subscriptions.list_webhooks(self.db, self.person, spot.project_id):
            subscriptions.delete_webhook(self.db, self.person, made.id)

    def set_trashed(self, spot: Spot, trashed: bool) -> None:
        if spot.ghost:
            return
        change = (
            spec_calls.move_spec_file_to_trash
            if trashed
            else spec_calls.restore_spec_file_from_trash
        )
        change(
            self.db,
            self.person,
            project=spot.project_id,
            workspace_id=None,
            ref=file_lookup.FileRef(file_id=spot.file_id),
        )

    def set_session_archived(self, spot: Spot, archived: bool) -> None:
        if not spot.ghost:
            sessions.set_archived(
                self.db, self.person, project=spot.project_id, workspace_id=None,
                ref=spot.session_id, archived=archived,
            )  # fmt: skip

    def archived_session(self, spot: Spot) -> str:
        """A new archived spec session of `spot`'s project, for a delete (an id of the right
        shape for a ghost)."""
        if spot.ghost:
            return new_id("ses")
        made = start_session(self.db, self.user, spot.project_id)
        self.set_session_archived(replace(spot, session_id=made), True)
        return made

    def set_archived(self, spot: Spot, archived: bool) -> None:
        if not spot.ghost:
            present.set_project_archived(
                self.db, self.person, project=spot.project_id, workspace_id=None, archived=archived
            )

    def throwaway(self) -> Spot:
        """An archived project of the person's, outside any limit: for deletes."""
        spot = replace(furnish(self.db, self.user, self.fresh_key("D")), archived=True)
        self.set_archived(spot, True)
        return spot


GHOST_VERSION = "2026-03-02T09:00:00+00:00"
WEBHOOK_URL = "http://127.0.0.1:9/hook"  # the matrix's server allows loopback (settings)


def start_session(db: Database, user: User, project: str) -> str:
    """A spec session of the person's on `project`; its id. Its first turn stays queued: the
    matrix serves the app with no session runner, so nothing changes behind a call's back."""
    made = sessions.start_session(
        db, person_actor(user), project=project, workspace_id=None, mode=Mode.GENERATE,
        prompt="Spec the export.", answer=started_answer,
    )  # fmt: skip
    return str(made.body["sessionId"])


def furnish(db: Database, user: User, key: str) -> Spot:
    """A project with a task, an AI role, a repository, a saved state page, a spec file, an
    artifact, a handoff of the person's with an action item, and a spec session."""
    person = person_actor(user)
    project_id = make_project(db, user, key)

    def task(title: str) -> dict[str, Any]:
        made = tasks.create_task(
            db,
            person,
            project=key,
            workspace_id=None,
            idempotency_key=uuid.uuid4().hex,
            title=title,
        )
        return dict(made.body["task"])

    first = task("First")
    role = present.add_team_role(db, person, project=key, name="Writer", role="Writer", kind="ai")
    repo = repos.add_repo(db, person, key, "app", "https://example.com/app.git")
    present.update_project_state(
        db, person, project=key, workspace_id=None, content="Where it stands.", expected_revision=0
    )
    spec = spec_calls.upload_spec_file(
        db,
        person,
        project=key,
        workspace_id=None,
        path="docs/plan.md",
        content=b"# Plan\n",
        idempotency_key=None,
    )
    mockup = artifact_calls.create_artifact(
        db, person, project=key, workspace_id=None, slug="mockup", title=None, description=None,
        files=[FileInput("index.html", b"<h1>Mockup</h1>\n")], idempotency_key=None,
    )  # fmt: skip
    handoff = handoff_calls.create_handoff(
        db, person, project=key, workspace_id=None, bodies=Bodies("Set up."), day="2000-01-01"
    ).body["handoff"]
    item = handoff_calls.create_handoff_action_item(
        db, person, handoff_id=handoff["id"], text="Check"
    )
    return Spot(
        project_id=project_id,
        key=key,
        task_id=first["id"],
        task_key=first["key"],
        role_id=role["id"],
        repo_id=repo.id,
        file_id=spec.body["file"]["id"],
        artifact_id=mockup.body["artifact"]["id"],
        handoff_id=handoff["id"],
        action_item_id=item.body["actionItem"]["id"],
        session_id=start_session(db, user, key),
    )


def issue(world: World, kind: Kind) -> str:
    """A token of `kind` for the world's person, with every scope; its secret.

    Kinds the issuer refuses (unlimited agent tokens, unlimited tokens with a role cap) are
    written to storage directly: the limits must hold whatever a token row says.
    """
    db = world.db
    if kind.issuable:
        return tokens.issue_token(
            db,
            world.person,
            kind=str(kind.kind),
            scopes=sorted(ALL_SCOPES),
            project=world.a.project_id if kind.limited else None,
            role=None if kind.cap is None else str(kind.cap),
        ).secret
    secret = generate_token_secret()
    token = ApiToken(
        id=new_id("tok"),
        user_id=world.user.id,
        name=str(kind),
        kind=kind.kind,
        scopes=ALL_SCOPES,
        display_prefix=display_prefix(secret),
        created_at=db.clock.now(),
        project_id=world.a.project_id if kind.limited else None,
        role=kind.cap,
    )
    db.write(lambda uow: uow.tokens.add(token, hash_token_secret(secret)))
    return secret


# --- requests and answers -------------------------------------------------------------------


@dataclass(frozen=True)
class Tool:
    name: str
    arguments: dict[str, Any]
    per_item: bool = False  # refused per task in the answer's outcomes, not as a whole


@dataclass(frozen=True)
class Http:
    method: str
    path: str
    body: dict[str, Any] | None = None
    keyed: bool = True  # sends a fresh Idempotency-Key header
    per_item: bool = False


Request = Tool | Http


def key() -> str:
    return uuid.uuid4().hex


@dataclass(frozen=True)
class Answer:
    code: str | None  # None: it went through
    detail: Any

    def __str__(self) -> str:
        return self.code or "ok"


class Doors:
    def __init__(self, client: Client, http: httpx2.AsyncClient) -> None:
        self.client = client
        self.http = http

    async def send(self, request: Request) -> Answer:
        answer = await (self._tool(request) if isinstance(request, Tool) else self._rest(request))
        if request.per_item and answer.code is None:
            outcome = answer.detail["outcomes"][0]
            return Answer(None if outcome["ok"] else outcome["error"]["code"], outcome)
        return answer

    async def _tool(self, request: Tool) -> Answer:
        try:
            result = await self.client.call_tool(request.name, request.arguments)
        except MCPError as error:
            return Answer(f"JSON-RPC {error.error.code}", error.error.message)
        if result.is_error:
            body = result.structured_content
            return Answer(str((body or {}).get("code", "INTERNAL")), body or result.content)
        return Answer(None, body_of(result))

    async def _rest(self, request: Http) -> Answer:
        headers = {"Idempotency-Key": key()} if request.keyed else {}
        try:
            response = await self.http.request(
                request.method, request.path, json=request.body, headers=headers
            )
        except httpx2.TransportError as error:  # the server dropped the connection
            return Answer("HTTP no answer", repr(error))
        if response.status_code == 204 and not response.content:  # done, nothing to say
            return Answer(None, None)
        if response.status_code >= 500 or not response.content:
            return Answer(f"HTTP {response.status_code}", response.text)
        body = response.json()
        if response.is_success:
            return Answer(None, body)
        return Answer(str(body.get("error", {}).get("code", response.status_code)), body)


def fingerprint(reader: Reader) -> dict[str, int]:
    """Row counts of every table, the newest event, and the sum of task revisions (read on the
    run's own connection: two of these go with every call of the matrix)."""
    names = [table.name for table in tables.metadata.sorted_tables]
    parts = [f"(SELECT count(*) FROM {name})" for name in names]
    parts += [
        "(SELECT coalesce(max(id), 0) FROM events)",
        "(SELECT coalesce(sum(revision), 0) FROM tasks)",
    ]
    row = reader.one(f"SELECT {', '.join(parts)}")
    return dict(zip([*names, "events.max_id", "tasks.revisions"], map(int, row), strict=True))
