"""Checking the arguments of the batch board changes (update_tasks, set_task_status) before any read."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from crewboard.domain.board.tasks import (
    MAX_IDS,
    Relation,
    TaskStatus,
    check_tags,
)
from crewboard.domain.identity.access import parse_enum
from crewboard.domain.validation import check_text
from crewboard.errors import (
    LimitExceeded,
    ValidationFailed,
)
from crewboard.services.board.task_checks import (
    check_fields,
)
from crewboard.services.board.tasks import camel

# The fields update_tasks sets (snake_case; camelCase on the wire). Omitted: unchanged.
# The fields update_tasks sets (snake_case; camelCase on the wire). Omitted: unchanged.
PLANNING_FIELDS = (
    "assignee_id",
    "assignee_type",
    "human_owner_id",
    "priority",
    "story_points",
    "cycle",
    "start_date",
    "due_date",
)
CHANGE_ARGUMENTS = [
    *(camel(name) for name in PLANNING_FIELDS),
    "addLabels",
    "removeLabels",
    "addRelationships",
    "removeRelationships",
]
MAX_RELATIONSHIPS = 50  # per call; keeps the acknowledgement inside the response budget
MAX_REF = 200


@dataclass(frozen=True)
class PlanningChange:
    """What update_tasks does to each task, checked: fields (None clears), labels, links."""

    fields: dict[str, Any]
    add_labels: tuple[str, ...] = ()
    remove_labels: tuple[str, ...] = ()
    add_links: tuple[tuple[Relation, str], ...] = ()
    remove_links: tuple[str, ...] = ()


def check_task_refs(
    field: str, refs: list[str], *, item: str = "", limit: int = MAX_IDS, required: bool = True
) -> list[str]:
    """Task ids, keys or numbers (at least one when `required`), stripped, in order.

    `item` names the key inside each entry (".taskId"), so refusals name `field.i.taskId`.

    Raises:
        ValidationFailed: none given, or an empty one. LimitExceeded: too many, or too long.
    """
    if required and not refs:
        raise ValidationFailed.field(field, "name at least one task (its id or key, e.g. CRW-12).")
    if len(refs) > limit:
        raise LimitExceeded(
            f"{field}: {len(refs)} items is over the limit of {limit} a call; split the work.",
            {"field": field, "limit": limit},
        )
    return [
        check_text(f"{field}.{i}{item}", ref, max_length=MAX_REF, required=True)
        for i, ref in enumerate(refs)
    ]


def check_planning_change(
    fields: Mapping[str, Any],
    *,
    add_labels: list[str] | None = None,
    remove_labels: list[str] | None = None,
    add_relationships: list[Mapping[str, Any]] | None = None,
    remove_relationships: list[str] | None = None,
) -> PlanningChange:
    """Validate update_tasks' change; every refusal names its field.

    Raises:
        ValidationFailed, LimitExceeded.
    """
    unknown = sorted(set(fields) - set(PLANNING_FIELDS))
    if unknown:
        raise ValidationFailed.field(
            camel(unknown[0]),
            "is not a planning field; update_tasks never changes status or text.",
            CHANGE_ARGUMENTS,
        )
    if "priority" in fields and fields["priority"] is None:
        raise ValidationFailed.field(
            "priority", "cannot be cleared; every task has a priority.", ["low", "medium", "high"]
        )
    checked = check_fields(dict(fields))
    for name in ("assignee_id", "human_owner_id"):
        if checked.get(name) is not None:
            checked[name] = check_text(
                camel(name), checked[name], max_length=MAX_REF, required=True
            )
    change = PlanningChange(
        fields=checked,
        add_labels=check_tags("addLabels", add_labels or []),
        remove_labels=check_tags("removeLabels", remove_labels or []),
        add_links=tuple(_check_add_links(add_relationships or [])),
        remove_links=tuple(
            check_task_refs(
                "removeRelationships",
                [str(ref) for ref in remove_relationships or []],
                limit=MAX_RELATIONSHIPS,
                required=False,
            )
        ),
    )
    _check_label_overlap(change)
    if not (
        change.fields
        or change.add_labels
        or change.remove_labels
        or change.add_links
        or change.remove_links
    ):
        raise ValidationFailed.field(
            "arguments", "name at least one change to make to the tasks.", CHANGE_ARGUMENTS
        )
    return change


def _check_label_overlap(change: PlanningChange) -> None:
    adding = {label.lower() for label in change.add_labels}
    for label in change.remove_labels:
        if label.lower() in adding:
            raise ValidationFailed.field(
                "removeLabels", f"{label!r} is also in addLabels; name each label in one list."
            )


def _check_add_links(items: list[Mapping[str, Any]]) -> list[tuple[Relation, str]]:
    refs = check_task_refs(
        "addRelationships",
        [str(entry.get("taskId") or "") for entry in items],
        item=".taskId",
        limit=MAX_RELATIONSHIPS,
        required=False,
    )
    return [
        (parse_enum(str(entry.get("type")), Relation, f"addRelationships.{i}.type"), ref)
        for i, (entry, ref) in enumerate(zip(items, refs, strict=True))
    ]


FILE_PREFIX = "spf_"  # an expectedVersions entry for a tasks.md spec file, not a task
MAX_VERSION = 200


@dataclass(frozen=True)
class StatusChanges:
    """set_task_status' arguments, checked: (ref, status) in order, the revision expected of
    some tasks (by ref), and the contentVersion expected of some files (by spec file id)."""

    changes: list[tuple[str, TaskStatus]]
    task_versions: dict[str, int]
    file_versions: dict[str, str]


def check_status_changes(
    changes: list[Mapping[str, Any]], expected_versions: Mapping[str, Any] | None
) -> StatusChanges:
    """Validate set_task_status' changes and expected versions; refusals name the field.

    Raises:
        ValidationFailed, LimitExceeded.
    """
    refs = check_task_refs(
        "changes", [str(entry.get("taskId") or "") for entry in changes], item=".taskId"
    )
    checked: list[tuple[str, TaskStatus]] = []
    for i, (entry, ref) in enumerate(zip(changes, refs, strict=True)):
        if ref in refs[:i]:
            raise ValidationFailed.field(
                f"changes.{i}.taskId", f"{ref} is named twice; give one status per task."
            )
        checked.append(
            (ref, parse_enum(str(entry.get("status")), TaskStatus, f"changes.{i}.status"))
        )
    tasks, files = _check_expected_versions(refs, dict(expected_versions or {}))
    return StatusChanges(checked, tasks, files)


def _check_expected_versions(
    refs: list[str], versions: dict[str, Any]
) -> tuple[dict[str, int], dict[str, str]]:
    if len(versions) > MAX_IDS:
        raise LimitExceeded(
            f"expectedVersions: {len(versions)} entries is over the limit of {MAX_IDS}.",
            {"field": "expectedVersions", "limit": MAX_IDS},
        )
    named = set(refs)
    checked: dict[str, int] = {}
    files: dict[str, str] = {}
    for given, version in versions.items():
        ref = str(given).strip()
        field = f"expectedVersions.{ref}"
        if ref.startswith(FILE_PREFIX):
            if not isinstance(version, str) or not version.strip():
                raise ValidationFailed.field(
                    field, "must be the file's contentVersion (from list_tasks or get_spec_file)."
                )
            files[ref] = check_text(field, version.strip(), max_length=MAX_VERSION, required=True)
            continue
        if ref not in named:
            raise ValidationFailed.field(
                field,
                "names no task of changes; use the same taskId, or a spec file id (spf_…) with "
                "its contentVersion.",
            )
        if isinstance(version, bool) or not isinstance(version, int) or version < 1:
            raise ValidationFailed.field(field, f"must be a revision (1 or more); got {version!r}.")
        checked[ref] = version
    return checked, files
