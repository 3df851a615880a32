"""Images held to the bounds an answer may carry (domain/images.py), with Pillow.

An image within the bounds is sent as it is stored. A larger one is resized (Lanczos) to the
longest edge and encoded again in its own type (PNG stays PNG, JPEG JPEG, WebP WebP, a GIF's
first frame a GIF); while the bytes are still over the bound, the size steps down. Pillow
refuses an image of more pixels than `Image.MAX_IMAGE_PIXELS` (a decompression bomb: a few
kilobytes that decode to gigabytes) before decoding it; that is answered as a refusal naming
the field, as is an image Pillow cannot decode.
"""

from __future__ import annotations

import math
from io import BytesIO

from PIL import Image

from crewboard.domain.images import ImageBounds, ShownImage
from crewboard.errors import LimitExceeded, ValidationFailed

FORMATS = {"image/png": "PNG", "image/jpeg": "JPEG", "image/webp": "WEBP", "image/gif": "GIF"}
# The modes each format is written from as they are; any other is converted first (a palette
# or a 1-bit image to RGB(A), since resizing those would fall back to the nearest pixel).
_KEPT_MODES = {
    "PNG": ("L", "LA", "RGB", "RGBA"),
    "JPEG": ("L", "RGB", "CMYK"),
    "WEBP": ("RGB", "RGBA"),
    "GIF": ("L", "RGB", "RGBA"),
}
_SAVE_OPTIONS: dict[str, dict[str, object]] = {
    "PNG": {"compress_level": 6},
    "JPEG": {"quality": 85},
    "WEBP": {"quality": 85},
    "GIF": {},
}
MAX_STEPS = 12  # size steps after the first try; each at least a tenth smaller
_DECODE_ERRORS = (OSError, ValueError, SyntaxError, EOFError)


def fit_image(
    data: bytes, media_type: str, bounds: ImageBounds, *, field: str, original: str
) -> ShownImage:
    """The image within `bounds`: its own bytes when they fit, else resized in its type.
    `field` names the argument that chose it and `original` says where its bytes are
    downloaded whole, for a refusal.

    Raises:
        LimitExceeded: more pixels than Pillow decodes (a decompression bomb).
        ValidationFailed: not an image Pillow can decode, or of a type it does not write.
    """
    form = FORMATS.get(media_type)
    if form is None:
        raise ValidationFailed(
            f"{field}: {media_type} is not an image that can be shown here; {original}.",
            {"field": field, "mediaType": media_type, "accepted": list(FORMATS)},
        )
    with _opened(data, field, original) as image:
        width, height = image.size
        if max(width, height) <= bounds.max_edge and len(data) <= bounds.max_bytes:
            return ShownImage(data, media_type, width, height, width, height, len(data), False)
        try:
            return _scaled(image, media_type, bounds, size=len(data), field=field)
        except _DECODE_ERRORS as error:
            raise _unreadable(field, original, error) from None


def _opened(data: bytes, field: str, original: str) -> Image.Image:
    """The image, its header read (the pixels are decoded when first used).

    Raises: LimitExceeded for a decompression bomb, ValidationFailed when it cannot be read.
    """
    try:
        # Pillow warns past MAX_IMAGE_PIXELS and raises past twice that; a warning made an
        # error (as in the tests) ends here too, and the count below refuses either way.
        image = Image.open(BytesIO(data))
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise _bomb(field, original, None) from None
    except _DECODE_ERRORS as error:
        raise _unreadable(field, original, error) from None
    pixels = image.size[0] * image.size[1]
    if Image.MAX_IMAGE_PIXELS is not None and pixels > Image.MAX_IMAGE_PIXELS:
        image.close()
        raise _bomb(field, original, image.size)
    return image


def _scaled(
    image: Image.Image, media_type: str, bounds: ImageBounds, *, size: int, field: str
) -> ShownImage:
    """The first frame resized to the longest edge, then smaller while its bytes are over.

    Raises:
        LimitExceeded: not even the smallest step fits. OSError, ValueError, SyntaxError,
        EOFError: the pixels cannot be decoded (fit_image refuses them).
    """
    form = FORMATS[media_type]
    width, height = image.size
    scale = min(1.0, bounds.max_edge / max(width, height))
    if form == "JPEG":  # decode at a fraction of the size (1/2, 1/4, 1/8) when that is enough
        image.draft(image.mode, (math.ceil(width * scale), math.ceil(height * scale)))
    image.seek(0)  # a GIF's (or an animated PNG's, WebP's) first frame
    frame = image if image.mode in _KEPT_MODES[form] else _converted(image)
    if size * scale**2 > bounds.max_bytes:
        # The original's bytes a pixel say it may not fit at the edge: a quarter of the pixels,
        # encoded, says what the whole would take, and the first try starts near the size that
        # fits (a 9 MB photo of noise costs two encodes, not three of up to 7 MB).
        half = (max(1, round(width * scale / 2)), max(1, round(height * scale / 2)))
        guess = 4 * len(_encode(frame.resize(half, Image.Resampling.LANCZOS), form))
        scale *= min(1.0, math.sqrt(bounds.max_bytes / guess) * 0.95)
    for _ in range(MAX_STEPS + 1):
        target = (max(1, round(width * scale)), max(1, round(height * scale)))
        encoded = _encode(frame.resize(target, Image.Resampling.LANCZOS), form)
        if len(encoded) <= bounds.max_bytes:
            return ShownImage(encoded, media_type, *target, width, height, size, True)
        # A step down to where the bytes would fit if they shrink with the area; never
        # less than a tenth smaller nor more than half.
        scale *= min(0.9, max(0.5, math.sqrt(bounds.max_bytes / len(encoded)) * 0.95))
    raise LimitExceeded(
        f"{field}: the image does not fit {bounds.max_bytes} bytes even at "
        f"{target[0]}×{target[1]}.",
        {"field": field, "limit": bounds.max_bytes, "actual": len(encoded)},
    )


def _converted(image: Image.Image) -> Image.Image:
    alpha = "A" in image.getbands() or "transparency" in image.info
    return image.convert("RGBA" if alpha else "RGB")


def _encode(image: Image.Image, form: str) -> bytes:
    if form == "JPEG" and image.mode == "RGBA":  # cannot happen from a JPEG; kept safe
        image = image.convert("RGB")
    out = BytesIO()
    image.save(out, format=form, **_SAVE_OPTIONS[form])
    return out.getvalue()


def _bomb(field: str, original: str, size: tuple[int, int] | None) -> LimitExceeded:
    shape = f" ({size[0]}×{size[1]})" if size else ""
    return LimitExceeded(
        f"{field}: the image{shape} has more pixels than this server decodes "
        f"({Image.MAX_IMAGE_PIXELS:,}), so it cannot be scaled to show here; {original}.",
        {"field": field, "limit": Image.MAX_IMAGE_PIXELS, "actual": size and size[0] * size[1]},
    )


def _unreadable(field: str, original: str, error: BaseException) -> ValidationFailed:
    return ValidationFailed(
        f"{field}: the image cannot be decoded ({error}), so it cannot be shown here; {original}.",
        {"field": field},
    )
