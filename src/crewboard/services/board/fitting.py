"""get_task's text window arguments: which text, from where, how much.

The answer's fitting to the reply budget is contract/board/fitting.py; the cutting rule itself
is services/text_windows.py, shared with memory and the context pack.
"""

from __future__ import annotations

from crewboard.errors import ValidationFailed
from crewboard.services.text_windows import WINDOW_LIMIT, check_window

TEXT_FIELDS = ("brief", "description")


def check_text_request(
    field: str | None, offset: int | None, limit: int | None, *, format: str | None
) -> tuple[int, int]:
    """get_task's window arguments: (offset, limit), defaults filled in.

    Raises:
        ValidationFailed: naming the field: textOffset or textLimit without textField, a
            textField not brief or description, textField with format, bounds.
    """
    if field is None:
        if offset is not None or limit is not None:
            raise ValidationFailed.field(
                "textField",
                "name the text to read (brief or description) with textOffset and textLimit.",
                list(TEXT_FIELDS),
            )
        return 0, WINDOW_LIMIT
    if field not in TEXT_FIELDS:
        raise ValidationFailed.field(
            "textField", f"{field!r} is not a text field.", list(TEXT_FIELDS)
        )
    if format is not None:
        raise ValidationFailed.field(
            "format", "a text window comes as JSON; leave format out with textField."
        )
    offset = 0 if offset is None else offset
    limit = WINDOW_LIMIT if limit is None else limit
    check_window(offset, limit, offset_field="textOffset", limit_field="textLimit")
    return offset, limit
