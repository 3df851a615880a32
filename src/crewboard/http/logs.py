"""JSON log lines (CREWBOARD_LOG_FORMAT=json): one object a line on standard error.

Each line has `time` (UTC, ISO 8601), `level`, `logger` and `message`; `request_id` while a
request is being answered; an access line (logger `crewboard.access`) adds `method`, `path`,
`status`, `duration_ms` and `door`; a failure adds `exception` (its traceback as text).
"""

from __future__ import annotations

import copy
import json
import logging
from datetime import UTC, datetime
from typing import Any

from uvicorn.config import LOGGING_CONFIG
from uvicorn.logging import AccessFormatter

from crewboard.http.request_id import REQUEST_ID

ACCESS_FIELDS = ("method", "path", "status", "duration_ms", "door")


class JsonFormatter(logging.Formatter):
    """A record as one JSON object."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for name in ACCESS_FIELDS:
            if name in record.__dict__:
                line[name] = record.__dict__[name]
        request_id = record.__dict__.get("request_id") or REQUEST_ID.get()
        if request_id is not None:
            line["request_id"] = request_id
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            line["exception"] = record.exc_text
        return json.dumps(line, ensure_ascii=False, default=str)


def json_log_config(level: str) -> dict[str, Any]:
    """A `logging.config.dictConfig` (uvicorn's `log_config`) writing every logger, uvicorn's
    and Crewboard's, as JSON lines; uvicorn's access log is left silent (ours replaces it)."""
    level = level.upper()
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": {"()": f"{__name__}.JsonFormatter"}},
        "handlers": {
            "json": {
                "class": "logging.StreamHandler",
                "formatter": "json",
                "stream": "ext://sys.stderr",
            }
        },
        "loggers": {
            "uvicorn": {"handlers": [], "level": level, "propagate": True},
            "uvicorn.error": {"level": level},
            "uvicorn.access": {"handlers": [], "level": "WARNING", "propagate": False},
            "crewboard": {"level": level},
        },
        # Other libraries speak up from warnings on (the MCP SDK logs every request at info).
        "root": {"handlers": ["json"], "level": "WARNING"},
    }


class AccessLineFormatter(AccessFormatter):
    """uvicorn's text access line, the same text, built without copying the log record twice
    a line (uvicorn's formatter does, once for the line and once for its level prefix)."""

    def formatMessage(self, record: logging.LogRecord) -> str:  # noqa: N802 - logging's name
        args = record.args
        if self.use_colors or self._fmt != ACCESS_FORMAT or not isinstance(args, tuple):
            return super().formatMessage(record)
        client_addr, method, full_path, http_version, status_code = args
        level = record.levelname
        status = self.get_status_code(int(status_code))  # type: ignore[call-overload]
        request_line = f"{method} {full_path} HTTP/{http_version}"
        return f'{level}:{" " * (8 - len(level))} {client_addr} - "{request_line}" {status}'


ACCESS_FORMAT = LOGGING_CONFIG["formatters"]["access"]["fmt"]


def text_log_config() -> dict[str, Any]:
    """uvicorn's own logging configuration, its access lines written by AccessLineFormatter."""
    config = copy.deepcopy(LOGGING_CONFIG)
    config["formatters"]["access"]["()"] = f"{__name__}.AccessLineFormatter"
    return config
