"""Web pages: adding and removing a project's acceptance rules (the forms on its settings page)."""

from __future__ import annotations

from starlette.responses import Response
from starlette.routing import BaseRoute

from crewboard.domain.review import RuleMatch
from crewboard.services.review import rules as rule_service
from crewboard.web.context import Page, project_routes


def add_rule(page_: Page) -> Response:
    """Turn on an acceptance rule; a rule matching every hand-in takes no value."""
    match = page_.field("match")
    rule = rule_service.add_rule(
        page_.db,
        page_.actor,
        page_.project_key,
        match=match,
        value=None if match == str(RuleMatch.ALL) else (page_.field("value") or None),
        collection=page_.field("collection") or None,
        document=page_.field("document") or None,
    )
    what = rule.match + (f" {rule.value}" if rule.value else "")
    return page_.redirect(page_.path("settings/project"), notice=f"Acceptance rule on: {what}.")


def remove_rule(page_: Page) -> Response:
    """Turn an acceptance rule off."""
    rule_service.remove_rule(page_.db, page_.actor, page_.request.path_params["rule_id"])
    return page_.redirect(page_.path("settings/project"), notice="Acceptance rule off.")


ROUTES: list[BaseRoute] = [
    *project_routes("settings/project/rules", post=add_rule),
    *project_routes("settings/project/rules/{rule_id}/remove", post=remove_rule),
]
