"""Take the README's and the docs' pictures of the inbox and the board: docs/images/inbox.png and
docs/images/board.png, 1280×800, from a real server on a small demo project.

It sets up a fresh data folder in a temporary directory (nothing of yours is touched), fills a
project through the services (people, two AI seats, tasks in several columns, two hand-ins
waiting for review), starts `crewboard serve` on a free port, signs in with Debian's Chromium
through Playwright and saves the two pages. Run it after a visible change to either page:

    .venv/bin/python scripts/screenshots.py [--out docs/images]
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
WIDTH, HEIGHT = 1280, 800
KEY = "SHOP"

# (title, status, assignee: a seat's name, a person's email or None, priority, tags, due in days)
TASKS: list[tuple[str, str, str | None, str, list[str], int | None]] = [
    ("Set up the payment sandbox", "done", "Builder", "high", ["checkout"], None),
    ("Add VAT to the order summary", "ready_for_ai", "Builder", "high", ["checkout"], 3),
    ("Resize product photos on upload", "in_progress", "Designer", "medium", ["catalogue"], 2),
    ("Ship to Norway and Switzerland", "blocked", "mira@example.com", "medium", ["shipping"], 6),
    ("Gift cards", "backlog", None, "low", ["checkout"], None),
    ("Wishlist you can share by link", "backlog", None, "low", ["catalogue"], None),
    ("Decide the returns window", "ready_for_ai", "mira@example.com", "medium", ["policy"], -1),
    ("Search prints by artist", "in_progress", "Builder", "medium", ["catalogue"], 4),
    ("Newsletter sign-up in the footer", "done", "Designer", "low", ["marketing"], None),
    ("Order confirmation email", "backlog", None, "medium", ["checkout"], None),
]
# Tasks an agent finishes and hands in: they wait in the inbox, their tasks in review.
HAND_INS: list[tuple[str, str, str]] = [
    (
        "Fix the rounding of the cart total",
        "Cart total rounds per line, not per order",
        "The total now sums exact amounts and rounds once, at the end.\n\n"
        "- `cart/total.py`: `Decimal` throughout, one `quantize` on the sum\n"
        "- three new tests with prices that used to drift by a cent",
    ),
    (
        "Write the returns page",
        "Returns page in plain words, 30 days",
        "A first text of the returns page: how to send a print back, within 30 days, "
        "and when the money arrives.",
    ),
]


def seed(data_dir: Path) -> tuple[str, str]:
    """A fresh instance in `data_dir` with the demo project; the owner's email and password."""
    from crewboard.config import Settings  # noqa: PLC0415 - after main() puts this checkout first
    from crewboard.contract.projects import present  # noqa: PLC0415 - likewise
    from crewboard.contract.review.present import hand_in_view  # noqa: PLC0415 - likewise
    from crewboard.domain.identity.passwords import hash_password  # noqa: PLC0415 - likewise
    from crewboard.services.board import tasks  # noqa: PLC0415 - likewise
    from crewboard.services.identity import tokens  # noqa: PLC0415 - likewise
    from crewboard.services.identity.users import do_create_user, person_actor  # noqa: PLC0415 - likewise
    from crewboard.services.projects.bootstrap import initialise  # noqa: PLC0415 - likewise
    from crewboard.services.review import drafts  # noqa: PLC0415 - likewise
    from crewboard.storage import migrate  # noqa: PLC0415 - likewise
    from crewboard.storage.database import Database  # noqa: PLC0415 - likewise

    settings = Settings(data_dir=data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    db = Database(settings.resolved_database_url)
    try:
        migrate.upgrade(db)
        first = initialise(db, owner_email="owner@example.com")
        if first is None:
            raise SystemExit(f"{data_dir} already holds an instance; the pictures need a new one")
        owner = person_actor(first.owner)
        present.create_project(
            db, owner, workspace_id=None, key=KEY, name="Web shop",
            goal="Sell art prints online, in five countries by spring.",
        )  # fmt: skip
        mira = db.write(
            lambda uow: do_create_user(
                uow, email="mira@example.com", display_name="Mira",
                password_hash=hash_password("not used here"),
            )
        )  # fmt: skip
        present.set_project_member(db, owner, project=KEY, email=mira.email, role="write")
        seats = {
            name: present.add_team_role(db, owner, project=KEY, name=name, role=role, kind="ai")
            for name, role in (("Builder", "Backend"), ("Designer", "Frontend"))
        }
        for number, (title, status, who, priority, tags, due) in enumerate(TASKS):
            assignee: dict[str, Any] = {}
            if who in seats:
                assignee = {"assignee_id": seats[who]["id"], "assignee_type": "ai"}
            elif who is not None:
                assignee = {"assignee_id": mira.id, "assignee_type": "human"}
            tasks.create_task(
                db, owner, project=KEY, workspace_id=None, idempotency_key=f"seed-{number}",
                title=title, status=status, priority=priority, tags=tags,
                due_date=None if due is None else datetime.now(UTC).date() + timedelta(days=due),
                **assignee,
            )  # fmt: skip
        secret = tokens.issue_token(
            db, owner, kind="agent", project=KEY, seat=seats["Builder"]["id"],
            scopes=["read", "tasks.manage", "drafts.create"], name="builder",
        ).secret  # fmt: skip
        agent = tokens.authenticate_token(db, secret)
        for number, (title, summary, content) in enumerate(HAND_INS):
            made = tasks.create_task(
                db, owner, project=KEY, workspace_id=None, idempotency_key=f"hand-{number}",
                title=title, status="in_progress", priority="high",
                assignee_id=seats["Builder"]["id"], assignee_type="ai",
            ).body["task"]  # fmt: skip
            drafts.submit_result(
                db, agent, project=KEY, workspace_id=None, task=made["id"],
                idempotency_key=f"draft-{number}", expected_revision=made["revision"],
                context_receipt_id=None, title=title, summary=summary, content=content,
                references=[{"kind": "branch", "value": f"builder/{made['key'].lower()}"}],
                answer=hand_in_view,
            )  # fmt: skip
        return first.owner.email, first.password
    finally:
        db.dispose()


def shoot(url: str, email: str, password: str, out: Path) -> list[Path]:
    """Sign in and save the inbox and the board of the demo project."""
    from playwright.sync_api import sync_playwright  # noqa: PLC0415 - only when shooting
    from tests.support.browser import CHROMIUM_ARGS, chromium_path  # noqa: PLC0415 - likewise

    saved = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        context = browser.new_context(
            base_url=url, viewport={"width": WIDTH, "height": HEIGHT}, color_scheme="light"
        )
        page = context.new_page()
        page.goto("/login")
        page.fill("#email", email)
        page.fill("#password", password)
        page.click("button[type=submit]")
        page.wait_for_url(re.compile(r".*/p/[A-Z0-9]+/"))
        for name in ("inbox", "board"):
            page.goto(f"/p/{KEY}/{name}")
            page.wait_for_load_state("networkidle")
            path = out / f"{name}.png"
            page.screenshot(path=str(path))
            saved.append(path)
        browser.close()
    return saved


def main(argv: list[str] | None = None) -> int:
    for folder in (REPO, REPO / "src"):  # this checkout's code and its test helpers
        if str(folder) not in sys.path:
            sys.path.insert(0, str(folder))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "images")
    options = parser.parse_args(argv)
    from tests.support.cli import crewboard_env  # noqa: PLC0415 - after the path is set
    from tests.support.serve import start_serve, stop_serve, wait_healthy  # noqa: PLC0415 - likewise
    from tests.support.server import free_port  # noqa: PLC0415 - likewise

    options.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="crewboard-shots-") as temporary:
        folder = Path(temporary)
        data_dir = folder / "data"
        email, password = seed(data_dir)
        port = free_port()
        log = folder / "serve.log"
        process = start_serve(crewboard_env(data_dir, port=str(port)), log)
        try:
            url = f"http://127.0.0.1:{port}"
            wait_healthy(url, process, log)
            for path in shoot(url, email, password, options.out):
                print(f"wrote {path.relative_to(REPO)} ({path.stat().st_size // 1024} KB)")
        finally:
            stop_serve(process)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
