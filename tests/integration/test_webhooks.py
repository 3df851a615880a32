"""Webhook subscriptions through the services, on both databases: admins only, the address
policy at create, update and send time, and what changing, rotating and deleting do."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from crewboard.domain.identity.access import Role
from crewboard.domain.identity.records import User
from crewboard.domain.webhooks import DeliveryState, WebhookState
from crewboard.errors import ErrorCode
from crewboard.services.identity.users import person_actor
from crewboard.services.webhooks import deliveries, subscriptions
from crewboard.services.webhooks.dispatcher import Dispatcher
from crewboard.services.webhooks.sending import configure, policy_from
from crewboard.storage.database import Database
from tests.support.errors import refused
from tests.support.factories import grant, make_project, make_task, make_user
from tests.support.webhook_receiver import Receiver

PUBLIC = "https://93.184.216.34/hook"  # an IP literal: nothing to resolve


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    return user


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    running = Receiver().start()
    yield running
    running.stop()


@pytest.mark.parametrize(
    "url",
    [
        "http://10.0.0.5/hook", "http://192.168.1.10/hook", "http://127.0.0.1:8080/hook",
        "http://169.254.169.254/latest/meta-data", "http://[::1]/hook", "http://[fd00::1]/hook",
        "http://localhost/hook", "http://[::ffff:127.0.0.1]/hook",
    ],
)  # fmt: skip
def test_create_refuses_private_loopback_link_local_and_metadata_urls(
    db: Database, owner: User, url: str
) -> None:
    error = refused(
        ErrorCode.VALIDATION, subscriptions.create_webhook, db, person_actor(owner), "CRW",
        url=url, events=["*"],
    )  # fmt: skip
    assert error.details["field"] == "url"
    assert subscriptions.list_webhooks(db, person_actor(owner), "CRW") == []


def test_an_allowed_network_lets_loopback_in(db: Database, owner: User) -> None:
    configure(db, policy_from("127.0.0.1/32", 10, 262_144, 24))
    made = subscriptions.create_webhook(
        db, person_actor(owner), "CRW", url="http://127.0.0.1:9/hook", events=["*"]
    )
    assert made.webhook.url == "http://127.0.0.1:9/hook"
    refused(
        ErrorCode.VALIDATION, subscriptions.create_webhook, db, person_actor(owner), "CRW",
        url="http://10.0.0.1/hook", events=["*"],
    )  # fmt: skip


@pytest.mark.anyio
async def test_send_time_check_refuses_when_the_allowed_list_no_longer_covers_it(
    db: Database, owner: User, receiver: Receiver
) -> None:
    configure(db, policy_from("127.0.0.1/32", 5, 262_144, 24))
    made = subscriptions.create_webhook(
        db, person_actor(owner), "CRW", url=receiver.url, events=["task.*"]
    )
    configure(db, policy_from("", 5, 262_144, 24))
    make_task(db, owner, "CRW", "Not sent")
    await Dispatcher(db).run_once()
    assert receiver.requests == []
    log = deliveries.list_webhook_deliveries(db, person_actor(owner), made.webhook.id)
    assert log.deliveries[0].state is DeliveryState.RETRYING
    assert "address refused" in (log.deliveries[0].error or "")


def test_only_the_projects_admins_manage_its_webhooks(db: Database, owner: User) -> None:
    writer = make_user(db, "writer@example.com")
    grant(db, owner, "CRW", writer, Role.WRITE)
    stranger = make_user(db, "stranger@example.com")
    made = subscriptions.create_webhook(db, person_actor(owner), "CRW", url=PUBLIC, events=["*"])
    refused(
        ErrorCode.PERMISSION_DENIED, subscriptions.create_webhook, db, person_actor(writer),
        "CRW", url=PUBLIC, events=["*"],
    )  # fmt: skip
    refused(
        ErrorCode.PERMISSION_DENIED, subscriptions.list_webhooks, db, person_actor(writer), "CRW"
    )
    refused(
        ErrorCode.PERMISSION_DENIED, subscriptions.get_webhook, db, person_actor(writer),
        made.webhook.id,
    )  # fmt: skip
    refused(
        ErrorCode.NOT_FOUND, subscriptions.get_webhook, db, person_actor(stranger), made.webhook.id
    )
    refused(
        ErrorCode.NOT_FOUND,
        subscriptions.delete_webhook,
        db,
        person_actor(stranger),
        made.webhook.id,
    )
    refused(ErrorCode.NOT_FOUND, subscriptions.get_webhook, db, person_actor(owner), "whk_nope")


def test_create_update_rotate_and_delete(db: Database, owner: User) -> None:
    actor = person_actor(owner)
    made = subscriptions.create_webhook(
        db, actor, "CRW", url=PUBLIC, events=["task.*"], description="CI"
    )
    assert made.secret.startswith("whsec_")
    assert made.webhook.state is WebhookState.ACTIVE
    changed = subscriptions.update_webhook(
        db, actor, made.webhook.id, events=["draft.*", "task.updated"], active=False
    )
    assert changed.events == ("draft.*", "task.updated")
    assert changed.state is WebhookState.PAUSED
    assert changed.description == "CI"
    refused(
        ErrorCode.VALIDATION, subscriptions.update_webhook, db, actor, made.webhook.id,
        events=["token.*"],
    )  # fmt: skip
    rotated = subscriptions.rotate_webhook_secret(db, actor, made.webhook.id)
    assert rotated.secret != made.secret
    stored = subscriptions.get_webhook(db, actor, made.webhook.id)
    assert stored.secret == rotated.secret
    subscriptions.delete_webhook(db, actor, made.webhook.id)
    assert subscriptions.list_webhooks(db, actor, "CRW") == []


def test_a_project_holds_a_bounded_number_of_webhooks(db: Database, owner: User) -> None:
    actor = person_actor(owner)
    for _ in range(20):
        subscriptions.create_webhook(db, actor, "CRW", url=PUBLIC, events=["*"])
    refused(
        ErrorCode.LIMIT_EXCEEDED, subscriptions.create_webhook, db, actor, "CRW", url=PUBLIC,
        events=["*"],
    )  # fmt: skip


def test_the_delivery_log_pages_newest_first_and_filters_by_state(
    db: Database, owner: User
) -> None:
    actor = person_actor(owner)
    made = subscriptions.create_webhook(db, actor, "CRW", url=PUBLIC, events=["*"])
    pings = [deliveries.ping_webhook(db, actor, made.webhook.id) for _ in range(3)]
    page = deliveries.list_webhook_deliveries(db, actor, made.webhook.id, limit=2)
    assert page.total == 3
    assert [d.id for d in page.deliveries] == [pings[2].id, pings[1].id]
    assert (
        deliveries.list_webhook_deliveries(db, actor, made.webhook.id, state="delivered").total == 0
    )
    refused(
        ErrorCode.VALIDATION, deliveries.list_webhook_deliveries, db, actor, made.webhook.id,
        state="lost",
    )  # fmt: skip
    again = deliveries.redeliver_webhook(db, actor, pings[0].id)
    assert (again.kind.value, again.event_type, again.event_id) == (
        "redelivery",
        "webhook.ping",
        None,
    )
    refused(ErrorCode.NOT_FOUND, deliveries.redeliver_webhook, db, actor, "whd_nope")
