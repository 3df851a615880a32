"""Argument models: the one source of each tool's input schema and of its validation."""

from __future__ import annotations

import copy
import functools
import json
import re
import typing
from datetime import date, datetime
from typing import Annotated, Any, Literal, TypeVar

from pydantic import (
    AliasChoices,
    AwareDatetime,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)
from pydantic.alias_generators import to_camel, to_snake
from pydantic_core import PydanticCustomError

from crewboard.domain.validation import INT32_MAX
from crewboard.errors import CrewboardError, LimitExceeded, ValidationFailed
from crewboard.services.identity.access import ANY_WORKSPACE, WorkspaceRef

ProjectRef = Annotated[
    str,
    Field(
        min_length=1,
        max_length=200,
    ),
]


class Unlisted:
    """Marks an optional argument the server takes but `tools/list` does not show: a check
    an agent never needs (REST, the CLI and OpenAPI still show it)."""


UNLISTED = Unlisted()

# Every argument model naming a project (or a task, file, thread... inside one) takes an
# optional `workspaceId`, declared `workspace_id: WorkspaceId = None` and passed on as
# `args.workspace_ref()`: left out, the project's own workspace is taken; null names the
# private space and a value another workspace, and either is checked against the project.
# It only refuses, so MCP lists it only where it is required or chooses (list_projects).
WorkspaceId = Annotated[str | None, Field(max_length=200), UNLISTED]
IdempotencyKey = Annotated[
    str | None,
    Field(
        default=None,
        min_length=1,
        max_length=128,
    ),
]
# Board positions are finite and well inside what a double counts exactly, so "max + 1024"
# for the next tile never rounds into a tie or overflows.
BOARD_ORDER_LIMIT = 1e12


A = TypeVar("A", bound="Args")

# ISO 8601 as the schema's `format` promises, and nothing else: pydantic alone also reads
# "1700000000" (or the number) as a Unix time and "20260301" as a date.
_ISO_DATE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")
_ISO_MOMENT = re.compile(
    r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,9})?)?"
    r"([Zz]|[+-][0-9]{2}:?[0-9]{2})?$"
)


def _iso_text(kind: str, pattern: re.Pattern[str], parse: Any) -> Any:
    """A before-validator: the value must be ISO 8601 text, parsed here (the strict check
    after it takes only a date or datetime, never text or a number)."""

    def check(value: Any) -> Any:
        if isinstance(value, str) and pattern.match(value):
            try:
                return parse(value)
            except ValueError:
                pass  # e.g. 2026-13-45: the right shape, not a real date
        raise PydanticCustomError(kind, "not ISO 8601 text")

    return BeforeValidator(check)


Moment = Annotated[
    AwareDatetime, _iso_text("datetime_parsing", _ISO_MOMENT, datetime.fromisoformat)
]
Day = Annotated[date, _iso_text("date_parsing", _ISO_DATE, date.fromisoformat)]
Offset = Annotated[int, Field(ge=0, le=INT32_MAX)]
Revision = Annotated[int, Field(ge=0, le=INT32_MAX)]
# The fence of the caller's claim on the task (claim_task): a write from a lost claim is refused.
ClaimFence = Annotated[int | None, Field(default=None, ge=1, le=INT32_MAX)]
TaskNumber = Annotated[int, Field(ge=1, le=INT32_MAX)]
BoardOrder = Annotated[float, Field(ge=-BOARD_ORDER_LIMIT, le=BOARD_ORDER_LIMIT)]
ProjectStatus = Literal["planning", "active", "paused", "done"]
ProjectType = Literal["greenfield", "brownfield", "auto"]


def also_named(wire: str, *others: str) -> AliasChoices:
    """A field's wire name and the other names it is accepted under: the names the reference
    products give the same argument (`humanAssigneeId` for `humanOwnerId`). The schema shows
    only `wire`; docs/agents.md ("Arguments every tool shares") lists the others."""
    return AliasChoices(wire, *others)


@functools.cache
def other_names(model: type[Args]) -> dict[str, str]:
    """Every name besides its camelCase one that a field of `model` is accepted under, mapped
    to that camelCase name: the snake_case spelling (the reference pages write `project_id`)
    and the names given with `also_named`, in either spelling."""
    table: dict[str, str] = {}
    for name, field in model.model_fields.items():
        wire = field.alias or name
        names = [name]
        if isinstance(field.validation_alias, AliasChoices):
            names += [c for c in field.validation_alias.choices if isinstance(c, str)]
        for other in names:
            for spelling in (other, to_snake(other)):
                if spelling != wire:
                    table[spelling] = wire
    return table


def wire_names(model: type[Args], data: dict[str, Any]) -> dict[str, Any]:
    """`data` with every other name of an argument (see `other_names`) replaced by its wire
    name, in nested argument models too: the call as the published schema spells it.

    Raises:
        ValidationFailed: one argument sent under two names with different values.
    """
    table = other_names(model)
    fields = {f.alias or n: f for n, f in model.model_fields.items()}
    found: dict[str, Any] = {}
    for key, value in sorted(data.items(), key=lambda item: item[0] in table):
        wire = table.get(key, key)
        if wire in found:
            if found[wire] != value:
                raise ValidationFailed.field(
                    wire, f"was sent twice, also as {key}, with another value; send it once."
                )
            continue
        field = fields.get(wire)
        found[wire] = value if field is None else _nested_wire_names(field.annotation, value)
    return found


def _nested_wire_names(annotation: Any, value: Any) -> Any:
    """A field's value with the other names inside it replaced, when it holds argument models."""
    if isinstance(value, list):
        return [_nested_wire_names(annotation, item) for item in value]
    if not isinstance(value, dict):
        return value
    for kind in (annotation, *_inner_types(annotation)):
        if isinstance(kind, type) and issubclass(kind, Args):
            return wire_names(kind, value)
    return value


def _inner_types(annotation: Any) -> list[Any]:
    found: list[Any] = []
    for inner in typing.get_args(annotation):
        found += [inner, *_inner_types(inner)]
    return found


class Args(BaseModel):
    """Base of every argument model: camelCase on the wire, unknown fields refused.

    A field is also accepted under its snake_case name and under the names `also_named` gives
    it, so a call written the way a reference product documents it works on the first try;
    the published schema shows only the camelCase name, so the listing does not grow.
    """

    model_config = ConfigDict(
        alias_generator=to_camel, extra="forbid", frozen=True, allow_inf_nan=False
    )

    @model_validator(mode="before")
    @classmethod
    def _one_name_each(cls, data: Any) -> Any:
        """Rename other names to the wire name before validation.

        Raises:
            ValidationFailed: one argument sent under two names with different values.
        """
        if not isinstance(data, dict) or not any(key in other_names(cls) for key in data):
            return data
        return wire_names(cls, data)

    def given(self, name: str) -> bool:
        """Whether the caller sent this field (null counts as sent)."""
        return name in self.model_fields_set

    def workspace_ref(self) -> WorkspaceRef:
        """The `workspaceId` a read named (null included), or any workspace when it sent none."""
        if not self.given("workspace_id"):
            return ANY_WORKSPACE
        value: str | None = getattr(self, "workspace_id", None)
        return value


_FIELD_PART = re.compile(r"^(?!(?:int|str|float|bool|list|dict|none)$)[A-Za-z_][A-Za-z0-9_]*$")


def refuse_nul(value: Any, path: str = "arguments") -> None:
    """Refuse text holding a NUL character anywhere in the arguments (no database stores it).

    Raises:
        ValidationFailed: naming where it is.
    """
    if isinstance(value, str):
        if "\x00" in value:
            raise ValidationFailed.field(
                path, "contains a NUL character (\\u0000), which cannot be stored."
            )
    elif isinstance(value, dict):
        for key, item in value.items():
            refuse_nul(key, path)
            refuse_nul(item, key if path == "arguments" else f"{path}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            refuse_nul(item, f"{path}.{index}")


def validate_arguments(model: type[A], arguments: dict[str, Any]) -> A:
    """Check JSON arguments against `model` with the types its schema shows, no coercion.

    Strict JSON validation: an integer field takes only a JSON integer (not `true`, `"5"` or
    `5.5`), a string field only a string, a date or date-time only its ISO text (not a Unix
    time), a boolean only `true`/`false`.

    Raises:
        ValidationFailed: a NUL character anywhere in the arguments.
        pydantic.ValidationError: any other mismatch (`argument_error` words it).
    """
    refuse_nul(arguments)
    return model.model_validate_json(json.dumps(arguments), strict=True)


def input_schema(model: type[Args]) -> dict[str, Any]:
    """The JSON schema MCP clients see, without pydantic's titles (a copy: callers may change it)."""
    return copy.deepcopy(_input_schema(model))


@functools.cache
def _input_schema(model: type[Args]) -> dict[str, Any]:
    # Generated once per model: pydantic takes about as long to build the catalogue's schemas
    # as the rest of create_app, and tests and benchmarks build many apps in one process.
    schema = model.model_json_schema(by_alias=True)
    _drop_titles(schema)
    schema.setdefault("properties", {})
    schema["additionalProperties"] = False
    return schema


def unlisted(model: type[Args]) -> frozenset[str]:
    """The wire names of `model`'s own optional arguments marked UNLISTED."""
    return frozenset(
        field.alias or name
        for name, field in model.model_fields.items()
        if not field.is_required() and any(isinstance(m, Unlisted) for m in field.metadata)
    )


def without_unlisted(model: type[Args], data: Any) -> Any:
    """`data` (wire names) without the UNLISTED arguments, in nested argument models too: the
    part of a call `tools/list` describes."""
    if isinstance(data, list):
        return [without_unlisted(model, item) for item in data]
    if not isinstance(data, dict):
        return data
    hidden = unlisted(model)
    fields = {f.alias or n: f for n, f in model.model_fields.items()}
    kept: dict[str, Any] = {}
    for key, value in data.items():
        if key in hidden:
            continue
        field = fields.get(key)
        inner = [] if field is None else [field.annotation, *_inner_types(field.annotation)]
        models = [k for k in inner if isinstance(k, type) and issubclass(k, Args)]
        kept[key] = without_unlisted(models[0], value) if models else value
    return kept


def nested_models(model: type[Args]) -> list[type[Args]]:
    """The argument models inside `model`'s fields, at any depth (each once)."""
    found: list[type[Args]] = []
    for field in model.model_fields.values():
        for kind in (field.annotation, *_inner_types(field.annotation)):
            if isinstance(kind, type) and issubclass(kind, Args) and kind not in found:
                found += [kind, *(k for k in nested_models(kind) if k not in found)]
    return found


def argument_error(error: ValidationError, schema: dict[str, Any]) -> CrewboardError:
    """Turn pydantic's complaint about the arguments into one error naming the field.

    `schema` is the input schema the caller was shown: a number out of range is answered with
    the whole accepted range from it, not just the bound that was crossed.
    """
    first = _most_specific(error)
    # pydantic adds the member of a union it tried ("literal['a','b']", "int"): not a field.
    parts = [str(p) for p in first["loc"] if isinstance(p, int) or _FIELD_PART.match(str(p))]
    field = ".".join(parts) or "arguments"
    kind = first["type"]
    if kind == "extra_forbidden":
        return ValidationFailed.field(
            field, "is not an argument of this tool.", sorted(schema.get("properties", {}))
        )
    if kind == "missing":
        return ValidationFailed(f"{field}: is required.", {"field": field})
    ctx = first.get("ctx") or {}
    if kind in ("string_too_long", "too_long"):
        limit = ctx.get("max_length")
        return LimitExceeded(
            f"{field}: over the limit of {limit}.", {"field": field, "limit": limit}
        )
    return _value_error(first, field, parts, schema)


def _value_error(
    first: Any, field: str, parts: list[str], schema: dict[str, Any]
) -> CrewboardError:
    """A value of the wrong kind: not one of the accepted values, out of range, not text."""
    kind = first["type"]
    if kind == "literal_error":
        ctx = first.get("ctx") or {}
        accepted = [
            part.strip(" '")
            for part in str(ctx.get("expected", "")).replace(" or ", ",").split(",")
        ]
        return ValidationFailed.field(field, f"{first['input']!r} is not accepted.", accepted)
    if kind in _RANGE_ERRORS:
        whole, low, high = _range_of(schema, parts)
        number = "a whole number" if whole else "a finite number"
        return ValidationFailed(
            f"{field}: must be {number} from {_num(low)} to {_num(high)}.",
            {"field": field, "minimum": low, "maximum": high},
        )
    if kind in _TEXT_FORMATS:
        return ValidationFailed(
            f"{field}: must be text holding {_TEXT_FORMATS[kind]}.",
            {"field": field, "format": _TEXT_FORMATS[kind]},
        )
    message = first["msg"].removeprefix("Value error, ")
    return ValidationFailed(f"{field}: {message}.", {"field": field})


_DATE = "a YYYY-MM-DD date such as 2026-03-01"
_MOMENT = "an ISO 8601 date-time with a UTC offset such as 2026-03-01T09:00:00Z"
_TEXT_FORMATS = {
    "date_type": _DATE,
    "date_parsing": _DATE,
    "date_from_datetime_parsing": _DATE,
    "date_from_datetime_inexact": _DATE,
    "datetime_type": _MOMENT,
    "datetime_parsing": _MOMENT,
    "datetime_from_date_parsing": _MOMENT,
    "timezone_aware": _MOMENT,
}


def _most_specific(error: ValidationError) -> Any:
    """The complaint about the deepest field: for a value that may be one thing or a list of
    them, a bad item says more than "not an integer" about the list as a whole."""

    def depth(e: Any) -> tuple[int, bool]:
        fields = [p for p in e["loc"] if isinstance(p, int) or _FIELD_PART.match(str(p))]
        # On a tie, "too many items" says more than "not an integer" (the other union member).
        return len(fields), not str(e["type"]).endswith("_type")

    return max(error.errors(), key=depth)


_RANGE_ERRORS = frozenset(
    {"greater_than", "greater_than_equal", "less_than", "less_than_equal", "finite_number"}
)


def _num(value: float | None) -> str:
    if value is None:
        return "any"
    return str(int(value)) if float(value).is_integer() and abs(value) < 1e15 else f"{value:g}"


def _range_of(schema: dict[str, Any], parts: list[str]) -> tuple[bool, float | None, float | None]:
    """Whether the number at `parts` (camelCase path) is whole, and its minimum and maximum."""
    defs = schema.get("$defs", {})
    nodes: list[Any] = [schema]
    for part in parts:
        nodes = [child for node in nodes for child in _children(node, part, defs)]
    for member in (m for node in nodes for m in _expand(node, defs)):
        kind = member.get("type")
        kinds = kind if isinstance(kind, list) else [kind]
        if "integer" in kinds or "number" in kinds:
            whole = "integer" in kinds
            # A published schema leaves the 32-bit maximum out (contract/schema.py).
            return whole, member.get("minimum"), member.get("maximum", INT32_MAX if whole else None)
    return False, None, None


def _expand(node: Any, defs: dict[str, Any]) -> list[dict[str, Any]]:
    """The node itself, its $ref target and its union members, flattened."""
    if not isinstance(node, dict):
        return []
    if "$ref" in node:
        return _expand(defs.get(node["$ref"].rsplit("/", 1)[-1]), defs)
    found = [node]
    for key in ("anyOf", "oneOf", "allOf"):
        for member in node.get(key, []):
            found.extend(_expand(member, defs))
    return found


def _children(node: Any, part: str, defs: dict[str, Any]) -> list[Any]:
    children: list[Any] = []
    for candidate in _expand(node, defs):
        if part in candidate.get("properties", {}):
            children.append(candidate["properties"][part])
        elif part.isdigit() and "items" in candidate:
            children.append(candidate["items"])
        elif isinstance(candidate.get("additionalProperties"), dict):
            children.append(candidate["additionalProperties"])
    return children


def _drop_titles(node: Any) -> None:
    if isinstance(node, dict):
        node.pop("title", None)
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                for prop in value.values():
                    _drop_titles(prop)
            else:
                _drop_titles(value)
    elif isinstance(node, list):
        for item in node:
            _drop_titles(item)


class Paging(Args):
    limit: int = Field(default=50, ge=1, le=200)
    offset: Offset = Field(default=0)


class ListProjects(Paging):
    project_id: str | None = Field(default=None, max_length=200)
    workspace_id: str | None = Field(
        default=None,
        max_length=200,
        description="null: private projects.",
    )
    include_archived: bool = Field(default=False)
    # Most recently active first, as MySpec lists them; no sort argument (the web's switcher
    # asks the service for key order), which keeps the default toolset within its budget.
    q: str | None = Field(default=None, max_length=200)


class GetProject(Args):
    project_id: ProjectRef
    workspace_id: WorkspaceId = None


class CreateProject(Args):
    # A new project has no workspace to take it from: where it goes is said out loud.
    workspace_id: WorkspaceId
    key: str = Field(
        min_length=2,
        max_length=10,
        description="Letters and digits, starting with a letter; tasks become KEY-1.",
    )
    name: str = Field(min_length=1, max_length=120)
    goal: str = Field(default="", max_length=2000)
    phase: str = Field(default="", max_length=100)
    status: ProjectStatus = "active"
    description: str = Field(default="", max_length=10_000)
    type: ProjectType = "auto"
    collections: list[Annotated[str, Field(min_length=1, max_length=60)]] | None = Field(
        default=None,
        max_length=50,
        description="Memory sections (default: general).",
    )
    idempotency_key: IdempotencyKey = None


class UpdateProject(Args):
    project_id: ProjectRef
    workspace_id: WorkspaceId = None
    name: str | None = Field(default=None, min_length=1, max_length=120)
    goal: str | None = Field(default=None, max_length=2000)
    phase: str | None = Field(default=None, max_length=100)
    status: ProjectStatus | None = None
    description: str | None = Field(default=None, max_length=10_000)
    type: ProjectType | None = None
    collections: list[Annotated[str, Field(min_length=1, max_length=60)]] | None = Field(
        default=None, max_length=50
    )
    shift_time_zone_a: str | None = Field(
        default=None,
        min_length=1,
        max_length=64,
        description="IANA zone of the shift that hands over (handoffs take their day here).",
    )
    shift_time_zone_b: str | None = Field(
        default=None, min_length=1, max_length=64, description="IANA zone of the next shift."
    )
    notify_action_item_assignees: bool | None = Field(
        default=None, description="Tell a person given a handoff action item (default true)."
    )

    def changes(self) -> dict[str, Any]:
        """The fields to change, as update_project takes them (those left out are None)."""
        return self.model_dump(exclude={"project_id", "workspace_id"})


class ProjectAction(Args):
    project_id: ProjectRef
    workspace_id: WorkspaceId = None


class GetProjectState(Args):
    project_id: ProjectRef
    workspace_id: WorkspaceId = None


class UpdateProjectState(Args):
    project_id: ProjectRef
    workspace_id: WorkspaceId = None
    content: str = Field(
        max_length=5000,
    )
    expected_revision: Revision = Field(description="0 for an empty page.")


class ListTeam(Args):
    project_id: str | None = Field(default=None, max_length=200)
    workspace_id: WorkspaceId = None
