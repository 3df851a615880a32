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
        "Read a task with get_task before working on it: its brief and context pack are the "
        "current inputs.",
        frozenset({"get_task"}),
    ),
    (
        "Pass the revision you read as expectedRevision when you change a task; for the same "
        "change to many tasks use update_tasks, for many status moves set_task_status.",
        frozenset({"update_task", "update_tasks", "set_task_status"}),
    ),
    (
        "Post progress with agent_update and deliverables with save_output; when a person has to "
        "decide something, ask with ask_question: the answer shows on the task.",
        frozenset({"agent_update", "save_output", "ask_question"}),
    ),
    (
        "After pushing a branch, link it to its task with propose_repo_change (add prUrl once a "
        "pull request exists); report_repo_status records test runs but never links a branch.",
        frozenset({"propose_repo_change", "report_repo_status"}),
    ),
    (
        "Hand finished work in with submit_result. A result is not accepted until a person "
        "approves it; never say it is.",
        frozenset({"submit_result", "create_draft"}),
    ),
    (
        "Give each keyed write a stable idempotencyKey and retry a lost answer with the same key "
        "and arguments; a key reused for something else is refused naming what it made.",
        frozenset(
            {
                "create_project",
                "create_task",
                "update_task",
                "update_tasks",
                "set_task_status",
                "post_comment",
                "agent_update",
                "save_output",
                "ask_question",
                "propose_repo_change",
                "report_repo_status",
                "submit_result",
                "post_message",
            }
        ),
    ),
    (
        "Write calls name the workspace explicitly: the workspaceId list_projects shows, or null "
        "for a private project.",
        frozenset(
            {
                "create_project",
                "update_project",
                "update_project_state",
                "create_task",
                "update_task",
            }
        ),
    ),
)


def instructions_for(tool_names: Iterable[str]) -> str:
    have = set(tool_names)
    lines = [f"- {rule}" for rule, tools in RULES if tools & have]
    return "\n".join([INTRO, *lines])
