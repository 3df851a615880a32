"""API token secrets: `cb_` + 32 random base62 characters + a 6-character checksum.

The checksum lets a door refuse a mistyped or truncated token without a database lookup
(and lets secret scanners recognise ours). Only the SHA-256 of the secret is stored: the
secret has 190 bits of entropy, so a slow hash adds nothing but latency per request.
"""

from __future__ import annotations

import hashlib
import secrets
import zlib

TOKEN_PREFIX = "cb_"  # noqa: S105 - a public prefix, not a secret
STREAM_PREFIX = "cbs_"  # stream tokens (read-only, short-lived): a public prefix
_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_BODY_LENGTH = 32
_CHECKSUM_LENGTH = 6
TOKEN_LENGTH = len(TOKEN_PREFIX) + _BODY_LENGTH + _CHECKSUM_LENGTH


def _base62(number: int, width: int) -> str:
    chars = []
    for _ in range(width):
        number, digit = divmod(number, 62)
        chars.append(_BASE62[digit])
    return "".join(reversed(chars))


def _checksum(body: str) -> str:
    return _base62(zlib.crc32(body.encode("ascii")), _CHECKSUM_LENGTH)


def generate_token_secret(prefix: str = TOKEN_PREFIX) -> str:
    body = "".join(secrets.choice(_BASE62) for _ in range(_BODY_LENGTH))
    return f"{prefix}{body}{_checksum(body)}"


def is_well_formed(secret: str, prefix: str = TOKEN_PREFIX) -> bool:
    """True when the secret has the prefix, our length, alphabet and a matching checksum."""
    if len(secret) != len(prefix) + _BODY_LENGTH + _CHECKSUM_LENGTH or not secret.startswith(
        prefix
    ):
        return False
    body = secret[len(prefix) : -_CHECKSUM_LENGTH]
    if any(char not in _BASE62 for char in body):
        return False
    return secrets.compare_digest(secret[-_CHECKSUM_LENGTH:], _checksum(body))


def hash_token_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def display_prefix(secret: str) -> str:
    """What listings show of a token: enough to recognise it, too little to use it."""
    return secret[: len(TOKEN_PREFIX) + 6]
