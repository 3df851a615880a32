"""Every form a secret can take in text a reader sees, written by the encoders themselves (an
oracle independent of the scrubber's patterns), and the check that none is in a text."""

from __future__ import annotations

import base64
import html
import json
import re
from urllib.parse import quote, quote_plus, unquote_plus

from crewboard.domain.redaction import MIN_FRAGMENT


def pieces(secret: str) -> list[str]:
    """The secret and each of its lines long enough to count on its own."""
    lines = [line.strip() for line in secret.splitlines()]
    return [secret, *(line for line in lines if len(line) >= MIN_FRAGMENT)]


def encodings(text: str, *, in_base64: bool = True) -> list[str]:
    """`text` as each encoding writes it."""
    raw = text.encode("utf-8")
    wrapped = [base64.b64encode(raw).decode(), base64.urlsafe_b64encode(raw).decode()]
    return [
        text,
        quote(text, safe=""),
        quote(text),
        quote_plus(text),
        re.sub("%[0-9A-F]{2}", lambda hexed: hexed[0].lower(), quote(text, safe="")),
        quote(quote(text, safe=""), safe=""),
        json.dumps(text)[1:-1],
        json.dumps(text, ensure_ascii=False)[1:-1],
        json.dumps(json.dumps(text))[1:-1],
        repr(text)[1:-1],
        repr(raw)[2:-1],
        html.escape(text),
        *(wrapped if in_base64 else []),
    ]


def every_form(secret: str, *, user: str | None = None) -> list[str]:
    """Each piece of `secret` in each encoding; with `user`, also the Basic authentication
    header's base64 of `user:secret` in each encoding."""
    forms = [form for piece in pieces(secret) for form in encodings(piece)]
    if user is not None:
        basic = base64.b64encode(f"{user}:{secret}".encode()).decode()
        forms += encodings(basic, in_base64=False)
    return sorted({form for form in forms if len(form) >= MIN_FRAGMENT}, key=len, reverse=True)


def leaks(forms: list[str], text: str) -> list[str]:
    """The forms found in `text`, read as it is and with HTML and URL escapes undone."""
    views = (text, html.unescape(text), unquote_plus(text))
    return [form for form in forms if any(form in view for view in views)]
