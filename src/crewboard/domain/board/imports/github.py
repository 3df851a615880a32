"""GitHub issues as the REST API lists them (`GET /repos/{owner}/{repo}/issues`): a JSON array of
issue objects (`gh api --paginate --slurp` makes an array of pages; both are read).

Pull requests appear in that list with a `pull_request` key: they are skipped and reported.
Open issues are backlog; closed ones are done, those closed as not planned (`state_reason`
`not_planned`) or as duplicates labelled so. A label `priority: high` (or `priority/high`,
`P0`/`P1` high, `P2` medium, `P3`/`P4` low) sets the priority; medium otherwise. The milestone's
title is the cycle; assignees are logins, mapped to people by the caller.
"""

from __future__ import annotations

import re
from typing import Any

from crewboard.domain.board.imports.model import (
    ImportedTask,
    Parsed,
    Skipped,
    clip_cycle,
    clip_labels,
    clip_title,
    json_list,
    malformed,
    parse_json,
    parse_time,
)
from crewboard.domain.board.tasks import Priority, TaskStatus

STATES = ("open", "closed")
STATE_REASONS = ("completed", "not_planned", "reopened", "duplicate")
_REASON_LABELS = {"not_planned": "not planned", "duplicate": "duplicate"}
_PRIORITY_LABEL = re.compile(
    r"^(?:priority[:/ ]\s*(high|medium|low|urgent|critical)|p([0-4]))$", re.I
)
_P_LEVELS = {
    "0": Priority.HIGH,
    "1": Priority.HIGH,
    "2": Priority.MEDIUM,
    "3": Priority.LOW,
    "4": Priority.LOW,
}
_WORD_LEVELS = {"urgent": Priority.HIGH, "critical": Priority.HIGH, "high": Priority.HIGH,
                "medium": Priority.MEDIUM, "low": Priority.LOW}  # fmt: skip
_REPO = re.compile(r"/repos/([^/]+/[^/]+)(?:/|$)")
_HTML_REPO = re.compile(r"github\.com/([^/]+/[^/]+)/(?:issues|pull)/")


def looks_like_github(data: object) -> bool:
    """A JSON array whose first item has an issue's `number`, `title` and `state`."""
    items = _flatten(data) if isinstance(data, list) else None
    if not items:
        return False
    first = items[0]
    return isinstance(first, dict) and {"number", "title", "state"} <= first.keys()


def parse_github(text: str, file: str = "issues.json") -> Parsed:
    """The issues, pull requests left out.

    Raises:
        ValidationFailed: not JSON (line and column), not an array of issues, or a field of
            the wrong kind or value (its path, e.g. `[3].state`, with the accepted values).
    """
    data = parse_json(file, text)
    if not isinstance(data, list):
        raise malformed(
            file, "(top level)", "must be a JSON array of issues, as the REST API lists them."
        )
    tasks: list[ImportedTask] = []
    skipped: list[Skipped] = []
    for index, raw in enumerate(_flatten(data)):
        path = f"[{index}]"
        if not isinstance(raw, dict):
            raise malformed(file, path, "must be an issue object.")
        number = raw.get("number")
        if isinstance(number, bool) or not isinstance(number, int):
            raise malformed(file, f"{path}.number", "must be the issue's number.")
        repo = _repo(raw)
        if repo is None:
            raise malformed(file, f"{path}.repository_url", "names no repository (owner/name).")
        if raw.get("pull_request") is not None:
            skipped.append(Skipped(f"github:{repo}#{number}", "a pull request, not an issue"))
            continue
        tasks.append(_issue(file, path, raw, repo, number))
    return Parsed(tasks, skipped)


def _flatten(data: list[Any]) -> list[Any]:
    if data and all(isinstance(page, list) for page in data):
        return [item for page in data for item in page]
    return data


def _repo(raw: dict[str, Any]) -> str | None:
    for key, pattern in (("repository_url", _REPO), ("url", _REPO), ("html_url", _HTML_REPO)):
        value = raw.get(key)
        found = pattern.search(value) if isinstance(value, str) else None
        if found:
            return found.group(1)
    return None


def _issue(file: str, path: str, raw: dict[str, Any], repo: str, number: int) -> ImportedTask:
    title = raw.get("title")
    if not isinstance(title, str) or not title.strip():
        raise malformed(file, f"{path}.title", "must be a text that is not empty.")
    state = raw.get("state")
    if state not in STATES:
        raise malformed(file, f"{path}.state", f"{state!r} is not an issue state.", list(STATES))
    reason = raw.get("state_reason")
    if reason is not None and reason not in STATE_REASONS:
        raise malformed(
            file, f"{path}.state_reason", f"{reason!r} is not a state reason.", list(STATE_REASONS)
        )
    names = [_label_name(file, f"{path}.labels[{i}]", label) for i, label in enumerate(json_list(file, f"{path}.labels", raw.get("labels")))]  # fmt: skip
    priority = Priority.MEDIUM
    for name in names:
        found = _PRIORITY_LABEL.match(name.strip())
        if found:
            priority = (
                _WORD_LEVELS[found.group(1).lower()]
                if found.group(1)
                else _P_LEVELS[found.group(2)]
            )
            break
    if state == "closed" and reason in _REASON_LABELS:
        names.append(_REASON_LABELS[reason])
    milestone = raw.get("milestone")
    cycle = milestone.get("title") if isinstance(milestone, dict) else None
    people = [_login(file, f"{path}.assignees[{i}]", person) for i, person in enumerate(json_list(file, f"{path}.assignees", raw.get("assignees")))]  # fmt: skip
    if not people and isinstance(raw.get("assignee"), dict):
        people = [_login(file, f"{path}.assignee", raw["assignee"])]
    body = raw.get("body")
    return ImportedTask(
        source="github",
        external_id=f"github:{repo}#{number}",
        title=clip_title(title),
        status=TaskStatus.DONE if state == "closed" else TaskStatus.BACKLOG,
        source_status=f"{state} ({reason})" if reason else str(state),
        priority=priority,
        body=body if isinstance(body, str) else "",
        labels=clip_labels(names),
        people=tuple(people),
        cycle=clip_cycle(cycle if isinstance(cycle, str) else None),
        created_at=parse_time(raw.get("created_at")),
        updated_at=parse_time(raw.get("updated_at")),
        url=raw.get("html_url") if isinstance(raw.get("html_url"), str) else None,
        origin=f"GitHub {repo}#{number}",
    )


def _label_name(file: str, path: str, label: Any) -> str:
    if isinstance(label, str):
        return label
    if isinstance(label, dict) and isinstance(label.get("name"), str):
        return str(label["name"])
    raise malformed(file, f"{path}.name", "a label names itself (name).")


def _login(file: str, path: str, person: Any) -> str:
    if isinstance(person, dict) and isinstance(person.get("login"), str) and person["login"]:
        return str(person["login"])
    raise malformed(file, f"{path}.login", "an assignee names its login.")
