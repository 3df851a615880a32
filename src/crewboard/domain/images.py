"""Images an answer shows (MCP image content): the bounds they are held to and what is shown.

An agent's client hands an image part to its model whole, so one unbounded screenshot can cost
more than the rest of the session. Every tool that answers with an image sends a `ShownImage`,
which only `services/images.fit_image` makes: at most `max_edge` pixels on its longest side and
`max_bytes` bytes, the type kept. The original stays whole where it is downloaded.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_IMAGE_MAX_EDGE = 1568  # pixels on the longest side (what vision models take unscaled)
DEFAULT_IMAGE_MAX_BYTES = 1024 * 1024  # bytes of the image sent, before base64


@dataclass(frozen=True)
class ImageBounds:
    max_edge: int = DEFAULT_IMAGE_MAX_EDGE
    max_bytes: int = DEFAULT_IMAGE_MAX_BYTES


@dataclass(frozen=True)
class ShownImage:
    """The image an answer carries (`data`, of `media_type`), and the original it was made
    from; `scaled` when it is not the original's bytes."""

    data: bytes
    media_type: str
    width: int
    height: int
    original_width: int
    original_height: int
    original_size: int  # bytes
    scaled: bool
