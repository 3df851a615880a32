"""Claims with leases: who holds a task for now, until when, and the fence that says which
claim a write comes from. Pure rules, no I/O.

A task has one claim row for its whole life. Each new claim on it takes the next fence number
(1, 2, ...), kept across releases, so a number names one claim for good: a holder that lost its
claim (its lease lapsed, a person broke it) and writes with its old fence is told so, and its
write changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from crewboard.domain.board.tasks import Priority
from crewboard.domain.identity.naming import name_of
from crewboard.errors import ValidationFailed

LEASE_DEFAULT = 600  # seconds a claim holds without renewal, unless the caller asks otherwise
LEASE_MIN = 30
LEASE_MAX = 3600
# The order claim_next_task takes tasks in: the most urgent first, then the oldest.
PRIORITY_RANK = {Priority.HIGH: 0, Priority.MEDIUM: 1, Priority.LOW: 2}


class ClaimEnd(StrEnum):
    """How a claim stopped being live, when it did."""

    RELEASED = "released"  # its holder let it go
    BROKEN = "broken"  # a person took it away
    LAPSED = "lapsed"  # its lease ran out without renewal


@dataclass(frozen=True)
class Holder:
    """Who holds a claim: a person, through one of their tokens or not, and the AI seat the
    token acts as, when it has one."""

    user_id: str
    token_id: str | None = None
    role_id: str | None = None

    def same_caller(self, other: Holder) -> bool:
        """Whether `other` is the same caller: the same token, or the same person without one."""
        return (self.user_id, self.token_id) == (other.user_id, other.token_id)


@dataclass(frozen=True)
class Claim:
    task_id: str
    project_id: str
    fence: int
    holder: Holder
    claimed_at: datetime
    expires_at: datetime
    lease_seconds: int  # each renewal moves expires_at this far past its own time
    released_at: datetime | None = None
    end: ClaimEnd | None = None

    def live(self, now: datetime) -> bool:
        """Not let go, broken or lapsed, and its lease still running at `now`."""
        return self.released_at is None and now < self.expires_at

    def held_by(self, holder: Holder, now: datetime) -> bool:
        return self.live(now) and self.holder.same_caller(holder)


@dataclass(frozen=True)
class ClaimedTask:
    """A claim with what a caller needs to name its task."""

    claim: Claim
    key: str
    title: str


def check_lease_seconds(value: int | None) -> int:
    """The lease a caller asked for, LEASE_DEFAULT when none.

    Raises:
        ValidationFailed: naming leaseSeconds and the accepted range.
    """
    if value is None:
        return LEASE_DEFAULT
    if not LEASE_MIN <= value <= LEASE_MAX:
        raise ValidationFailed(
            f"leaseSeconds: {value} is outside {LEASE_MIN}..{LEASE_MAX} seconds.",
            {"field": "leaseSeconds", "minimum": LEASE_MIN, "maximum": LEASE_MAX},
        )
    return value


def lease_until(now: datetime, seconds: int) -> datetime:
    """When a lease of `seconds` taken or renewed at `now` runs out."""
    return now + timedelta(seconds=seconds)


def renewed_until(claim: Claim, now: datetime) -> datetime:
    """When `claim` runs out once renewed at `now`: its own lease from now."""
    return lease_until(now, claim.lease_seconds)


def fence_holds(claim: Claim | None, fence: int, holder: Holder, now: datetime) -> bool:
    """Whether a write sent with `fence` by `holder` comes from the task's live claim."""
    return claim is not None and claim.fence == fence and claim.held_by(holder, now)


@dataclass(frozen=True)
class HeldClaim:
    """A live claim as the board shows it: the claim and the names of its holder (the person,
    the token it came through, the AI seat that token acts as), read with it."""

    claim: Claim
    person: str
    token_name: str | None = None
    seat_name: str | None = None
    token_kind: str | None = None  # personal | agent

    @property
    def name(self) -> str:
        """How the board names the holder: its seat, else its token, else its person."""
        return self.seat_name or self.token_name or self.person

    @property
    def said(self) -> str:
        """The holder by the one naming rule, as messages say it: "Coder (for Ada)", "Ada via
        laptop"."""
        kind = f"{self.token_kind}_token" if self.token_kind else "person"
        return name_of({"kind": kind, "displayName": self.person, "tokenName": self.token_name,
                        "roleName": self.seat_name})  # fmt: skip
