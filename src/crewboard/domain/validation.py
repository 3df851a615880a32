"""Checks shared by every use case; each refusal names the field and what is accepted."""

from __future__ import annotations

import re
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from crewboard.errors import LimitExceeded, ValidationFailed

MAX_IDEMPOTENCY_KEY_LENGTH = 128
# Every whole number a door takes fits the INTEGER columns that hold it (32 bits on
# PostgreSQL): a larger one is refused naming the field, never passed on to fail in the database.
INT32_MAX = 2**31 - 1
_WHOLE = re.compile(r"^-?[0-9]{1,12}$")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+$")


def check_no_nul(field: str, value: str) -> str:
    """Refuse U+0000, which PostgreSQL cannot store in text (SQLite can: the two must agree).

    Raises:
        ValidationFailed: naming the field.
    """
    if "\x00" in value:
        raise ValidationFailed.field(
            field, "contains a NUL character (\\u0000), which cannot be stored."
        )
    return value


def check_text(field: str, value: str, *, max_length: int, required: bool = False) -> str:
    """Return `value` stripped of surrounding whitespace when it fits.

    Raises:
        ValidationFailed: when required and empty.
        LimitExceeded: when longer than `max_length` characters.
    """
    text = check_no_nul(field, value.strip())
    if required and not text:
        raise ValidationFailed.field(field, "must not be empty.")
    if len(text) > max_length:
        raise LimitExceeded.over(field, len(text), max_length)
    return text


def check_email(value: str) -> str:
    """Normalise an email address (lower case) and check its shape.

    Raises:
        ValidationFailed: when it is not name@domain.
    """
    email = check_text("email", value, max_length=254, required=True).lower()
    if not _EMAIL.match(email):
        raise ValidationFailed.field("email", f"{value!r} is not an email address (name@domain).")
    return email


def check_idempotency_key(value: str | None) -> str | None:
    """Accept a missing key or 1-128 characters.

    Raises:
        ValidationFailed: when empty.
        LimitExceeded: when longer than 128 characters.
    """
    if value is None:
        return None
    if not value:
        raise ValidationFailed.field("idempotencyKey", "must not be empty; omit it instead.")
    check_no_nul("idempotencyKey", value)
    if len(value) > MAX_IDEMPOTENCY_KEY_LENGTH:
        raise LimitExceeded(
            f"idempotencyKey: {len(value)} characters is over the limit of "
            f"{MAX_IDEMPOTENCY_KEY_LENGTH}.",
            {"field": "idempotencyKey", "limit": MAX_IDEMPOTENCY_KEY_LENGTH},
        )
    return value


def parse_whole(field: str, raw: str, *, minimum: int = 0, maximum: int = INT32_MAX) -> int:
    """A whole number written as text (a form field, a query parameter) within its range.

    Only ASCII digits count: `str.isdigit` also takes "²", which `int` then refuses.

    Raises:
        ValidationFailed: naming the field and the accepted range.
    """
    text = raw.strip()
    if not _WHOLE.match(text) or not minimum <= int(text) <= maximum:
        raise ValidationFailed(
            f"{field}: must be a whole number from {minimum} to {maximum}; got {raw[:40]!r}.",
            {"field": field, "minimum": minimum, "maximum": maximum},
        )
    return int(text)


MAX_TIME_ZONE = 64  # characters of an IANA time zone name


def zone_of(field: str, name: str) -> ZoneInfo:
    """An IANA time zone by name (e.g. Europe/Berlin).

    Raises:
        LimitExceeded: longer than MAX_TIME_ZONE characters.
        ValidationFailed: not a time zone this server knows.
    """
    if len(name) > MAX_TIME_ZONE:
        raise LimitExceeded(
            f"{field}: {len(name)} characters is over the limit of {MAX_TIME_ZONE}.",
            {"field": field, "limit": MAX_TIME_ZONE},
        )
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise ValidationFailed.field(
            field,
            f"{name!r} is not an IANA time zone; use a name such as Europe/Berlin, "
            "America/New_York or UTC.",
        ) from None


def check_time_zone(field: str, name: str) -> str:
    """The name of a time zone this server knows (see `zone_of`)."""
    return zone_of(field, name).key
