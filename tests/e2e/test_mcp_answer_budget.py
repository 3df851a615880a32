"""Every read tool answers within 48 KiB whatever the size of what it reads, and the texts it cuts
read back whole in windows. Through the official SDK client against the served app, both eras.

The world holds oversized content everywhere it can: 200,000-character brief and description
mixing ASCII, CJK, emoji and characters JSON escapes, the largest memory record and documents,
long comments, updates, questions, answers, outputs, repository links and messages, a 5000-
character state page, a 10,000-character project description, a big team, many tasks with
300-character titles. Each read-only tool of the catalogue has a case in CASES: a read tool
added to the catalogue fails `test_every_read_tool_has_a_case` until it gets one.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp_types import CallToolResult, TextContent
from sqlalchemy.engine import URL

from crewboard.config import Settings
from crewboard.contract import memory_present as memory_edits
from crewboard.contract.board import present_notes
from crewboard.contract.catalogue import default_catalogue
from crewboard.contract.projects import present
from crewboard.contract.review.present import hand_in_view
from crewboard.contract.review.present_inbox import posted_view
from crewboard.contract.sessions.present import started_answer
from crewboard.domain import webhooks as webhook_rules
from crewboard.domain.clock import ManualClock
from crewboard.domain.github import DeliverySeen
from crewboard.domain.handoffs import MAX_BODY, MAX_ITEM_TEXT, Bodies
from crewboard.domain.identity.access import Toolset
from crewboard.domain.identity.records import Actor, User
from crewboard.domain.sessions import MAX_PROMPT, MAX_TITLE, Mode
from crewboard.services.artifacts.artifacts import FileInput
from crewboard.services.board import notes, questions, repos, task_updates, tasks
from crewboard.services.github import settings as github
from crewboard.services.identity import stream_tokens, tokens
from crewboard.services.identity.users import person_actor
from crewboard.services.memory import records as memory
from crewboard.services.review import drafts, messages
from crewboard.services.sessions import sessions
from crewboard.services.sessions.context import session_context
from crewboard.services.specs.file_lookup import FileRef
from crewboard.services.text_windows import ANSWER_BUDGET
from crewboard.services.webhooks import subscriptions
from crewboard.storage.database import Database
from crewboard.storage.github.repository import GithubRepository
from crewboard.storage.uow import UnitOfWork
from crewboard.storage.webhooks.repository import WebhookRepository
from tests.conftest import BACKENDS, CLOCK_START
from tests.support import artifact_calls, handoff_calls, spec_calls, task_reads
from tests.support.databases import PostgresDatabases, SqliteDatabases
from tests.support.factories import make_user
from tests.support.mcp_client import body_of, mcp_client
from tests.support.server import free_port, running_server

pytestmark = pytest.mark.anyio

# Every kind of character a reply can hold: ASCII, CJK (3 bytes), emoji (4 bytes, a surrogate
# pair in UTF-16), a control character JSON escapes to 6 bytes, quotes and backslashes
# escaped to 2, newlines, and a checklist line.
UNIT = (
    'Plain words, 漢字とかなの文, emoji 🙂🚀👩‍💻, escapes \u0001\u001f "quoted" \\back\\slash\n'
    "- [ ] a checklist item with 漢字 and \u0002 in it\n"
)
SUBTASKS = 40
ALL_COLUMNS = [
    "number", "key", "boardOrder", "tags", "labels", "dueDate", "parentTaskId",
    "blockedByTaskIds", "title", "status", "priority", "type", "assigneeId", "assigneeType",
    "updatedAt", "revision", "brief", "description",
]  # fmt: skip


LINE = 'One line 漢字とかな 🙂🚀 "quoted" \\slash '


def line(length: int, seed: str = "") -> str:
    """`length` characters on one line, no control character (names that must be one line)."""
    return (seed + LINE * (length // len(LINE) + 1))[: length - 1] + "."


def mixed(length: int, seed: str = "") -> str:
    """`length` characters of UNIT after `seed`, starting and ending on a visible character (the
    services strip surrounding whitespace)."""
    text = (seed + UNIT * (length // len(UNIT) + 1))[: length - 1]
    return "P" + text[1:] + "."


@dataclass(frozen=True)
class World:
    secret: str
    seat: str
    task: str
    record: str
    brief: str
    description: str
    record_text: str
    document_text: str
    spec_file: str = ""
    text_attachment: str = ""
    # Handoff tools need a person: these run with a personal token.
    person_secret: str = ""
    handoff: str = ""
    huge_handoff: str = ""
    item: str = ""
    # A spec session whose working context is far larger than an answer, and that context.
    session: str = ""
    context: str = ""
    output: str = ""  # a 100,000-character output of the main task
    # The integrations' admin reads run with a personal token that may administer.
    admin_secret: str = ""
    webhook: str = ""  # one of 20 webhooks with the longest URL, and 500 log entries


def build_world(db: Database) -> World:
    owner = make_user(db, "owner@example.com")
    person = person_actor(owner)
    present.create_project(
        db,
        person,
        workspace_id=None,
        key="CRW",
        name=mixed(120, "name"),
        goal=mixed(2000, "goal"),
        phase=mixed(100, "phase"),
        description=mixed(10_000, "description"),
        collections=[f"collection-{n:02d}-" + "x" * 46 for n in range(50)],
    )
    present.update_project_state(
        db, person, project="CRW", workspace_id=None, content=mixed(5000), expected_revision=0
    )
    seats = [
        present.add_team_role(
            db, person, project="CRW", name=mixed(120, f"seat {n}"), role=mixed(500), kind="ai"
        )["id"]
        for n in range(60)
    ]
    for n in range(20):
        present.set_project_member(
            db, person, project="CRW", email=make_user(db, f"person{n}@example.com").email,
            role="write",
        )  # fmt: skip
    record_text, document_text = mixed(memory.MAX_CONTENT, "record"), mixed(200_000, "doc")
    record = _file_records(db, owner, record_text)
    for number, name in enumerate(("decisions", "context", "overview", "notes", "legal")):
        memory_edits.set_document(
            db, person, "CRW", name, document_text if number == 0 else mixed(200_000, name),
            expected_version=0,
        )  # fmt: skip
    brief, description = mixed(200_000, "brief"), mixed(200_000, "description")
    main = tasks.create_task(
        db,
        person,
        project="CRW",
        workspace_id=None,
        idempotency_key="main",
        title=mixed(300, "main"),
        brief=brief,
        description=description,
        status="ready_for_ai",
        assignee_id=seats[0],
        assignee_type="ai",
        tags=[f"tag-{n:02d}-" + "t" * 40 for n in range(20)],
        labels=[f"label-{n:02d}-" + "l" * 38 for n in range(20)],
        due_date=date(2026, 3, 4),
        context_item_ids=[record, *(mixed(200, f"item {n}") for n in range(199))],
        external_reference_ids=[mixed(200, f"ref {n}") for n in range(200)],
        context_refs=[
            {
                "id": mixed(200, f"cref {n}"),
                "kind": "external",
                "refId": mixed(200, f"target {n}"),
                "audience": ["human", "ai", "mcp"],
                "note": mixed(2000, f"note {n}"),
                "addedBy": mixed(200),
                "createdAt": "2026-03-01T09:00:00+00:00",
            }
            for n in range(200)
        ],
    ).body["task"]
    subtasks = [
        tasks.create_task(
            db, person, project="CRW", workspace_id=None, idempotency_key=f"sub-{n}",
            title=mixed(300, f"sub {n}"), brief=mixed(3000), parent_task_id=main["id"],
            due_date=date(2026, 3, 3), assignee_id=seats[0], assignee_type="ai",
        ).body["task"]
        for n in range(SUBTASKS)
    ]  # fmt: skip
    task_updates.update_task(
        db,
        person,
        project="CRW",
        workspace_id=None,
        idempotency_key="blockers",
        task_id=main["id"],
        expected_revision=main["revision"],
        patch={"blocked_by_task_ids": [s["id"] for s in subtasks]},
    )
    secret = tokens.issue_token(
        db,
        person,
        kind="agent",
        project="CRW",
        scopes=["read", "tasks.manage", "drafts.create", "messages.write"],
    ).secret
    agent = tokens.authenticate_token(db, secret)
    output = _talk(db, person, agent, main["id"], seats[0])
    spec_file, text_attachment, session, context = _spec_world(db, person)
    handoff, huge, item = _handoff_world(db, person, [main["id"], *(s["id"] for s in subtasks)])
    person_secret = tokens.issue_token(db, person, kind="personal", scopes=["read"]).secret
    admin_secret = tokens.issue_token(
        db, person, kind="personal", scopes=["read", "projects.admin"]
    ).secret
    webhook = _integrations_world(db, person)
    return World(
        secret, seats[0], main["id"], record, brief, description, record_text, document_text,
        spec_file, text_attachment, person_secret, handoff, huge, item, session, context, output,
        admin_secret, webhook,
    )  # fmt: skip


def _integrations_world(db: Database, person: Actor) -> str:
    """20 webhooks (a project's most) with the longest URL and description, the last with a
    full log of the largest entries; GitHub set up with a full list of long outcomes."""
    url = "https://93.184.216.34/" + "h" * (webhook_rules.MAX_URL - 22)
    made = [
        subscriptions.create_webhook(
            db, person, "CRW", url=url, events=["*"],
            description=mixed(webhook_rules.MAX_DESCRIPTION, f"hook {n}"),
        ).webhook
        for n in range(webhook_rules.MAX_WEBHOOKS)
    ]  # fmt: skip
    last = made[-1]

    def log(uow: UnitOfWork) -> None:
        repo = WebhookRepository(uow.conn)
        for n in range(webhook_rules.KEEP_DELIVERIES):
            repo.add_delivery(
                webhook_rules.Delivery(
                    id=f"whd_{n:022d}", webhook_id=last.id, project_id=last.project_id,
                    event_id=n + 1, event_type="handoff_action_item.updated",
                    kind=webhook_rules.DeliveryKind.EVENT,
                    state=webhook_rules.DeliveryState.RETRYING, attempts=99,
                    response_status=503, response_excerpt=mixed(1000, f"answer {n}"),
                    error=mixed(1000, f"error {n}"), duration_ms=10_000, created_at=uow.now,
                    last_attempt_at=uow.now, next_attempt_at=uow.now, delivered_at=None,
                )
            )  # fmt: skip
        seen = GithubRepository(uow.conn)
        for n in range(30):
            seen.add_delivery(
                DeliverySeen(
                    f"{n:036d}", last.project_id, "pull_request", "synchronize",
                    mixed(2000, f"outcome {n}"), uow.now,
                )
            )  # fmt: skip

    github.configure_github(db, person, "CRW")
    db.write(log)
    return last.id


def _handoff_world(db: Database, person: Actor, task_ids: list[str]) -> tuple[str, str, str]:
    """100 handoffs to 20 people; one with the longest bodies, 50 linked tasks with 300-character
    titles and 200 action items of the longest text; one whose bodies are 4,000 emoji each
    (more than any answer holds)."""
    people = [f"person{n}@example.com" for n in range(20)]
    bodies = Bodies(*(mixed(MAX_BODY, name) for name in ("done", "doing", "stuck", "next")))
    for n in range(98):
        handoff_calls.create_handoff(
            db, person, project="CRW", workspace_id=None, bodies=Bodies("short"),
            day=(date(2026, 1, 1) + timedelta(days=n)).isoformat(), recipients=people,
        )  # fmt: skip
    made = handoff_calls.create_handoff(
        db, person, project="CRW", workspace_id=None, bodies=bodies, day="2026-06-01",
        linked_task_ids=task_ids[:50], recipients=people,
    ).body["handoff"]  # fmt: skip
    for n in range(200):
        item = handoff_calls.create_handoff_action_item(
            db, person, handoff_id=made["id"], text=mixed(MAX_ITEM_TEXT, f"item {n}"),
            assignee=people[n % 20], due_date="2026-06-02",
        ).body["actionItem"]  # fmt: skip
    emoji = Bodies(*(["🙂" * MAX_BODY] * 4))
    huge = handoff_calls.create_handoff(
        db, person, project="CRW", workspace_id=None, bodies=emoji, day="2026-06-02",
        linked_task_ids=task_ids[:50], recipients=people,
    ).body["handoff"]  # fmt: skip
    return made["id"], huge["id"], item["id"]


def _spec_world(db: Database, person: Actor) -> tuple[str, str, str, str]:
    """200 spec files at long paths, one of 3 MiB with long lines, 200 attachments with long
    names (one a long text), 100 comment threads of long comments on the big file, and the
    spec sessions of `_session_world`."""
    folder = "/".join(f"folder {n} 漢字とかな 🙂" + "f" * 180 for n in range(2))  # long, deep
    small: list[str] = []
    for n in range(200):
        small.append(spec_calls.upload_spec_file(
            db, person, project="CRW", workspace_id=None, path=f"{folder}/{n:03d}.md",
            content=b"x\n", idempotency_key=None,
        ).body["file"]["id"])  # fmt: skip
    big = "".join(mixed(5000, f"l{n}").replace("\n", " ") + "\n" for n in range(600))
    made = spec_calls.upload_spec_file(
        db, person, project="CRW", workspace_id=None, path="docs/big.md",
        content=big.encode(), idempotency_key=None,
    ).body["file"]  # fmt: skip
    images: list[str] = []
    for n in range(199):
        images.append(spec_calls.upload_attachment(
            db, person, project="CRW", workspace_id=None, name=f"{n:03d}-" + "a" * 240 + ".png",
            content=b"\x89PNG\r\n\x1a\n" + bytes(64), override=False, idempotency_key=None,
        ).body["attachment"]["id"])  # fmt: skip
    text = spec_calls.upload_attachment(
        db, person, project="CRW", workspace_id=None, name="notes.txt",
        content=big.encode(), override=False, idempotency_key=None,
    ).body["attachment"]  # fmt: skip
    for n in range(100):
        quote = big.split("\n")[n][:40]
        thread = spec_calls.create_spec_file_comment_thread(
            db, person, project="CRW", workspace_id=None, ref=FileRef(file_id=made["id"]),
            anchor_quote=quote, anchor_prefix=None, anchor_suffix=None,
            body=mixed(10_000, f"c{n}"), idempotency_key=None,
        ).body["thread"]  # fmt: skip
        spec_calls.reply_spec_file_comment_thread(
            db, person, project="CRW", workspace_id=None, thread_id=thread["id"],
            body=mixed(10_000, f"r{n}"), idempotency_key=None,
        )  # fmt: skip
    _artifact_world(db, person, big)
    for n in range(100):  # the most a list shows, with long names; most revoked (a person
        # holds at most MAX_LIVE that still work), which makes their entries the longest
        stream = stream_tokens.create_stream_token(
            db, person, projects=["CRW"], name=mixed(120, f"s{n}")
        )
        if n < 100 - stream_tokens.MAX_LIVE:
            stream_tokens.revoke_stream_token(db, person, token_id=stream["streamToken"]["id"])
    session, context = _session_world(
        db, person, files=small[:25], images=images[:25], big=made["id"], notes=text["id"]
    )
    return str(made["id"]), str(text["id"]), session, context


def _session_world(
    db: Database, person: Actor, *, files: list[str], images: list[str], big: str, notes: str
) -> tuple[str, str]:
    """30 spec sessions with the longest titles and openings, each naming the most spec files
    and attachments (a few archived); and one working on the 3 MiB file, five more of 130,000
    characters and a long text attachment: its working context is some 600 KB. That session's
    id and its context as the model sees it."""
    for n in range(30):
        made = sessions.start_session(
            db, person, project="CRW", workspace_id=None, mode=Mode.GENERATE,
            prompt=mixed(MAX_PROMPT, f"p{n}"), title=mixed(MAX_TITLE, f"session {n}"),
            spec_file_ids=files, attachment_ids=images, answer=started_answer,
        ).body  # fmt: skip
        if n % 3 == 0:
            sessions.set_archived(
                db, person, project="CRW", workspace_id=None, ref=made["sessionId"],
                archived=True,
            )  # fmt: skip
    wide = [big]
    for n in range(5):
        wide.append(spec_calls.upload_spec_file(
            db, person, project="CRW", workspace_id=None, path=f"context/{n}.md",
            content=mixed(130_000, f"ctx{n}").encode(), idempotency_key=None,
        ).body["file"]["id"])  # fmt: skip
    ref = sessions.start_session(
        db, person, project="CRW", workspace_id=None, mode=Mode.EDIT, prompt="Tighten these.",
        title=mixed(MAX_TITLE, "wide"), spec_file_ids=wide, attachment_ids=[notes], answer=started_answer,
    ).body["sessionId"]  # fmt: skip
    context = session_context(db, person, project="CRW", ref=ref)
    assert len(context.encode()) > 10 * ANSWER_BUDGET
    return str(ref), context


def _artifact_world(db: Database, person: Actor, big: str) -> None:
    """100 artifacts with long titles and descriptions; `deep` with 50 files at the longest
    paths and 50 revisions, one file of long lines."""
    folder = "/".join(f"folder {n} 漢字とかな 🙂" + "f" * 200 for n in range(2))
    for n in range(100):
        artifact_calls.create_artifact(
            db, person, project="CRW", workspace_id=None, slug=f"a{n:03d}",
            title=mixed(200, f"t{n}"), description=mixed(2000, f"d{n}"),
            files=[FileInput("index.html", b"<p>\n")], idempotency_key=None,
        )  # fmt: skip
    many = [FileInput(f"{folder}/{n:02d}-" + "p" * 40 + ".css", b"p {}\n") for n in range(49)]
    artifact_calls.create_artifact(
        db, person, project="CRW", workspace_id=None, slug="deep", title=mixed(200, "deep"),
        description=mixed(2000, "deep"), files=[*many, FileInput("big.js", big.encode()[: 2 * 1024 * 1024].rsplit(b"\n", 1)[0])],
        idempotency_key=None,
    )  # fmt: skip
    for n in range(2, 51):
        artifact_calls.write_artifact_revision(
            db, person, project="CRW", workspace_id=None, ref="deep",
            files=[FileInput(many[0].path, f"p {{ n: {n} }}\n".encode())], remove=[],
            base_revision=n - 1, expected_version=n - 1, idempotency_key=None,
        )  # fmt: skip


def _file_records(db: Database, owner: User, huge: str) -> str:
    def work(uow: UnitOfWork) -> str:
        project = uow.projects.get_with_role("CRW", owner.id)[0]
        made = [
            memory.file_record(
                uow, person_actor(owner), project, title=mixed(300, f"record {n}"),
                summary=mixed(2000), content=mixed(15_000, f"r{n}"), collection=None,
                document="decisions", source_draft_id=None,
            )
            for n in range(10)
        ]  # fmt: skip
        big = memory.file_record(
            uow, person_actor(owner), project, title=mixed(300, "huge"),
            summary=mixed(2000, "huge"), content=huge, collection=None, document="decisions",
            source_draft_id=None,
        )  # fmt: skip
        return str(big.id) if made else ""

    return db.write(work)


def _talk(db: Database, person: Actor, agent: Actor, task: str, seat: str) -> str:
    """Comments, updates, questions with answers, outputs, repository work, messages, hand-ins;
    the id of the last output."""
    where = {"task": task, "workspace_id": None}
    for n in range(8):
        notes.post_comment(
            db,
            agent,
            **where,
            content=mixed(20_000, f"c{n}"),
            idempotency_key=f"c{n}",
            answer=present_notes.comment_answer,
        )
        notes.agent_update(
            db,
            agent,
            **where,
            content=mixed(20_000, f"u{n}"),
            idempotency_key=f"u{n}",
            answer=present_notes.agent_update_answer,
        )
        asked = questions.ask_question(
            db,
            agent,
            **where,
            question=mixed(20_000, f"q{n}"),
            idempotency_key=f"q{n}",
            answer=present_notes.question_answer,
        ).body
        questions.answer_question(db, person, asked["question"]["id"], mixed(20_000, f"a{n}"))
        saved = notes.save_output(
            db, agent, **where, name=line(200, f"out{n}"), content=mixed(100_000, f"o{n}"),
            idempotency_key=f"o{n}",
            answer=present_notes.output_answer,
        ).body  # fmt: skip
    repo = repos.add_repo(db, person, "CRW", mixed(200, "repo"), "https://github.com/a/app")
    for n in range(8):
        repos.propose_repo_change(
            db, agent, **where, idempotency_key=f"pr{n}", repo_id=repo.id,
            branch=f"feature/{n}-" + "b" * 180, title=mixed(300, f"pr{n}"),
            summary=mixed(4000, f"s{n}"), pr_url=f"https://github.com/a/app/pull/{n}",
            answer=present_notes.link_answer,
        )  # fmt: skip
        repos.report_repo_status(
            db, agent, **where, idempotency_key=f"st{n}", repo_id=repo.id,
            branch=f"feature/{n}-" + "b" * 180, commit="a1b2c3d4e5f6", tests="passed",
            summary=mixed(4000, f"st{n}"),
            answer=present_notes.report_answer,
        )  # fmt: skip
        messages.post_message(
            db, agent, project="CRW", workspace_id=None, participant_id=seat,
            body=mixed(20_000, f"m{n}"), task=task, idempotency_key=f"m{n}", answer=posted_view,
        )  # fmt: skip
    for n in range(3):
        revision = _revision(db, person, task)
        drafts.submit_result(
            db, agent, project="CRW", workspace_id=None, task=task, idempotency_key=f"d{n}",
            expected_revision=revision, context_receipt_id=None, title=mixed(300, f"d{n}"),
            summary=mixed(2000, f"d{n}"), content=mixed(200_000, f"d{n}"), answer=hand_in_view,
        )  # fmt: skip
    return str(saved["output"]["id"])


def _revision(db: Database, person: Actor, task: str) -> int:
    found = task_reads.get_task(db, person, task=task, include_context_pack=False, budget=None)
    assert isinstance(found, dict)
    return int(found["task"]["revision"])


# --- the cases: every read-only tool, called where its answer could grow -----------------------

Case = Callable[[World], list[dict[str, Any]]]
CASES: dict[str, Case] = {
    "list_projects": lambda _: [{}, {"limit": 200}],
    "get_project": lambda _: [{"projectId": "CRW"}],
    "get_project_state": lambda _: [{"projectId": "CRW"}],
    "list_team": lambda _: [{}, {"projectId": "CRW"}],
    "list_tasks": lambda _: [
        {"projectId": "CRW", "fields": ALL_COLUMNS, "limit": 200},
        {"projectId": "CRW", "limit": 200},
        {"projectId": "CRW", "fields": ["brief"], "limit": 200, "order": "desc"},
        {"projectId": "CRW", "projection": "board", "limit": 500},
    ],
    "get_board_summary": lambda _: [{"projectId": "CRW"}],
    "get_task": lambda w: [
        {"taskId": "CRW-1"},
        {"taskId": w.task, "includeContextPack": False},
        {"taskId": "CRW-1", "format": "agent_brief"},
        {"taskId": "CRW-1", "textField": "brief"},
        {"taskId": "CRW-1", "textField": "description", "textOffset": 123_456},
    ],
    "list_task_events": lambda w: [
        {"taskId": "CRW-1", "limit": 100},
        {"agentAssigneeId": w.seat, "limit": 100},
        {"since": "2026-01-01T00:00:00Z", "until": "2026-12-31T00:00:00Z", "limit": 100},
    ],
    "get_week": lambda _: [{"week": "2026-03-02"}, {"week": "2026-03-02", "projectId": "CRW"}],
    "list_task_repos": lambda _: [{"taskId": "CRW-1"}, {"projectId": "CRW"}],
    "get_project_memory": lambda w: [
        {},
        {"projectId": "CRW", "limit": 200},
        {"projectId": "CRW", "document": "decisions"},
        {"projectId": "CRW", "includeContent": False, "limit": 200},
        {"ids": [w.record]},
        {"ids": [w.record], "contentOffset": 0},
        {"projectId": "CRW", "document": "legal", "contentOffset": 5},
    ],
    "list_activity": lambda w: [
        {"limit": 100},
        {"limit": 100, "mine": True},
        {"limit": 100, "taskId": w.task},
    ],
    "list_task_notes": lambda _: [
        {"taskId": "CRW-1", "limit": 100},
        {"taskId": "CRW-1", "kind": "output", "limit": 100},
    ],
    "list_spec_files": lambda _: [{"projectId": "CRW", "limit": 200}],
    "get_spec_file": lambda w: [{"projectId": "CRW", "fileId": w.spec_file, "revisions": 200}],
    "read_spec_file": lambda w: [
        {"projectId": "CRW", "fileId": w.spec_file},
        {"projectId": "CRW", "path": "docs/big.md", "offset": 300, "limit": 2000},
    ],
    "list_attachments": lambda _: [{"projectId": "CRW", "limit": 200}],
    "get_attachment": lambda w: [{"projectId": "CRW", "attachmentId": w.text_attachment}],
    "read_attachment": lambda w: [{"projectId": "CRW", "attachmentId": w.text_attachment}],
    "read_output": lambda w: [
        {"taskId": "CRW-1", "outputId": w.output},
        {"taskId": "CRW-1", "outputId": w.output, "offset": 2},
    ],
    "list_artifacts": lambda _: [{"projectId": "CRW", "limit": 100}],
    "list_handoffs": lambda _: [{"projectId": "CRW", "limit": 100}],
    "get_handoff": lambda w: [{"handoffId": w.handoff}, {"handoffId": w.huge_handoff}],
    "list_handoff_action_items": lambda w: [
        {"handoffId": w.handoff, "limit": 100},
        {"projectId": "CRW", "date": "2026-06-01", "limit": 100},
    ],
    "get_handoff_action_item": lambda w: [{"actionItemId": w.item}],
    "list_stream_tokens": lambda _: [{}],
    "list_webhooks": lambda _: [{"projectId": "CRW"}],
    "get_webhook": lambda w: [{"webhookId": w.webhook}],
    "list_webhook_deliveries": lambda w: [
        {"webhookId": w.webhook, "limit": 200},
        {"webhookId": w.webhook, "state": "retrying", "limit": 200, "offset": 250},
    ],
    "get_github_settings": lambda _: [{"projectId": "CRW"}],
    "get_artifact": lambda _: [
        {"projectId": "CRW", "artifactId": "deep"},
        {"projectId": "CRW", "artifactId": "deep", "revision": 1},
    ],
    "read_artifact_file": lambda _: [
        {"projectId": "CRW", "artifactId": "deep", "path": "big.js"},
        {"projectId": "CRW", "artifactId": "deep", "path": "big.js", "offset": 300, "limit": 5},
    ],
    "list_spec_file_comments": lambda w: [
        {"projectId": "CRW", "fileId": w.spec_file},
        {"projectId": "CRW", "fileId": w.spec_file, "status": "open", "limit": 100},
    ],
    "list_assignee_tasks": lambda w: [
        {"assigneeId": w.seat, "fields": ALL_COLUMNS, "limit": 200},
        {"assigneeId": w.seat, "limit": 200},
    ],
    "list_spec_sessions": lambda _: [
        {"projectId": "CRW", "limit": 20},
        {"projectId": "CRW", "archiveFilter": "all", "limit": 20, "offset": 3},
        {"projectId": "CRW", "archiveFilter": "archived", "query": "session", "limit": 20},
    ],
    "get_spec_session": lambda w: [
        {"projectId": "CRW", "sessionId": w.session},
        {"projectId": "CRW", "sessionId": w.session, "includeContext": True},
        {"projectId": "CRW", "sessionId": w.session, "contextOffset": 123_456},
        {"projectId": "CRW", "sessionId": w.session, "contextOffset": 0, "contextLimit": 40_000},
    ],
}


def read_tools() -> set[str]:
    """The read tools served over HTTP (a stdio-only tool answers there with a refusal)."""
    return {t.name for t in default_catalogue() if t.read_only and not t.stdio_only}


def test_every_read_tool_has_a_case() -> None:
    missing = read_tools() - set(CASES)
    assert not missing, f"add a case to CASES for {sorted(missing)}"


# The world takes seconds to build, three times as long on PostgreSQL: it is built once per
# backend in this module, and each test reads a copy of its own (a file copy, or `CREATE
# DATABASE … TEMPLATE`: a twentieth of a second), served on its own port.


@pytest.fixture(scope="module", params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """The backend, for the module: its tests run backend by backend, so one world serves each."""
    return str(request.param)


def _databases(backend: str, request: pytest.FixtureRequest) -> SqliteDatabases | PostgresDatabases:
    databases: SqliteDatabases | PostgresDatabases = request.getfixturevalue(
        "sqlite_databases" if backend == "sqlite" else "postgres_databases"
    )
    return databases


@pytest.fixture(scope="module")
def built_world(backend: str, request: pytest.FixtureRequest) -> Iterator[tuple[URL, World]]:
    """The world built in a database of the backend's that no one is connected to afterwards."""
    databases = _databases(backend, request)
    url = databases.new_migrated()
    db = Database(url, clock=ManualClock(CLOCK_START))
    try:
        built = build_world(db)
        if backend == "sqlite":  # the copies are of the file alone
            with db.engine.connect() as conn:
                conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        db.dispose()
    yield url, built
    if isinstance(databases, PostgresDatabases):
        databases.drop(url)


@pytest.fixture
def world(built_world: tuple[URL, World]) -> World:
    return built_world[1]


@pytest.fixture
def world_url(
    built_world: tuple[URL, World],
    backend: str,
    request: pytest.FixtureRequest,
    clock: ManualClock,
    tmp_path: Path,
) -> Iterator[str]:
    """The app served over real HTTP on this test's own copy of the world; its base URL."""
    databases = _databases(backend, request)
    copy = databases.new_copy(built_world[0])
    db = Database(copy, clock=clock)
    try:
        with running_server(Settings(data_dir=tmp_path, port=free_port()), db) as base:
            yield base
    finally:
        db.dispose()
        if isinstance(databases, PostgresDatabases):
            databases.drop(copy)


def sizes(result: CallToolResult) -> list[int]:
    """Bytes of each text part and of the structured content (compact JSON, UTF-8)."""
    found = [len(part.text.encode()) for part in result.content if isinstance(part, TextContent)]
    if result.structured_content is not None:
        compact = json.dumps(result.structured_content, separators=(",", ":"), ensure_ascii=False)
        found.append(len(compact.encode()))
    return found


async def test_every_read_tool_answers_within_the_budget(
    world_url: str, world: World, mode: str
) -> None:
    over: list[str] = []
    async with (
        mcp_client(world_url, world.secret, mode) as agent,
        mcp_client(world_url, world.person_secret, mode) as person,
        mcp_client(world_url, world.admin_secret, mode) as admin,
    ):
        by_toolset = {Toolset.HANDOFFS: person, Toolset.ADMIN: admin}
        for name in sorted(read_tools()):
            tool = default_catalogue().find(name)
            client = by_toolset.get(tool.toolset, agent) if tool is not None else agent
            for arguments in CASES[name](world):
                result = await client.call_tool(name, arguments)
                if result.is_error:
                    over.append(f"{name} {arguments} failed: {result.structured_content}")
                    continue
                body_of(result)
                if max(sizes(result)) > ANSWER_BUDGET:
                    over.append(f"{name} {arguments}: {sizes(result)}")
    assert not over, "\n".join(over)


async def read_whole(client: Client, tool: str, arguments: dict[str, Any], key: str) -> str:
    parts, offset = [], 0
    while True:
        result = await client.call_tool(tool, {**arguments, key: offset})
        assert max(sizes(result)) <= ANSWER_BUDGET
        window = body_of(result)
        assert window["offset"] == offset
        parts.append(window["text"])
        if window["nextOffset"] is None:
            assert offset + len(window["text"]) == window["length"]
            return "".join(parts)
        assert window["nextOffset"] == offset + len(window["text"]) > offset
        offset = window["nextOffset"]


async def test_cut_texts_read_back_whole_in_windows(
    world_url: str, world: World, mode: str
) -> None:
    async with mcp_client(world_url, world.secret, mode) as client:
        full = body_of(await client.call_tool("get_task", {"taskId": "CRW-1"}))
        task = full["task"]
        assert (task["briefTruncated"], task["briefLength"]) == (True, len(world.brief))
        assert world.brief.startswith(task["brief"])
        assert world.description.startswith(task["description"])
        for field, original in (("brief", world.brief), ("description", world.description)):
            text = await read_whole(
                client, "get_task", {"taskId": "CRW-1", "textField": field}, "textOffset"
            )
            assert text == original
        record = await read_whole(
            client, "get_project_memory", {"ids": [world.record]}, "contentOffset"
        )
        assert record == world.record_text
        document = await read_whole(
            client,
            "get_project_memory",
            {"projectId": "CRW", "document": "decisions"},
            "contentOffset",
        )
        assert document == world.document_text
        on = {"projectId": "CRW", "sessionId": world.session}
        got = body_of(await client.call_tool("get_spec_session", {**on, "includeContext": True}))
        assert (got["contextTruncated"], got["contextLength"]) == (True, len(world.context))
        assert world.context.startswith(got["context"])
        assert got["session"]["id"] == world.session
        context = await read_whole(client, "get_spec_session", on, "contextOffset")
        assert context == world.context
        past = await client.call_tool(
            "get_spec_session", {**on, "contextOffset": len(world.context) + 1}
        )
        assert past.structured_content["code"] == "VALIDATION"
        assert past.structured_content["details"]["field"] == "contextOffset"


async def test_create_and_update_task_answers_fit_too(url: str, db: Database, mode: str) -> None:
    owner = make_user(db, "writer@example.com")
    present.create_project(db, person_actor(owner), workspace_id=None, key="WRT", name="Writes")
    secret = tokens.issue_token(
        db, person_actor(owner), kind="agent", project="WRT", scopes=["read", "tasks.manage"]
    ).secret
    brief = mixed(200_000, "brief")
    async with mcp_client(url, secret, mode) as client:
        created = await client.call_tool(
            "create_task",
            {"projectId": "WRT", "workspaceId": None, "idempotencyKey": "w1", "title": "Big",
             "brief": brief, "description": brief},
        )  # fmt: skip
        task = body_of(created)["task"]
        updated = await client.call_tool(
            "update_task",
            {"projectId": "WRT", "workspaceId": None, "idempotencyKey": "w2", "taskId": task["id"],
             "expectedRevision": task["revision"], "patch": {"description": brief[::-1]}},
        )  # fmt: skip
        whole = await read_whole(
            client, "get_task", {"taskId": task["id"], "textField": "description"}, "textOffset"
        )
    for result in (created, updated):
        assert max(sizes(result)) <= ANSWER_BUDGET
        assert body_of(result)["task"]["briefTruncated"] is True
    assert (task["briefLength"], task["descriptionLength"]) == (200_000, 200_000)
    assert whole == brief[::-1]
