"""The one way an answer carries an image: held to the server's bounds (services/images.py),
with what was shown and, when it was scaled, the original's size and where to download it, in
the answer's text."""

from __future__ import annotations

from typing import Any

from crewboard.contract.operation import Call
from crewboard.contract.reply import Reply
from crewboard.domain.images import ShownImage
from crewboard.services.images import fit_image


def image_reply(
    call: Call,
    body: dict[str, Any],
    data: bytes,
    media_type: str,
    *,
    field: str,
    original: str,
) -> Reply:
    """`body` with the image's `image` fields, a note when it was scaled, and the image part.
    `field` names the argument that chose the image; `original` says where its bytes are
    downloaded whole.

    Raises:
        LimitExceeded, ValidationFailed: an image too large in pixels to decode, or that cannot
        be decoded (fit_image).
    """
    shown = fit_image(data, media_type, call.settings.image_bounds, field=field, original=original)
    view = image_view(shown)
    if not shown.scaled:
        return Reply({**body, "image": view}, image=shown)
    view["original"] = {
        "width": shown.original_width,
        "height": shown.original_height,
        "size": shown.original_size,
        "download": original,
    }
    return Reply({**body, "image": view}, scaled_note(shown, original), image=shown)


def image_view(shown: ShownImage) -> dict[str, Any]:
    return {
        "mediaType": shown.media_type,
        "width": shown.width,
        "height": shown.height,
        "size": len(shown.data),
        "scaled": shown.scaled,
    }


def scaled_note(shown: ShownImage, original: str) -> str:
    """The second text part of a scaled image: from what, to what, and where the original is."""
    return (
        f"Scaled from {shown.original_width}×{shown.original_height} "
        f"({shown.original_size:,} bytes) to {shown.width}×{shown.height} "
        f"({len(shown.data):,} bytes) to fit this server's image bounds. The original: "
        f"{original}."
    )
