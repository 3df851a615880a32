"""The artifact writes as the doors run them, for tests that set a scene: the use case of
`services/artifacts`, its result worded by `contract/artifacts/present.written_view` (kept
in the idempotency ledger, as on every door)."""

from __future__ import annotations

from typing import Any

from crewboard.contract.artifacts.present import written_view
from crewboard.domain.identity.records import Actor
from crewboard.services.artifacts import artifacts
from crewboard.services.idempotency import KeyedResult
from crewboard.storage.database import Database


def create_artifact(db: Database, actor: Actor, **given: Any) -> KeyedResult:
    return artifacts.create_artifact(db, actor, answer=written_view, **given)


def write_artifact_revision(db: Database, actor: Actor, **given: Any) -> KeyedResult:
    return artifacts.write_artifact_revision(db, actor, answer=written_view, **given)


def rollback_artifact(db: Database, actor: Actor, **given: Any) -> KeyedResult:
    return artifacts.rollback_artifact(db, actor, answer=written_view, **given)
