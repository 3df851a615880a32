"""Stored bytes sent back to a browser: a download by default, inline only for the image types
attachments accept. Never a page: the browser is told not to guess the type, and the response
runs sandboxed with nothing allowed, so a file holding HTML or script cannot act as the app."""

from __future__ import annotations

from urllib.parse import quote

from starlette.responses import Response

INLINE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")


def download(data: bytes, name: str, media_type: str, *, inline: bool) -> Response:
    shown_inline = inline and media_type in INLINE_TYPES
    plain = "".join(c if c.isascii() and c.isprintable() and c not in '"\\' else "_" for c in name)
    disposition = "inline" if shown_inline else "attachment"
    return Response(
        data,
        media_type=media_type,
        headers={
            "Content-Disposition": f"{disposition}; filename=\"{plain}\"; filename*=UTF-8''{quote(name)}",
            "X-Content-Type-Options": "nosniff",
            "Content-Security-Policy": "sandbox; default-src 'none'; img-src 'self'",
            "Cache-Control": "private, no-cache",
        },
    )
