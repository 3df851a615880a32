"""Web pages: the review inbox (hand-ins, proposal cards, questions, messages) and the
decisions a person takes there. Every decision is a POST form; each calls one service."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute

from crewboard.contract.board.present_notes import question_answered_view
from crewboard.contract.review.present import draft_read_view
from crewboard.contract.review.present_inbox import inbox_item_view, inbox_view
from crewboard.contract.review.present_proposals import proposal_view
from crewboard.domain.review import WAITING, Decided, ProposalStatus
from crewboard.errors import CrewboardError, NotFound
from crewboard.services.board import questions
from crewboard.services.memory.records import DOCUMENT_TITLES
from crewboard.services.review import decisions as review
from crewboard.services.review import messages, proposals, reads
from crewboard.services.review.inbox import KINDS
from crewboard.services.review.undo import undo_decision
from crewboard.services.screens.inbox import (
    InboxScreen,
    NextItem,
    decided_note,
    inbox_page,
    next_waiting,
    open_hand_in,
    open_proposal,
)
from crewboard.services.views import iso
from crewboard.web.context import Page, project_routes, secure
from crewboard.web.pages.review.versions import version_diff, version_line
from crewboard.web.wording import human_message

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


# --- the inbox ---------------------------------------------------------------------------------


def show_inbox(page: Page) -> Response:
    """What waits for the person in this project, newest first, with counts per kind."""
    found = inbox_page(
        page.db, page.actor, project=page.project_key, kind=page.param("kind") or None
    )
    return _with_decided(
        page,
        "inbox.html",
        title="Inbox",
        inbox=_inbox_words(found, page.actor.user_id),
        kinds=[(kind, KIND_LABELS[kind]) for kind in KINDS],
    )


def _inbox_words(found: InboxScreen, me: str) -> dict[str, Any]:
    """The inbox as its template reads it: each row's view with its label, and a message's
    task key and participant's name."""
    items = []
    for entry, label in zip(found.rows, found.labels, strict=True):
        view = inbox_item_view(entry)
        if entry.kind == "message":
            view["taskKey"] = found.task_keys.get(view["taskId"] or "")
            view["participantName"] = found.participant_names.get(view["participantId"])
        if entry.kind == "hand_in":
            view["versionLine"] = version_line(view, me)
        view["label"] = label
        items.append(view)
    return {
        **inbox_view(found.inbox),
        "kind": found.kind,
        "items": items,
        "unreadShown": found.unread_shown,
    }


def answer(page: Page) -> Response:
    """Answer a question from the inbox, then go on to the next item waiting."""
    done = question_answered_view(
        questions.answer_question(
            page.db, page.actor, _param(page, "question_id"), page.field("answer")
        )
    )
    text = "Answer sent." if done["changed"] else "You had already sent that answer."
    asked = {"id": done["question"]["id"], "createdAt": done["question"]["askedAt"]}
    return _onwards(page, text, asked, kind=_optional(page, "kind"), back=page.field("next"))


def _item_path(page: Page, item: NextItem, kind: str | None) -> str:
    """Where an item is decided: its page, or the inbox at its row (a question's form)."""
    if item.kind == "hand_in":
        return page.path(f"inbox/drafts/{item.id}")
    if item.kind == "proposal":
        return page.path(f"inbox/proposals/{item.id}")
    listed = page.path("inbox") + (f"?kind={kind}" if kind else "")
    return f"{listed}#item-{item.id}"


def _onwards(
    page: Page, done: str, decided: dict[str, Any], kind: str | None = None, back: str = ""
) -> Response:
    """After a decision (of the item with this id and createdAt): on to the next item waiting
    (saying what was done and what is next), or back to the inbox (`back`, the list it was
    decided from) when nothing is left."""
    following = next_waiting(
        page.db, page.actor, project=page.project_key, after=decided, kind=kind
    )
    if following is None:
        listed = back or page.path("inbox") + (f"?kind={kind}" if kind else "")
        return page.redirect(listed, notice=f"{done} Nothing else waits for you here.")
    return page.redirect(
        _item_path(page, following, kind), notice=f"{done} Next: {following.label}."
    )


# --- hand-ins ----------------------------------------------------------------------------------


def show_draft(page: Page) -> Response:
    """One hand-in in full, with the forms to decide about it."""
    assert page.project is not None  # noqa: S101 - project routes always have one
    found = open_hand_in(
        page.db, page.actor, project_id=page.project["id"], draft_id=_param(page, "draft_id")
    )
    record = found.memory_record
    draft = {
        **draft_read_view(found.read),
        "memoryRecord": {"id": record[0], "title": record[1]} if record else None,
    }
    return _with_decided(
        page,
        "hand_in.html",
        title=draft["title"],
        draft=draft,
        changes=version_diff(found.previous, draft),
        undo_until=iso(found.undo_until),
        waiting=draft["status"] in WAITING_STATES,
        documents=list(DOCUMENT_TITLES.items()),
    )


def _approve(page: Page, draft_id: str) -> Decided:
    return review.approve(page.db, page.actor, draft_id, comment=_optional(page, "comment"))


def _save(page: Page, draft_id: str) -> Decided:
    return review.approve(
        page.db,
        page.actor,
        draft_id,
        save_to_memory=True,
        collection=_optional(page, "collection"),
        document=_optional(page, "document"),
        comment=_optional(page, "comment"),
    )


def _reject(page: Page, draft_id: str) -> Decided:
    return review.reject(page.db, page.actor, draft_id, comment=_optional(page, "comment"))


def _revise(page: Page, draft_id: str) -> Decided:
    return review.request_revision(page.db, page.actor, draft_id, comment=page.field("comment"))


def _undo(page: Page, draft_id: str) -> Decided:
    return review.undo_rule_acceptance(page.db, page.actor, draft_id)


def _take_back(page: Page, draft_id: str) -> Decided:
    return undo_decision(page.db, page.actor, draft_id)


Decide = Callable[[Page, str], Decided]

DECISIONS: dict[str, tuple[Decide, str]] = {
    "approve": (_approve, "Approved"),
    "save": (_save, "Approved and saved to memory"),
    "reject": (_reject, "Rejected"),
    "revise": (_revise, "Revision requested for"),
    "undo": (_undo, "Back in review:"),
    "take-back": (_take_back, "Undone: your decision on"),
}
# Decisions that stay where they were taken: undoing puts the hand-in back in review.
STAYS = frozenset({"undo", "take-back"})
DECIDED_COOKIE = "crewboard_decided"  # the hand-in just decided, for the next page's note


def _wants_json(page: Page) -> bool:
    """The inbox's script decides without a reload and asks for JSON; a form gets pages."""
    return "application/json" in page.request.headers.get("accept", "")


def decide_draft(page: Page) -> Response:
    """Take one decision about a hand-in. From its page: on to the next item waiting. From
    the inbox list (`from` = list): back to the list. Undoing stays on the hand-in. The next
    page tells what the decision did (its follow-up task) and offers to undo it; the inbox's
    script gets the same as JSON."""
    draft_id, name = _param(page, "draft_id"), _param(page, "decision")
    chosen = DECISIONS.get(name)
    try:
        if chosen is None:
            raise NotFound(
                f"No decision {name!r}; a hand-in is approved, saved, rejected, revised or undone.",
                {"resource": "decision"},
            )
        decided = chosen[0](page, draft_id)
    except CrewboardError as error:
        if _wants_json(page):
            return JSONResponse(
                {"ok": False, "error": human_message(error)}, status_code=error.http_status
            )
        raise
    draft = decided.row.draft
    done = f"{chosen[1]} “{draft.title}”."
    if name == "take-back":
        done += " It waits for review again."
    if _wants_json(page):
        return JSONResponse({"ok": True, "notice": done, "decided": _decided(page, draft.id)})
    if name in STAYS:
        back = page.field("next") if page.field("from") == "list" else ""
        return page.redirect(back or page.path(f"inbox/drafts/{draft_id}"), notice=done)
    if page.field("from") == "list":
        response = page.redirect(page.field("next") or page.path("inbox"), notice=done)
    else:
        response = _onwards(page, done, {"id": draft.id, "createdAt": iso(draft.created_at)})
    response.set_cookie(
        DECIDED_COOKIE,
        draft.id,
        max_age=120,
        httponly=True,
        samesite="lax",
        secure=secure(page.request),
    )
    return response


def _decided(page: Page, draft_id: str) -> dict[str, Any] | None:
    """What the page says of a hand-in this person just decided: the decision, its
    follow-up task, and the undo form's path while it can be undone."""
    assert page.project is not None  # noqa: S101 - project routes always have one
    found = decided_note(page.db, page.actor, project_id=page.project["id"], draft_id=draft_id)
    if found is None:
        return None
    view = draft_read_view(found.read)
    follow = view["followUpTask"]
    return {
        "id": view["id"],
        "title": view["title"],
        "status": view["status"],
        "said": SAID.get(view["status"], view["status"]),
        "url": page.path(f"inbox/drafts/{view['id']}"),
        "taskKey": view["taskKey"],
        "followUp": {**follow, "url": page.path(f"tasks/{follow['key']}")} if follow else None,
        "undo": page.path(f"inbox/drafts/{view['id']}/take-back") if found.undo_until else None,
        "undoUntil": iso(found.undo_until),
    }


SAID = {
    "approved": "Approved",
    "saved_to_memory": "Approved and saved to memory",
    "rejected": "Rejected",
    "revision_requested": "Sent back for revision",
}


def _with_decided(page: Page, template: str, **context: Any) -> Response:
    """Render an inbox page with the note of the hand-in just decided, once."""
    decided = page.request.cookies.get(DECIDED_COOKIE)
    note = _decided(page, decided) if decided else None
    response = page.render(template, decided=note, **context)
    if decided:
        response.delete_cookie(DECIDED_COOKIE)
    return response


# --- proposal cards ----------------------------------------------------------------------------


def show_proposal(page: Page) -> Response:
    """One proposal card: what it would change, and accept / dismiss."""
    assert page.project is not None  # noqa: S101 - project routes always have one
    card = proposal_view(
        open_proposal(
            page.db,
            page.actor,
            project_id=page.project["id"],
            proposal_id=_param(page, "proposal_id"),
        )
    )
    return _with_decided(
        page,
        "proposal.html",
        title="Proposal",
        card=card,
        pending=card["status"] == ProposalStatus.PENDING.value,
    )


def accept(page: Page) -> Response:
    card = proposals.accept_proposal(page.db, page.actor, _param(page, "proposal_id")).proposal
    return _onwards(page, "Proposal accepted.", {"id": card.id, "createdAt": iso(card.created_at)})


def dismiss(page: Page) -> Response:
    card = proposals.dismiss_proposal(page.db, page.actor, _param(page, "proposal_id")).proposal
    decided = {"id": card.id, "createdAt": iso(card.created_at)}
    return _onwards(page, "Proposal dismissed; nothing changed.", decided)


def dismiss_message(page: Page) -> Response:
    """Clear a message from this person's inbox (its thread keeps it)."""
    messages.dismiss_message(page.db, page.actor, page.project_key, _param(page, "message_id"))
    return page.redirect(page.field("next") or page.path("inbox"), notice="Message dismissed.")


# --- read markers ------------------------------------------------------------------------------


def _back_to_row(page: Page, item_id: str) -> str:
    return f"{page.field('next') or page.path('inbox')}#item-{item_id}"


def mark_read(page: Page) -> Response:
    """Mark one row read for this person."""
    kind, item_id = _param(page, "kind"), _param(page, "item_id")
    reads.mark_read(page.db, page.actor, page.project_key, [(kind, item_id)])
    label = page.field("label") or "the item"
    return page.redirect(_back_to_row(page, item_id), notice=f"Marked {label} read.")


def mark_unread(page: Page) -> Response:
    """Make one row new again for this person."""
    kind, item_id = _param(page, "kind"), _param(page, "item_id")
    reads.mark_unread(page.db, page.actor, page.project_key, kind, item_id)
    label = page.field("label") or "the item"
    return page.redirect(_back_to_row(page, item_id), notice=f"Marked {label} unread.")


def mark_all_read(page: Page) -> Response:
    """Mark everything in this person's inbox read (or all of the kind shown)."""
    kind = _optional(page, "kind")
    done = reads.mark_all_read(page.db, page.actor, page.project_key, kind)
    count = done.marked
    text = f"Marked {count} item{'s' if count != 1 else ''} read." if count else "Nothing was new."
    return page.redirect(page.field("next") or page.path("inbox"), notice=text)


ROUTES: list[BaseRoute] = [
    *project_routes("inbox", get=show_inbox),
    *project_routes("inbox/questions/{question_id}/answer", post=answer),
    *project_routes("inbox/drafts/{draft_id}", get=show_draft),
    *project_routes("inbox/drafts/{draft_id}/{decision}", post=decide_draft),
    *project_routes("inbox/proposals/{proposal_id}", get=show_proposal),
    *project_routes("inbox/proposals/{proposal_id}/accept", post=accept),
    *project_routes("inbox/proposals/{proposal_id}/dismiss", post=dismiss),
    *project_routes("inbox/messages/{message_id}/dismiss", post=dismiss_message),
    *project_routes("inbox/read/{kind}/{item_id}", post=mark_read),
    *project_routes("inbox/unread/{kind}/{item_id}", post=mark_unread),
    *project_routes("inbox/read-all", post=mark_all_read),
]
