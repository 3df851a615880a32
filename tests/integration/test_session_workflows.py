"""Each layout workflow through a whole session, on both databases, with a scripted model
(MemoryProvider): the session stores the workflow's own id when started by an alias, the
files it proposes are saved at the layout's paths when accepted, its tasks.md lands on the
board (a leading SpecKit or OpenSpec task id left out of the titles), and the working context
carries what the workflow needs (SpecKit's next feature number, OpenSpec's current specs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from crewboard.config import Settings
from crewboard.contract.sessions import present
from crewboard.contract.specs import present as files
from crewboard.domain.identity.records import Actor
from crewboard.domain.sessions import Mode
from crewboard.services.identity.users import person_actor
from crewboard.services.sessions import context, conversation, models, sessions
from crewboard.services.sessions.providers import ModelRequest
from crewboard.services.sessions.providers.memory import MemoryProvider
from crewboard.services.sessions.runner import SessionRunner
from crewboard.services.specs import file_lookup
from crewboard.storage.database import Database
from tests.support import spec_calls
from tests.support import task_reads as queries
from tests.support.factories import make_project, make_user
from tests.support.sessions import proposes

pytestmark = pytest.mark.anyio

LIMIT = 80


@pytest.fixture
def person(db: Database) -> Actor:
    user = make_user(db, "alice@example.com", is_owner=True)
    make_project(db, user, "CRW")
    # A configured model for the turns to resolve; the scripted provider stands in for it.
    values = models.check_provider(
        provider_id="scripted", kind="openai", base_url="http://127.0.0.1:9/v1", key_env=None,
        key_file=None, timeout=5.0, max_retries=0,
    )  # fmt: skip
    models.do_put_provider(db, None, values)
    models.do_put_model(db, None, model_id="m", provider_id="scripted", model="m1", is_default=True)
    return person_actor(user)


class Session:
    """One session run by a scripted model: start it, run its turns, accept what it proposes."""

    def __init__(self, db: Database, actor: Actor, tmp_path: Path, model: MemoryProvider) -> None:
        self.db, self.actor, self.model = db, actor, model
        self.runner = SessionRunner(
            db, Settings(data_dir=tmp_path), providers=lambda _provider: model
        )
        self.id = ""

    async def start(self, mode: Mode, workflow_id: str, **given: object) -> dict[str, object]:
        made = sessions.start_session(
            self.db, self.actor, project="CRW", workspace_id=None, mode=mode,
            prompt="Customers want their invoices as CSV.", workflow_id=workflow_id,
            answer=present.started_answer, **given,  # type: ignore[arg-type]
        )  # fmt: skip
        self.id = str(made.body["sessionId"])
        await self.runner.drain()
        return present.session_view(
            sessions.get_session(self.db, self.actor, project="CRW", ref=self.id).session
        )

    async def accept(self, path: str) -> None:
        """Accept the pending proposal of `path`, then run the turn that follows."""
        shown = present.screen_view(
            conversation.session_page(self.db, self.actor, project="CRW", ref=self.id)
        )
        (proposal,) = [p for p in shown["proposals"] if p["status"] == "pending"]
        assert proposal["path"] == path
        conversation.accept_file(
            self.db, self.actor, project="CRW", ref=self.id, proposal_id=str(proposal["id"]),
            turn_limit=LIMIT,
        )  # fmt: skip
        await self.runner.drain()

    def saved(self, path: str) -> str:
        got = files.get_spec_file(
            self.db, self.actor, project="CRW", ref=file_lookup.FileRef(path=path)
        )
        assert got["file"]["updatedBy"]["via"]["sessionId"] == self.id
        return str(got["file"]["path"])

    def context(self) -> str:
        return context.session_context(self.db, self.actor, project="CRW", ref=self.id)


def board_titles(db: Database, actor: Actor) -> set[str]:
    return {str(t["title"]) for t in queries.list_tasks(db, actor, project="CRW").rows}


def upload(db: Database, actor: Actor, path: str, content: str) -> str:
    made = spec_calls.upload_spec_file(
        db, actor, project="CRW", workspace_id=None, path=path, content=content.encode(),
        idempotency_key=None,
    )  # fmt: skip
    return str(made.body["file"]["id"])


def asked(model: MemoryProvider, n: int = 0) -> ModelRequest:
    return model.requests[n]


SPEC = (
    "# Feature Specification: Invoice export\n\n## User Scenarios & Testing\n\n"
    "### User Story 1 - Export invoices (Priority: P1)\n\n"
    "1. **Given** an invoice, **When** the customer exports, **Then** a CSV downloads.\n\n"
    "## Requirements\n\n- **FR-001**: The system MUST export invoices as CSV.\n\n"
    "## Success Criteria\n\n- **SC-001**: An export of 1,000 invoices takes under 5 s.\n"
)
SPECKIT_TASKS = (
    "# Tasks: Invoice export\n\n## Phase 1: Setup\n\n"
    "- [ ] T001 Create the export module in src/export/__init__.py\n\n"
    "## Phase 3: User Story 1\n\n"
    "- [ ] T002 [P] [US1] Write the CSV writer in src/export/csv.py\n"
    "- [ ] T003 [US1] Add the export route in src/api/export.py\n"
)


async def test_a_speckit_session_numbers_its_folder_after_the_project_s_and_its_tasks_land(
    db: Database, person: Actor, tmp_path: Path
) -> None:
    upload(db, person, "specs/001-login/spec.md", "# Login\n")
    folder = "specs/002-invoice-export"
    model = MemoryProvider(
        proposes(f"{folder}/spec.md", SPEC),
        proposes(f"{folder}/plan.md", "# Implementation Plan\n\n## Technical Context\n"),
        proposes(f"{folder}/tasks.md", SPECKIT_TASKS),
        "The spec is complete: start with Phase 1.",
    )
    run = Session(db, person, tmp_path, model)
    started = await run.start(Mode.GENERATE, "speckit-greenfield-v1")
    assert started["workflowId"] == "speckit-greenfield-v1"
    first = asked(model).system
    assert "The next free feature number is 002" in first
    assert "specs/002-short-name/" in first
    assert "T001 [P] [US1]" in first  # the workflow's steps teach the layout
    assert "next free feature number is 002" in run.context()
    await run.accept(f"{folder}/spec.md")
    # Its own folder now exists: the session keeps to it rather than moving on to 003.
    assert f"This session's feature folder is {folder}/" in asked(model, 1).system
    assert "003" not in asked(model, 1).system
    await run.accept(f"{folder}/plan.md")
    await run.accept(f"{folder}/tasks.md")
    for name in ("spec.md", "plan.md", "tasks.md"):
        assert run.saved(f"{folder}/{name}") == f"{folder}/{name}"
    assert {
        "Create the export module in src/export/__init__.py",
        "Write the CSV writer in src/export/csv.py",
        "Add the export route in src/api/export.py",
    } <= board_titles(db, person)
    assert not any(t.startswith("T00") for t in board_titles(db, person))


CURRENT_AUTH = (
    "# Auth\n\n## Requirements\n\n### Requirement: Password sign-in\n"
    "The system SHALL sign a person in with a password.\n\n"
    "#### Scenario: Right password\n- **WHEN** the password is right\n- **THEN** the person is in\n"
)
DELTA = (
    "## ADDED Requirements\n\n### Requirement: Second factor\n"
    "The system SHALL ask for a one-time code after the password.\n\n"
    "#### Scenario: Right code\n- **WHEN** the code is right\n- **THEN** the person is in\n\n"
    "## MODIFIED Requirements\n\n### Requirement: Password sign-in\n"
    "The system SHALL check the password, then ask for the second factor.\n\n"
    "#### Scenario: Right password\n- **WHEN** the password is right\n"
    "- **THEN** the code is asked for\n"
)
OPENSPEC_TASKS = (
    "## 1. Database\n- [ ] 1.1 Add the otp_secrets table\n\n"
    "## 2. Sign-in\n- [ ] 2.1 Ask for the code after the password\n- [ ] 2.2 Lock after five tries\n"
)


async def test_an_openspec_session_sees_the_current_specs_and_writes_a_change_folder(
    db: Database, person: Actor, tmp_path: Path
) -> None:
    upload(db, person, "openspec/specs/auth/spec.md", CURRENT_AUTH)
    change = "openspec/changes/add-two-factor-auth"
    model = MemoryProvider(
        proposes(f"{change}/proposal.md", "## Why\n\n## What Changes\n\n## Impact\n"),
        proposes(f"{change}/specs/auth/spec.md", DELTA),
        proposes(f"{change}/tasks.md", OPENSPEC_TASKS),
        "The change is ready for review.",
    )
    run = Session(db, person, tmp_path, model)
    started = await run.start(Mode.GENERATE, "openspec-brownfield-v1")
    assert started["workflowId"] == "openspec-brownfield-v1"
    first = asked(model).system
    assert "## The project's spec files under openspec/specs/" in first
    assert "The system SHALL sign a person in with a password." in first
    assert "list_folder" in first
    await run.accept(f"{change}/proposal.md")
    await run.accept(f"{change}/specs/auth/spec.md")
    await run.accept(f"{change}/tasks.md")
    for name in ("proposal.md", "specs/auth/spec.md", "tasks.md"):
        assert run.saved(f"{change}/{name}") == f"{change}/{name}"
    assert {
        "Add the otp_secrets table",
        "Ask for the code after the password",
        "Lock after five tries",
    } <= board_titles(db, person)


async def test_a_brownfield_session_started_by_its_alias_keeps_the_workflow_s_own_id(
    db: Database, person: Actor, tmp_path: Path
) -> None:
    feature = "specs/invoice-export"
    model = MemoryProvider(
        proposes(f"{feature}/requirements.md", "# Requirements\n\n1. WHEN ... THEN ... SHALL\n"),
        proposes(f"{feature}/design.md", "# Design\n\nChanges src/export/csv.py.\n"),
        proposes(f"{feature}/tasks.md", "# Tasks\n\n- [ ] Write the CSV writer\n"),
        "The spec is complete.",
    )
    run = Session(db, person, tmp_path, model)
    started = await run.start(Mode.GENERATE, "myspec-brownfield-v1")
    assert started["workflowId"] == "crewboard-brownfield-v1"
    first = asked(model).system
    for tool in ("list_folder", "read_file", "search_text"):
        assert tool in first
    for name in ("requirements.md", "design.md", "tasks.md"):
        await run.accept(f"{feature}/{name}")
        assert run.saved(f"{feature}/{name}") == f"{feature}/{name}"
    assert "Write the CSV writer" in board_titles(db, person)


async def test_an_edit_brownfield_session_changes_the_named_files_and_their_tasks_land(
    db: Database, person: Actor, tmp_path: Path
) -> None:
    path = "specs/invoice-export/tasks.md"
    file_id = upload(db, person, path, "# Tasks\n\n- [ ] Write the CSV writer\n")
    model = MemoryProvider(
        proposes(path, "# Tasks\n\n- [ ] Write the CSV writer\n- [ ] Stream large exports\n"),
        "Every change is accepted.",
    )
    run = Session(db, person, tmp_path, model)
    started = await run.start(Mode.EDIT, "myspec-edit-brownfield-v1", spec_file_ids=[file_id])
    assert started["workflowId"] == "crewboard-edit-brownfield-v1"
    first = asked(model).system
    assert "## Files this session works on" in first
    assert "search_text" in first
    await run.accept(path)
    assert run.saved(path) == path
    assert {"Write the CSV writer", "Stream large exports"} <= board_titles(db, person)
