"""Reading a form's fields and showing an edit conflict: shared by the pages of every area."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from starlette.responses import Response

from crewboard.domain.identity.naming import name_of
from crewboard.domain.validation import parse_whole
from crewboard.errors import CrewboardError, LimitExceeded, RevisionConflict, ValidationFailed
from crewboard.web.context import Page
from crewboard.web.render import when
from crewboard.web.wording import human_message

T = TypeVar("T")


def number_field(page: Page, name: str) -> int:
    """A whole number from a form field.

    Raises:
        ValidationFailed: the field is not a whole number of 0 or more.
    """
    return parse_whole(name, page.field(name))


def show_conflict(page: Page, conflict: RevisionConflict, what: str) -> None:
    """Flash a conflict on the page about to be rendered (not redirected: the text stays)."""
    details = conflict.details
    current = details.get("currentVersion", details.get("currentRevision"))
    unit = "revision" if "currentRevision" in details else "version"
    by = details.get("updatedBy") or {}
    who = name_of(by)
    at = f"it is at {unit} {current} now" if current is not None else ""
    if current is None and details.get("currentUpdatedAt"):
        at = f"at {when(details['currentUpdatedAt'])}"
    page.flash = {
        "kind": "error",
        "text": f"Not saved: {who} saved {what} meanwhile{'; ' + at if at else ''}. "
        "The current text is shown and your edit is still in the form: merge and save again.",
    }


def show_refusal(page: Page, error: CrewboardError) -> None:
    """Flash a refused value on the page about to be rendered again with what was typed."""
    page.flash = {
        "kind": "error",
        "text": f"Not saved: {human_message(error)} Your text is still in the form.",
    }


def saved_or_form(
    page: Page, save: Callable[[], T], what: str, form: Callable[..., Response]
) -> T | Response:
    """`save()`'s answer, or, when the save is refused, the edit form again (`form` called with
    `status_code` and `conflict`) holding what was typed, with the reason flashed above it."""
    try:
        return save()
    except RevisionConflict as conflict:
        show_conflict(page, conflict, what)
        return form(status_code=409, conflict=True)
    except (ValidationFailed, LimitExceeded) as error:
        show_refusal(page, error)
        return form(status_code=error.http_status, conflict=False)
