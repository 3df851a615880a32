"""Web pages: the project state page, its edit form at a revision, and its version history."""

from __future__ import annotations

from functools import partial

from starlette.responses import Response
from starlette.routing import BaseRoute

from crewboard.contract.projects import present
from crewboard.web.context import Page, project_routes
from crewboard.web.forms import number_field, saved_or_form

STATE_VERSIONS = 20


def _state_page(
    page: Page, *, draft: str | None = None, status_code: int = 200, conflict: bool = False
) -> Response:
    """The state page; after a refused save, with the person's `draft` in the form (and on a
    conflict the text saved meanwhile beside it)."""
    current = present.get_project_state(page.db, page.actor, project=page.project_key)
    versions = present.list_state_versions(
        page.db, page.actor, project=page.project_key, limit=STATE_VERSIONS
    )
    return page.render(
        "state.html",
        status_code=status_code,
        title="State",
        state=current,
        versions=versions,
        draft=current["content"] if draft is None else draft,
        conflict=conflict,
        limit=present.MAX_STATE_LENGTH,
    )


def state_page(page: Page) -> Response:
    """The state page rendered, an edit form at its revision, and its version history."""
    return _state_page(page)


def state_save(page: Page) -> Response:
    """Save the state page's text from the revision the person read."""
    assert page.project is not None  # noqa: S101 - a project route
    content = page.field("content")
    workspace_id = page.project["workspaceId"]
    saved = saved_or_form(
        page,
        lambda: present.update_project_state(
            page.db,
            page.actor,
            project=page.project_key,
            workspace_id=workspace_id,
            content=content,
            expected_revision=number_field(page, "revision"),
        ),
        "the state page",
        partial(_state_page, page, draft=content),
    )
    if isinstance(saved, Response):
        return saved
    return page.redirect(page.path("state"), notice=f"Saved as revision {saved['revision']}.")


def state_restore(page: Page) -> Response:
    """Save an earlier version's text as the newest revision."""
    assert page.project is not None  # noqa: S101 - a project route
    restored = present.restore_state_version(
        page.db,
        page.actor,
        project=page.project_key,
        revision=number_field(page, "restore"),
        expected_revision=number_field(page, "revision"),
        workspace_id=page.project["workspaceId"],
    )
    return page.redirect(
        page.path("state"),
        notice=f"Restored revision {restored['restoredFrom']} as revision {restored['revision']}.",
    )


ROUTES: list[BaseRoute] = [
    *project_routes("state", get=state_page, post=state_save),
    *project_routes("state/restore", post=state_restore),
]
