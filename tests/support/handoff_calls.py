"""The handoff use cases as the doors run them, for tests: the command or query of
`services/handoffs`, its result worded by `contract/handoffs/present` (as MCP, REST, the CLI
and the web page word it)."""

from __future__ import annotations

from typing import Any

from crewboard.contract.handoffs import present
from crewboard.domain.identity.records import Actor
from crewboard.services.handoffs import commands, queries
from crewboard.services.idempotency import KeyedResult
from crewboard.storage.database import Database


def create_handoff(db: Database, actor: Actor, **given: Any) -> KeyedResult:
    return commands.create_handoff(db, actor, answer=present.made_view(actor), **given)


def update_handoff(db: Database, actor: Actor, **given: Any) -> dict[str, Any]:
    return present.handoff_answer(commands.update_handoff(db, actor, **given), actor)


def create_handoff_action_item(db: Database, actor: Actor, **given: Any) -> KeyedResult:
    return commands.create_handoff_action_item(db, actor, answer=present.item_answer, **given)


def update_handoff_action_item(db: Database, actor: Actor, **given: Any) -> dict[str, Any]:
    return present.item_answer(commands.update_handoff_action_item(db, actor, **given))


def list_handoffs(db: Database, actor: Actor, **given: Any) -> dict[str, Any]:
    return present.handoff_page_view(queries.list_handoffs(db, actor, **given))


def get_handoff(
    db: Database, actor: Actor, *, handoff_id: str, room: int | None = None
) -> dict[str, Any]:
    return present.handoff_answer(
        queries.get_handoff(db, actor, handoff_id=handoff_id), actor, room
    )


def list_handoff_action_items(
    db: Database, actor: Actor, *, room: int | None = None, **given: Any
) -> dict[str, Any]:
    page = queries.list_handoff_action_items(db, actor, **given)
    return present.item_page_view(page, actor, room)


def get_handoff_action_item(db: Database, actor: Actor, **given: Any) -> dict[str, Any]:
    return present.item_answer(queries.get_handoff_action_item(db, actor, **given))
