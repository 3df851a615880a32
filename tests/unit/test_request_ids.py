"""Request ids, the door of a path, a web answer's outcome and a JSON log line."""

from __future__ import annotations

import json
import logging

import pytest

from crewboard.http.logs import JsonFormatter
from crewboard.http.request_id import REQUEST_ID, door_of, request_id_from, web_outcome


@pytest.mark.parametrize("given", ["a", "lb-1.2_3", "x" * 64, "ABCdef-019"])
def test_a_sane_incoming_id_is_kept(given: str) -> None:
    assert request_id_from([(b"x-request-id", given.encode())]) == given


@pytest.mark.parametrize(
    "given", [b"", b"x" * 65, b"has space", b"semi;colon", b"\xc3\xa9", b"a\nb"]
)
def test_an_insane_incoming_id_is_replaced_by_a_new_one(given: bytes) -> None:
    made = request_id_from([(b"x-request-id", given)])
    assert made != given.decode("latin-1")
    assert len(made) == 16
    assert set(made) <= set("0123456789abcdef")


def test_new_ids_differ() -> None:
    assert len({request_id_from([]) for _ in range(1000)}) == 1000


@pytest.mark.parametrize(
    ("path", "door"),
    [("/mcp", "mcp"), ("/api/v1/projects", "rest"), ("/healthz", "ops"), ("/readyz", "ops"),
     ("/metrics", "ops"), ("/p/CRW/board", "web"), ("/mcpx", "web"), ("/", "web")],
)  # fmt: skip
def test_each_path_belongs_to_one_door(path: str, door: str) -> None:
    assert door_of(path) == door


@pytest.mark.parametrize(
    ("status", "outcome"),
    [(200, "ok"), (303, "ok"), (404, "NOT_FOUND"), (403, "PERMISSION_DENIED"),
     (422, "VALIDATION"), (503, "UNAVAILABLE"), (500, "internal"), (502, "internal")],
)  # fmt: skip
def test_a_web_answer_counts_under_the_outcome_of_its_status(status: int, outcome: str) -> None:
    assert web_outcome(status) == outcome


def test_a_json_line_carries_the_request_id_and_the_access_fields() -> None:
    record = logging.LogRecord(
        "crewboard.access", logging.INFO, __file__, 1, "GET %s", ("/",), None
    )
    record.__dict__.update(method="GET", path="/", status=200, duration_ms=1.5, door="web")
    token = REQUEST_ID.set("req-1")
    try:
        line = json.loads(JsonFormatter().format(record))
    finally:
        REQUEST_ID.reset(token)
    assert line["request_id"] == "req-1"
    assert line["message"] == "GET /"
    assert (line["method"], line["status"], line["door"], line["duration_ms"]) == (
        "GET",
        200,
        "web",
        1.5,
    )
    assert line["time"].endswith("+00:00")
    outside = json.loads(JsonFormatter().format(record))
    assert "request_id" not in outside
