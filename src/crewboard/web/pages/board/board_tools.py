"""Web pages: the board's bulk bar (one change to many cards) and saved views."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, urlencode

from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute

from crewboard.errors import ValidationFailed
from crewboard.services.board import saved_views
from crewboard.services.screens.board_bulk import BulkChange, CardOutcome, bulk_change
from crewboard.web.context import Page, project_routes
from crewboard.web.wording import human_message

# What a saved view keeps of the board's query string; anything else is dropped.
VIEW_PARAMS = ("q", "assignee", "tag", "sort", "group")


def _tags(text: str) -> tuple[str, ...]:
    return tuple(tag.strip() for tag in text.split(",") if tag.strip())


def _cards(page: Page) -> list[tuple[str, int]]:
    """The chosen cards: `task` fields of the form KEY@REVISION (the revision the card showed).

    Raises:
        ValidationFailed: a card without its revision.
    """
    cards = []
    for raw in page.fields("task"):
        key, _, revision = raw.partition("@")
        if not key or not revision.isdigit():
            raise ValidationFailed.field("tasks", f"{raw!r} is not a card of this board; reload.")
        cards.append((key, int(revision)))
    return cards


def bulk(page: Page) -> Response:
    """Apply one change (column, assignee, tags to add or remove) to each chosen card."""
    assert page.project is not None  # noqa: S101 - a project route
    change = BulkChange(
        status=page.field("status") or None,
        assignee=page.field("assignee") or None,
        add_tags=_tags(page.field("add_tags")),
        remove_tags=_tags(page.field("remove_tags")),
    )
    outcomes = bulk_change(
        page.db,
        page.actor,
        project=page.project_key,
        workspace_id=page.project["workspaceId"],
        cards=_cards(page),
        change=change,
    )
    saved = [o for o in outcomes if o.error is None]
    refused = [o for o in outcomes if o.error is not None]
    said = _summary(saved, refused)
    if "application/json" in page.request.headers.get("accept", ""):
        return JSONResponse(
            {
                "ok": not refused,
                "notice": said,
                "results": [_result(outcome) for outcome in outcomes],
            }
        )
    back = page.field("next") or page.path("board")
    if refused:
        return page.redirect(back, error=said)
    return page.redirect(back, notice=said)


def _result(outcome: CardOutcome) -> dict[str, Any]:
    if outcome.error is not None:
        return {"key": outcome.key, "ok": False, "error": human_message(outcome.error)}
    tile = outcome.tile or {}
    return {
        "key": outcome.key,
        "ok": True,
        "changed": outcome.changed,
        "status": tile.get("status"),
        "revision": tile.get("revision"),
    }


def _summary(saved: list[CardOutcome], refused: list[CardOutcome]) -> str:
    unchanged = sum(1 for outcome in saved if not outcome.changed)
    parts = [f"Saved {len(saved)} of {len(saved) + len(refused)} cards."]
    if unchanged:
        parts.append(f"{unchanged} of them {'was' if unchanged == 1 else 'were'} so already.")
    for outcome in refused:
        assert outcome.error is not None  # noqa: S101 - refused outcomes carry their error
        parts.append(f"{outcome.key} was not changed: {human_message(outcome.error)}")
    return " ".join(parts)


def _view_query(page: Page) -> str:
    """The board query string the form carried, kept to the view's own parameters."""
    pairs = parse_qsl(page.field("query"), keep_blank_values=False)
    return urlencode([(name, value) for name, value in pairs if name in VIEW_PARAMS])


def save_view(page: Page) -> Response:
    """Save the board's current filters, sort and grouping under a name."""
    view = saved_views.save_view(
        page.db,
        page.actor,
        project=page.project_key,
        name=page.field("name"),
        query=_view_query(page),
    )
    target = page.path("board") + (f"?{view.query}" if view.query else "")
    return page.redirect(target, notice=f"Saved the view “{view.name}”.")


def delete_view(page: Page) -> Response:
    """Delete one of the person's saved views."""
    view = saved_views.delete_view(
        page.db, page.actor, project=page.project_key, view_id=page.field("view")
    )
    return page.redirect(
        page.field("next") or page.path("board"), notice=f"Deleted the view “{view.name}”."
    )


ROUTES: list[BaseRoute] = [
    *project_routes("board/bulk", post=bulk),
    *project_routes("board/views", post=save_view),
    *project_routes("board/views/delete", post=delete_view),
]
