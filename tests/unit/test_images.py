"""Images held to the answer's bounds with Pillow: the type kept, the size stepped down until the
bytes fit, a small image sent as it is, and a decompression bomb or broken bytes refused."""

from __future__ import annotations

import os
import struct
import zlib
from io import BytesIO

import pytest
from PIL import Image

from crewboard.domain.images import ImageBounds
from crewboard.errors import LimitExceeded, ValidationFailed
from crewboard.services.images import fit_image

WHERE = "GET /the/original"


def image_bytes(
    form: str, size: tuple[int, int], mode: str = "RGB", *, noise: bool = False
) -> bytes:
    if noise:
        picture = Image.frombytes(mode, size, os.urandom(size[0] * size[1] * len(mode)))
    else:
        picture = Image.linear_gradient("L").resize(size).convert(mode)
    out = BytesIO()
    picture.save(out, format=form)
    return out.getvalue()


def fit(data: bytes, media_type: str, bounds: ImageBounds | None = None) -> Image.Image:
    shown = fit_image(
        data, media_type, bounds or ImageBounds(), field="attachmentId", original=WHERE
    )
    opened = Image.open(BytesIO(shown.data))
    assert (opened.width, opened.height) == (shown.width, shown.height)
    return opened


@pytest.mark.parametrize(
    ("form", "media_type", "mode"),
    [
        ("PNG", "image/png", "RGBA"),
        ("PNG", "image/png", "P"),
        ("JPEG", "image/jpeg", "RGB"),
        ("WEBP", "image/webp", "RGBA"),
        ("GIF", "image/gif", "P"),
    ],
)
def test_a_large_image_is_scaled_to_the_longest_edge_in_its_own_type(
    form: str, media_type: str, mode: str
) -> None:
    data = image_bytes(form, (3000, 1000), mode)
    opened = fit(data, media_type)
    assert opened.format == form
    assert (opened.width, opened.height) == (1568, 523)


def test_an_image_within_the_bounds_is_sent_as_it_is_stored() -> None:
    data = image_bytes("PNG", (800, 600))
    shown = fit_image(data, "image/png", ImageBounds(), field="attachmentId", original=WHERE)
    assert (shown.data, shown.scaled, shown.width, shown.height) == (data, False, 800, 600)


def test_noise_over_the_byte_bound_steps_down_until_it_fits() -> None:
    data = image_bytes("PNG", (1800, 1300), "RGBA", noise=True)
    assert len(data) > 6_000_000
    shown = fit_image(data, "image/png", ImageBounds(), field="attachmentId", original=WHERE)
    assert shown.scaled
    assert len(shown.data) <= 1024 * 1024
    assert max(shown.width, shown.height) <= 1568
    assert (shown.original_width, shown.original_height, shown.original_size) == (
        1800, 1300, len(data),
    )  # fmt: skip
    assert Image.open(BytesIO(shown.data)).format == "PNG"
    # A smaller bound is met too: the steps follow the bytes, not a fixed size.
    small = fit_image(data, "image/png", ImageBounds(1568, 100_000), field="f", original=WHERE)
    assert len(small.data) <= 100_000


def test_only_the_first_frame_of_an_animated_gif_is_shown() -> None:
    frames = [Image.new("P", (2000, 400), color) for color in (1, 2, 3)]
    out = BytesIO()
    frames[0].save(out, format="GIF", save_all=True, append_images=frames[1:])
    opened = fit(out.getvalue(), "image/gif")
    assert (opened.format, opened.size, getattr(opened, "n_frames", 1)) == ("GIF", (1568, 314), 1)


def _png_header_only(width: int, height: int) -> bytes:
    """A PNG that claims `width`×`height` pixels: its header, one tiny compressed row, the end."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\0" * 64))
        + chunk(b"IEND", b"")
    )  # fmt: skip


@pytest.mark.parametrize("side", [10_000, 20_000])  # over Pillow's limit, and over twice it
def test_a_decompression_bomb_is_refused_naming_the_field_not_decoded(side: int) -> None:
    with pytest.raises(LimitExceeded) as refused:
        fit_image(_png_header_only(side, side), "image/png", ImageBounds(), field="attachmentId",
                  original=WHERE)  # fmt: skip
    assert refused.value.details["field"] == "attachmentId"
    assert WHERE in refused.value.message


def test_bytes_that_are_no_image_are_refused_naming_the_field() -> None:
    broken = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))
    with pytest.raises(ValidationFailed) as refused:
        fit_image(broken, "image/png", ImageBounds(), field="attachmentId", original=WHERE)
    assert refused.value.details["field"] == "attachmentId"
    assert WHERE in refused.value.message
    cut_short = image_bytes("PNG", (3000, 2000), noise=True)[:50_000]
    with pytest.raises(ValidationFailed):
        fit_image(cut_short, "image/png", ImageBounds(), field="attachmentId", original=WHERE)
