"""Web pages: the review inbox (hand-ins, proposal cards, questions, messages) and the
decisions a person takes there. Every decision is a POST form; each calls one service."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.responses import Response
from starlette.routing import BaseRoute

from crewboard.domain.review import WAITING, ProposalStatus
from crewboard.errors import NotFound
from crewboard.services.board import questions
from crewboard.services.memory.records import DOCUMENT_TITLES
from crewboard.services.review import decisions as review
from crewboard.services.review import drafts, messages, proposals
from crewboard.services.review.inbox import KINDS
from crewboard.services.screens.inbox import inbox_page
from crewboard.web.context import Page, project_routes

KIND_LABELS = {
    "hand_in": "Hand-ins",
    "proposal": "Proposals",
    "question": "Questions",
    "message": "Messages",
}
WAITING_STATES = frozenset(str(s) for s in WAITING)


def _param(page: Page, name: str) -> str:
    return str(page.request.path_params[name])


def _optional(page: Page, name: str) -> str | None:
    """A form field, None when blank (the service then keeps its default)."""
    value = page.field(name).strip()
    return value or None


def _in_project(page: Page, found: dict[str, Any], missing: NotFound) -> None:
    """Raises: NotFound when the item belongs to another project than the page's."""
    assert page.project is not None  # noqa: S101 - project routes always have one
    if found["projectId"] != page.project["id"]:
        raise missing


# --- the inbox ---------------------------------------------------------------------------------


def show_inbox(page: Page) -> Response:
    """What waits for the person in this project, newest first, with counts per kind."""
    found = inbox_page(
        page.db, page.actor, project=page.project_key, kind=page.param("kind") or None
    )
    return page.render(
        "inbox.html",
        title="Inbox",
        inbox=found,
        kinds=[(kind, KIND_LABELS[kind]) for kind in KINDS],
    )


def answer(page: Page) -> Response:
    """Answer a question from the inbox."""
    done = questions.answer_question(
        page.db, page.actor, _param(page, "question_id"), page.field("answer")
    )
    text = "Answer sent." if done["changed"] else "You had already sent that answer."
    return page.redirect(page.field("next") or page.path("inbox"), notice=text)


# --- hand-ins ----------------------------------------------------------------------------------


def show_draft(page: Page) -> Response:
    """One hand-in in full, with the forms to decide about it."""
    draft_id = _param(page, "draft_id")
    draft = drafts.get_draft(page.db, page.actor, draft_id)
    _in_project(page, draft, review.draft_not_found(draft_id))
    return page.render(
        "hand_in.html",
        title=draft["title"],
        draft=draft,
        waiting=draft["status"] in WAITING_STATES,
        documents=list(DOCUMENT_TITLES.items()),
    )


def _approve(page: Page, draft_id: str) -> dict[str, Any]:
    return review.approve(page.db, page.actor, draft_id, comment=_optional(page, "comment"))


def _save(page: Page, draft_id: str) -> dict[str, Any]:
    return review.approve(
        page.db,
        page.actor,
        draft_id,
        save_to_memory=True,
        collection=_optional(page, "collection"),
        document=_optional(page, "document"),
        comment=_optional(page, "comment"),
    )


def _reject(page: Page, draft_id: str) -> dict[str, Any]:
    return review.reject(page.db, page.actor, draft_id, comment=_optional(page, "comment"))


def _revise(page: Page, draft_id: str) -> dict[str, Any]:
    return review.request_revision(page.db, page.actor, draft_id, comment=page.field("comment"))


def _undo(page: Page, draft_id: str) -> dict[str, Any]:
    return review.undo_rule_acceptance(page.db, page.actor, draft_id)


Decide = Callable[[Page, str], dict[str, Any]]

DECISIONS: dict[str, tuple[Decide, str]] = {
    "approve": (_approve, "Approved"),
    "save": (_save, "Approved and saved to memory"),
    "reject": (_reject, "Rejected"),
    "revise": (_revise, "Revision requested for"),
    "undo": (_undo, "Back in review:"),
}


def decide_draft(page: Page) -> Response:
    """Take one decision about a hand-in, then go back to the inbox."""
    draft_id = _param(page, "draft_id")
    chosen = DECISIONS.get(_param(page, "decision"))
    if chosen is None:
        raise NotFound(
            f"No decision {_param(page, 'decision')!r}; a hand-in is approved, saved, "
            "rejected, revised or undone.",
            {"resource": "decision"},
        )
    decide, said = chosen
    title = decide(page, draft_id)["draft"]["title"]
    return page.redirect(page.path("inbox"), notice=f"{said} “{title}”.")


# --- proposal cards ----------------------------------------------------------------------------


def show_proposal(page: Page) -> Response:
    """One proposal card: what it would change, and accept / dismiss."""
    proposal_id = _param(page, "proposal_id")
    card = proposals.get_proposal(page.db, page.actor, proposal_id)
    _in_project(page, card, proposals.proposal_not_found(proposal_id))
    return page.render(
        "proposal.html",
        title="Proposal",
        card=card,
        pending=card["status"] == ProposalStatus.PENDING.value,
    )


def accept(page: Page) -> Response:
    proposals.accept_proposal(page.db, page.actor, _param(page, "proposal_id"))
    return page.redirect(page.path("inbox"), notice="Proposal accepted.")


def dismiss(page: Page) -> Response:
    proposals.dismiss_proposal(page.db, page.actor, _param(page, "proposal_id"))
    return page.redirect(page.path("inbox"), notice="Proposal dismissed; nothing changed.")


def dismiss_message(page: Page) -> Response:
    """Clear a message from this person's inbox (its thread keeps it)."""
    messages.dismiss_message(page.db, page.actor, page.project_key, _param(page, "message_id"))
    return page.redirect(page.field("next") or page.path("inbox"), notice="Message dismissed.")


ROUTES: list[BaseRoute] = [
    *project_routes("inbox", get=show_inbox),
    *project_routes("inbox/questions/{question_id}/answer", post=answer),
    *project_routes("inbox/drafts/{draft_id}", get=show_draft),
    *project_routes("inbox/drafts/{draft_id}/{decision}", post=decide_draft),
    *project_routes("inbox/proposals/{proposal_id}", get=show_proposal),
    *project_routes("inbox/proposals/{proposal_id}/accept", post=accept),
    *project_routes("inbox/proposals/{proposal_id}/dismiss", post=dismiss),
    *project_routes("inbox/messages/{message_id}/dismiss", post=dismiss_message),
]
