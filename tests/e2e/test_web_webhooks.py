"""The webhook pages over real HTTP: admins keep them, a writer is told who does, the secret
is shown once, a bad URL is refused naming the field, and a ping and a redelivery reach a
receiver on loopback (the operator allowed it) through the server's own loop."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import httpx2
import pytest

from crewboard.config import Settings
from crewboard.domain.identity.access import Role
from crewboard.domain.identity.records import User
from crewboard.domain.webhooks import DeliveryKind
from crewboard.services.identity.users import person_actor
from crewboard.services.webhooks import deliveries, subscriptions
from crewboard.storage.database import Database
from tests.support.factories import grant, make_project, make_user
from tests.support.server import free_port, running_server
from tests.support.web import post_form, sign_in
from tests.support.webhook_receiver import Receiver

LIST = "/p/CRW/settings/webhooks"
SECRET = re.compile(r'<pre class="config secret" id="webhook-secret">(whsec_[^<]+)</pre>')
FLASH = re.compile(r'<div class="flash (error|notice)" role="(?:alert|status)">([^<]*)</div>')
BOUND = 20.0  # seconds a delivery may take through the server's loop on a loaded machine


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    running = Receiver().start()
    yield running
    running.stop()


@pytest.fixture
def url(db: Database, tmp_path: Path) -> Iterator[str]:
    """The app over HTTP, letting webhooks reach loopback (where the test's receiver is)."""
    settings = Settings(data_dir=tmp_path, port=free_port(), webhook_allow_networks="127.0.0.1/32")
    with running_server(settings, db) as base:
        yield base


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    return user


@pytest.fixture
def client(url: str, owner: User) -> Iterator[httpx2.Client]:
    with closing(sign_in(url, owner.email)) as signed_in:
        yield signed_in


def flash(client: httpx2.Client, answer: httpx2.Response) -> tuple[str, str]:
    """The kind and text of the flash on the page a 303 leads to."""
    assert answer.status_code == 303, answer.text
    found = FLASH.search(client.get(answer.headers["location"]).text)
    assert found is not None
    return found.group(1), html.unescape(found.group(2))


def create(client: httpx2.Client, hook_url: str, **fields: object) -> httpx2.Response:
    data: dict[str, object] = {"next": LIST, "url": hook_url, "events": ["task.*"], **fields}
    return post_form(client, LIST, data)


def test_an_admin_adds_a_webhook_and_sees_its_secret_once(
    client: httpx2.Client, db: Database, owner: User, receiver: Receiver
) -> None:
    answer = create(
        client, receiver.url, events=["task.*", "draft.*"], exact="memory.created, state.updated",
        description="CI",
    )  # fmt: skip
    assert answer.status_code == 200, answer.text
    secret = SECRET.search(answer.text)
    assert secret is not None
    assert "Crewboard-Signature" in answer.text  # how to check it, beside it
    made = subscriptions.list_webhooks(db, person_actor(owner), "CRW")
    assert [w.events for w in made] == [("task.*", "draft.*", "memory.created", "state.updated")]
    assert made[0].secret == secret.group(1)
    listed = client.get(LIST).text
    assert receiver.url in listed
    assert "active" in listed
    assert "CI" in listed
    detail = client.get(f"{LIST}/{made[0].id}").text
    assert secret.group(1) not in listed
    assert secret.group(1) not in detail
    rotated = post_form(client, f"{LIST}/{made[0].id}/rotate", {"next": LIST})
    again = SECRET.search(rotated.text)
    assert again is not None
    assert again.group(1) != secret.group(1)


def test_a_writer_is_told_only_admins_keep_webhooks(url: str, db: Database, owner: User) -> None:
    writer = make_user(db, "writer@example.com")
    grant(db, owner, "CRW", writer, Role.WRITE)
    made = subscriptions.create_webhook(
        db, person_actor(owner), "CRW", url="https://93.184.216.34/hook", events=["*"]
    )
    with closing(sign_in(url, writer.email)) as as_writer:
        page = as_writer.get(LIST)
        assert page.status_code == 200
        assert "Only the project" in page.text
        assert "93.184.216.34" not in page.text
        assert 'name="url"' not in page.text
        assert as_writer.get(f"{LIST}/{made.webhook.id}").status_code == 403
        refused = post_form(as_writer, LIST, {"next": LIST, "url": "https://93.184.216.34/x",
                                              "events": ["*"]})  # fmt: skip
        kind, _text = flash(as_writer, refused)
        assert kind == "error"
        post_form(as_writer, f"{LIST}/{made.webhook.id}/delete", {"next": LIST, "confirm": "1"})
    assert len(subscriptions.list_webhooks(db, person_actor(owner), "CRW")) == 1


@pytest.mark.parametrize(
    "case",
    [
        ("ftp://example.com/hook", ["*"], "URL"),
        ("http://10.0.0.5/hook", ["*"], "URL"),
        ("https://93.184.216.34/hook", [], "Events"),
    ],
)
def test_a_bad_url_or_no_events_is_refused_naming_the_field(
    client: httpx2.Client, db: Database, owner: User, case: tuple[str, list[str], str]
) -> None:
    hook_url, events, says = case
    kind, text = flash(client, create(client, hook_url, events=events))
    assert kind == "error"
    assert text.startswith(f"{says}:"), text
    assert subscriptions.list_webhooks(db, person_actor(owner), "CRW") == []


def test_a_ping_and_a_redelivery_reach_the_receiver_and_the_log(
    client: httpx2.Client, db: Database, owner: User, receiver: Receiver
) -> None:
    made = subscriptions.create_webhook(
        db, person_actor(owner), "CRW", url=receiver.url, events=["*"]
    )
    here = f"{LIST}/{made.webhook.id}"
    kind, _text = flash(client, post_form(client, f"{here}/ping", {"next": here}))
    assert kind == "notice"
    assert receiver.wait_for(1, BOUND)
    log = deliveries.list_webhook_deliveries(db, person_actor(owner), made.webhook.id)
    assert [d.kind for d in log.deliveries] == [DeliveryKind.PING]
    page = client.get(here).text
    assert "webhook.ping" in page
    assert f"{here}/deliveries/{log.deliveries[0].id}/redeliver" in page
    answer = post_form(
        client, f"{here}/deliveries/{log.deliveries[0].id}/redeliver", {"next": here}
    )
    assert flash(client, answer)[0] == "notice"
    assert receiver.wait_for(2, BOUND)
    log = deliveries.list_webhook_deliveries(db, person_actor(owner), made.webhook.id)
    assert [d.kind for d in log.deliveries] == [DeliveryKind.REDELIVERY, DeliveryKind.PING]
    filtered = client.get(here, params={"state": "failed"}).text
    assert "No deliveries in state failed." in filtered


def test_an_admin_edits_pauses_resumes_and_deletes_a_webhook(
    client: httpx2.Client, db: Database, owner: User
) -> None:
    made = subscriptions.create_webhook(
        db, person_actor(owner), "CRW", url="https://93.184.216.34/hook", events=["*"]
    )
    here = f"{LIST}/{made.webhook.id}"
    saved = post_form(client, here, {"next": here, "url": "https://93.184.216.34/other",
                                     "events": ["task.*"], "description": "moved"})  # fmt: skip
    assert flash(client, saved) == ("notice", "Webhook saved.")
    hook = subscriptions.get_webhook(db, person_actor(owner), made.webhook.id)
    assert (hook.url, hook.events, hook.description) == (
        "https://93.184.216.34/other", ("task.*",), "moved",
    )  # fmt: skip
    post_form(client, f"{here}/state", {"next": here, "active": "0"})
    page = client.get(here).text
    assert "paused by an admin" in page
    assert "Resume" in page
    post_form(client, f"{here}/state", {"next": here, "active": "1"})
    assert "Resume" not in client.get(here).text
    unticked = post_form(client, f"{here}/delete", {"next": here})
    assert flash(client, unticked)[0] == "error"
    gone = post_form(client, f"{here}/delete", {"next": here, "confirm": "1"})
    assert gone.headers["location"] == LIST
    assert subscriptions.list_webhooks(db, person_actor(owner), "CRW") == []
