"""The webhooks' pure rules: event patterns (and a place for every event type the code
records), the address policy, URLs, signatures and the back-off."""

from __future__ import annotations

import ast
import json
from datetime import timedelta
from pathlib import Path

import pytest

from crewboard.domain.webhooks import (
    DELIVERABLE,
    EXCLUDED,
    address_problem,
    backoff,
    check_patterns,
    check_url,
    family,
    matches,
    parse_networks,
    sign,
    verify_signature,
)
from crewboard.errors import ErrorCode
from crewboard.services.webhooks.sending import body_of
from tests.support.errors import refused

SRC = Path(__file__).parents[2] / "src" / "crewboard"
RECORDERS = {"record_event", "record_project_event", "record_task_event", "record_claim_event"}


def recorded_types() -> set[str]:
    """Every event type the code records by a literal name."""
    found: set[str] = set()
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name not in RECORDERS:
                continue
            for arg in node.args[:3]:
                if (
                    isinstance(arg, ast.Constant)
                    and isinstance(arg.value, str)
                    and "." in arg.value
                ):
                    found.add(arg.value)
    return found


def test_every_recorded_event_type_is_delivered_or_excluded_on_purpose() -> None:
    types = recorded_types()
    assert "task.created" in types  # the walk finds them
    unplaced = sorted(t for t in types if family(t) not in DELIVERABLE | EXCLUDED)
    assert unplaced == [], "place each in DELIVERABLE or EXCLUDED in domain/webhooks.py"
    assert not DELIVERABLE & EXCLUDED


def test_patterns_match_all_a_family_or_one_type() -> None:
    assert matches(["*"], "task.updated")
    assert matches(["task.*"], "task.updated")
    assert not matches(["task.*"], "draft.submitted")
    assert matches(["draft.submitted"], "draft.submitted")
    assert not matches(["*"], "notification.read")
    assert not matches(["*"], "token.revoked")
    assert check_patterns(["task.*", "task.*", "*"]) == ("task.*", "*")


@pytest.mark.parametrize("pattern", ["notification.*", "token.created", "task", "nope.*", "x"])
def test_a_pattern_outside_the_delivered_families_is_refused_naming_them(pattern: str) -> None:
    error = refused(ErrorCode.VALIDATION, check_patterns, [pattern])
    assert error.details["field"] == "events"
    assert "task.*" in error.details["accepted"]


@pytest.mark.parametrize(
    "address",
    [
        "10.1.2.3", "192.168.0.1", "172.16.0.1", "127.0.0.1", "169.254.169.254", "169.254.1.1",
        "::1", "fd00::1", "fe80::1", "fd00:ec2::254", "100.100.100.200", "224.0.0.1", "0.0.0.0",  # noqa: S104 - a refused address, never bound
        "::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254", "2002:7f00:1::1",
        "2002:a9fe:a9fe::1",
    ],
)  # fmt: skip
def test_private_loopback_link_local_and_metadata_addresses_are_refused(address: str) -> None:
    assert address_problem(address) is not None


@pytest.mark.parametrize("address", ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"])
def test_public_addresses_pass(address: str) -> None:
    assert address_problem(address) is None


def test_an_allowed_network_lets_its_addresses_through_only() -> None:
    allowed = parse_networks("127.0.0.1/32, 10.0.0.0/8")
    assert address_problem("127.0.0.1", allowed) is None
    assert address_problem("10.9.9.9", allowed) is None
    assert address_problem("127.0.0.2", allowed) is not None
    assert address_problem("192.168.1.1", allowed) is not None
    with pytest.raises(ValueError, match="does not appear"):
        parse_networks("not-a-network")


@pytest.mark.parametrize(
    "url",
    ["ftp://example.com/", "https://", "https://user:pw@example.com/", "example.com/hook",
     "https://example.com/" + "a" * 2001],
)  # fmt: skip
def test_a_url_must_be_http_with_a_host_and_no_credentials(url: str) -> None:
    error = refused(ErrorCode.VALIDATION, check_url, url)
    assert error.details["field"] == "url"


def test_check_url_gives_host_and_port() -> None:
    assert check_url("https://hooks.example.com/x") == ("hooks.example.com", 443)
    assert check_url("http://[::1]:8080/x") == ("::1", 8080)


def test_a_signature_verifies_within_the_window_and_only_with_its_secret() -> None:
    body = b'{"a":1}'
    header = sign("whsec_one", 1_000_000, body)
    assert header.startswith("t=1000000,v1=")
    assert verify_signature("whsec_one", header, body, 1_000_100)
    assert not verify_signature("whsec_two", header, body, 1_000_100)
    assert not verify_signature("whsec_one", header, b'{"a":2}', 1_000_100)
    assert not verify_signature("whsec_one", header, body, 1_000_301)
    assert not verify_signature("whsec_one", header, body, 999_699)
    assert not verify_signature("whsec_one", "garbage", body, 1_000_000)


def test_backoff_grows_then_stays_hourly() -> None:
    waits = [backoff(n) for n in range(1, 10)]
    assert timedelta(seconds=10) <= waits[0] <= timedelta(seconds=11)
    assert timedelta(minutes=30) <= waits[5] <= timedelta(minutes=33)
    assert all(timedelta(hours=1) <= w <= timedelta(hours=1.1) for w in waits[6:])


def test_a_body_over_the_bound_goes_without_its_payload_but_with_its_ids() -> None:
    event = {"id": 7, "type": "task.updated", "projectId": "prj_1", "taskId": "tsk_1",
             "payload": {"text": "x" * 10_000}}  # fmt: skip
    small = json.loads(body_of("whk_1", "whd_1", event, 262_144))
    assert small["event"]["payload"] == event["payload"]
    cut = json.loads(body_of("whk_1", "whd_1", event, 4096))
    assert cut["event"]["payload"] == {"truncated": True}
    assert (cut["webhookId"], cut["deliveryId"], cut["event"]["id"]) == ("whk_1", "whd_1", 7)
    assert cut["event"]["taskId"] == "tsk_1"
