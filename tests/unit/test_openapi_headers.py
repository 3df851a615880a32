"""Every REST handler that reads Idempotency-Key or If-Match says so, and OpenAPI lists the
header on that operation (with a 412 answer for If-Match). The check reads each handler's own
source for the helpers that read those headers, so a new route that reads one and forgets to
declare it fails here."""

from __future__ import annotations

import inspect

import pytest

from crewboard.api.common import Endpoint
from crewboard.api.openapi import openapi_document
from crewboard.api.routes import all_endpoints

# The helpers (and the direct read) through which handlers take each header.
READERS = {
    "Idempotency-Key": ("keyed_body(", "_idempotency_key(", '"idempotency-key"', "_revise("),
    "If-Match": (
        "expected_revision(request",
        "_if_match(request",
        "if_match_version(request",
        "if_match(request",
        "_expected(",
        "_revise(",
    ),
}
ENDPOINTS = [pytest.param(e, id=f"{e.method} {e.path}") for e in all_endpoints()]


def reads(endpoint: Endpoint) -> set[str]:
    source = inspect.getsource(inspect.unwrap(endpoint.handler))
    return {header for header, helpers in READERS.items() if any(h in source for h in helpers)}


@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_the_headers_a_handler_reads_are_declared_and_described(endpoint: Endpoint) -> None:
    declared = {header.name for header in endpoint.headers}
    assert declared == reads(endpoint)
    operation = openapi_document("http://example.test")["paths"][endpoint.path][
        endpoint.method.lower()
    ]
    listed = {p["name"] for p in operation["parameters"] if p["in"] == "header"}
    assert listed == declared
    assert ("412" in operation["responses"]) == ("If-Match" in declared)


def test_some_routes_read_each_header() -> None:
    every = [reads(e) for e in all_endpoints()]
    assert sum("Idempotency-Key" in r for r in every) >= 14
    assert sum("If-Match" in r for r in every) >= 5


def test_a_required_header_is_marked_required() -> None:
    document = openapi_document("http://example.test")
    create = document["paths"]["/api/v1/projects/{project}/tasks"]["post"]
    (key,) = [p for p in create["parameters"] if p["in"] == "header"]
    assert (key["name"], key["required"]) == ("Idempotency-Key", True)
    save = document["paths"]["/api/v1/projects/{project}/specs/{file}"]["put"]
    headers = {p["name"]: p["required"] for p in save["parameters"] if p["in"] == "header"}
    assert headers == {"Idempotency-Key": False, "If-Match": False}
