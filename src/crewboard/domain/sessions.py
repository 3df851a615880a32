"""Spec sessions: an AI-guided interview that writes or edits a project's spec files.

An agent (or a person) starts a session with an opening message; a configured model answers
turn by turn, following a workflow. A turn's reply is prose for the person plus, in tags the
workflow's prompt teaches the model, what it wants from them: interview questions, a choice,
review feedback, or whole spec files it proposes. Each of those becomes a *proposal* that waits
for a person: nothing the model writes reaches a spec file until someone accepts it.

This module holds the rules and value types: the modes, languages and limits, the session's
status and what it waits for, and the parsing of a reply into text and proposals.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from crewboard.errors import LimitExceeded, ValidationFailed

MAX_TITLE = 500
MAX_PROMPT = 20_000  # characters of an opening message or a person's later message
MAX_FEEDBACK = 4_000  # characters sent back with a proposal
MAX_REFERENCES = 25  # attachments, and spec files, an opening message may name (each)
MAX_CONTEXT = 1024 * 1024  # bytes of working context get_spec_session may return
PAGE_DEFAULT = 10
PAGE_MAX = 20
FIRST_TURN_WAIT = 75.0  # seconds start_spec_session waits for the first reply
MAX_QUESTIONS = 12
MAX_OPTIONS = 10
MAX_QUESTION_TEXT = 1_000
MAX_ANSWER = 2_000
MAX_PROPOSED_FILES = 10  # a reply proposing more is cut to these
DEFAULT_TURN_LIMIT = 80  # turns one session may run
DEFAULT_TOKEN_BUDGET = 2_000_000  # input plus output tokens one session may spend


class Mode(StrEnum):
    GENERATE = "generate"  # writes new spec files
    EDIT = "edit"  # changes existing ones


class Language(StrEnum):
    """The language a session writes in; fixed when it starts."""

    EN = "en"
    DE = "de"
    ES = "es"
    FR = "fr"
    JA = "ja"
    PT = "pt"
    VI = "vi"
    ZH = "zh"


LANGUAGE_NAMES = {
    Language.EN: "English",
    Language.DE: "German",
    Language.ES: "Spanish",
    Language.FR: "French",
    Language.JA: "Japanese",
    Language.PT: "Portuguese",
    Language.VI: "Vietnamese",
    Language.ZH: "Simplified Chinese",
}


class Status(StrEnum):
    """Where a session stands."""

    RUNNING = "running"  # a turn is queued or being written
    WAITING = "waiting"  # the model answered; the person's move
    FAILED = "failed"  # the last turn could not run; the person may send again
    STOPPED = "stopped"  # the session spent its budget


class PendingAction(StrEnum):
    """What a session waits for (the first that applies, in this order)."""

    SPEC_FILE_PENDING_DECISION = "spec_file_pending_decision"
    REVIEW_FEEDBACK_PENDING = "review_feedback_pending"
    MCQ_FORM_PENDING = "mcq_form_pending"
    USER_CHOICE_PENDING = "user_choice_pending"
    TURN_STILL_RUNNING = "turn_still_running"
    NONE = "none"


class ArchiveFilter(StrEnum):
    ACTIVE = "active"
    ARCHIVED = "archived"
    ALL = "all"


class TurnStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


class SessionProposalKind(StrEnum):
    FILE = "file"
    QUESTIONS = "questions"
    CHOICE = "choice"
    REVIEW = "review"


class SessionProposalStatus(StrEnum):
    PENDING = "pending"
    ACCEPTED = "accepted"  # a file saved, review feedback taken
    SENT_BACK = "sent_back"  # a file returned with feedback
    ANSWERED = "answered"  # questions or a choice answered
    SUPERSEDED = "superseded"  # a later message moved the conversation on


PENDING_OF_KIND = {
    SessionProposalKind.FILE: PendingAction.SPEC_FILE_PENDING_DECISION,
    SessionProposalKind.REVIEW: PendingAction.REVIEW_FEEDBACK_PENDING,
    SessionProposalKind.QUESTIONS: PendingAction.MCQ_FORM_PENDING,
    SessionProposalKind.CHOICE: PendingAction.USER_CHOICE_PENDING,
}


@dataclass(frozen=True)
class Session:
    id: str
    project_id: str
    title: str
    mode: Mode
    workflow_id: str
    language: Language
    model_id: str | None
    status: Status
    pending_action: PendingAction
    attachment_ids: tuple[str, ...]
    spec_file_ids: tuple[str, ...]
    turn_count: int
    message_count: int
    input_tokens: int
    output_tokens: int
    provider_seconds: float
    created_by: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    archived_at: datetime | None = None
    last_error: dict[str, Any] | None = None
    # What the person should know ({"code", "message"}: its model takes no tools...).
    notices: tuple[dict[str, str], ...] = ()

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True)
class Message:
    id: str
    session_id: str
    seq: int
    role: str  # "user" or "assistant"
    content: str  # what the model sees: a person's words, or the model's whole reply
    author: dict[str, Any] | None
    created_at: datetime


@dataclass(frozen=True)
class Turn:
    id: str
    session_id: str
    project_id: str
    seq: int
    status: TurnStatus
    model_id: str | None
    attempts: int
    partial: str  # the reply as far as it has streamed
    error: dict[str, Any] | None
    input_tokens: int
    output_tokens: int
    provider_seconds: float
    queued_at: datetime
    started_at: datetime | None = None
    finished_at: datetime | None = None
    claim: str | None = None
    lease_until: datetime | None = None


@dataclass(frozen=True)
class SessionProposal:
    """What a spec session's agent puts to the person in one turn (a spec file, questions, a
    choice, or review feedback), waiting for their decision. Not the review inbox's card that
    proposes a task change (`domain.review.Proposal`)."""

    id: str
    session_id: str
    project_id: str
    turn_id: str
    kind: SessionProposalKind
    status: SessionProposalStatus
    body: dict[str, Any]
    path: str | None
    base_version: str | None  # the file's contentVersion when proposed; None for a new file
    created_at: datetime
    decided_by: dict[str, Any] | None = None
    decided_at: datetime | None = None
    feedback: str | None = None
    result: dict[str, Any] | None = None


# --- what the services answer (`contract/sessions/present.py` words them) ----------------------


@dataclass(frozen=True)
class SessionsPage:
    """One page of a project's sessions."""

    sessions: tuple[Session, ...]
    total: int
    next_offset: int | None


@dataclass(frozen=True)
class SessionFound:
    """A session with its project's key (for its link), and what it warns of."""

    session: Session
    project_key: str
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class SessionChanged:
    """A session after a rename, archive or unarchive; `changed` False when nothing was to do."""

    session: Session
    changed: bool


@dataclass(frozen=True)
class SessionStarted:
    """What starting a session made: the session and its first turn, queued."""

    session_id: str
    project_id: str
    turn_id: str
    project_key: str


@dataclass(frozen=True)
class FirstTurn:
    """A new session once the wait for its first reply is over: the reply as far as it got,
    and the failed turn's error when it could not run."""

    session: Session
    assistant_text: str
    error: dict[str, Any] | None
    warnings: tuple[str, ...] = ()
    waits_for_bridge: bool = False  # it reads code and its creator's bridge is not connected


@dataclass(frozen=True)
class ShownMessage:
    """A message as the session page shows it: the model's reply as prose, with notes on what
    of it could not be read."""

    id: str
    role: str
    text: str
    notes: tuple[str, ...]
    author: dict[str, Any] | None
    at: datetime


@dataclass(frozen=True)
class ModelRead:
    """One code call a turn's model made through the bridge, as the session page lists it:
    what it asked (`arguments`) and what came back in short (`summary`: lines, matches,
    entries, or the error code of a refusal), never the code."""

    turn_id: str
    turn_seq: int
    seq: int
    tool: str
    arguments: dict[str, Any]
    status: str  # queued | taken | answered | failed
    summary: dict[str, Any]


@dataclass(frozen=True)
class SessionScreen:
    """Everything the session page shows. `current_files`: a pending file proposal's file as
    it is now (None: a new file), for the diff."""

    session: Session
    project_id: str
    project_key: str
    project_name: str
    can_write: bool
    messages: tuple[ShownMessage, ...]
    proposals: tuple[SessionProposal, ...]
    current_files: dict[str, str | None]
    turn: Turn | None
    warnings: tuple[str, ...] = ()
    reads: tuple[ModelRead, ...] = ()  # oldest first


@dataclass(frozen=True)
class Decided:
    """After a decision on a proposal: the turn it queued (None while others wait, or once the
    session ran its turns), how many still wait, and the file an accepted proposal saved."""

    turn_id: str | None
    waiting: int
    file_id: str | None = None
    revision: int | None = None


@dataclass(frozen=True)
class ProviderSettings:
    """A provider's settings as checked, before they are saved."""

    id: str
    kind: str
    base_url: str
    key_env: str | None
    key_file: str | None
    timeout_seconds: float
    max_retries: int


@dataclass(frozen=True)
class Provider:
    """A configured provider: where its key is read from, never the key."""

    id: str
    kind: str
    base_url: str
    key_env: str | None
    key_file: str | None
    timeout_seconds: float
    max_retries: int
    stream: bool
    updated_at: datetime


@dataclass(frozen=True)
class ModelChoice:
    """A configured model of a provider."""

    id: str
    provider_id: str
    model: str
    label: str
    max_tokens: int
    is_default: bool


@dataclass(frozen=True)
class ModelConfig:
    """Every provider and model."""

    providers: tuple[Provider, ...]
    models: tuple[ModelChoice, ...]


@dataclass(frozen=True)
class SessionChoices:
    """What the new-session and default-model forms offer, and what the actor may do."""

    models: tuple[ModelChoice, ...]
    project_model: str | None
    can_write: bool
    can_admin: bool


@dataclass(frozen=True)
class ProjectModel:
    """A project's default model for new sessions (None: the server's default)."""

    project_id: str
    model_id: str | None


# --- checks ----------------------------------------------------------------------------------


def _trimmed(text: str, field: str, limit: int, empty: str) -> str:
    cleaned = text.strip()
    if not cleaned or "\x00" in cleaned:
        raise ValidationFailed.field(field, empty)
    if len(cleaned) > limit:
        raise LimitExceeded.over(field, len(cleaned), limit)
    return cleaned


def check_title(title: str, field: str = "sessionTitle") -> str:
    """The title, trimmed.

    Raises:
        ValidationFailed: empty, or a NUL. LimitExceeded: over MAX_TITLE characters.
    """
    return _trimmed(title, field, MAX_TITLE, "must be 1 to 500 characters of text.")


def check_message(text: str, field: str = "prompt") -> str:
    """A person's or an agent's message, trimmed.

    Raises:
        ValidationFailed: empty, or a NUL. LimitExceeded: over MAX_PROMPT characters.
    """
    return _trimmed(text, field, MAX_PROMPT, "must be a non-empty message.")


def check_references(ids: list[str], field: str) -> tuple[str, ...]:
    """Distinct ids, in the order given.

    Raises:
        LimitExceeded: more than MAX_REFERENCES.
    """
    unique = tuple(dict.fromkeys(i.strip() for i in ids))
    if len(unique) > MAX_REFERENCES:
        raise LimitExceeded.over(field, len(unique), MAX_REFERENCES, "ids")
    return unique


def default_title(prompt: str) -> str:
    """A title from the opening message's first line, for a session started without one."""
    first = prompt.strip().splitlines()[0] if prompt.strip() else "Spec session"
    return first[:80].rstrip() + ("…" if len(first) > 80 else "")


def pending_action_of(kinds: set[SessionProposalKind], *, running: bool) -> PendingAction:
    """What the session waits for, given the kinds of its pending proposals."""
    for kind, action in PENDING_OF_KIND.items():
        if kind in kinds:
            return action
    return PendingAction.TURN_STILL_RUNNING if running else PendingAction.NONE


def over_budget(session: Session, *, turn_limit: int, token_budget: int) -> str | None:
    """Why the session may not run another turn, or None."""
    if session.turn_count >= turn_limit:
        return f"this session has run its {turn_limit} turns"
    if session.tokens >= token_budget:
        return f"this session has spent its budget of {token_budget:,} tokens"
    return None


# --- replies ---------------------------------------------------------------------------------

_FILE = re.compile(r'<spec-file\s+path\s*=\s*"([^"\n]{1,512})"\s*>\n?(.*?)</spec-file>', re.S)
_BLOCK = re.compile(r"<(questions|choice|review|session-title)>(.*?)</\1>", re.S)


@dataclass(frozen=True)
class Question:
    id: str
    text: str
    kind: str  # "single", "multiple" or "text"
    options: tuple[str, ...] = ()

    def view(self) -> dict[str, Any]:
        return {"id": self.id, "text": self.text, "kind": self.kind, "options": list(self.options)}


@dataclass
class ParsedReply:
    """A reply split into prose for the person and what it asks of them."""

    text: str
    files: list[tuple[str, str]] = field(default_factory=list)  # (path, whole content)
    questions: list[Question] = field(default_factory=list)
    choice: dict[str, Any] | None = None
    review: list[dict[str, str]] = field(default_factory=list)
    title: str | None = None
    notes: list[str] = field(default_factory=list)  # what could not be read, for the person


def parse_reply(reply: str) -> ParsedReply:
    """Split a model's reply; a block that does not parse stays in the text, with a note."""
    parsed = ParsedReply(text="")

    def take_file(match: re.Match[str]) -> str:
        if len(parsed.files) >= MAX_PROPOSED_FILES:
            parsed.notes.append(f"only the first {MAX_PROPOSED_FILES} proposed files are kept")
            return ""
        parsed.files.append((match.group(1).strip(), match.group(2)))
        return f"\n[proposed file: {match.group(1).strip()}]\n"

    def take_block(match: re.Match[str]) -> str:
        tag, inner = match.group(1), match.group(2).strip()
        if tag == "session-title":
            parsed.title = inner[:MAX_TITLE] or parsed.title
            return ""
        try:
            _read_block(parsed, tag, json.loads(inner))
        except (ValueError, TypeError, KeyError) as problem:
            parsed.notes.append(f"a <{tag}> block could not be read ({problem})")
            return match.group(0)
        return ""

    text = _FILE.sub(take_file, reply)
    text = _BLOCK.sub(take_block, text)
    parsed.text = re.sub(r"\n{3,}", "\n\n", text).strip()
    return parsed


def _read_block(parsed: ParsedReply, tag: str, data: Any) -> None:
    if tag == "questions":
        items = data["questions"] if isinstance(data, dict) else data
        parsed.questions = [_question(i, q) for i, q in enumerate(items[:MAX_QUESTIONS])]
        if not parsed.questions:
            raise ValueError("no questions")
    elif tag == "choice":
        options = [_text(o, MAX_QUESTION_TEXT) for o in data["options"][:MAX_OPTIONS]]
        if len(options) < 2:
            raise ValueError("a choice needs two options or more")
        parsed.choice = {"question": _text(data.get("question", ""), MAX_QUESTION_TEXT),
                         "options": options}  # fmt: skip
    elif tag == "review":
        items = data["items"] if isinstance(data, dict) else data
        parsed.review = [
            {"id": str(item.get("id") or f"r{n + 1}")[:40],
             "text": _text(item["text"], MAX_QUESTION_TEXT),
             "path": str(item.get("path") or "")[:512]}
            for n, item in enumerate(items[:MAX_QUESTIONS])
        ]  # fmt: skip
        if not parsed.review:
            raise ValueError("no review items")


def _question(n: int, raw: Any) -> Question:
    if isinstance(raw, str):
        return Question(id=f"q{n + 1}", text=_text(raw, MAX_QUESTION_TEXT), kind="text")
    options = tuple(_text(o, MAX_QUESTION_TEXT) for o in raw.get("options", [])[:MAX_OPTIONS])
    kind = str(raw.get("kind") or ("single" if options else "text"))
    if kind not in ("single", "multiple", "text"):
        raise ValueError(f"question kind {kind!r} is not single, multiple or text")
    if kind != "text" and len(options) < 2:
        raise ValueError("a single or multiple choice question needs two options or more")
    return Question(
        id=str(raw.get("id") or f"q{n + 1}")[:40],
        text=_text(raw.get("text") or raw.get("question"), MAX_QUESTION_TEXT),
        kind=kind,
        options=options if kind != "text" else (),
    )


def _text(value: Any, limit: int) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError("an empty text where words were needed")
    return value.strip()[:limit]


def answers_message(questions: list[dict[str, Any]], answers: dict[str, Any]) -> str:
    """The person's answers to an interview form, written as the message the model reads.

    Raises:
        ValidationFailed: an answer that is not one of its question's options, or none at all.
    """
    lines = ["My answers:"]
    given = 0
    for n, question in enumerate(questions, start=1):
        value = answers.get(question["id"])
        shown = _answer(question, value)
        if shown:
            given += 1
        lines.append(f"{n}. {question['text']}\n   → {shown or '(no answer)'}")
    if not given:
        raise ValidationFailed.field("answers", "answer at least one question.")
    return "\n".join(lines)


def _answer(question: dict[str, Any], value: Any) -> str:
    field_name = f"answers.{question['id']}"
    if value is None or value in ("", []):
        return ""
    if question["kind"] == "text":
        if not isinstance(value, str) or len(value) > MAX_ANSWER:
            raise ValidationFailed.field(field_name, f"must be text of at most {MAX_ANSWER} chars.")
        return value.strip()
    values = value if isinstance(value, list) else [value]
    if question["kind"] == "single" and len(values) > 1:
        raise ValidationFailed.field(field_name, "takes one option.")
    for item in values:
        if item not in question["options"]:
            raise ValidationFailed.field(
                field_name, f"{item!r} is not an option; the options are {question['options']}."
            )
    return "; ".join(str(v) for v in values)
