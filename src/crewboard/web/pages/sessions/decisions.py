"""Web forms: what a person decides on a session's page. Write to the model, send a failed turn
again, answer the interview, pick an option, take or dismiss review findings, accept a
proposed file or send it back with feedback.

Each is one service call for the signed-in person (the services refuse tokens: these are a
person's decisions). A refusal shows the page again with a flash that says why and the typed
text still in its form, rather than a redirect that would lose it.
"""

from __future__ import annotations

from typing import Any

from starlette.responses import Response
from starlette.routing import BaseRoute

from crewboard.domain.identity.naming import name_of
from crewboard.domain.sessions import Decided, Turn
from crewboard.errors import CrewboardError, RevisionConflict
from crewboard.services.sessions import conversation
from crewboard.web.context import Page, project_routes
from crewboard.web.pages.sessions.pages import session_id, show_session
from crewboard.web.wording import human_message


def _proposal_id(page: Page) -> str:
    return str(page.request.path_params["proposal_id"])


def _done(page: Page, done: Turn | Decided, what: str) -> Response:
    """Back to the session; the notice says whether the model is now writing. A `Turn` is the
    one a message queued; a decision may have queued none while others still wait."""
    decided = done if isinstance(done, Decided) else Decided(done.id, 0)
    if decided.turn_id:
        notice = f"{what} The model is writing its reply."
    elif decided.waiting:
        notice = f"{what} {decided.waiting} more waiting for you before the model goes on."
    else:
        notice = what
    return page.redirect(page.path(f"sessions/{session_id(page)}"), notice=notice)


def _refused(page: Page, error: CrewboardError, typed: dict[str, Any], text: str = "") -> Response:
    page.flash = {"kind": "error", "text": text or f"Not done: {human_message(error)}"}
    return show_session(page, typed=typed, status_code=error.http_status)


def _common(page: Page) -> dict[str, Any]:
    return {"db": page.db, "actor": page.actor, "project": page.project_key,
            "ref": session_id(page), "turn_limit": page.settings.session_turn_limit}  # fmt: skip


def send(page: Page) -> Response:
    text = page.field("message")
    try:
        answer = conversation.send_message(text=text, **_common(page))
    except CrewboardError as error:
        return _refused(page, error, {"message": text})
    return _done(page, answer, "Sent.")


def resend(page: Page) -> Response:
    try:
        answer = conversation.resend(**_common(page))
    except CrewboardError as error:
        return _refused(page, error, {})
    return _done(page, answer, "Sent again.")


def answer(page: Page) -> Response:
    """The interview form: `answer-{id}` per question, repeated for a multiple choice."""
    multiple = set(page.fields("multiple"))
    answers: dict[str, Any] = {}
    for ident in page.fields("question"):
        name = f"answer-{ident}"
        answers[ident] = page.fields(name) if ident in multiple else page.field(name)
    try:
        done = conversation.answer_questions(
            proposal_id=_proposal_id(page), answers=answers, **_common(page)
        )
    except CrewboardError as error:
        return _refused(page, error, {"answers": answers, "proposal": _proposal_id(page)})
    return _done(page, done, "Answers sent.")


def choose(page: Page) -> Response:
    option = page.field("option")
    try:
        done = conversation.choose(proposal_id=_proposal_id(page), option=option, **_common(page))
    except CrewboardError as error:
        return _refused(page, error, {})
    return _done(page, done, f"You chose {option}.")


def review(page: Page) -> Response:
    accepted = page.fields("accepted")
    try:
        done = conversation.decide_review(
            proposal_id=_proposal_id(page), accepted=accepted, **_common(page)
        )
    except CrewboardError as error:
        return _refused(page, error, {"accepted": accepted, "proposal": _proposal_id(page)})
    return _done(page, done, f"Took {len(accepted)} finding{'' if len(accepted) == 1 else 's'}.")


def accept(page: Page) -> Response:
    try:
        done = conversation.accept_file(proposal_id=_proposal_id(page), **_common(page))
    except RevisionConflict as conflict:
        return _refused(page, conflict, {}, _moved_on(conflict))
    except CrewboardError as error:
        return _refused(page, error, {})
    return _done(page, done, f"Saved as revision {done.revision or 1}.")


def _moved_on(conflict: RevisionConflict) -> str:
    """Why a proposed file was not saved: the file changed after the model read it."""
    details = conflict.details
    if "currentRevision" not in details:
        return f"Not saved: {human_message(conflict)}"
    by = details.get("updatedBy") or {}
    who = name_of(by)
    return (
        f"Not saved: {who} saved this file meanwhile (it is at revision "
        f"{details['currentRevision']} now), and the proposal was written from the older text. "
        "Send it back, and the model proposes it again from the newer one."
    )


def send_back(page: Page) -> Response:
    feedback = page.field("feedback")
    try:
        done = conversation.send_back_file(
            proposal_id=_proposal_id(page), feedback=feedback, **_common(page)
        )
    except CrewboardError as error:
        typed = {"feedback": feedback, "proposal": _proposal_id(page)}
        return _refused(page, error, typed)
    return _done(page, done, "Sent back with your feedback.")


_P = "sessions/{session_id}/proposals/{proposal_id}"
ROUTES: list[BaseRoute] = [
    *project_routes("sessions/{session_id}/message", post=send),
    *project_routes("sessions/{session_id}/resend", post=resend),
    *project_routes(f"{_P}/answer", post=answer),
    *project_routes(f"{_P}/choose", post=choose),
    *project_routes(f"{_P}/review", post=review),
    *project_routes(f"{_P}/accept", post=accept),
    *project_routes(f"{_P}/send-back", post=send_back),
]
