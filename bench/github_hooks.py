"""The webhooks workload's GitHub part: signed `pull_request` deliveries POSTed to a served
node, timed from the client (bench/webhooks.py runs it).

The payloads are GitHub's own examples (tests/fixtures/github), pointed at
https://github.com/octo/demo: `opened` and `synchronize` in turn, 20 pull requests whose head
branches name DEMO-1 … DEMO-5, each delivery with a new `X-GitHub-Delivery` and a newer
`updated_at` (a stale one would be ignored, and ignoring is cheaper than handling).
"""

from __future__ import annotations

import copy
import json
import re
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx2

from crewboard.domain.github import sign
from crewboard.services.board import repos
from crewboard.services.github import settings as github
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "github"
REPO_URL = "https://github.com/octo/demo"
PULLS = 20  # pull requests the deliveries cycle over
TASKS = 5  # DEMO-1 … DEMO-5, named by the head branches


def set_up(db: Database, token: str, project: str) -> str:
    """The repository and GitHub on `project`, as its owner (configure_github takes a person,
    not a token); the webhook secret."""
    actor = tokens.authenticate_token(db, token)
    user = db.read(lambda uow: uow.users.get(actor.user_id))
    if user is None:
        raise RuntimeError("the bench token's user is gone")
    person = person_actor(user)
    repos.add_repo(db, person, project, "demo", REPO_URL + ".git")
    made = github.configure_github(db, person, project)
    if made.secret is None:
        raise RuntimeError("configure_github made no secret")
    return made.secret


def payloads(count: int) -> list[dict[str, Any]]:
    """`count` pull_request payloads on octo/demo, each newer than the one before."""
    kinds = [json.loads((FIXTURES / f"pull_request.{a}.json").read_text()) for a in
             ("opened", "synchronize")]  # fmt: skip
    start = datetime(2026, 12, 1, tzinfo=UTC)
    made = []
    for n in range(count):
        data = copy.deepcopy(kinds[n % 2])
        number = 1 + n % PULLS
        data["number"] = number
        data["repository"] |= {"html_url": REPO_URL, "full_name": "octo/demo", "name": "demo",
                               "owner": {"login": "octo"}}  # fmt: skip
        pull = data["pull_request"]
        stamp = (start + timedelta(seconds=n)).strftime("%Y-%m-%dT%H:%M:%SZ")
        pull |= {"number": number, "html_url": f"{REPO_URL}/pull/{number}", "updated_at": stamp,
                 "title": f"Bench change {number}"}  # fmt: skip
        pull["head"]["ref"] = f"DEMO-{1 + number % TASKS}-bench-{number}"
        made.append(data)
    return made


def deliver_all(base_url: str, project: str, secret: str, count: int) -> dict[str, Any]:
    """POST `count` signed deliveries one at a time; the answer times and outcomes."""
    seconds: list[float] = []
    outcomes: dict[str, int] = {}
    with httpx2.Client(base_url=base_url, timeout=30) as client:
        for data in payloads(count):
            body = json.dumps(data).encode()
            headers = {"X-GitHub-Event": "pull_request", "X-GitHub-Delivery": str(uuid.uuid4()),
                       "X-Hub-Signature-256": sign(secret, body),
                       "Content-Type": "application/json"}  # fmt: skip
            started = time.perf_counter()
            answer = client.post(f"/api/v1/projects/{project}/github", content=body,
                                 headers=headers)  # fmt: skip
            seconds.append(time.perf_counter() - started)
            got = answer.json() if answer.status_code == 200 else {}
            said = str(got.get("outcome") or got.get("ignored") or answer.status_code)
            outcome = re.sub(r"\d+", "N", said)  # one line per kind, not per pull request
            outcomes[outcome] = outcomes.get(outcome, 0) + 1
    return {"seconds": seconds, "outcomes": outcomes}
