"""get_task's answer inside the reply budget.

The full answer keeps every section; what could outgrow the budget is bounded here, in this
order: the checklist and the subtasks to a few KiB each (with `checklistTotal` /
`subtasksTotal` when rows were left out; list_tasks with parentTaskId has every subtask), then,
only for a task whose own lists would leave too little room, the longest of its lists
(contextRefs, relationships, ...) loses its tail, with `<list>Total`. The context pack is then
built in the room left (at most its own PACK_BUDGET), keeping TEXT_RESERVE for the task's
texts. Last, the brief and description share what room is left: a cut one is a prefix flagged
`briefTruncated` / `descriptionTruncated` with `briefLength` / `descriptionLength`, and the
rest is read in windows (get_task's textField, textOffset, textLimit; present.py). The cutting rule
itself is services/text_windows.py, shared with memory and the context pack.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from crewboard.services.board.fitting import TEXT_FIELDS
from crewboard.services.text_windows import (
    cut_text,
    cut_texts,
    json_size,
    leading_rows,
    text_size,
)

CHECKLIST_BYTES = 3 * 1024
CHECKLIST_ITEM_BYTES = 400
SUBTASKS_BYTES = 4 * 1024
# Room the brief and description keep before the pack is built or the task's lists shortened.
TEXT_RESERVE = 8 * 1024
PACK_LEAST = 8 * 1024  # the task's own lists are shortened before the pack gets less
PACK_KEYS = 128  # "contextPack", "contextReceiptId" and its id around the pack
# Lists of the answer that may lose their tail, as (where, the keys cut together).
LISTS: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (("task",), ("contextRefs",)),
    (("task",), ("relationships",)),
    ((), ("relationships",)),
    (("task",), ("blockedByTaskIds", "blockedByNumbers")),
    (("task",), ("contextItemIds",)),
    (("task",), ("externalReferenceIds",)),
    (("readiness",), ("openBlockerIds",)),
)


def fit_task_answer(
    answer: dict[str, Any],
    budget: int,
    *,
    subtasks_total: int | None = None,
    pack: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """`answer` (get_task's full form without its pack, or a write's answer carrying `task`)
    within `budget` bytes of compact JSON, as the module docstring says; `pack` is the context
    pack (and its receipt) built within `pack_room` bytes. Returns a new dict; `answer` is not
    changed."""
    fitted, _, _ = _frame(answer, budget, subtasks_total, packed=pack is not None)
    if pack is not None:
        fitted.update(pack)
    room = budget - json_size({**fitted, "task": _without_texts(fitted["task"])})
    fitted["task"] = cut_texts(fitted["task"], TEXT_FIELDS, room)
    return fitted


def pack_room(answer: dict[str, Any], budget: int, *, subtasks_total: int | None = None) -> int:
    """The bytes `fit_task_answer` leaves the context pack of `answer` within `budget`."""
    _, bare, texts = _frame(answer, budget, subtasks_total, packed=True)
    room = budget - json_size(bare) - min(texts, TEXT_RESERVE) - PACK_KEYS
    return max(room, PACK_LEAST // 2)


def _frame(
    answer: dict[str, Any], budget: int, subtasks_total: int | None, *, packed: bool
) -> tuple[dict[str, Any], dict[str, Any], int]:
    """The answer with its rows bounded and its lists shortened, the same with empty texts,
    and the size of its texts."""
    fitted = {**answer, "task": dict(answer["task"])}
    if "readiness" in fitted:
        fitted["readiness"] = dict(fitted["readiness"])
    if "checklist" in fitted:
        _bound_rows(fitted, "checklist", CHECKLIST_BYTES, item=_checklist_item)
    if "subtasks" in fitted:
        _bound_rows(fitted, "subtasks", SUBTASKS_BYTES, total=subtasks_total)
    task = fitted["task"]
    texts = sum(text_size(task[f]) for f in TEXT_FIELDS if isinstance(task.get(f), str))
    bare = {**fitted, "task": _without_texts(task)}
    reserve = min(texts, TEXT_RESERVE) + (PACK_LEAST + PACK_KEYS if packed else 0)
    _shorten_lists(fitted, bare, budget - reserve)
    return fitted, bare, texts


def _without_texts(task: dict[str, Any]) -> dict[str, Any]:
    return {**task, **{f: "" for f in TEXT_FIELDS if f in task}}


def cut_fields(answer: dict[str, Any]) -> list[str]:
    """The task texts `fit_task_answer` cut, for a door's hint."""
    task = answer.get("task", {})
    return [f for f in TEXT_FIELDS if task.get(f"{f}Truncated")]


# --- helpers ---------------------------------------------------------------------------------


def _checklist_item(item: dict[str, Any]) -> dict[str, Any]:
    return cut_text(item, "text", CHECKLIST_ITEM_BYTES)


def _bound_rows(
    answer: dict[str, Any],
    key: str,
    room: int,
    *,
    item: Any = None,
    total: int | None = None,
) -> None:
    """Keep the leading rows of `answer[key]` within `room` bytes; `<key>Total` when cut."""
    rows: list[Any] = answer[key]
    kept = leading_rows([item(row) for row in rows] if item is not None else rows, room)
    answer[key] = kept
    count = max(len(rows), total or 0)
    if len(kept) < count:
        _put_after(answer, key, f"{key}Total", count)


def _shorten_lists(fitted: dict[str, Any], bare: dict[str, Any], target: int) -> None:
    """Drop the tail of the longest of LISTS until `bare` (the answer with empty texts) takes
    at most `target` bytes; the same cuts are made in `fitted` (both have their own copies of
    the dicts that hold the lists, or share one, which is cut once)."""
    while (excess := json_size(bare) - target) > 0:
        found = _longest(bare)
        if found is None:
            return
        where, keys = found
        holder_bare, holder = _dig(bare, where), _dig(fitted, where)
        rows = holder_bare[keys[0]]
        keep = len(rows)
        dropped = 0
        while keep > 0 and dropped < excess:
            keep -= 1
            dropped += sum(json_size(holder_bare[k][keep]) + 1 for k in keys)
        for target_holder in (holder_bare, holder):
            for k in keys:
                target_holder[k] = target_holder[k][:keep]
            if f"{keys[0]}Total" not in target_holder:
                _put_after(target_holder, keys[-1], f"{keys[0]}Total", len(rows))


def _longest(answer: dict[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    best, size = None, 0
    for where, keys in LISTS:
        holder = _dig(answer, where)
        if holder is None or not holder.get(keys[0]):
            continue
        bytes_ = sum(json_size(holder.get(k, [])) for k in keys)
        if bytes_ > size:
            best, size = (where, keys), bytes_
    return best


def _dig(answer: dict[str, Any], where: Sequence[str]) -> Any:
    holder: Any = answer
    for name in where:
        holder = holder.get(name) if isinstance(holder, dict) else None
    return holder if isinstance(holder, dict) else None


def _put_after(holder: dict[str, Any], after: str, key: str, value: Any) -> None:
    items = list(holder.items())
    holder.clear()
    for name, current in items:
        holder[name] = current
        if name == after:
            holder[key] = value
    holder.setdefault(key, value)
