"""The CLI commands built from the operation declarations: one per `Cli(words)` in the catalogue.

Each command's options come from the operation's argument model (through its JSON schema, so
the CLI offers what MCP and REST take), and its values are checked by that same model: a bad
value is refused with the error MCP gives, naming the option. A command a person wrote by
hand at the same words wins; the builder leaves it alone.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import anyio
import click
from pydantic import ValidationError

from crewboard.cli.common import (
    State,
    acting_person,
    as_option,
    json_option,
    open_database,
    run_guarded,
)
from crewboard.contract.args import argument_error, input_schema, validate_arguments
from crewboard.contract.catalogue import Catalogue, default_catalogue
from crewboard.contract.operation import Call, Cli, Operation
from crewboard.contract.reply import Reply, compact
from crewboard.errors import CrewboardError, ValidationFailed

# The help of a group the builder makes (groups written by hand keep their own).
GROUP_HELP = {
    "action-item": "Follow-ups on shift handoffs.",
    "artifact": "A project's artifacts: versioned sets of files.",
    "attachment": "Files attached to a project (PDF, images, text, ...).",
    "memory": "A project's accepted knowledge.",
    "project": "Projects.",
    "spec": "A project's spec files.",
    "spec-comment": "Comment threads on passages of spec files.",
    "spec-session": "AI-guided spec sessions.",
    "stream-token": "Short-lived read-only tokens for following live events.",
    "task": "Tasks on a project's board.",
    "week": "A project's week: what is due and who spent time on what.",
}
IDEMPOTENCY_KEY = "idempotency_key"
CLEAR = "clear_"  # the `--clear` option's parameter (no argument model has a field of that name)


@dataclass(frozen=True)
class Param:
    """One argument of an operation as a command-line option."""

    field: str  # the python name (`project_id`)
    key: str  # the name on the wire (`projectId`)
    option: str  # `--project-id`
    kind: str  # str, int, float, bool, choice, json
    multiple: bool = False  # repeatable (a list); `scalar` too when one value may go alone
    scalar: bool = True
    required: bool = False
    nullable: bool = False  # a required argument that may be null: sent as null when left out
    clearable: bool = False  # an optional argument that may be null (a write's "null clears")
    choices: tuple[str, ...] = ()
    low: float | None = None
    high: float | None = None
    help: str = ""


def register(cli: click.Group, catalogue: Catalogue) -> list[Operation]:
    """Add a command for each operation declaring `Cli(words)` that has none yet; the
    operations it made commands for."""
    made = []
    for op in catalogue:
        if not isinstance(op.cli, Cli):
            continue
        group = cli
        for word in op.cli.words[:-1]:
            found = group.commands.get(word)
            if found is None:
                found = click.Group(word, help=GROUP_HELP.get(word))
                group.add_command(found)
            if not isinstance(found, click.Group):
                raise TypeError(f"{op.name}: `{word}` is a command, not a group")
            group = found
        if op.cli.words[-1] in group.commands:
            continue  # written by hand
        group.add_command(OperationCommand(op))
        made.append(op)
    return made


class OperationCommand(click.Command):
    """A command built from an operation (a command written by hand is a plain one).

    Its options are made from the argument model when click first asks for them: making
    every command's up front costs each `crewboard` start about 0.15 s of schema building."""

    def __init__(self, operation: Operation) -> None:
        assert isinstance(operation.cli, Cli)  # noqa: S101 - register only passes these
        help_text = f"{operation.title}.\n\n{operation.description}"
        if IDEMPOTENCY_KEY in operation.args.model_fields:
            help_text += (
                "\n\nWithout --idempotency-key each run is a new request; pass one to retry safely."
            )
        self._fields: list[Param] | None = None
        self._options: list[click.Parameter] | None = None
        super().__init__(
            operation.cli.words[-1],
            callback=self._invoke,
            help=help_text,
            short_help=operation.title,
        )
        self.operation = operation

    def fields(self) -> list[Param]:
        """The operation's arguments as options."""
        if self._fields is None:
            self._fields = operation_params(self.operation)
        return self._fields

    @property
    def params(self) -> list[click.Parameter]:
        if self._options is None:
            self._options = [*map(_option, self.fields()), *self._clear(), *_common()]
        return self._options

    @params.setter
    def params(self, value: list[click.Parameter]) -> None:
        self._options = value or None  # click's own __init__ sets none

    def _clear(self) -> list[click.Parameter]:
        """`--clear NAME` on a write with arguments that null clears: an option cannot say null."""
        names = [p.option.removeprefix("--") for p in self.fields() if p.clearable]
        if self.operation.read_only or not names:
            return []
        return [
            click.Option(
                ["--clear", CLEAR],
                multiple=True,
                type=click.Choice(names),
                help="Send this argument as null, which clears it. Repeat for more.",
            )
        ]

    def _invoke(self, as_email: str | None, as_json: bool, **given: Any) -> None:
        state = click.get_current_context().find_object(State)
        assert state is not None  # noqa: S101 - the root group sets it
        fields = self.fields()
        run_guarded(lambda: _run(self.operation, fields, state, as_email, as_json, given), as_json)


def _common() -> list[click.Parameter]:
    """`--as` and `--json`, as every operator command takes them."""

    def holder() -> None: ...

    as_option(json_option(holder))
    return list(reversed(holder.__click_params__))  # type: ignore[attr-defined]


def built_commands(
    group: click.Group, words: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], Operation]]:
    """The commands under `group` built from operations, with their words, in name order."""
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            yield from built_commands(command, (*words, name))
        elif isinstance(command, OperationCommand):
            yield (*words, name), command.operation


def operation_params(op: Operation) -> list[Param]:
    """The options of `op`'s command, in the argument model's order."""
    schema = input_schema(op.args)
    defs = schema.get("$defs", {})
    required = set(schema.get("required", []))
    params = []
    for name, field in op.args.model_fields.items():
        key = field.alias or name
        params.append(_param(name, key, schema["properties"][key], defs, key in required))
    return params


def _param(
    name: str, key: str, node: dict[str, Any], defs: dict[str, Any], required: bool
) -> Param:
    members = [m for m in _members(node, defs) if m.get("type") != "null"]
    nullable = len(members) < len(_members(node, defs))
    description = str(node.get("description", ""))
    as_json = Param(
        field=name,
        key=key,
        option="--" + name.replace("_", "-"),
        kind="json",
        # A required argument that may be null is optional here: left out, it is sent as null;
        # a key left out is made per run (see `arguments`).
        required=required and not nullable and name != IDEMPOTENCY_KEY,
        nullable=required and nullable,
        clearable=nullable and not required,
        help=_joined(description, "JSON text."),
    )
    scalars = [m for m in members if _scalar_kind(m) is not None]
    lists = [m for m in members if m.get("type") == "array" and _scalar_kind(_item(m, defs))]
    shapes = scalars + [_item(m, defs) for m in lists]
    kinds = {_scalar_kind(m) for m in shapes}
    kind = kinds.pop() if len(kinds) == 1 else None
    if kind is None or len(scalars) + len(lists) != len(members):
        return as_json  # objects, lists of objects, mixed unions: JSON text
    choices = tuple(dict.fromkeys(str(v) for m in shapes for v in m.get("enum", ())))
    formats = {m.get("format") for m in shapes}
    if "date" in formats:
        description = _joined(description, "A YYYY-MM-DD date.")
    elif "date-time" in formats:
        description = _joined(description, "An ISO 8601 date-time with offset (…T09:00:00Z).")
    return replace(
        as_json,
        kind=kind,
        multiple=bool(lists),
        scalar=bool(scalars),
        choices=choices,
        low=min((m["minimum"] for m in shapes if "minimum" in m), default=None),
        high=max((m["maximum"] for m in shapes if "maximum" in m), default=None),
        help=description,
    )


def _joined(first: str, second: str) -> str:
    return f"{first} {second}".strip()


def _members(node: dict[str, Any], defs: dict[str, Any]) -> list[dict[str, Any]]:
    node = _resolved(node, defs)
    if "anyOf" in node:
        return [_resolved(m, defs) for m in node["anyOf"]]
    return [node]


def _resolved(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    if "$ref" in node:
        found: dict[str, Any] = defs[node["$ref"].rsplit("/", 1)[-1]]
        return found
    return node


def _item(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    return _resolved(node.get("items", {}), defs)


def _scalar_kind(node: dict[str, Any]) -> str | None:
    if "enum" in node:
        return "choice"
    if "const" in node:
        return None
    return {"string": "str", "integer": "int", "number": "float", "boolean": "bool"}.get(
        node.get("type", "")
    )


class _Choice(click.Choice):  # type: ignore[type-arg]
    """Shows the accepted values in the help, but lets the argument model refuse a wrong one,
    so the refusal is the one MCP gives (code, field and accepted values)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:  # noqa: ARG002 - click's signature
        return value


class _Whole(click.IntRange):
    """A whole number; its range shows in the help and the argument model checks it."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        return click.INT.convert(value, param, ctx)


class _Number(click.FloatRange):
    """A number; its range shows in the help and the argument model checks it."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        return click.FLOAT.convert(value, param, ctx)


def _option(param: Param) -> click.Option:
    help_text = param.help
    if param.multiple:
        help_text = _joined(help_text, "Repeat for more.")
    if param.kind == "bool":
        flag = param.option.removeprefix("--")
        return click.Option(
            [f"{param.option}/--no-{flag}", param.field],
            default=None,
            required=param.required,
            help=help_text,
        )
    kind: click.ParamType[Any] = click.STRING
    if param.kind == "choice":
        kind = _Choice(param.choices)
    elif param.kind == "int":
        kind = _Whole(_bound(param.low), _bound(param.high))
    elif param.kind == "float":
        kind = _Number(param.low, param.high)
    return click.Option(
        [param.option, param.field],
        type=kind,
        multiple=param.multiple,
        required=param.required,
        metavar="JSON" if param.kind == "json" else None,
        help=help_text,
    )


def _bound(value: float | None) -> int | None:
    return None if value is None else int(value)


def arguments(op: Operation, params: list[Param], given: dict[str, Any]) -> dict[str, Any]:
    """The operation's JSON arguments from the options given (those left out are not sent,
    so the argument model's defaults apply, as over MCP).

    Raises:
        ValidationFailed: an option's JSON text is not JSON.
    """
    found: dict[str, Any] = {}
    cleared = set(given.get(CLEAR) or ())
    for param in params:
        value = given.get(param.field)
        if param.multiple:
            values = list(value or ())
            if not values:
                value = None
            elif param.kind == "json":
                value = [_json(param, v) for v in values]
            else:
                value = values[0] if param.scalar and len(values) == 1 else values
        elif param.kind == "json" and value is not None:
            value = _json(param, value)
        if value is not None:
            found[param.key] = value
        elif param.nullable:
            found[param.key] = None
        if param.option.removeprefix("--") in cleared:
            if value is not None:
                raise ValidationFailed(
                    f"{param.option}: given a value and cleared; pick one.",
                    {"field": param.key, "option": param.option},
                )
            found[param.key] = None
    if IDEMPOTENCY_KEY in op.args.model_fields and "idempotencyKey" not in found:
        # One key per run: a script that retries names its own with --idempotency-key.
        found["idempotencyKey"] = uuid.uuid4().hex
    return found


def _json(param: Param, text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as error:
        raise ValidationFailed(
            f"{param.option}: is not JSON text ({error}).",
            {"field": param.key, "option": param.option},
        ) from None


def checked(op: Operation, params: list[Param], given: dict[str, Any]) -> Any:
    """The operation's arguments, checked by its argument model as MCP checks them; a refusal
    names the option as well as the field.

    Raises:
        CrewboardError: a value the model refuses.
    """
    sent = arguments(op, params, given)
    try:
        return validate_arguments(op.args, sent)
    except ValidationError as error:
        refusal = argument_error(error, op.schema())
    except CrewboardError as error:
        refusal = error
    raise naming_option(refusal, params)


def naming_option(refusal: CrewboardError, params: list[Param]) -> CrewboardError:
    """`refusal` naming the command's option as well as the argument it names (a person typed
    `--time-zone`, not `timeZone`); unchanged when it names no argument of this command."""
    field = str(refusal.details.get("field", ""))
    option = next((p.option for p in params if p.key == field.split(".", maxsplit=1)[0]), None)
    if option is None:
        return refusal
    said = refusal.message.removeprefix(f"{field}: ")
    return type(refusal)(f"{option}: {said}", {**refusal.details, "option": option})


def run_declared(
    state: State,
    name: str,
    given: dict[str, Any],
    *,
    as_email: str | None,
    as_json: bool,
    human: Callable[[dict[str, Any]], str],
) -> None:
    """The frame of a command written by hand for a person's words and options over the
    declared operation `name`: `given` (python field names; None is not sent) is checked by the
    operation's model and run as the built command runs it, so `--json` prints the body MCP
    answers; without it, `human(body)` is printed. A refusal goes to stderr, exit status 1."""
    op = default_catalogue().find(name)
    if op is None:
        raise LookupError(f"no operation {name}")
    params = operation_params(op)
    run_guarded(lambda: _run(op, params, state, as_email, as_json, given, human), as_json)


def _run(
    op: Operation,
    params: list[Param],
    state: State,
    as_email: str | None,
    as_json: bool,
    given: dict[str, Any],
    human: Callable[[dict[str, Any]], str] | None = None,
) -> None:
    parsed = checked(op, params, given)
    settings = state.settings()
    with open_database(settings) as db:
        # The CLI runs on the machine it works on: a path to a local file is the caller's own.
        call = Call(db, acting_person(db, as_email), settings, local_root=Path.cwd())
        try:
            reply = op.run(call, parsed)
            if reply.follow is not None:
                reply = anyio.run(reply.follow)
        except CrewboardError as refusal:  # a service's refusal names the argument: add the option
            raise naming_option(refusal, params) from None
    if as_json:  # the body MCP answers, as compact JSON
        click.echo(reply.text if reply.text is not None else compact(reply.body))
    else:
        click.echo(render(reply) if human is None else human(reply.body))


def render(reply: Reply) -> str:
    """A reply for a person: scalars as `key: value`, lists of objects as rows of their
    identifying fields, then the note."""
    lines = _lines(reply.body, "")
    if reply.note:
        lines += ["", reply.note]
    if reply.image is not None:
        shown = reply.image
        lines.append(f"(an image, {shown.media_type}, {len(shown.data)} bytes: use --json)")
    return "\n".join(lines)


# The fields that say which row it is and how it stands, in the order shown.
_ROW_FIELDS = (
    "key",
    "id",
    "date",
    "number",
    "slug",
    "path",
    "name",
    "title",
    "displayName",
    "email",
    "status",
    "kind",
    "type",
    "viewerRole",
    "projectRole",
    "revision",
    "summary",
    "text",
)


def _lines(body: dict[str, Any], indent: str) -> list[str]:
    lines = []
    for key, value in body.items():
        if isinstance(value, dict):
            lines.append(f"{indent}{key}:")
            lines += _lines(value, indent + "  ")
        elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            lines.append(f"{indent}{key}:")
            lines += [f"{indent}  {_row(v)}" for v in value]
        elif isinstance(value, list):
            lines.append(f"{indent}{key}: {', '.join(map(_scalar, value)) or '(none)'}")
        elif isinstance(value, str) and "\n" in value:
            lines.append(f"{indent}{key}:")
            lines += [f"{indent}  {line}" for line in value.splitlines()]
        else:
            lines.append(f"{indent}{key}: {_scalar(value)}")
    return lines


def _row(row: dict[str, Any]) -> str:
    shown = [_scalar(row[f]) for f in _ROW_FIELDS if f in row and row[f] not in (None, "")]
    return "  ".join(s.replace("\n", " ")[:80] for s in shown) or compact(row)[:120]


def _scalar(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (dict, list)):
        return compact(value)
    return str(value)
