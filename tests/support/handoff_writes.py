"""The handoff writes as the doors run them, for tests that set a scene: the command of
`services/handoffs`, its result worded by `contract/handoffs/present` (as MCP, REST, the CLI
and the web page word it)."""

from __future__ import annotations

from typing import Any

from crewboard.contract.handoffs import present
from crewboard.domain.identity.records import Actor
from crewboard.services.handoffs import commands
from crewboard.services.idempotency import KeyedResult
from crewboard.storage.database import Database


def create_handoff(db: Database, actor: Actor, **given: Any) -> KeyedResult:
    return commands.create_handoff(db, actor, answer=present.made_view(actor), **given)


def update_handoff(db: Database, actor: Actor, **given: Any) -> dict[str, Any]:
    return present.changed_view(commands.update_handoff(db, actor, **given), actor)


def create_handoff_action_item(db: Database, actor: Actor, **given: Any) -> KeyedResult:
    return commands.create_handoff_action_item(db, actor, answer=present.item_answer, **given)


def update_handoff_action_item(db: Database, actor: Actor, **given: Any) -> dict[str, Any]:
    return present.item_answer(commands.update_handoff_action_item(db, actor, **given))
