"""Every number a door takes is bounded in its schema, so no value reaches a column it overflows."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from crewboard.api.common import BodyChoice
from crewboard.api.routes import all_endpoints
from crewboard.contract.args import input_schema
from crewboard.contract.catalogue import default_catalogue


def _schemas() -> Iterator[tuple[str, dict[str, Any]]]:
    # The model's own schema: what the server validates (tools/list leaves the 32-bit maximum
    # out, contract/schema.py).
    for tool in default_catalogue():
        yield tool.name, input_schema(tool.args)
    for endpoint in all_endpoints():
        name = f"{endpoint.method} {endpoint.path}"
        if isinstance(endpoint.body, BodyChoice):  # one of several bodies: each is checked
            for value, model in endpoint.body.models.items():
                yield f"{name} ({endpoint.body.field}={value})", input_schema(model)
        elif endpoint.body is not None:
            yield name, input_schema(endpoint.body)


def _numbers(node: Any, path: str, defs: dict[str, Any], seen: set[str]) -> Iterator[Any]:
    if isinstance(node, list):
        for item in node:
            yield from _numbers(item, path, defs, seen)
        return
    if not isinstance(node, dict):
        return
    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        if name not in seen:
            yield from _numbers(defs[name], path, defs, {*seen, name})
        return
    if node.get("type") in ("integer", "number"):
        yield path, node
    for key, value in node.items():
        if key == "properties":
            for name, child in value.items():
                yield from _numbers(child, f"{path}.{name}", defs, seen)
        elif key in ("items", "anyOf", "oneOf", "allOf", "additionalProperties"):
            yield from _numbers(value, path, defs, seen)


@pytest.mark.parametrize(
    ("name", "schema"), list(_schemas()), ids=lambda v: v if isinstance(v, str) else ""
)
def test_every_number_in_a_schema_has_a_minimum_and_a_maximum_a_column_holds(
    name: str, schema: dict[str, Any]
) -> None:
    for path, node in _numbers(schema, name, schema.get("$defs", {}), set()):
        assert "minimum" in node, f"{path} has no minimum"
        assert "maximum" in node, f"{path} has no maximum"
        assert node["minimum"] <= node["maximum"], path
        if node["type"] == "integer":
            assert node["minimum"] >= -(2**31), f"{path} allows less than an INTEGER holds"
            assert node["maximum"] <= 2**31 - 1, f"{path} allows more than an INTEGER holds"
        else:
            assert max(abs(node["minimum"]), abs(node["maximum"])) <= 1e15, f"{path}: too large"
