"""The review inbox: the states and names shared by drafts, decisions, proposals and
acceptance rules. Pure values, no I/O."""

from __future__ import annotations

from enum import StrEnum


class DraftStatus(StrEnum):
    PENDING = "pending"
    REVISION_REQUESTED = "revision_requested"  # a follow-up task carries the reviewer's comment
    APPROVED = "approved"
    REJECTED = "rejected"
    SAVED_TO_MEMORY = "saved_to_memory"  # approved, and a memory record made from it
    ACCEPTED_BY_RULE = "accepted_by_rule"  # an acceptance rule of the project took it
    RETURNED_TO_REVIEW = "returned_to_review"  # a person undid a rule's acceptance
    SUPERSEDED = "superseded"  # a newer draft of the same task was accepted


# Drafts a person still has to decide about: the inbox shows these.
WAITING: frozenset[DraftStatus] = frozenset({DraftStatus.PENDING, DraftStatus.RETURNED_TO_REVIEW})
# Drafts whose content became (or may become) the task's accepted result.
ACCEPTED: frozenset[DraftStatus] = frozenset(
    {DraftStatus.APPROVED, DraftStatus.SAVED_TO_MEMORY, DraftStatus.ACCEPTED_BY_RULE}
)
# Older drafts an accepted newer one closes as superseded.
SUPERSEDABLE: frozenset[DraftStatus] = frozenset(
    {DraftStatus.PENDING, DraftStatus.RETURNED_TO_REVIEW, DraftStatus.REVISION_REQUESTED}
)


class ReferenceKind(StrEnum):
    COMMIT = "commit"
    BRANCH = "branch"
    PULL_REQUEST = "pull_request"
    TESTS = "tests"
    LINK = "link"


class ProposalKind(StrEnum):
    TASK = "task"
    TASK_UPDATE = "task_update"
    TASK_DELETE = "task_delete"
    ROLE = "role"
    COMPOSITION = "composition"


class ProposalStatus(StrEnum):
    PENDING = "pending"
    ACCEPTED = "accepted"
    DISMISSED = "dismissed"


class RuleMatch(StrEnum):
    """What an acceptance rule takes: every hand-in, or those of one task type or AI role."""

    ALL = "all"
    TASK_TYPE = "task_type"
    AI_ROLE = "ai_role"


# Experience a team role gains per accepted task, and the xp each level needs.
XP_PER_ACCEPTED_TASK = 10
XP_PER_LEVEL = 50


def level_for(xp: int) -> int:
    """A role's level: 1 to start, one more for every XP_PER_LEVEL points."""
    return 1 + max(xp, 0) // XP_PER_LEVEL
