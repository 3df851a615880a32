"""Refusals in words a person reads: a service's message names API fields (`assigneeId`),
tools (`list_tasks`) and ISO timestamps for the agents that read it; a page shows the field's
label, drops the sentence about tools, and writes times as people do."""

from __future__ import annotations

import re

from crewboard.domain.identity.access import Scope
from crewboard.domain.identity.naming import name_of
from crewboard.errors import CrewboardError, RevisionConflict
from crewboard.web.render import when

# Names whose plain de-camelled form reads wrong.
LABELS = {
    "expectedRevision": "Revision",
    "expectedVersion": "Version",
    "q": "Search words",
    "timeZone": "Time zone",
    "isoWeek": "Week",
    "blockedByTaskIds": "Blocked by",
    "url": "URL",
}
# A tool's name: a verb, an underscore, more snake case (list_tasks, get_task, …).
_TOOL = re.compile(
    r"\b(?:list|get|create|update|delete|submit|search|save|file|move|restore|approve|reject"
    r"|set|add|remove|post|ask|answer|accept|dismiss|propose|claim|request)_[a-z_]+\b"
)
_ISO_TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})?")
_CLAUSE = re.compile(r"(?<=[.;])\s+")

# What each scope lets a token or a connected app do, in the words the forms show.
SCOPE_HINTS = {
    Scope.READ: "read everything the person can see (always on)",
    Scope.TASKS_MANAGE: "create and change tasks",
    Scope.DRAFTS_CREATE: "hand in drafts for review",
    Scope.MESSAGES_WRITE: "post messages, questions and updates",
    Scope.TEAM_MANAGE: "change the team's roles",
    Scope.SPECS_WRITE: "write spec files and artifacts",
    Scope.PROJECTS_ADMIN: "change project settings",
}

# The board's statuses as people read them (the board's columns, badges on other pages).
STATUS_LABELS = {
    "backlog": "Backlog",
    "ready_for_ai": "Ready for AI",
    "in_progress": "In progress",
    "blocked": "Blocked",
    "review": "Review",
    "approved": "Approved",
    "done": "Done",
}


def label(field: str) -> str:
    """A field's label: `patch.assigneeId` → Assignee, `dueDate` → Due date."""
    name = field.rsplit(".", 1)[-1]
    if name in LABELS:
        return LABELS[name]
    words = re.sub(r"(?<=[a-z0-9])([A-Z])", r" \1", name).replace("_", " ").lower().split()
    if len(words) > 1 and words[-1] in ("id", "ids"):
        words = words[:-1]
    text = " ".join(words)
    return text[:1].upper() + text[1:]


def human_message(error: CrewboardError) -> str:
    """The refusal as a page shows it."""
    if isinstance(error, RevisionConflict) and "currentRevision" in error.details:
        by = error.details.get("updatedBy") or {}
        who = name_of(by)
        at = when(error.details.get("updatedAt"))
        return (
            f"Not saved: {who} changed it{f' at {at}' if at else ''} (it is at revision "
            f"{error.details['currentRevision']} now). Reload to see the change, then try again."
        )
    text = error.message
    field = error.details.get("field")
    if isinstance(field, str) and text.startswith(f"{field}: "):
        text = f"{label(field)}: {text[len(field) + 2 :]}"
    kept = [clause for clause in _CLAUSE.split(text) if not _TOOL.search(clause)]
    text = " ".join(kept) if kept else text
    if text.endswith(";"):
        text = text[:-1] + "."
    text = re.sub(r";\s*$", ".", text)
    return _ISO_TIME.sub(_as_read, text)


def _as_read(found: re.Match[str]) -> str:
    """An ISO time as people write it; text that only looks like one stays as it is."""
    try:
        return when(found.group())
    except ValueError:
        return found.group()
