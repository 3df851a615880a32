"""A project holding one of everything, made through the real services: what an export must
carry whole (tests/integration/test_transfer.py, bench/transfer.py)."""

from __future__ import annotations

from dataclasses import dataclass

from crewboard.contract import memory_present as memory_edits
from crewboard.contract.board import present_notes
from crewboard.contract.projects import present
from crewboard.contract.review.present import hand_in_view
from crewboard.contract.review.present_inbox import posted_view
from crewboard.contract.sessions.present import started_answer
from crewboard.domain.handoffs import Bodies
from crewboard.domain.identity.records import Actor
from crewboard.domain.sessions import Mode
from crewboard.services.artifacts.artifacts import FileInput
from crewboard.services.board import notes, questions, repos, task_updates, tasks
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.services.review import decisions, drafts, messages
from crewboard.services.sessions import sessions
from crewboard.services.specs.file_lookup import FileRef
from crewboard.storage.database import Database
from tests.support import artifact_calls, handoff_calls, spec_calls, task_reads
from tests.support.factories import make_user

# Text every kind of character travels in: CJK, emoji, a control character, quotes, a newline.
ODD = 'Plain, 漢字とかな, 🙂🚀👩‍💻, \u0001 "quoted" \\slash\n- [ ] a box'


@dataclass(frozen=True)
class Everything:
    key: str
    project_id: str
    owner_email: str
    member_email: str
    task_id: str
    subtask_id: str
    file_id: str
    file_text: str
    attachment_id: str
    artifact_id: str


def furnish_everything(db: Database, key: str = "MOVE") -> Everything:
    """Tasks (a parent, a subtask blocking it, labels, a due date), every kind of note, a
    question answered, repository work, a message, a hand-in approved into memory and one sent
    back, memory documents with versions, state page versions, the team, a spec file with two
    revisions and a comment thread, an attachment, an artifact with two revisions, a handoff
    with an action item, and a spec session. A token's work is in it; the token stays behind."""
    owner = make_user(db, f"owner.{key.lower()}@example.com")
    member = make_user(db, f"member.{key.lower()}@example.com")
    person = person_actor(owner)
    made = present.create_project(
        db, person, workspace_id=None, key=key, name=f"Moving {ODD}", goal="Move it all.",
        collections=["decisions", "context"],
    )  # fmt: skip
    project_id = str(made.body["project"]["id"])
    present.set_project_member(db, person, project=key, email=member.email, role="write")
    for revision in range(2):
        present.update_project_state(
            db, person, project=key, workspace_id=None, content=f"State {revision}: {ODD}",
            expected_revision=revision,
        )  # fmt: skip
    seat = present.add_team_role(db, person, project=key, name="Writer", role=ODD, kind="ai")["id"]
    memory_edits.set_document(db, person, key, "overview", f"Overview {ODD}", expected_version=0)
    memory_edits.set_document(db, person, key, "overview", "Overview, again", expected_version=1)
    main = tasks.create_task(
        db, person, project=key, workspace_id=None, idempotency_key="main", title=f"Main {ODD}",
        description=ODD, brief="Brief.", status="ready_for_ai", assignee_id=seat,
        assignee_type="ai", tags=["export"], labels=["area:transfer"], due_date="2026-12-24",
        external_reference_ids=["legacy:1"],
    ).body["task"]  # fmt: skip
    sub = tasks.create_task(
        db, person, project=key, workspace_id=None, idempotency_key="sub", title="Sub",
        parent_task_id=main["id"],
    ).body["task"]  # fmt: skip
    task_updates.update_task(
        db, person, project=key, workspace_id=None, idempotency_key="block", task_id=main["id"],
        expected_revision=main["revision"], patch={"blocked_by_task_ids": [sub["id"]]},
    )  # fmt: skip
    secret = tokens.issue_token(
        db, person, kind="agent", project=key,
        scopes=["read", "tasks.manage", "drafts.create", "messages.write"],
    ).secret  # fmt: skip
    agent = tokens.authenticate_token(db, secret)
    _talk(db, person, agent, key=key, task=main["id"], seat=seat)
    file_id, file_text = _specs(db, person, key)
    attachment = spec_calls.upload_attachment(
        db, person, project=key, workspace_id=None, name="logo.png",
        content=b"\x89PNG\r\n\x1a\n" + bytes(range(256)), override=False, idempotency_key=None,
    ).body["attachment"]  # fmt: skip
    artifact = artifact_calls.create_artifact(
        db, person, project=key, workspace_id=None, slug="mockup", title="Mockup",
        description=ODD, files=[FileInput("index.html", b"<h1>One</h1>\n"),
        FileInput("css/site.css", b"h1 {}\n")], idempotency_key=None,
    ).body["artifact"]  # fmt: skip
    artifact_calls.write_artifact_revision(
        db, person, project=key, workspace_id=None, ref="mockup",
        files=[FileInput("index.html", b"<h1>Two</h1>\n")], remove=[], base_revision=1,
        expected_version=1, idempotency_key=None,
    )  # fmt: skip
    handoff = handoff_calls.create_handoff(
        db, person, project=key, workspace_id=None, bodies=Bodies(ODD, "Doing", "None", "Next"),
        day="2026-12-01", linked_task_ids=[main["id"]], recipients=[member.email],
    ).body["handoff"]  # fmt: skip
    handoff_calls.create_handoff_action_item(
        db, person, handoff_id=handoff["id"], text="Check the archive", assignee=member.email,
        due_date="2026-12-02",
    )  # fmt: skip
    sessions.start_session(
        db, person, project=key, workspace_id=None, mode=Mode.EDIT, prompt="Tighten the plan.",
        spec_file_ids=[file_id], attachment_ids=[attachment["id"]], answer=started_answer,
    )  # fmt: skip
    return Everything(
        key=key,
        project_id=project_id,
        owner_email=owner.email,
        member_email=member.email,
        task_id=main["id"],
        subtask_id=sub["id"],
        file_id=file_id,
        file_text=file_text,
        attachment_id=attachment["id"],
        artifact_id=artifact["id"],
    )


def _talk(db: Database, person: Actor, agent: Actor, *, key: str, task: str, seat: str) -> None:
    where = {"task": task, "workspace_id": None}
    notes.post_comment(
        db,
        agent,
        **where,
        content=f"Comment {ODD}",
        idempotency_key="c",
        answer=present_notes.comment_answer,
    )
    notes.agent_update(
        db,
        agent,
        **where,
        content="Halfway.",
        idempotency_key="u",
        answer=present_notes.agent_update_answer,
    )
    asked = questions.ask_question(
        db,
        agent,
        **where,
        question="Which format?",
        idempotency_key="q",
        answer=present_notes.question_answer,
    ).body
    questions.answer_question(db, person, asked["question"]["id"], "Zip.")
    notes.save_output(
        db,
        agent,
        **where,
        name="plan.md",
        content=f"Output {ODD}",
        idempotency_key="o",
        answer=present_notes.output_answer,
    )
    repo = repos.add_repo(db, person, key, "app", "https://example.com/app.git")
    repos.propose_repo_change(
        db, agent, **where, idempotency_key="pr", repo_id=repo.id, branch="feature/move",
        title="Move", summary="Moves.", pr_url="https://example.com/app/pull/1",
        answer=present_notes.link_answer,
    )  # fmt: skip
    repos.report_repo_status(
        db, agent, **where, idempotency_key="st", repo_id=repo.id, branch="feature/move",
        commit="a1b2c3d4e5f6", tests="passed", summary="Green.",
        answer=present_notes.report_answer,
    )  # fmt: skip
    messages.post_message(
        db, agent, project=key, workspace_id=None, participant_id=seat, body=f"Message {ODD}",
        task=task, idempotency_key="m", answer=posted_view,
    )  # fmt: skip
    for n in range(2):
        found = task_reads.get_task(db, person, task=task, include_context_pack=False, budget=None)
        assert isinstance(found, dict)
        handed = drafts.submit_result(
            db, agent, project=key, workspace_id=None, task=task, idempotency_key=f"d{n}",
            expected_revision=found["task"]["revision"], context_receipt_id=None,
            title=f"Result {n}", summary="Summary.", content=f"Content {n} {ODD}",
            answer=hand_in_view,
        ).body  # fmt: skip
        if n == 0:
            decisions.request_revision(db, person, _draft_id(handed), comment="Say more.")
        else:
            decisions.approve(db, person, _draft_id(handed), save_to_memory=True)


def _draft_id(body: dict[str, object]) -> str:
    draft = body["draft"]
    assert isinstance(draft, dict)
    return str(draft["id"])


def _specs(db: Database, person: Actor, key: str) -> tuple[str, str]:
    text = f"# Plan\n\n{ODD}\n"
    made = spec_calls.upload_spec_file(
        db, person, project=key, workspace_id=None, path="docs/plan.md",
        content=b"# Plan\n", idempotency_key=None,
    ).body["file"]  # fmt: skip
    spec_calls.update_spec_file(
        db, person, project=key, workspace_id=None, ref=FileRef(file_id=made["id"]),
        content=text.encode(), expected_version=made["contentVersion"], idempotency_key=None,
    )  # fmt: skip
    thread = spec_calls.create_spec_file_comment_thread(
        db, person, project=key, workspace_id=None, ref=FileRef(file_id=made["id"]),
        anchor_quote="# Plan", anchor_prefix=None, anchor_suffix=None, body="Title?",
        idempotency_key=None,
    ).body["thread"]  # fmt: skip
    spec_calls.reply_spec_file_comment_thread(
        db, person, project=key, workspace_id=None, thread_id=thread["id"], body="Fine.",
        idempotency_key=None,
    )  # fmt: skip
    return str(made["id"]), text
