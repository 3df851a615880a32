"""GitHub webhook deliveries: checking GitHub's signature, reading a delivery into the change it
describes, and finding a project's task keys in branch names and texts. Pure, no I/O."""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

MAX_DELIVERY_ID = 100
MAX_BODY = 5 * 1024 * 1024  # GitHub caps a delivery at 25 MB; a board needs far less
SIGNATURE_PREFIX = "sha256="


class OnMerge(StrEnum):
    """Where a merged pull request moves the tasks it names."""

    REVIEW = "review"
    DONE = "done"
    NONE = "none"


def sign(secret: str, body: bytes) -> str:
    """The `X-Hub-Signature-256` GitHub sends for `body`: `sha256=` and the hex HMAC-SHA256."""
    return SIGNATURE_PREFIX + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def signature_ok(secret: str, body: bytes, header: str | None) -> bool:
    """Whether the header is GitHub's signature of `body` under `secret` (constant-time)."""
    if not header or not header.startswith(SIGNATURE_PREFIX):
        return False
    return hmac.compare_digest(sign(secret, body).encode(), header.strip().encode())


def repo_address(url: str) -> str:
    """A repository URL compared case-insensitively, without `.git` or a trailing slash."""
    clean = url.strip().lower().rstrip("/")
    return clean.removesuffix(".git").rstrip("/")


def task_numbers(key: str, texts: Iterable[str | None]) -> list[int]:
    """The numbers of `key`'s tasks named in the texts (`DEMO-12`, word-bounded, any case),
    in the order first named; other projects' keys do not count."""
    pattern = re.compile(
        rf"(?<![A-Za-z0-9]){re.escape(key)}-(\d{{1,9}})(?![A-Za-z0-9])", re.IGNORECASE
    )
    found: list[int] = []
    for text in texts:
        for match in pattern.finditer(text or ""):
            number = int(match.group(1))
            if number not in found:
                found.append(number)
    return found


def parse_moment(value: Any) -> datetime | None:
    """GitHub's ISO 8601 timestamps (`2019-05-15T15:20:33Z`); None when absent or unreadable."""
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def _text(data: Any, *path: str) -> str | None:
    for step in path:
        if not isinstance(data, dict):
            return None
        data = data.get(step)
    return data if isinstance(data, str) else None


@dataclass(frozen=True)
class PullChange:
    """A pull request as one delivery describes it."""

    action: str
    number: int
    url: str
    title: str
    body: str
    head: str
    base: str
    head_sha: str | None
    state: str  # open, draft, merged, closed
    merged_by: str | None
    commits: int | None
    updated_at: datetime | None


@dataclass(frozen=True)
class PushChange:
    branch: str
    head_sha: str | None
    messages: tuple[str, ...]
    pusher: str | None


@dataclass(frozen=True)
class CheckChange:
    name: str
    conclusion: str | None  # None while running
    head_sha: str | None
    branches: tuple[str, ...]
    pr_numbers: tuple[int, ...]
    completed_at: datetime | None


@dataclass(frozen=True)
class IssueChange:
    action: str
    number: int
    url: str
    title: str
    body: str


@dataclass(frozen=True)
class Delivery:
    """What a delivery says, read from its JSON: the event, its action, the repository, and the
    typed change for the events Crewboard follows (None for the others)."""

    event: str
    action: str | None
    repo_url: str | None
    repo_name: str | None
    sender: str | None
    zen: str | None = None
    pull: PullChange | None = None
    push: PushChange | None = None
    check: CheckChange | None = None
    issue: IssueChange | None = None
    skipped: str | None = None  # why a followed event changes nothing (a tag push)
    extra: dict[str, Any] = field(default_factory=dict)


HANDLED = "ping, pull_request, push, check_run, check_suite and issues"


def read_delivery(event: str, data: dict[str, Any]) -> Delivery:
    """The delivery's change, by its `X-GitHub-Event`."""
    action = data.get("action") if isinstance(data.get("action"), str) else None
    base: dict[str, Any] = {
        "event": event,
        "action": action,
        "repo_url": _text(data, "repository", "html_url"),
        "repo_name": _text(data, "repository", "full_name"),
        "sender": _text(data, "sender", "login"),
    }
    if event == "ping":
        return Delivery(**base, zen=_text(data, "zen"))
    if event == "pull_request" and isinstance(data.get("pull_request"), dict):
        return Delivery(**base, pull=_pull(action or "", data["pull_request"]))
    if event == "push":
        return _push(base, data)
    if event in ("check_run", "check_suite") and isinstance(data.get(event), dict):
        return Delivery(**base, check=_check(event, data[event]))
    if event == "issues" and isinstance(data.get("issue"), dict):
        issue = data["issue"]
        number = issue.get("number")
        return Delivery(
            **base,
            issue=IssueChange(
                action or "",
                number if isinstance(number, int) else 0,
                _text(issue, "html_url") or "",
                _text(issue, "title") or "",
                _text(issue, "body") or "",
            ),
        )
    return Delivery(**base)


def _pull(action: str, pr: dict[str, Any]) -> PullChange:
    merged = pr.get("merged") is True
    if merged:
        state = "merged"
    elif pr.get("state") == "closed":
        state = "closed"
    else:
        state = "draft" if pr.get("draft") is True else "open"
    number = pr.get("number")
    commits = pr.get("commits")
    return PullChange(
        action=action,
        number=number if isinstance(number, int) else 0,
        url=_text(pr, "html_url") or "",
        title=_text(pr, "title") or "",
        body=_text(pr, "body") or "",
        head=_text(pr, "head", "ref") or "",
        base=_text(pr, "base", "ref") or "",
        head_sha=_text(pr, "head", "sha"),
        state=state,
        merged_by=_text(pr, "merged_by", "login"),
        commits=commits if isinstance(commits, int) else None,
        updated_at=parse_moment(pr.get("updated_at")),
    )


def _push(base: dict[str, Any], data: dict[str, Any]) -> Delivery:
    ref = _text(data, "ref") or ""
    if not ref.startswith("refs/heads/"):
        return Delivery(**base, skipped=f"{ref or 'this ref'} is not a branch (a tag push)")
    if data.get("deleted") is True:
        return Delivery(**base, skipped=f"branch {ref.removeprefix('refs/heads/')} was deleted")
    raw = data.get("commits")
    commits: list[Any] = raw if isinstance(raw, list) else []
    messages = tuple(
        c["message"] for c in commits if isinstance(c, dict) and isinstance(c.get("message"), str)
    )
    return Delivery(
        **base,
        push=PushChange(
            ref.removeprefix("refs/heads/"),
            _text(data, "after") or _text(data, "head_commit", "id"),
            messages,
            _text(data, "pusher", "name") or base["sender"],
        ),
    )


def _check(event: str, run: dict[str, Any]) -> CheckChange:
    suite = run.get("check_suite") if event == "check_run" else run
    branch = _text(suite, "head_branch")
    listed = run.get("pull_requests")
    prs: list[Any] = listed if isinstance(listed, list) else []
    heads = tuple(h for p in prs if (h := _text(p, "head", "ref")))
    numbers = tuple(
        p["number"] for p in prs if isinstance(p, dict) and isinstance(p.get("number"), int)
    )
    name = _text(run, "name") or (_text(run, "app", "name") or "checks")
    return CheckChange(
        name=name,
        conclusion=_text(run, "conclusion") if run.get("status") == "completed" else None,
        head_sha=_text(run, "head_sha"),
        branches=tuple(dict.fromkeys((*((branch,) if branch else ()), *heads))),
        pr_numbers=numbers,
        completed_at=parse_moment(run.get("completed_at") or run.get("updated_at")),
    )


def report_tests(conclusion: str | None) -> str:
    """A check's conclusion as a status report's tests (passed, failed, running, none)."""
    if conclusion is None:
        return "running"
    if conclusion == "success":
        return "passed"
    if conclusion in ("failure", "timed_out", "cancelled", "action_required", "startup_failure"):
        return "failed"
    return "none"  # neutral, skipped, stale: nothing to say about the tests


@dataclass(frozen=True)
class GithubSettings:
    project_id: str
    secret: str
    on_merge: OnMerge
    sync_issues: bool
    configured_by: str
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class DeliverySeen:
    delivery_id: str
    project_id: str
    event: str
    action: str | None
    outcome: str
    received_at: datetime


@dataclass(frozen=True)
class PullState:
    """A task link's pull request as GitHub last told it; `checks` maps a check's name to its
    newest conclusion."""

    link_id: str
    project_id: str
    pr_number: int | None
    pr_state: str | None
    head_sha: str | None
    checks: dict[str, str]
    github_updated_at: datetime | None
