"""The working rules the server sends an agent: only those whose tools the caller has."""

from __future__ import annotations

from collections.abc import Iterable

INTRO = (
    "Crewboard holds this team's projects, board, state page and the project memory people "
    "have accepted."
)

# (rule, tools it is about): a rule is sent when the caller has at least one of its tools.
RULES: tuple[tuple[str, frozenset[str]], ...] = (
    (
        "Projects you have no role on do not exist for you; list_projects shows the ones you can open.",
        frozenset({"list_projects"}),
    ),
    (
        "Start a session with get_project_state: where the project stands and what comes next.",
        frozenset({"get_project_state"}),
    ),
    (
        "Before you stop, rewrite the state page with update_project_state, passing the revision "
        "you read as expectedRevision; on a conflict read it again and merge, never overwrite.",
        frozenset({"update_project_state"}),
    ),
    (
        "Find work with list_tasks (or list_assignee_tasks, planning): its rows are compact "
        "(key, title, status, priority, revision; assignee and due date when set), get_task "
        "has the whole task. While hasMore, pass nextCursor as cursor with the same filters.",
        frozenset({"list_tasks", "list_assignee_tasks"}),
    ),
    (
        "Name a task by its id (tsk_…) or key (CRW-12) and a project by its id or key (CRW) "
        "wherever a tool asks for one. Lists page: while nextOffset (or hasMore) says there is "
        "more, pass it on; a page may hold fewer rows than limit.",
        frozenset({"list_tasks", "get_task", "list_projects"}),
    ),
    (
        "Only a person sets a task to approved; an agent hands work in for review.",
        frozenset({"create_task", "update_task", "set_task_status", "update_tasks"}),
    ),
    (
        "When agents share the board, take work with claim_next_task (or claim_task) and send "
        "the claim's fence as claimFence with update_task and submit_result. CLAIM_LOST means "
        "the task is no longer yours: stop working on it. release_task when you leave a task.",
        frozenset({"claim_next_task", "claim_task"}),
    ),
    (
        "Check in with get_updates, passing the nextCursor it gave you last: it answers only "
        "what concerns you since (answers, decisions, changes to your tasks, tasks free for "
        "you) and keeps your claims alive. Do not re-read lists to learn what changed.",
        frozenset({"get_updates"}),
    ),
    (
        "Read a task with get_task before working on it: its brief and context pack are the "
        "current inputs, newer than any copy or note of yours. To brief a subagent, read it with "
        "format agent_brief.",
        frozenset({"get_task"}),
    ),
    (
        "Pass the revision you read as expectedRevision when you change a task; move tasks "
        "between statuses with set_task_status (many at once), and make one planning change "
        "to many tasks with update_tasks (planning toolset).",
        frozenset({"update_task", "assign_task", "update_tasks", "set_task_status"}),
    ),
    (
        "Post deliverables with save_output (progress notes: agent_update, planning); when a "
        "person has to decide something, ask with ask_question. The answer comes in get_updates; "
        "get_task's notes and list_task_notes hold it too.",
        frozenset({"agent_update", "save_output", "ask_question"}),
    ),
    (
        "After pushing a branch, link it to its task with propose_repo_change (add prUrl once a "
        "pull request exists); report_repo_status records test runs but never links a branch.",
        frozenset({"propose_repo_change", "report_repo_status"}),
    ),
    (
        "get_project_memory holds only what people accepted: treat it as the project's source "
        "of truth. A task's pack lists other records in memoryIndex; read them by ids.",
        frozenset({"get_project_memory"}),
    ),
    (
        "Hand finished work in with submit_result: the draft, the move to review and your git "
        "references in one call. Pass the revision you read as expectedRevision and that read's "
        "contextReceiptId (null when it carried contextReceiptUnavailable or no pack). If the "
        "task moved on meanwhile, the draft still lands and taskNotMovedReason says why.",
        frozenset({"submit_result"}),
    ),
    (
        "A result waits for a person (or a rule an admin turned on). It is not accepted project "
        "memory until then; never say it is.",
        frozenset({"submit_result", "create_draft"}),
    ),
    (
        "Changes you cannot make yourself go to people as proposals (propose_task, "
        "propose_task_update, propose_task_delete, propose_role, propose_composition): a person "
        "accepts or dismisses each card.",
        frozenset(
            {
                "propose_task",
                "propose_task_update",
                "propose_task_delete",
                "propose_role",
                "propose_composition",
            }
        ),
    ),
    (
        "post_message writes into one participant's inbox thread (a role or person from "
        "list_team); it changes no task, role or memory.",
        frozenset({"post_message"}),
    ),
    (
        "list_activity shows what happened and what people decided about your hand-ins; pass "
        "its cursor as since to follow only what is new. mine: true lists your own hand-ins "
        "with their keys and what people answered you.",
        frozenset({"list_activity"}),
    ),
    (
        "Save a spec file with update_spec_file from the contentVersion get_spec_file or "
        "read_spec_file gave you (expectedVersion). On REVISION_CONFLICT someone saved first: "
        "read it again and merge, never resend your old text. Read long files in windows, "
        "passing nextOffset as offset.",
        frozenset({"update_spec_file"}),
    ),
    (
        "start_spec_session starts one AI-guided spec session that uses the server's model: "
        "call it once per goal with an opening message that says what you know (the goal, the "
        "code, the constraints), then give the person sessionUrl. The person answers the "
        "session's questions and accepts its files in the web app; never answer them yourself.",
        frozenset({"start_spec_session"}),
    ),
    (
        "Give each keyed write a stable idempotencyKey and retry a lost answer with the same key "
        "and arguments; a key reused for something else is refused naming what it made.",
        frozenset(
            {
                "create_project",
                "create_task",
                "update_task",
                "assign_task",
                "update_tasks",
                "set_task_status",
                "post_comment",
                "agent_update",
                "save_output",
                "ask_question",
                "propose_repo_change",
                "report_repo_status",
                "submit_result",
                "create_draft",
                "post_message",
                "propose_task",
                "propose_task_update",
                "propose_task_delete",
                "propose_role",
                "propose_composition",
                "upload_spec_file",
                "update_spec_file",
                "start_spec_session",
            }
        ),
    ),
    (
        "create_project names its workspaceId (null: private; list_projects shows each "
        "project's); the other tools take the project's own.",
        frozenset({"create_project"}),
    ),
)


def instructions_for(tool_names: Iterable[str], more: Iterable[str] = ()) -> str:
    """The rules about the tools the caller is shown; `more` names the toolsets it could also
    ask for (it has tools there it may use), so it knows how to get them."""
    have = set(tool_names)
    lines = [f"- {rule}" for rule, tools in RULES if tools & have]
    if extra := sorted(more):
        lines.append(
            f"- More tools are there when you ask for them: the {', '.join(extra)} toolsets. "
            "Send the header X-MCP-Toolsets with the toolsets you want (e.g. board,memory,"
            f"{extra[0]}, or all), set them on your token, or run crewboard mcp --toolsets."
        )
    return "\n".join([INTRO, *lines])
