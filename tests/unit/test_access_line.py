"""The text access line: Crewboard's formatter writes exactly what uvicorn's would."""

from __future__ import annotations

import logging

import pytest
from uvicorn.logging import AccessFormatter

from crewboard.http.logs import ACCESS_FORMAT, AccessLineFormatter, text_log_config


def _record(status: int) -> logging.LogRecord:
    args = ("127.0.0.1:50123", "POST", "/mcp?x=1", "1.1", status)
    return logging.LogRecord(
        "uvicorn.access", logging.INFO, __file__, 1, '%s - "%s %s HTTP/%s" %d', args, None
    )


@pytest.mark.parametrize("status", [200, 401, 599])
def test_access_line_formatter_writes_uvicorns_line(status: int) -> None:
    ours = AccessLineFormatter(fmt=ACCESS_FORMAT, use_colors=False)
    theirs = AccessFormatter(fmt=ACCESS_FORMAT, use_colors=False)
    assert ours.format(_record(status)) == theirs.format(_record(status))


def test_access_line_formatter_leaves_colours_to_uvicorn() -> None:
    ours = AccessLineFormatter(fmt=ACCESS_FORMAT, use_colors=True)
    theirs = AccessFormatter(fmt=ACCESS_FORMAT, use_colors=True)
    assert ours.format(_record(200)) == theirs.format(_record(200))


def test_text_log_config_is_uvicorns_with_the_access_formatter_swapped() -> None:
    config = text_log_config()
    assert config["formatters"]["access"]["()"].endswith("AccessLineFormatter")
    assert config["formatters"]["access"]["fmt"] == ACCESS_FORMAT
    assert config["loggers"]["uvicorn.access"]["handlers"] == ["access"]
