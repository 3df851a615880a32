"""The claims table of the board area (apart from `tables.py`: the leases of agents)."""

from __future__ import annotations

from sqlalchemy import CheckConstraint, Column, ForeignKey, Index, Integer, String, Table

from crewboard.storage.schema import ID, metadata
from crewboard.storage.types import UTCDateTime

# One claim per task, for the task's whole life: a new claim on it bumps `fence` (never reset,
# so a fence names one claim for good) and names its holder; a claim is live while
# `released_at` is NULL and `expires_at` is ahead. `ended_as` says how it stopped being live.
task_claims = Table(
    "task_claims",
    metadata,
    Column("task_id", String(ID), ForeignKey("tasks.id", ondelete="CASCADE"), primary_key=True),
    Column("project_id", String(ID), ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
    Column("fence", Integer, nullable=False),
    Column("user_id", String(ID), nullable=False),
    Column("token_id", String(ID), nullable=True),
    Column("role_id", String(ID), nullable=True),
    Column("claimed_at", UTCDateTime, nullable=False),
    Column("expires_at", UTCDateTime, nullable=False),
    Column("lease_seconds", Integer, nullable=False),  # what each renewal extends it by
    Column("released_at", UTCDateTime, nullable=True),
    Column("ended_as", String(8), nullable=True),
    CheckConstraint(
        "ended_as IS NULL OR ended_as IN ('released', 'broken', 'lapsed')", name="ended_as"
    ),
    # The sweeper's look-up (live rows past their lease) and a holder's renewal.
    Index("ix_task_claims_released_at_expires_at", "released_at", "expires_at"),
    Index("ix_task_claims_token_id", "token_id"),
)
