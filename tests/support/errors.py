"""Asserting refusals from the service layer: the stable code, and a message that says why."""

from __future__ import annotations

from typing import Any

import pytest

from crewboard.errors import CrewboardError, ErrorCode


def refused(code: ErrorCode, call: Any, *args: Any, **kwargs: Any) -> CrewboardError:
    """Call `call(*args, **kwargs)`, which must raise a CrewboardError with `code`; return it."""
    with pytest.raises(CrewboardError) as caught:
        call(*args, **kwargs)
    assert caught.value.code is code, caught.value.to_dict()
    assert caught.value.message
    return caught.value
