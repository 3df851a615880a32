"""Comment threads on spec files as pure rules: where a thread's passage is, and where it is
after the file is saved again.

A thread is anchored to a passage: the quoted text (`quote`) with a little of the text before
and after it (`prefix`, `suffix`, kept for re-anchoring), at character offsets `start`..`end`
of one revision's text. An agent names a passage by copying it (`place`); a person selects it
on the rendered page, which the web door maps to a source position that `place_at` checks
against the text (an agent's door never takes a position).

On every save `reanchor` follows each passage from the old text to the new one: one diff of
the whole file, each anchor's offsets mapped through it, and a check that what is there still
resembles the quote (with a search for the quote near the mapped place, or elsewhere when its
context singles it out). Edits above, around or (small ones) inside the passage keep it, with
the quote updated to the passage as it now reads; a deleted passage has no anchor (orphaned).

diff-match-patch does the diff (`diff_main`, `diff_xIndex`) and the fuzzy search of short
patterns (`match_main`, the Bitap algorithm).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from diff_match_patch import diff_match_patch  # type: ignore[import-untyped]

from crewboard.errors import ValidationFailed

CONTEXT = 32  # characters kept before and after a passage
MAX_QUOTE = 2000  # characters an agent may quote
MAX_AFFIX = 200  # characters of anchorPrefix / anchorSuffix
RESEMBLANCE = 0.6  # the share of a quote that must be unchanged for a passage to keep it
ALONE = 16  # a moved quote at least this long needs no context to be found again
AGREEING = 8  # characters of old context around a moved copy that single it out
MAX_OCCURRENCES = 1000  # occurrences of a quote counted before giving up on it
DIFF_SECONDS = 1.0  # diff-match-patch's time limit for one diff (it then gives a coarser one)
MATCH_THRESHOLD = 0.35  # 0: exact only, 1: anything; the fuzzy search's tolerance
MAX_COMMENT = 10_000  # characters of a comment's body
SHOWN_COMMENT = 1_000  # characters of a body a list shows
MAX_THREADS_SHOWN = 100  # threads one list answers


class ThreadStatus(StrEnum):
    OPEN = "open"
    RESOLVED = "resolved"


# What a list may ask for: the two statuses of a thread whose passage is still there, or the
# threads whose passage is gone (orphaned, whatever their status).
THREAD_FILTERS = ("open", "resolved", "orphaned")


@dataclass(frozen=True)
class Anchor:
    """A passage of one revision's text: `text[start:end] == quote`."""

    quote: str
    prefix: str
    suffix: str
    start: int
    end: int


@dataclass(frozen=True)
class CommentThread:
    id: str
    project_id: str
    file_id: str
    status: ThreadStatus
    orphaned: bool
    anchor: Anchor
    anchor_revision: int  # the revision of the file whose text `anchor` is in
    created_by: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    resolved_by: dict[str, Any] | None = None
    resolved_at: datetime | None = None


@dataclass(frozen=True)
class SpecComment:
    id: str
    thread_id: str
    project_id: str
    seq: int  # order within the thread (a per-project counter)
    author: dict[str, Any]
    body: str
    content_version: str  # opaque; new on every edit
    deleted: bool  # a first comment deleted while it had replies: a placeholder
    ai_work: bool  # written through an agent token
    created_at: datetime
    updated_at: datetime

    @property
    def principal(self) -> str:
        """Who may edit it: the token it was written through, or the person directly."""
        return str(self.author.get("tokenId") or self.author.get("userId") or "")


def anchor_at(text: str, start: int, end: int) -> Anchor:
    """The anchor of `text[start:end]`, with its context."""
    return Anchor(
        quote=text[start:end],
        prefix=text[max(0, start - CONTEXT) : start],
        suffix=text[end : end + CONTEXT],
        start=start,
        end=end,
    )


# --- placing a new thread ------------------------------------------------------------------------


def place(text: str, quote: str, prefix: str = "", suffix: str = "") -> Anchor:
    """Where `quote` is in `text`: the one occurrence that `prefix` (right before it) and
    `suffix` (right after it) leave. Whitespace where they meet the quote may differ.

    Raises:
        ValidationFailed: an empty quote; the quote not in the text; no occurrence with the
            prefix and suffix given; several occurrences and nothing singling one out.
    """
    if not quote.strip():
        raise ValidationFailed.field(
            "anchorQuote", "is empty; copy the passage you comment on from the file."
        )
    found = occurrences(text, quote)
    if not found:
        raise ValidationFailed.field(
            "anchorQuote",
            "is not in the file's current text; copy it exactly from the file (read_spec_file), "
            "with its spaces and line breaks, and keep it short (a sentence or a line).",
        )
    fitting = [s for s in found if _fits(text, s, s + len(quote), prefix, suffix)]
    if not fitting:
        field = "anchorPrefix" if prefix else "anchorSuffix"
        raise ValidationFailed(
            f"{field}: the quote is in the file {_times(len(found))}, but never with this "
            f"{'text right before' if prefix else 'text right after'} it; copy anchorPrefix and "
            "anchorSuffix exactly from the file too.",
            {"field": field, "occurrences": len(found)},
        )
    if len(fitting) > 1:
        raise ValidationFailed(
            f"anchorQuote: the quote is in the file {_times(len(fitting))}"
            f"{' with that prefix and suffix' if prefix or suffix else ''}; add a few words "
            "before or after it in anchorPrefix/anchorSuffix, so that only one fits.",
            {"field": "anchorQuote", "occurrences": len(fitting)},
        )
    return anchor_at(text, fitting[0], fitting[0] + len(quote))


def place_at(text: str, quote: str, start: int) -> Anchor:
    """The passage `quote` at `start` in `text`: a person's selection, which the web page
    mapped from the rendered text to the source.

    Raises:
        ValidationFailed: the text there is no longer the quote (the file changed meanwhile).
    """
    if not quote.strip() or start < 0 or text[start : start + len(quote)] != quote:
        raise ValidationFailed.field(
            "anchorQuote", "that passage is no longer in the file; select it again."
        )
    return anchor_at(text, start, start + len(quote))


def occurrences(text: str, quote: str, start: int = 0, stop: int | None = None) -> list[int]:
    """Where `quote` starts in `text[start:stop]` (overlapping ones too), at most
    MAX_OCCURRENCES of them."""
    stop = len(text) if stop is None else stop
    found: list[int] = []
    at = text.find(quote, start, stop)
    while at >= 0 and len(found) < MAX_OCCURRENCES:
        found.append(at)
        at = text.find(quote, at + 1, stop)
    return found


def _times(count: int) -> str:
    return "once" if count == 1 else f"{count} times"


def _fits(text: str, start: int, end: int, prefix: str, suffix: str) -> bool:
    if prefix:
        before = text[max(0, start - len(prefix) - CONTEXT) : start]
        if not (before.endswith(prefix) or before.rstrip().endswith(prefix.rstrip())):
            return False
    if suffix:
        after = text[end : end + len(suffix) + CONTEXT]
        if not (after.startswith(suffix) or after.lstrip().startswith(suffix.lstrip())):
            return False
    return True


# --- following passages through a save -----------------------------------------------------------


def reanchor(old_text: str, new_text: str, anchors: Sequence[Anchor]) -> list[Anchor | None]:
    """Each anchor of `old_text` as it is in `new_text`, or None where its passage is gone.

    One diff of the two texts serves every anchor.
    """
    if old_text == new_text:
        return list(anchors)
    follower = _Follower(old_text, new_text)
    return [follower.follow(anchor) for anchor in anchors]


def resemblance(quote: str, candidate: str) -> float:
    """How much of `quote` is still in `candidate`: 1 the same, 0 nothing in common."""
    longest = max(len(quote), len(candidate))
    if not longest:
        return 1.0
    if min(len(quote), len(candidate)) < longest * RESEMBLANCE:
        return 0.0  # too different in length to resemble: skip the diff
    dmp = _matcher()
    distance = int(dmp.diff_levenshtein(dmp.diff_main(quote, candidate, False)))
    return 1.0 - distance / longest


def _matcher() -> Any:
    dmp = diff_match_patch()
    dmp.Diff_Timeout = DIFF_SECONDS
    dmp.Match_Threshold = MATCH_THRESHOLD
    return dmp


class _Follower:
    """One diff of old to new, and the ways to find a passage in the new text."""

    def __init__(self, old_text: str, new_text: str) -> None:
        self.dmp = _matcher()
        self.new = new_text
        self.diffs = self.dmp.diff_main(old_text, new_text)

    def moved_to(self, at: int) -> int:
        return int(self.dmp.diff_xIndex(self.diffs, at))

    def follow(self, anchor: Anchor) -> Anchor | None:
        """Tried in order: the mapped span unchanged; the quote overlapping it; the mapped
        span edited but resembling the quote; the quote elsewhere, singled out by itself or
        its context (a moved passage); a fuzzy match near the mapped place."""
        quote = anchor.quote
        start = self.moved_to(anchor.start)
        # An insertion right after the passage maps its end past the insertion; the end of
        # its last character does not. Try both.
        ends = {self.moved_to(anchor.end)}
        if anchor.end > anchor.start:
            ends.add(self.moved_to(anchor.end - 1) + 1)
        spans = sorted((start, end) for end in ends if end > start)
        for span in spans:
            if self.new[span[0] : span[1]] == quote:
                return anchor_at(self.new, *span)
        found = self._exact_near(quote, start, max(ends))
        if found is None:
            found = self._resembling(quote, spans)
        if found is None:
            found = self._relocated(anchor)
        if found is None:
            found = self._fuzzy(anchor, start)
        return None if found is None else anchor_at(self.new, *found)

    def _exact_near(self, quote: str, start: int, end: int) -> tuple[int, int] | None:
        """The copy of the quote overlapping the mapped span that starts nearest to it (the
        diff may have slid an insertion next to the passage into it)."""
        low = max(0, start - len(quote) + 1)
        found = [s for s in occurrences(self.new, quote, low, end + len(quote) - 1) if s < end]
        if not found:
            return None
        best = min(found, key=lambda s: abs(s - start))
        return best, best + len(quote)

    def _resembling(self, quote: str, spans: list[tuple[int, int]]) -> tuple[int, int] | None:
        scored = [(resemblance(quote, self.new[s:e]), (s, e)) for s, e in spans]
        best = max(scored, default=None)
        return best[1] if best is not None and best[0] >= RESEMBLANCE else None

    def _relocated(self, anchor: Anchor) -> tuple[int, int] | None:
        """The quote elsewhere in the text: the only copy when it is long enough to stand
        alone or its context agrees, else the copy whose context agrees best, when one does."""
        quote = anchor.quote
        found = occurrences(self.new, quote)
        if not found:
            return None
        scores = sorted(
            ((self._context_score(anchor, s, s + len(quote)), s) for s in found), reverse=True
        )
        best_score, best = scores[0]
        if len(scores) == 1:
            usable = best_score >= AGREEING or len(quote.strip()) >= ALONE
        else:
            usable = best_score >= AGREEING and best_score > scores[1][0]
        return (best, best + len(quote)) if usable else None

    def _context_score(self, anchor: Anchor, start: int, end: int) -> int:
        """How many characters of the old context are still right around `new[start:end]`."""
        before = self.new[max(0, start - CONTEXT) : start]
        after = self.new[end : end + CONTEXT]
        same_before = 0
        while (
            same_before < min(len(before), len(anchor.prefix))
            and before[-1 - same_before] == anchor.prefix[-1 - same_before]
        ):
            same_before += 1
        same_after = 0
        while (
            same_after < min(len(after), len(anchor.suffix))
            and after[same_after] == anchor.suffix[same_after]
        ):
            same_after += 1
        return same_before + same_after

    def _fuzzy(self, anchor: Anchor, start: int) -> tuple[int, int] | None:
        """A near match of the quote around the mapped place (Bitap: a short quote whole, a
        longer one by its first and last MaxBits characters), where the old context agrees."""
        quote = anchor.quote
        bits = int(self.dmp.Match_MaxBits)
        if len(quote) <= bits:
            head = int(self.dmp.match_main(self.new, quote, start))
            span = (head, self._end_from(quote, head)) if head >= 0 else (-1, -1)
        else:
            head = int(self.dmp.match_main(self.new, quote[:bits], start))
            if head < 0:
                return None
            tail = int(self.dmp.match_main(self.new, quote[-bits:], head + len(quote) - bits))
            span = (head, tail + bits) if tail >= 0 else (-1, -1)
        if span[0] < 0 or span[1] <= span[0]:
            return None
        if self._context_score(anchor, *span) < AGREEING:
            return None
        return span if resemblance(quote, self.new[span[0] : span[1]]) >= RESEMBLANCE else None

    def _end_from(self, quote: str, head: int) -> int:
        """Where a near copy of `quote` starting at `head` ends: the end of the quote's last
        character mapped through a diff of the quote and the text from there."""
        window = self.new[head : head + int(len(quote) / RESEMBLANCE) + 1]
        diffs = self.dmp.diff_main(quote, window, False)
        return head + int(self.dmp.diff_xIndex(diffs, len(quote) - 1)) + 1
