"""GitHub webhook deliveries over real HTTP, on both databases: GitHub's own payload examples
(tests/fixtures/github), signed as GitHub signs them. A bad or missing signature is refused, a
replayed delivery ignored, a merged pull request naming DEMO-12 moves it and records the link,
an unknown repository is ignored with a clear answer; pushes and check runs make status
reports, issues become tasks only when asked, a stale delivery changes nothing."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from pathlib import Path
from typing import Any

import httpx2
import pytest

from crewboard.config import Settings
from crewboard.domain.github import sign
from crewboard.domain.identity.access import Role
from crewboard.domain.identity.records import User
from crewboard.errors import PermissionDenied
from crewboard.services.board import repos, updates
from crewboard.services.board.tasks import create_task
from crewboard.services.github import settings as github
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support.factories import grant, make_project, make_user
from tests.support.server import free_port, running_server
from tests.support.web import post_form, sign_in

FIXTURES = Path(__file__).parent.parent / "fixtures" / "github"
REPO_URL = "https://github.com/Codertocat/Hello-World"
BRANCH = "DEMO-12-readme"


def payload(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text())
    return data


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "alice@example.com")
    make_project(db, user, "DEMO")
    actor = person_actor(user)
    for n in range(12):  # DEMO-12, the one the deliveries name, is the person's
        create_task(db, actor, project="DEMO", workspace_id=None, idempotency_key=None,
                    title=f"Task {n + 1}", assignee_id=user.id if n == 11 else None)  # fmt: skip
    repos.add_repo(db, actor, "DEMO", "hello", REPO_URL + ".git")
    return user


@pytest.fixture
def secret(db: Database, owner: User) -> str:
    made = github.configure_github(db, person_actor(owner), "DEMO")
    assert made.secret is not None
    return made.secret


@pytest.fixture
def api(db: Database, tmp_path: Path) -> Iterator[httpx2.Client]:
    settings = Settings(data_dir=tmp_path, port=free_port())
    with running_server(settings, db) as base, httpx2.Client(base_url=f"{base}/api/v1") as client:
        yield client


def deliver(api: httpx2.Client, secret: str | None, event: str, data: dict[str, Any],
            delivery: str | None = None) -> httpx2.Response:  # fmt: skip
    body = json.dumps(data).encode()
    headers = {"X-GitHub-Event": event, "X-GitHub-Delivery": delivery or str(uuid.uuid4()),
               "Content-Type": "application/json"}  # fmt: skip
    if secret is not None:
        headers["X-Hub-Signature-256"] = sign(secret, body)
    return api.post("/projects/DEMO/github", content=body, headers=headers)


def merged_pull() -> dict[str, Any]:
    data = payload("pull_request.closed")
    data["pull_request"] |= {"merged": True, "merged_by": {"login": "octocat"}}
    data["pull_request"]["head"]["ref"] = BRANCH
    return data


def task(db: Database, owner: User, key: str) -> dict[str, Any]:
    listing = repos.list_task_repos(db, person_actor(owner), task=key)
    assert listing.task is not None
    assert listing.sections is not None
    return {"status": str(listing.task.status), "links": listing.sections.links,
            "reports": listing.sections.reports}  # fmt: skip


def status_of(db: Database, key: str) -> str:
    return str(db.read(lambda uow: uow.tasks.get_by_number(
        uow.projects.get_by_key("DEMO").id, int(key.split("-")[1]))).status)  # type: ignore[union-attr]  # fmt: skip


@pytest.mark.parametrize("signature", [None, "sha256=00", "wrong-secret"])
def test_delivery_without_the_right_signature_is_refused(
    api: httpx2.Client,
    secret: str,
    signature: str | None,
) -> None:
    body = json.dumps(merged_pull()).encode()
    headers = {"X-GitHub-Event": "pull_request", "X-GitHub-Delivery": "d-1"}
    if signature is not None:
        headers["X-Hub-Signature-256"] = (
            sign("other", body) if signature == "wrong-secret" else signature
        )
    answer = api.post("/projects/DEMO/github", content=body, headers=headers)
    assert answer.status_code == 401
    assert answer.json()["error"]["code"] == "UNAUTHENTICATED"


def test_unknown_project_and_project_without_github_answer_alike(
    api: httpx2.Client,
    db: Database,
    owner: User,
) -> None:
    assert deliver(api, "x", "ping", payload("ping")).status_code == 404
    make_project(db, owner, "OTHER")
    answer = api.post("/projects/OTHER/github", content=b"{}", headers={"X-GitHub-Event": "ping"})
    assert answer.status_code == 404


def test_ping_answers_with_the_zen_and_the_project(api: httpx2.Client, secret: str) -> None:
    answer = deliver(api, secret, "ping", payload("ping"))
    assert answer.status_code == 200, answer.text
    assert answer.json()["project"] == "DEMO"
    assert answer.json()["zen"]


def test_merged_pull_request_naming_demo_12_moves_it_to_review_and_links_it(
    api: httpx2.Client,
    db: Database,
    owner: User,
    secret: str,
) -> None:
    answer = deliver(api, secret, "pull_request", merged_pull(), "merge-1")
    assert answer.status_code == 200, answer.text
    assert answer.json()["tasks"] == ["DEMO-12"]
    shown = task(db, owner, "DEMO-12")
    assert shown["status"] == "review"
    assert shown["links"][0].pr_url == "https://github.com/Codertocat/Hello-World/pull/2"
    assert shown["links"][0].branch == BRANCH
    assert "merged into master by octocat" in shown["reports"][0].summary
    replay = deliver(api, secret, "pull_request", merged_pull(), "merge-1")
    assert replay.json() == {"ignored": "delivery merge-1 was already handled", "project": "DEMO"}
    assert len(task(db, owner, "DEMO-12")["reports"]) == 1


def test_one_delivery_sent_twice_at_once_is_handled_once(
    api: httpx2.Client, db: Database, owner: User, secret: str
) -> None:
    """GitHub may redeliver while the first delivery is still being handled: both race for
    the delivery's row, the loser's transaction is run again and finds it handled."""
    gate = threading.Barrier(4)

    def send(_: int) -> dict[str, Any]:
        gate.wait(timeout=10)
        answer = deliver(api, secret, "pull_request", merged_pull(), "merge-twice")
        assert answer.status_code == 200, answer.text
        return dict(answer.json())

    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(send, range(4)))
    assert sum("tasks" in a for a in answers) == 1, answers
    assert sum(a.get("ignored") == "delivery merge-twice was already handled" for a in answers) == 3
    shown = task(db, owner, "DEMO-12")
    assert shown["status"] == "review"
    assert len(shown["reports"]) == 1
    assert len(shown["links"]) == 1


def test_on_merge_done_moves_the_task_to_done(
    api: httpx2.Client,
    db: Database,
    owner: User,
    secret: str,
) -> None:
    github.configure_github(db, person_actor(owner), "DEMO", on_merge="done")
    assert deliver(api, secret, "pull_request", merged_pull()).status_code == 200
    assert task(db, owner, "DEMO-12")["status"] == "done"


def test_unknown_repository_is_ignored_naming_it_and_how_to_add_it(
    api: httpx2.Client,
    secret: str,
) -> None:
    data = merged_pull()
    data["repository"] |= {"full_name": "octo/x", "html_url": "https://github.com/octo/x"}
    ignored = deliver(api, secret, "pull_request", data).json()["ignored"]
    assert "octo/x" in ignored
    assert "add_repo" in ignored
    assert "https://github.com/octo/x" in ignored


def test_push_and_check_run_make_status_reports(
    api: httpx2.Client,
    db: Database,
    owner: User,
    secret: str,
) -> None:
    tag = deliver(api, secret, "push", payload("push")).json()
    assert "tag" in tag["ignored"]
    push = payload("push") | {"ref": f"refs/heads/{BRANCH}", "after": "a" * 40, "deleted": False,
                              "commits": [{"id": "a" * 40, "message": "Fix the README"}]}  # fmt: skip
    assert deliver(api, secret, "push", push).json()["tasks"] == ["DEMO-12"]
    check = payload("check_run.completed")
    check["check_run"]["check_suite"]["head_branch"] = BRANCH
    assert deliver(api, secret, "check_run", check).json()["tasks"] == ["DEMO-12"]
    reports = task(db, owner, "DEMO-12")["reports"]
    assert [r.tests for r in reports] == ["passed", None]
    assert "1 commit pushed by Codertocat" in reports[1].summary
    stale = payload("check_run.completed")
    stale["check_run"] |= {"completed_at": "2019-05-15T15:00:00Z", "conclusion": "failure"}
    stale["check_run"]["check_suite"]["head_branch"] = BRANCH
    assert "stale" in deliver(api, secret, "check_run", stale).json()["ignored"]
    assert len(task(db, owner, "DEMO-12")["reports"]) == 2


def test_issues_become_tasks_only_when_the_project_asks(
    api: httpx2.Client,
    db: Database,
    owner: User,
    secret: str,
) -> None:
    assert (
        "syncIssues" in deliver(api, secret, "issues", payload("issues.opened")).json()["ignored"]
    )
    github.configure_github(db, person_actor(owner), "DEMO", sync_issues=True)
    made = deliver(api, secret, "issues", payload("issues.opened")).json()
    assert made["tasks"] == ["DEMO-13"]
    closed = payload("issues.opened") | {"action": "closed"}
    assert deliver(api, secret, "issues", closed).json()["tasks"] == ["DEMO-13"]
    assert status_of(db, "DEMO-13") == "done"


def test_the_check_in_shows_what_github_did_to_the_task(
    api: httpx2.Client,
    db: Database,
    owner: User,
    secret: str,
) -> None:
    actor = person_actor(owner)  # DEMO-12 is theirs, and GitHub acts for them
    _, cursor = updates.get_updates(db, actor, project="DEMO", workspace_id=None)
    assert deliver(api, secret, "pull_request", merged_pull()).status_code == 200
    news, _ = updates.get_updates(db, actor, project="DEMO", workspace_id=None, cursor=cursor)
    rows = [u for u in news.updates if u.task_key == "DEMO-12"]
    assert rows, news
    assert {u.by for u in rows} == {"GitHub"}


def test_settings_are_for_admins_and_the_secret_is_shown_once(
    db: Database,
    owner: User,
    secret: str,
) -> None:
    again = github.get_github_settings(db, person_actor(owner), "DEMO")
    assert again.secret is None
    assert again.settings is not None
    assert again.settings.secret == secret
    writer = make_user(db, "bob@example.com")
    grant(db, owner, "DEMO", writer, Role.WRITE)
    for call in (
        lambda: github.get_github_settings(db, person_actor(writer), "DEMO"),
        lambda: github.configure_github(db, person_actor(writer), "DEMO", rotate_secret=True),
        lambda: github.disconnect_github(db, person_actor(writer), "DEMO"),
    ):
        with pytest.raises(PermissionDenied):
            call()
    rotated = github.configure_github(db, person_actor(owner), "DEMO", rotate_secret=True)
    assert rotated.secret not in (None, secret)


def test_the_settings_page_sets_github_up_and_shows_the_secret_once(
    db: Database,
    owner: User,
    tmp_path: Path,
) -> None:
    settings = Settings(data_dir=tmp_path, port=free_port())
    with running_server(settings, db) as base, closing(sign_in(base, owner.email)) as web:
        page = web.get("/p/DEMO/settings/github")
        assert page.status_code == 200
        assert "Set up GitHub" in page.text
        made = post_form(web, "/p/DEMO/settings/github",
                         {"next": "/p/DEMO/settings/github", "settings": "1", "on_merge": "done", "do": "save"})  # fmt: skip
        assert made.status_code == 200, made.text
        secret = github.get_github_settings(db, person_actor(owner), "DEMO").settings.secret  # type: ignore[union-attr]
        assert secret in made.text
        shown = web.get("/p/DEMO/settings/github")
        assert "/api/v1/projects/DEMO/github" in shown.text
        assert secret not in shown.text


def test_an_older_pull_request_delivery_is_ignored_as_stale(
    api: httpx2.Client,
    db: Database,
    owner: User,
    secret: str,
) -> None:
    assert deliver(api, secret, "pull_request", merged_pull()).status_code == 200
    older = payload("pull_request.opened")
    older["pull_request"]["head"]["ref"] = BRANCH
    assert "stale" in deliver(api, secret, "pull_request", older).json()["ignored"]
    assert task(db, owner, "DEMO-12")["status"] == "review"


def test_unreadable_deliveries_are_refused_with_their_status(
    api: httpx2.Client,
    secret: str,
) -> None:
    body = b"payload=%7B%7D"  # the form content type GitHub also offers
    headers = {"X-GitHub-Event": "push", "X-Hub-Signature-256": sign(secret, body)}
    assert api.post("/projects/DEMO/github", content=body, headers=headers).status_code == 400
    no_event = {"X-Hub-Signature-256": sign(secret, b"{}")}
    assert api.post("/projects/DEMO/github", content=b"{}", headers=no_event).status_code == 400
    big = b" " * (5 * 1024 * 1024 + 1)
    answer = api.post("/projects/DEMO/github", content=big, headers={"X-GitHub-Event": "push"})
    assert answer.status_code == 413
    other = deliver(api, secret, "star", {"action": "created"}).json()["ignored"]
    assert "pull_request" in other
