"""`tasks.md` files: checkbox lines are tasks on the board.

A task line is a bullet (`-`, `*` or `+`) with a box: `[ ]` pending, `[-]` in progress, `[x]`
(or `[X]`) done, then the title. The lines indented below it that are bullets or text (up to
the next line at its own indent or less) are the task's details. Every other line is kept as
it is. Rewriting a task's box changes that one character and no other byte.

A task's title is the line's text after the box, less a leading task id that spec layouts
write for their own bookkeeping (`task_title`): Spec Kit's `T001` with the `[P]` and `[US1]`
markers after it, or OpenSpec's `1.1`. Only the start of the text is looked at (`Fix T001` and
`Ship 1.2` keep theirs), and only in a file that numbers its tasks: at least two boxes, and at
least half of them, start with such an id. So `1.5 times faster` among unnumbered boxes keeps
its number. The file keeps the ids.

The seven board statuses show as three boxes; `BOX_OF` and `STATUS_OF_BOX` are the one place
the mapping is written (docs/agents.md, "`tasks.md` and the board", repeats it as a table).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from crewboard.domain.board.tasks import TaskStatus

FILE_NAME = "tasks.md"


class Box(StrEnum):
    PENDING = " "
    IN_PROGRESS = "-"
    DONE = "x"


# Board status → the box it shows as. Each box is one group of statuses.
BOX_OF: dict[TaskStatus, Box] = {
    TaskStatus.BACKLOG: Box.PENDING,
    TaskStatus.READY_FOR_AI: Box.PENDING,
    TaskStatus.IN_PROGRESS: Box.IN_PROGRESS,
    TaskStatus.BLOCKED: Box.IN_PROGRESS,
    TaskStatus.REVIEW: Box.IN_PROGRESS,
    TaskStatus.DONE: Box.DONE,
    TaskStatus.APPROVED: Box.DONE,
}
# A box → the status a task moves to when its box changes to it from another group.
STATUS_OF_BOX: dict[Box, TaskStatus] = {
    Box.PENDING: TaskStatus.BACKLOG,
    Box.IN_PROGRESS: TaskStatus.IN_PROGRESS,
    Box.DONE: TaskStatus.DONE,
}


def is_tasks_file(path: str) -> bool:
    """Whether a spec file's path names a `tasks.md` (in any folder)."""
    return path.rsplit("/", 1)[-1] == FILE_NAME


def status_for_box(current: TaskStatus | None, box: Box) -> TaskStatus:
    """The status a task with `current` status takes when its file shows `box`: unchanged when
    the box is already its group's (a task in review under `[-]` stays in review)."""
    if current is not None and BOX_OF[current] is box:
        return current
    return STATUS_OF_BOX[box]


_TASK_LINE = re.compile(r"^(?P<indent>[ \t]*)[-*+][ \t]+\[(?P<box>[ xX-])\][ \t]+(?P<title>\S.*)$")


# Spec Kit: `T001`, then any of `[P]` (parallel) and `[US1]` (its user story); OpenSpec: `1.1`.
_LAYOUT_ID = re.compile(r"^(?:T\d{3,}(?:[ \t]+\[(?:P|US\d+)\])*+|\d+(?:\.\d+)+\.?)[ \t]+(?=\S)")


def task_title(text: str) -> str:
    """The board title of a box's text: without a leading Spec Kit or OpenSpec task id (a text
    that is nothing but the id stays as it is)."""
    return _LAYOUT_ID.sub("", text, count=1)


@dataclass(frozen=True)
class TaskItem:
    """One checkbox line of a file."""

    line: int  # 1-based line number
    box: Box
    title: str
    details: str  # the indented lines below it, dedented, joined by newlines
    box_offset: int  # byte offset of the box character in the file


def _box(char: str) -> Box:
    return Box.DONE if char in "xX" else Box(char)


def _indent_width(indent: str) -> int:
    return len(indent.expandtabs(4))


def parse(text: bytes) -> list[TaskItem]:
    """The task lines of a file's bytes (UTF-8), in file order."""
    lines = text.split(b"\n")
    offsets: list[int] = []
    at = 0
    for raw in lines:
        offsets.append(at)
        at += len(raw) + 1
    decoded = [raw.decode("utf-8", "replace").rstrip("\r") for raw in lines]
    items: list[TaskItem] = []
    in_fence = False
    for i, line in enumerate(decoded):
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        match = _TASK_LINE.match(line)
        if match is None:
            continue
        width = _indent_width(match["indent"])
        details = _details(decoded, i + 1, width)
        box_at = lines[i].index(b"[", len(match["indent"].encode())) + 1
        items.append(
            TaskItem(
                line=i + 1,
                box=_box(match["box"]),
                title=match["title"].strip(),
                details=details,
                box_offset=offsets[i] + box_at,
            )
        )
    numbered = sum(1 for item in items if _LAYOUT_ID.match(item.title))
    strip = numbered >= 2 and 2 * numbered >= len(items)
    return [
        replace(item, title=(task_title(item.title) if strip else item.title)[:300])
        for item in items
    ]


def _details(lines: Sequence[str], start: int, width: int) -> str:
    """The lines below a task line indented deeper than it (blank lines between them kept),
    dedented to the shallowest of them; a nested task line ends them."""
    body: list[str] = []
    for line in lines[start:]:
        if not line.strip():
            body.append("")
            continue
        indent = line[: len(line) - len(line.lstrip())]
        if _indent_width(indent) <= width or _TASK_LINE.match(line):
            break
        body.append(line.expandtabs(4))
    while body and not body[-1]:
        body.pop()
    if not body:
        return ""
    cut = min(len(b) - len(b.lstrip()) for b in body if b)
    return "\n".join(b[cut:] for b in body)


def set_box(text: bytes, item: TaskItem, box: Box) -> bytes:
    """The file with `item`'s box changed to `box`: one byte differs, every other stays."""
    at = item.box_offset
    if text[at : at + 1] not in (b" ", b"-", b"x", b"X") or text[at - 1 : at] != b"[":
        raise ValueError(f"line {item.line} has no box where it was read")
    return text[:at] + box.value.encode() + text[at + 1 :]


# --- identity across edits ------------------------------------------------------------------


@dataclass(frozen=True)
class Known:
    """A task a file made before, as the board remembers it."""

    task_id: str
    title: str
    line: int


SIMILAR_ENOUGH = 0.6  # a reworded line keeps its task when its title is at least this alike


def match(known: Sequence[Known], items: Sequence[TaskItem]) -> dict[int, str]:
    """Which task each of the file's task lines is (index into `items` → task id); a line
    with no task is new, a task with no line was removed.

    Exact titles match first (in file order, the nearest line first when a title repeats);
    then each remaining line takes the remaining task whose title is most alike
    (difflib), at least SIMILAR_ENOUGH, ties to the nearest old line.
    """
    found: dict[int, str] = {}
    left = list(known)
    for i, item in enumerate(items):
        same = [k for k in left if k.title == item.title]
        if same:
            best = min(same, key=lambda k: abs(k.line - item.line))
            found[i] = best.task_id
            left.remove(best)
    for i, item in enumerate(items):
        if i in found or not left:
            continue
        scored = [
            (
                difflib.SequenceMatcher(None, k.title, item.title).ratio(),
                -abs(k.line - item.line),
                k,
            )
            for k in left
        ]
        ratio, _near, best = max(scored, key=lambda s: (s[0], s[1]))
        if ratio >= SIMILAR_ENOUGH:
            found[i] = best.task_id
            left.remove(best)
    return found
