"""The OpenAPI description of /api/v1, built from the endpoint table and the argument models."""

from __future__ import annotations

import re
from typing import Any

from crewboard import __version__
from crewboard.api.routes import all_endpoints
from crewboard.errors import ERROR_TYPES
from crewboard.mcp.args import input_schema

_ERROR = {
    "type": "object",
    "properties": {
        "error": {
            "type": "object",
            "properties": {
                "code": {"type": "string", "enum": sorted({str(e.code) for e in ERROR_TYPES})},
                "message": {"type": "string"},
                "details": {"type": "object"},
            },
            "required": ["code", "message", "details"],
        }
    },
    "required": ["error"],
}


def openapi_document(base_url: str) -> dict[str, Any]:
    paths: dict[str, dict[str, Any]] = {}
    for endpoint in all_endpoints():
        operation: dict[str, Any] = {
            "operationId": f"{endpoint.method.lower()}_{_slug(endpoint.path)}",
            "summary": endpoint.summary,
            "parameters": [
                {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
                for name in re.findall(r"{(\w+)}", endpoint.path)
            ],
            "responses": {
                str(endpoint.success): {
                    "description": "Success",
                    "content": {"application/json": {}},
                },
                "default": {
                    "description": "A refusal with a stable code",
                    "content": {
                        "application/json": {"schema": {"$ref": "#/components/schemas/Error"}}
                    },
                },
            },
        }
        if endpoint.body is not None:
            operation["requestBody"] = {
                "required": True,
                "content": {"application/json": {"schema": input_schema(endpoint.body)}},
            }
        paths.setdefault(endpoint.path, {})[endpoint.method.lower()] = operation
    return {
        "openapi": "3.1.0",
        "info": {"title": "Crewboard REST API", "version": __version__},
        "servers": [{"url": base_url}],
        "components": {
            "schemas": {"Error": _ERROR},
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
        "security": [{"bearer": []}],
        "paths": paths,
    }


def _slug(path: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", path.removeprefix("/api/v1/").lower()).strip("_")
