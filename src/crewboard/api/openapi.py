"""The OpenAPI description of /api/v1, built from the endpoint table and the argument models.

Bodies and query strings come from the same models that check them, so the document states
the types and bounds the server holds to. Schemas pydantic puts in `$defs` are moved to
`components/schemas`: in OpenAPI 3.1 a `#/...` reference resolves against the whole document.
"""

from __future__ import annotations

import copy
import functools
import re
from typing import Any

from crewboard import __version__
from crewboard.api.common import BodyChoice, Endpoint
from crewboard.api.routes import all_endpoints
from crewboard.contract.args import Args, input_schema
from crewboard.errors import ERROR_TYPES

_ERROR = {
    "type": "object",
    "properties": {
        "error": {
            "type": "object",
            "properties": {
                "code": {"type": "string", "enum": sorted({str(e.code) for e in ERROR_TYPES})},
                "message": {"type": "string", "minLength": 1},
                "details": {"type": "object"},
            },
            "required": ["code", "message", "details"],
            "additionalProperties": False,
        }
    },
    "required": ["error"],
    "additionalProperties": False,
}
# Path segments the router itself converts (`{revision:int}` in routes()); the rest are refs.
_PATH_SCHEMAS: dict[str, dict[str, Any]] = {"revision": {"type": "integer", "minimum": 0}}
_REF = "#/components/schemas/"

# The live stream is served beside the endpoint table (it streams rather than answers once),
# so its operation is written here; `crewboard.api.live` is what it describes.
LIVE_PATH = "/api/v1/projects/{project}/events"
_REFUSAL = {"application/json": {"schema": {"$ref": f"{_REF}Error"}}}
# One event of the stream, as a Server-Sent Events reader hands it over (OpenAPI 3.1: the
# `schema` of text/event-stream describes each event). A change event is the default
# `message` with its id; `reset` and `end` carry {"reason", …}; the data is one JSON object.
_STREAM_EVENT = {
    "type": "object",
    "properties": {
        "event": {"enum": ["message", "reset", "end"]},
        "data": {
            "type": "string",
            "contentMediaType": "application/json",
            "contentSchema": {"type": "object"},
        },
        "id": {"type": "string", "pattern": "^[0-9]+$"},
        "retry": {"type": "integer", "minimum": 0},
    },
    "required": ["event", "data"],
}
_LIVE: dict[str, Any] = {
    "operationId": "get_projects_project_events",
    "summary": "Follow a project's change events live, as Server-Sent Events",
    "description": (
        "Every change event of the project in commit order, each as `id: N` and one JSON "
        "`data:` line (id, type, projectId, taskId, at, actor, payload). Send a stream token "
        "(cbs_…, from create_stream_token), an API token or a session cookie. `Last-Event-ID` "
        "(or `after`) resumes exactly after that event; an id the server cannot resume after "
        "gets `event: reset`. Comment lines are heartbeats. `event: end` carries the reason a "
        "stream ends (token revoked or expired, client too far behind, server stopping)."
    ),
    "parameters": [
        {"name": "project", "in": "path", "required": True, "schema": {"type": "string"}},
        {
            "name": "after",
            "in": "query",
            "required": False,
            "description": "Resume after this event id (the header wins when both are sent).",
            "schema": {"type": "integer", "minimum": 0},
        },
        {
            "name": "Last-Event-ID",
            "in": "header",
            "required": False,
            "description": "The id of the last event the client holds; the stream resumes after it.",
            "schema": {"type": "string", "minLength": 1},
        },
    ],
    "responses": {
        "200": {
            "description": "The event stream (it stays open)",
            "content": {"text/event-stream": {"schema": {"$ref": f"{_REF}StreamEvent"}}},
        },
        "429": {
            "description": "This token has as many streams open as it may",
            "content": _REFUSAL,
        },
        "503": {"description": "This node holds as many streams as it may", "content": _REFUSAL},
        "default": {"description": "A refusal with a stable code", "content": _REFUSAL},
    },
}


def openapi_document(base_url: str) -> dict[str, Any]:
    """The REST API's OpenAPI 3.1 document for a server at `base_url` (a copy)."""
    return copy.deepcopy(_openapi_document(base_url))


@functools.cache
def _openapi_document(base_url: str) -> dict[str, Any]:
    schemas: dict[str, Any] = {"Error": _ERROR, "StreamEvent": _STREAM_EVENT}
    paths: dict[str, dict[str, Any]] = {}
    for endpoint in all_endpoints():
        operation = _operation(endpoint, schemas)
        paths.setdefault(endpoint.path, {})[endpoint.method.lower()] = operation
    paths[LIVE_PATH] = {"get": _LIVE}
    return {
        "openapi": "3.1.0",
        "info": {"title": "Crewboard REST API", "version": __version__},
        "servers": [{"url": base_url}],
        "components": {
            "schemas": schemas,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
        "security": [{"bearer": []}],
        "paths": paths,
    }


def _operation(endpoint: Endpoint, schemas: dict[str, Any]) -> dict[str, Any]:
    operation: dict[str, Any] = {
        "operationId": f"{endpoint.method.lower()}_{_slug(endpoint.path)}",
        "summary": endpoint.summary,
        "parameters": [
            {
                "name": name,
                "in": "path",
                "required": True,
                "schema": _PATH_SCHEMAS.get(name, {"type": "string"}),
            }
            for name in re.findall(r"{(\w+)}", endpoint.path)
        ]
        + _query_parameters(endpoint.query, schemas, endpoint.carried_fields)
        + [
            {
                "name": header.name,
                "in": "header",
                "required": endpoint.requires(header),
                "description": header.description,
                "schema": {"type": "string", "minLength": 1},
            }
            for header in endpoint.headers
        ],
        "responses": {
            str(endpoint.success): {
                "description": "Success",
                "content": {media: {} for media in endpoint.produces},
            },
            "default": {
                "description": "A refusal with a stable code",
                "content": {"application/json": {"schema": {"$ref": f"{_REF}Error"}}},
            },
        },
    }
    if any(header.name == "If-Match" for header in endpoint.headers):
        operation["responses"]["412"] = {
            "description": "If-Match named a revision or version that is no longer current",
            "content": {"application/json": {"schema": {"$ref": f"{_REF}Error"}}},
        }
    if endpoint.signed:  # a webhook: the body's signature authenticates it, no token
        operation["security"] = []
        operation["requestBody"] = {
            "required": True,
            "content": {"application/json": {"schema": {"type": "object"}}},
        }
    if endpoint.body is not None:
        body = _body_schema(endpoint.body, endpoint.carried_fields, schemas)
        operation["requestBody"] = {
            "required": endpoint.body_required,
            "content": {"application/json": {"schema": body}},
        }
    return operation


def _body_schema(
    body: type[Args] | BodyChoice, carried: frozenset[str], schemas: dict[str, Any]
) -> dict[str, Any]:
    """A body's schema; a choice of bodies as a `oneOf`, each with its naming field fixed."""
    if not isinstance(body, BodyChoice):
        return _without(_schema_of(body, schemas), carried)
    choices = []
    for value, model in body.models.items():
        choice = _without(_schema_of(model, schemas), carried)
        choice["properties"] = {body.field: {"const": value}, **choice["properties"]}
        choice["required"] = [body.field, *choice.get("required", ())]
        choices.append(choice)
    return {"oneOf": choices}


def _without(schema: dict[str, Any], carried: frozenset[str]) -> dict[str, Any]:
    """The body without the fields the path carries: the route takes those from the path."""
    for name in carried:
        schema["properties"].pop(name, None)
    if "required" in schema:
        schema["required"] = [r for r in schema["required"] if r not in carried]
        if not schema["required"]:
            del schema["required"]
    return schema


def _schema_of(model: type[Args], schemas: dict[str, Any]) -> dict[str, Any]:
    """The model's input schema, its `$defs` moved into `schemas` (one name, one schema)."""
    schema = input_schema(model)
    for name, definition in schema.pop("$defs", {}).items():
        moved = _rebase(definition)
        if schemas.setdefault(name, moved) != moved:
            raise ValueError(f"two different schemas are both named {name!r} in OpenAPI")
    return _rebase(schema)  # type: ignore[no-any-return]


def _rebase(node: Any) -> Any:
    if isinstance(node, dict):
        return {
            key: _REF + value.removeprefix("#/$defs/")
            if key == "$ref" and isinstance(value, str)
            else _rebase(value)
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [_rebase(item) for item in node]
    return node


def _query_parameters(
    model: type[Args] | None, schemas: dict[str, Any], carried: frozenset[str]
) -> list[dict[str, Any]]:
    """One parameter per field of the query model, but those the path carries; a list is the
    parameter repeated."""
    if model is None:
        return []
    schema = _schema_of(model, schemas)
    parameters = []
    for name, field in schema["properties"].items():
        if name in carried:
            continue
        value = _one_value(field)
        parameter: dict[str, Any] = {
            "name": name,
            "in": "query",
            "required": name in schema.get("required", ()),
            "schema": value,
        }
        if "description" in field:
            parameter["description"] = field["description"]
        if value.get("type") == "array":
            parameter["style"], parameter["explode"] = "form", True
        parameters.append(parameter)
    return parameters


def _one_value(field: dict[str, Any]) -> dict[str, Any]:
    """A field's schema as a query value: a query has no null (leaving it out is null), and a
    field that takes one value or a list of them is a repeated parameter."""
    kept = {k: v for k, v in field.items() if k not in {"description", "anyOf"}}
    if kept.get("default", ...) is None:
        del kept["default"]
    members = [m for m in _members(field) if m != {"type": "null"}]
    arrays = [m for m in members if m.get("type") == "array"]
    if arrays:
        return {**kept, **arrays[0]}
    if len(members) == 1:
        return {**kept, **members[0]}
    if members:
        kept["anyOf"] = members
    return kept


def _members(node: dict[str, Any]) -> list[dict[str, Any]]:
    """The members of an `anyOf`, nested ones flattened."""
    found: list[dict[str, Any]] = []
    for member in node.get("anyOf", []):
        found.extend(_members(member) if "anyOf" in member else [member])
    return found


def _slug(path: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", path.removeprefix("/api/v1/").lower()).strip("_")
