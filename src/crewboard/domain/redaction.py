"""Keeping secrets out of text people read: a model provider's key (or a password in its base
URL) in every form the server, or a provider echoing it, can put it in, and credentials
written into URLs.

A `Redactor` knows the secrets of one provider and finds each of them - whole, each line of a
key file of several lines, each word of one with spaces - written raw, percent-encoded (any
case of hex, `+` for a space, encoded again), JSON- or repr-escaped (`\\n`, `\\u00e9`,
`\\xc3\\xa9`, with as many backslashes as nested escaping leaves), as HTML character
references, or in base64 (standard or URL-safe, at any of the three alignments a secret
inside a longer string has: how a password travels in a Basic `Authorization` header).
Every form may be mixed with the others character by character; each is replaced by
`[secret]`. Apart from the known secrets, any URL loses its userinfo's password (or the whole
userinfo when it has no password: a token written as the user) and the values of query
parameters named like a credential (`key`, `token`, `secret`, `password`, `signature`...).
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import unquote, urlsplit

MASK = "[secret]"
MIN_SECRET = 4  # a shorter secret is not looked for: it would eat ordinary words
MIN_FRAGMENT = 6  # a line (or word) of a longer secret, looked for on its own
MAX_SECRET = 4096  # characters of one secret looked for (a key file is far shorter)

_SHORT_ESCAPES = {"\n": "n", "\r": "r", "\t": "t", "\b": "b", "\f": "f", "\v": "v", "\0": "0"}
_HTML_NAMES = {"&": "amp", "<": "lt", ">": "gt", '"': "quot", "'": "(?:apos|#39)"}
# One escape, or one escaped again (JSON inside JSON), up to four levels deep. Every repeat in
# these patterns is bounded, so no text makes them backtrack for long.
_BACKSLASHES = r"\\{1,16}"

# A URL's scheme and `//`, also with the slashes JSON-escaped (`:\/\/`) or percent-encoded.
_SCHEME = r"[A-Za-z][A-Za-z0-9+.-]{0,30}(?::(?:\\{0,4}/){2}|%3[Aa]%2[Ff]%2[Ff])"
_USERINFO = re.compile(
    rf"(?P<scheme>{_SCHEME})(?P<user>[^\s/?#@:\"'<>\\]{{0,256}})"
    r"(?:(?P<colon>:|%3[Aa])(?P<password>[^\s/?#\"'<>\\]{0,512}))?(?P<at>@|%40)"
)
_CREDENTIAL_NAME = (
    r"[A-Za-z0-9_.\-\[\]]{0,64}(?:key|token|secret|passw|pwd|signature|credential|auth)"
    r"[A-Za-z0-9_.\-\[\]]{0,64}"
)
_QUERY_CREDENTIAL = re.compile(
    rf"(?P<lead>[?&;#]|%3[Ff]|%26|\\u0026|&amp;)(?P<name>{_CREDENTIAL_NAME})"
    r"(?P<eq>=|%3[Dd]|\\u003[Dd])(?P<value>[^&;#\s\"'<>\\]+)",
    re.IGNORECASE,
)


def _hex(value: int, width: int) -> str:
    """`value` in hex of `width` digits, either case of each letter accepted."""
    return "".join(f"[{d}{d.upper()}]" if d.isalpha() else d for d in f"{value:0{width}x}")


def _char(c: str) -> str:
    """A pattern for one character in any form an encoding can give it."""
    code = ord(c)
    utf8 = c.encode("utf-8")
    forms = [re.escape(c), "".join(f"%(?:25){{0,4}}{_hex(b, 2)}" for b in utf8)]
    if c == " ":
        forms.append(r"\+")
    escaped = [f"u{_hex(code, 4)}"] if code <= 0xFFFF else [f"U{_hex(code, 8)}"]
    if code > 0xFFFF:  # JSON writes it as a surrogate pair
        high, low = 0xD800 + ((code - 0x10000) >> 10), 0xDC00 + ((code - 0x10000) & 0x3FF)
        escaped.append(f"u{_hex(high, 4)}{_BACKSLASHES}u{_hex(low, 4)}")
    if code < 0x100:
        escaped.append(f"x{_hex(code, 2)}")
    if c in _SHORT_ESCAPES:
        escaped.append(_SHORT_ESCAPES[c])
    if not c.isalnum():
        escaped.append(re.escape(c))  # \" \\ \' \/
    forms.append(_BACKSLASHES + "(?:" + "|".join(escaped) + ")")
    if len(utf8) > 1:  # a bytes repr: b'\xc3\xa9'
        forms.append("".join(f"{_BACKSLASHES}x{_hex(b, 2)}" for b in utf8))
    forms.append(f"&#(?:0{{0,8}}{code}|[xX]0{{0,8}}{_hex(code, 1)});")
    if c in _HTML_NAMES:
        forms.append(f"&{_HTML_NAMES[c]};")
    return "(?:" + "|".join(forms) + ")"


def _encoded(text: str) -> str:
    return "".join(_char(c) for c in text)


def fragments(secret: str) -> list[str]:
    """The secret and the pieces of it looked for on their own: each line, each word."""
    secret = secret.strip()[:MAX_SECRET]
    if len(secret) < MIN_SECRET:
        return []
    pieces = {secret}
    for line in secret.splitlines():
        pieces.update(p for p in [line.strip(), *line.split()] if len(p) >= MIN_FRAGMENT)
    return sorted(pieces, key=len, reverse=True)


def base64_forms(text: str) -> list[str]:
    """What base64 of any string holding `text` is sure to contain, at each alignment."""
    data = text.encode("utf-8")
    found: list[str] = []
    for start in range(3):
        part = data[start:]
        part = part[: len(part) - len(part) % 3]
        if len(part) >= MIN_FRAGMENT:
            found.append(base64.b64encode(part).decode("ascii"))
            found.append(base64.urlsafe_b64encode(part).decode("ascii"))
    return found


def url_secrets(url: str | None) -> list[str]:
    """The secrets a URL's userinfo carries: the password, and `user:password` as Basic
    authentication sends it (a lone user, when there is no password, is a token)."""
    if not url:
        return []
    try:
        parts = urlsplit(url)
        user, password = parts.username, parts.password
    except ValueError:
        return []
    if user is None:
        return []
    user, password = unquote(user), unquote(password or "")
    if not password:
        return [user]
    return [password, f"{user}:{password}"]


class Redactor:
    """Finds the given secrets, in any encoding, and credentials in URLs; replaces them."""

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        forms: set[str] = set()
        for secret in secrets:
            if not secret:
                continue
            for piece in fragments(secret):
                forms.add(piece)
                forms.update(base64_forms(piece))
        patterns = [_encoded(form) for form in sorted(forms, key=len, reverse=True)]
        self._secrets = re.compile("|".join(patterns)) if patterns else None

    def text(self, text: str) -> str:
        """`text` with every form of the secrets and every credential in a URL replaced."""
        return without_url_credentials(self.secrets_in(text))

    def secrets_in(self, text: str) -> str:
        """`text` with every form of the secrets replaced, URLs left as they are: for a model's
        reply, whose spec may show `postgres://user:password@host` as an example."""
        return text if self._secrets is None else self._secrets.sub(MASK, text)

    def value(self, value: Any) -> Any:
        """A JSON-like value with every string in it (keys too) passed through `text`."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.value(k): self.value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.value(item) for item in value]
        return value


def without_url_credentials(text: str) -> str:
    """`text` with the password of any URL's userinfo (or a lone user: a token) and the values
    of query parameters named like a credential replaced."""

    def userinfo(match: re.Match[str]) -> str:
        if match["colon"] and match["password"] and match["user"]:
            return f"{match['scheme']}{match['user']}{match['colon']}{MASK}{match['at']}"
        return f"{match['scheme']}{MASK}{match['at']}"

    def query(match: re.Match[str]) -> str:
        return f"{match['lead']}{match['name']}{match['eq']}{MASK}"

    return _QUERY_CREDENTIAL.sub(query, _USERINFO.sub(userinfo, text))


def display_url(url: str) -> str:
    """A configured URL as shown to people: its password (or token) replaced."""
    return without_url_credentials(url)
