"""The artifact use cases as the doors run them, for tests: the use case of
`services/artifacts`, its result worded by `contract/artifacts/present` (a keyed write's
wording is kept in the idempotency ledger, as on every door)."""

from __future__ import annotations

from typing import Any

from crewboard.contract.artifacts.present import lines_view, page_view, shown_view, written_view
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


def list_artifacts(db: Database, actor: Actor, **given: Any) -> dict[str, Any]:
    return page_view(artifacts.list_artifacts(db, actor, **given))


def get_artifact(db: Database, actor: Actor, **given: Any) -> dict[str, Any]:
    return shown_view(artifacts.get_artifact(db, actor, **given))


def read_artifact_file(db: Database, actor: Actor, **given: Any) -> dict[str, Any]:
    return lines_view(artifacts.read_artifact_file(db, actor, **given))
