"""Lease maths of task claims: the lease a caller may ask for, when a claim is live, whose it
is, and which fence a write may still send."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from crewboard.domain.board.claims import (
    LEASE_DEFAULT,
    LEASE_MAX,
    LEASE_MIN,
    Claim,
    ClaimEnd,
    Holder,
    check_lease_seconds,
    fence_holds,
    lease_until,
    renewed_until,
)
from crewboard.errors import ValidationFailed

NOW = datetime(2026, 12, 7, 9, 0, tzinfo=UTC)
AGENT = Holder(user_id="usr_a", token_id="tok_a", role_id="rol_dev")
OTHER = Holder(user_id="usr_a", token_id="tok_b")


def claim(**changes: object) -> Claim:
    base: dict[str, object] = {
        "task_id": "tsk_1", "project_id": "prj_1", "fence": 3, "holder": AGENT,
        "claimed_at": NOW, "expires_at": NOW + timedelta(seconds=60), "lease_seconds": 60,
    }  # fmt: skip
    return Claim(**{**base, **changes})  # type: ignore[arg-type]


def test_a_lease_left_out_is_the_default_and_the_bounds_are_accepted() -> None:
    assert check_lease_seconds(None) == LEASE_DEFAULT == 600
    assert check_lease_seconds(LEASE_MIN) == 30
    assert check_lease_seconds(LEASE_MAX) == 3600


@pytest.mark.parametrize("seconds", [0, LEASE_MIN - 1, LEASE_MAX + 1, -5])
def test_a_lease_outside_its_range_is_refused_naming_the_field_and_the_range(seconds: int) -> None:
    with pytest.raises(ValidationFailed) as caught:
        check_lease_seconds(seconds)
    assert caught.value.details == {"field": "leaseSeconds", "minimum": 30, "maximum": 3600}
    assert "leaseSeconds" in caught.value.message


def test_a_lease_runs_out_its_seconds_after_it_was_taken_or_renewed() -> None:
    assert lease_until(NOW, 30) == NOW + timedelta(seconds=30)
    later = NOW + timedelta(seconds=45)
    assert renewed_until(claim(), later) == later + timedelta(seconds=60)


def test_a_claim_is_live_until_the_moment_its_lease_runs_out() -> None:
    held = claim()
    assert held.live(NOW)
    assert held.live(NOW + timedelta(seconds=59, microseconds=999_999))
    assert not held.live(NOW + timedelta(seconds=60))


def test_a_released_claim_is_not_live_even_within_its_lease() -> None:
    assert not claim(released_at=NOW, end=ClaimEnd.RELEASED).live(NOW)


def test_a_claim_is_held_by_its_token_not_by_another_token_of_the_same_person() -> None:
    held = claim()
    assert held.held_by(Holder(user_id="usr_a", token_id="tok_a"), NOW)
    assert not held.held_by(OTHER, NOW)
    assert not claim(holder=Holder("usr_a")).held_by(AGENT, NOW)


def test_a_write_holds_only_with_the_live_claims_fence_from_its_holder() -> None:
    held = claim()
    assert fence_holds(held, 3, AGENT, NOW)
    assert not fence_holds(held, 2, AGENT, NOW)  # an older claim of the same task
    assert not fence_holds(held, 3, OTHER, NOW)
    assert not fence_holds(held, 3, AGENT, NOW + timedelta(seconds=60))  # lapsed
    assert not fence_holds(claim(released_at=NOW, end=ClaimEnd.BROKEN), 3, AGENT, NOW)
    assert not fence_holds(None, 1, AGENT, NOW)
