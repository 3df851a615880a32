"""The one error tree of Crewboard.

Every refusal a caller can see is a `CrewboardError` with a stable code, a sentence that
says why and what to do, and details a program can act on. Each door converts it in one
place: MCP into an `isError` result, REST into a JSON body with the HTTP status below, the
web app into a flash message, the CLI into a message on stderr and exit status 1.

    CrewboardError
    ├── Unauthenticated          UNAUTHENTICATED          401
    ├── NotFound                 NOT_FOUND                404
    ├── PermissionDenied         PERMISSION_DENIED        403
    │   └── HumanIdentityRequired HUMAN_IDENTITY_REQUIRED 403
    ├── ValidationFailed         VALIDATION               422
    ├── LimitExceeded            LIMIT_EXCEEDED           422
    │   └── BodyTooLarge         LIMIT_EXCEEDED           413
    ├── AlreadyExists            ALREADY_EXISTS           409
    │   └── HandoffAlreadyExists HANDOFF_ALREADY_EXISTS   409
    ├── RevisionConflict         REVISION_CONFLICT        409
    ├── IdempotencyConflict      IDEMPOTENCY_CONFLICT     409
    ├── ClaimLost                CLAIM_LOST               409  (a write sent a claim fence that
    │                                                          is not the task's live claim)
    ├── Conflict                 CONFLICT                 409  (the thing acted on was taken
    │                                                          over; details.reason says how)
    ├── Gone                     GONE                     410  (the thing acted on was ended
    │                                                          for good: start a new one)
    ├── MethodNotAllowed         METHOD_NOT_ALLOWED       405  (REST: a path without that method)
    ├── Unavailable              UNAVAILABLE              503  (the database is out of reach for a
    │                                                          moment: retry, keyed writes with
    │                                                          the same key)
    └── InternalError            INTERNAL                 500  (REST: a bug, logged; never raised
                                                               on purpose)
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, ClassVar


class ErrorCode(StrEnum):
    UNAUTHENTICATED = "UNAUTHENTICATED"
    NOT_FOUND = "NOT_FOUND"
    PERMISSION_DENIED = "PERMISSION_DENIED"
    HUMAN_IDENTITY_REQUIRED = "HUMAN_IDENTITY_REQUIRED"
    VALIDATION = "VALIDATION"
    LIMIT_EXCEEDED = "LIMIT_EXCEEDED"
    ALREADY_EXISTS = "ALREADY_EXISTS"
    HANDOFF_ALREADY_EXISTS = "HANDOFF_ALREADY_EXISTS"
    REVISION_CONFLICT = "REVISION_CONFLICT"
    IDEMPOTENCY_CONFLICT = "IDEMPOTENCY_CONFLICT"
    CLAIM_LOST = "CLAIM_LOST"
    CONFLICT = "CONFLICT"
    GONE = "GONE"
    METHOD_NOT_ALLOWED = "METHOD_NOT_ALLOWED"
    UNAVAILABLE = "UNAVAILABLE"
    INTERNAL = "INTERNAL"


class CrewboardError(Exception):
    """A refusal with a stable code, a one-sentence message and machine-readable details."""

    code: ClassVar[ErrorCode]
    http_status: ClassVar[int]

    def __init__(self, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details: dict[str, Any] = details or {}

    def to_dict(self) -> dict[str, Any]:
        return {"code": str(self.code), "message": self.message, "details": self.details}


class Unauthenticated(CrewboardError):
    code = ErrorCode.UNAUTHENTICATED
    http_status = 401


class NotFound(CrewboardError):
    code = ErrorCode.NOT_FOUND
    http_status = 404


class PermissionDenied(CrewboardError):
    code = ErrorCode.PERMISSION_DENIED
    http_status = 403


class HumanIdentityRequired(PermissionDenied):
    code = ErrorCode.HUMAN_IDENTITY_REQUIRED


class ValidationFailed(CrewboardError):
    code = ErrorCode.VALIDATION
    http_status = 422

    @classmethod
    def field(cls, field: str, problem: str, accepted: list[str] | None = None) -> ValidationFailed:
        """Build the usual refusal of one field, naming the accepted values when there are few."""
        message = f"{field}: {problem}"
        details: dict[str, Any] = {"field": field}
        if accepted is not None:
            message += f" Accepted values: {', '.join(accepted)}."
            details["accepted"] = accepted
        return cls(message, details)


class LimitExceeded(CrewboardError):
    code = ErrorCode.LIMIT_EXCEEDED
    http_status = 422

    @classmethod
    def over(cls, field: str, actual: int, limit: int, unit: str = "characters") -> LimitExceeded:
        """Build the usual refusal of one field over its limit, naming both numbers."""
        return cls(
            f"{field}: {actual} {unit} is over the limit of {limit}.",
            {"field": field, "limit": limit, "actual": actual},
        )


class BodyTooLarge(LimitExceeded):
    """A request body over the size a door reads (REST answers 413 Content Too Large)."""

    http_status = 413

    @classmethod
    def of(cls, limit: int) -> BodyTooLarge:
        return cls(
            f"body: over the limit of {limit} bytes; send less at once.",
            {"field": "body", "limit": limit},
        )


class BadRequest(ValidationFailed):
    """A request that cannot be read at all (not JSON, a required header missing): 400."""

    http_status = 400


class AlreadyExists(CrewboardError):
    code = ErrorCode.ALREADY_EXISTS
    http_status = 409


class HandoffAlreadyExists(AlreadyExists):
    """The author already wrote the handoff of that project and day: amend it instead."""

    code = ErrorCode.HANDOFF_ALREADY_EXISTS


class RevisionConflict(CrewboardError):
    code = ErrorCode.REVISION_CONFLICT
    http_status = 409


class StaleBaseRevision(CrewboardError):
    """A delta names a base older than the newest revision: applied there it would undo what
    the newer revisions changed. REVISION_CONFLICT, but never an HTTP precondition failure
    (the revision the writer read, `expectedVersion` or If-Match, may well be current)."""

    code = ErrorCode.REVISION_CONFLICT
    http_status = 409


class IdempotencyConflict(CrewboardError):
    code = ErrorCode.IDEMPOTENCY_CONFLICT
    http_status = 409


class ClaimLost(CrewboardError):
    """A write sent the fence of a claim that is no longer the task's live one (its lease
    lapsed, a person broke it, another holder took the task): nothing was written. Details
    name the current holder (None when free) and the current fence."""

    code = ErrorCode.CLAIM_LOST
    http_status = 409


class Conflict(CrewboardError):
    """The thing acted on was taken over by a newer one (a code bridge replaced by the
    person's next `crewboard reverse`): `details.reason` says how; nothing was done."""

    code = ErrorCode.CONFLICT
    http_status = 409


class Gone(CrewboardError):
    """The thing acted on was ended for good (a closed code bridge): make a new one."""

    code = ErrorCode.GONE
    http_status = 410


class MethodNotAllowed(CrewboardError):
    code = ErrorCode.METHOD_NOT_ALLOWED
    http_status = 405


class Unavailable(CrewboardError):
    """This node cannot reach its database just now (a restart, a fail-over, a cut network):
    nothing is known of a write that failed this way, so a client retries it with the same
    idempotency key (or reads to find out), after `retry_after` seconds."""

    code = ErrorCode.UNAVAILABLE
    http_status = 503
    retry_after = 2  # seconds a client waits before it tries again (REST: Retry-After)


class InternalError(CrewboardError):
    """What a door answers for a bug it logged: the one shape, no detail of the failure."""

    code = ErrorCode.INTERNAL
    http_status = 500


ERROR_TYPES: tuple[type[CrewboardError], ...] = (
    Unauthenticated,
    NotFound,
    PermissionDenied,
    HumanIdentityRequired,
    ValidationFailed,
    LimitExceeded,
    BodyTooLarge,
    AlreadyExists,
    HandoffAlreadyExists,
    RevisionConflict,
    IdempotencyConflict,
    ClaimLost,
    Conflict,
    Gone,
    MethodNotAllowed,
    Unavailable,
    InternalError,
)
