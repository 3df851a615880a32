"""The code tools: how a spec session's model reads a person's code through their bridge
(`crewboard reverse`, which answers from a folder on their machine).

Here are the three tools' names and argument schemas (what the model is shown), the check of
the arguments the model wrote (defaults filled in; a wrong one is answered at once with
`bad_arguments` naming the field, never sent to the bridge), the check of what a bridge
answers, and the summary of an answer: once the turn has read the answer only the summary is
kept (no code stays in the database), for the session page's "What the model read".
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

LIST_FOLDER = "list_folder"
READ_FILE = "read_file"
SEARCH_TEXT = "search_text"

MAX_DEPTH = 3  # folder levels list_folder walks
READ_WINDOW = 400  # lines read_file answers at once
DEFAULT_WINDOW = 200  # lines when the model names no endLine
MAX_QUERY = 200  # characters of a search
MAX_PATH = 1_000  # characters of a path or glob the model may name
MAX_LINE_NUMBER = 2**31 - 1
MAX_ANSWER_BYTES = 256 * 1024  # bytes of one answer's JSON a bridge may send
MAX_ERROR_MESSAGE = 2_000
ERROR_CODES = (
    "outside_folder", "secret", "ignored", "not_found", "not_text", "too_large", "bad_arguments",
)  # fmt: skip
_ERROR_CODE = re.compile(r"^[a-z][a-z_]{0,39}$")

_PATH = {
    "type": "string",
    "minLength": 1,
    "maxLength": MAX_PATH,
    "description": "A path relative to the shared folder ('.' is the folder itself).",
}
_INT = {"type": "integer", "minimum": 1, "maximum": MAX_LINE_NUMBER}


@dataclass(frozen=True)
class CodeTool:
    name: str
    description: str
    parameters: dict[str, Any]  # a JSON Schema of the arguments


TOOLS: tuple[CodeTool, ...] = (
    CodeTool(
        LIST_FOLDER,
        "List the files and folders under a folder of the person's code, up to 3 levels deep "
        "(at most 500 entries). Ignored and secret files are left out and counted in `hidden`.",
        {
            "type": "object",
            "properties": {
                "path": {**_PATH, "default": "."},
                "depth": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_DEPTH,
                    "default": 1,
                    "description": "Folder levels to walk: 1 to 3.",
                },
            },
            "additionalProperties": False,
        },
    ),
    CodeTool(
        READ_FILE,
        "Read lines of a text file of the person's code: from startLine (1 by default) to "
        f"endLine (200 lines by default; at most {READ_WINDOW} at once). The answer says "
        "totalLines and whether the text was cut.",
        {
            "type": "object",
            "properties": {
                "path": _PATH,
                "startLine": {**_INT, "default": 1, "description": "The first line, from 1."},
                "endLine": {**_INT, "description": "The last line (at most startLine + 399)."},
            },
            "required": ["path"],
            "additionalProperties": False,
        },
    ),
    CodeTool(
        SEARCH_TEXT,
        "Search the person's code for literal text (not a pattern): at most 100 matching lines, "
        "each with its file and line number. Narrow it with a folder `path` or a file `glob` "
        "such as '*.py'.",
        {
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": MAX_QUERY,
                    "description": "The literal text to find.",
                },
                "path": {**_PATH, "default": "."},
                "glob": {
                    "type": ["string", "null"],
                    "maxLength": MAX_PATH,
                    "default": None,
                    "description": "Only files whose name matches, e.g. '*.py'.",
                },
                "caseSensitive": {"type": "boolean", "default": False},
            },
            "required": ["query"],
            "additionalProperties": False,
        },
    ),
)
BY_NAME = {tool.name: tool for tool in TOOLS}


class BadArguments(ValueError):
    """What the model wrote does not fit the tool's schema; `message` names the field."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def check_arguments(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """The arguments with their defaults filled in, checked against the tool's schema.

    Raises:
        BadArguments: an unknown tool, an unknown field, a missing one, a wrong type or a value
            out of range, naming the field and what it accepts.
    """
    spec = BY_NAME.get(tool)
    if spec is None:
        raise BadArguments(f"tool: no tool {tool!r}; the tools are {', '.join(BY_NAME)}.")
    properties: dict[str, Any] = spec.parameters["properties"]
    for name in arguments:
        if name not in properties:
            raise BadArguments(
                f"{name}: not an argument of {tool}; it takes {', '.join(properties)}."
            )
    checked: dict[str, Any] = {}
    for name, schema in properties.items():
        if name in arguments:
            checked[name] = _checked(name, arguments[name], schema)
        elif name in spec.parameters.get("required", ()):
            raise BadArguments(f"{name}: required by {tool}.")
        elif "default" in schema:
            checked[name] = schema["default"]
    if tool == READ_FILE:
        _read_window(checked)
    return checked


def _read_window(checked: dict[str, Any]) -> None:
    start = checked["startLine"]
    end = checked.setdefault("endLine", min(start + DEFAULT_WINDOW - 1, MAX_LINE_NUMBER))
    if end < start:
        raise BadArguments(f"endLine: {end} is before startLine {start}.")
    if end - start + 1 > READ_WINDOW:
        raise BadArguments(
            f"endLine: at most {READ_WINDOW} lines at once (endLine up to {start + READ_WINDOW - 1})."
        )


def _checked(name: str, value: Any, schema: dict[str, Any]) -> Any:
    kinds = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
    if value is None and "null" in kinds:
        return None
    if "string" in kinds and isinstance(value, str):
        if "\x00" in value:
            raise BadArguments(f"{name}: contains a NUL character.")
        if not schema.get("minLength", 0) <= len(value) <= schema["maxLength"]:
            low = schema.get("minLength", 0)
            raise BadArguments(f"{name}: {low} to {schema['maxLength']} characters.")
        return value
    if "integer" in kinds and isinstance(value, int) and not isinstance(value, bool):
        if not schema["minimum"] <= value <= schema["maximum"]:
            raise BadArguments(f"{name}: from {schema['minimum']} to {schema['maximum']}.")
        return value
    if "boolean" in kinds and isinstance(value, bool):
        return value
    wanted = " or ".join("a whole number" if k == "integer" else k for k in kinds)
    raise BadArguments(f"{name}: must be {wanted}, not {json.dumps(value)[:40]}.")


def error_answer(code: str, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message}}


def answer_size(answer: dict[str, Any]) -> int:
    """Bytes of an answer as compact UTF-8 JSON: what MAX_ANSWER_BYTES bounds."""
    return len(json.dumps(answer, ensure_ascii=False, separators=(",", ":")).encode())


def check_error(error: Any) -> str | None:
    """What is wrong with an error a bridge answered ({"code", "message"}); None when fine."""
    if not isinstance(error, dict) or set(error) != {"code", "message"}:
        return "must be an object with code and message."
    code, message = error["code"], error["message"]
    if not isinstance(code, str) or not _ERROR_CODE.match(code):
        return f"code must be one of {', '.join(ERROR_CODES)}."
    if not isinstance(message, str) or len(message) > MAX_ERROR_MESSAGE:
        return f"message must be text of at most {MAX_ERROR_MESSAGE} characters."
    return None


def summary_of(tool: str, answer: dict[str, Any]) -> dict[str, Any]:
    """What stays of an answer once the turn has read it: the lines read, the bytes, the
    matches or entries counted, or the error's code. The answer came from the person's
    machine, so nothing in it is trusted to have the shape the tool promises."""
    error = answer.get("error")
    if isinstance(error, dict):
        return {"error": str(error.get("code", "unknown"))[:40]}
    result = answer.get("result")
    if not isinstance(result, dict):
        return {}
    summary: dict[str, Any] = {"bytes": len(json.dumps(result, ensure_ascii=False).encode())}
    if tool == READ_FILE:
        start, end = result.get("startLine"), result.get("endLine")
        if _whole(start) and _whole(end):
            summary["lines"] = f"{start}-{end}"
        text = result.get("text")
        if isinstance(text, str):
            summary["bytes"] = len(text.encode())
    elif tool == SEARCH_TEXT and isinstance(result.get("matches"), list):
        summary["matches"] = len(result["matches"])
    elif tool == LIST_FOLDER and isinstance(result.get("entries"), list):
        summary["entries"] = len(result["entries"])
    return summary


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
