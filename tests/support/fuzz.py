"""Invalid MCP tool arguments built from each tool's inputSchema, and the rules their answers keep.

`Schema(input_schema).mutations()` lists, for every property at every depth, values the tool
must refuse: wrong JSON types, huge and non-finite numbers, 100,000-character strings, NUL,
10,000-deep nesting, bad dates and time zones, too many or too few items, unknown and missing
properties. A `Mutation` changes one place of an otherwise valid argument set, so the refusal
must name that place. Values an ordinary JSON encoder cannot write (1e309, NaN, deep nesting)
are `Raw` JSON text, put into the request body as they are.
"""

from __future__ import annotations

import copy
import json
import math
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime
from typing import Any

import hypothesis
import hypothesis.strategies as st
import jsonschema_rs
from hypothesis_jsonschema import from_schema

from crewboard.domain.validation import INT32_MAX
from crewboard.errors import ErrorCode
from crewboard.storage.database import Database
from crewboard.storage.tables import metadata
from tests.support.databases import Reader

Path = tuple[str | int, ...]

DEEP = 10_000  # nesting depth of the deep-nesting values
LONG = 100_000  # characters of a huge string, items of a huge array
BODY_BUDGET = 3 * 1024 * 1024  # a huge array stays under the 4 MiB body limit: it tests the field
UNKNOWN = "fuzzUnknown"
MAP_KEY = "fuzzKey"
HUGE_INTEGERS = (2**63, 2**64, 10**30, -(2**63) - 1)
HUGE_NUMBERS = ("1e309", "-1e309", "1e30")
NOT_JSON_NUMBERS = ("Infinity", "-Infinity", "NaN")
JSON_TYPES = ("string", "integer", "number", "boolean", "null", "object", "array")
# The first value of each list is the one most often coerced by a lenient parser ("1" reads as
# an integer, a number and a boolean; 1 as a boolean): the quick sweep sends only that one.
WRONG: dict[str, tuple[Any, ...]] = {
    "string": ("1", "true", "fuzz", ""),
    "integer": (1, 0, 7, -1),
    "number": (1.5, -0.5),
    "boolean": (True, False),
    "null": (None,),
    "object": ({"fuzz": 1}, {}),
    "array": (["1"], [], [1]),
}
# Digits in a string are no date either (a lenient parser reads "1700000000" as Unix time).
BAD_DATES = ("2026-13-45", "2026-02-30", "yesterday", "", "20260302", "0", "1700000000", 1700000000)
BAD_MOMENTS = (
    "1700000000",
    "0",
    "2026-13-45T09:00:00Z",
    "2026-03-02T25:00:00Z",
    "2026-03-02T09:00:00",
    "2026-03-02T09:00:00+25:00",
    "2026-03-02",
    "yesterday",
    1700000000,
)
BAD_TIME_ZONES = ("Mars/Olympus", "UTC+99", "../../etc/passwd", "Europe/Berlin ")
# Kinds whose value a schema may allow (NUL is a valid JSON string; an unbounded integer
# schema allows 2**64; a time zone is a string): they must be refused all the same.
DOMAIN_KINDS = frozenset({"nul", "huge_number", "not_json_number", "bad_time_zone"})
# Kinds that break the schema by construction; the others are checked against it (a wrong
# type may be one a union allows), which for 100,000 items would take seconds each.
INVALID_KINDS = frozenset(
    {
        "not_an_object",
        "unknown_property",
        "missing_required",
        "deep_nesting",
        "too_many",
        "too_few",
        "huge_string",
        "out_of_range",
        "not_in_enum",
    }
)
ACCEPTED_RPC_ERRORS = {-32602: "invalid params", -32600: "invalid request", -32700: "parse error"}
UNCOUNTED_TABLES = frozenset({"web_sessions"})  # what a browser touches, not MCP


@dataclass(frozen=True)
class Raw:
    """JSON text sent as it is; `stand_in` is what a schema check looks at instead."""

    text: str
    stand_in: Any = None


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()  # the property is left out


def deep_array() -> Raw:
    return Raw("[" * DEEP + "]" * DEEP, [[[]]])


def deep_object() -> Raw:
    return Raw('{"a":' * DEEP + "1" + "}" * DEEP, {"a": {"a": 1}})


def raw_number(text: str) -> Raw:
    return Raw(text, float(text.replace("Infinity", "inf")))


@dataclass(frozen=True)
class Mutation:
    """One place of the arguments (`path`) given one value the tool must refuse."""

    kind: str
    path: Path
    value: Any
    # A valid container for each level above the leaf, used when the base has none there.
    scaffold: tuple[Any, ...] = ()
    quick: bool = True  # part of the quick sweep (the full sweep sends every mutation)

    @property
    def field(self) -> str:
        return ".".join(str(part) for part in self.path) or "arguments"

    @property
    def plain(self) -> bool:
        """Whether an ordinary JSON encoder, such as the SDK client's, can send it."""
        return bool(self.path) and not _holds_raw(self.value)

    def apply(self, base: dict[str, Any]) -> Any:
        """The arguments `base` with this one change."""
        if not self.path:
            return self.value
        root = copy.deepcopy(base)
        node: Any = root
        for depth, part in enumerate(self.path[:-1]):
            following = self.path[depth + 1]
            child = node.get(part) if isinstance(node, dict) else node[part]
            fits = (
                isinstance(child, dict)
                if isinstance(following, str)
                else (isinstance(child, list) and len(child) > following)
            )
            if not fits:
                child = copy.deepcopy(self.scaffold[depth])
                node[part] = child
            node = child
        if self.value is MISSING:
            node.pop(self.path[-1], None)
        else:
            node[self.path[-1]] = self.value
        return root

    def describe(self, limit: int = 120) -> str:
        return f"{self.kind} at {self.field} = {short(self.value, limit)}"


def _holds_raw(value: Any) -> bool:
    if isinstance(value, Raw):
        return True
    if isinstance(value, dict):
        return any(_holds_raw(v) for v in value.values())
    if isinstance(value, list):
        return any(_holds_raw(v) for v in value)
    return False


def short(value: Any, limit: int = 300) -> str:
    text = value.text if isinstance(value, Raw) else encode(value)
    if len(text) <= limit:
        return text
    return f"{text[: limit // 2]}…({len(text)} chars)…{text[-limit // 4 :]}"


def encode(value: Any) -> str:
    """JSON text of `value`, with each Raw value written as its own text."""
    raws: list[str] = []

    def hide(node: Any) -> Any:
        if isinstance(node, Raw):
            raws.append(node.text)
            return f"\x01raw{len(raws) - 1}\x01"
        if isinstance(node, dict):
            return {k: hide(v) for k, v in node.items()}
        if isinstance(node, list):
            return [hide(v) for v in node]
        return node

    text = json.dumps(hide(value), separators=(",", ":"), allow_nan=False)
    for index, raw in enumerate(raws):
        text = text.replace(json.dumps(f"\x01raw{index}\x01"), raw, 1)
    return text


def stand_in(value: Any) -> Any:
    """`value` as a schema check can see it (Raw values by their stand-ins)."""
    if isinstance(value, Raw):
        return value.stand_in
    if isinstance(value, dict):
        return {k: stand_in(v) for k, v in value.items()}
    if isinstance(value, list):
        return [stand_in(v) for v in value]
    return value


# --- What the schema says ----------------------------------------------------------------

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_MOMENT = re.compile(
    r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)$",
    re.IGNORECASE,
)


def _is_date(value: str) -> bool:
    try:
        return bool(_DATE.match(value)) and date.fromisoformat(value) is not None
    except ValueError:
        return False


def _is_moment(value: str) -> bool:
    try:
        return bool(_MOMENT.match(value)) and datetime.fromisoformat(value.upper()) is not None
    except ValueError:
        return False


FORMATS = {"date": _is_date, "date-time": _is_moment}  # RFC 3339, as the schemas promise


# hypothesis-jsonschema draws dates from year 0, which no Python date holds: valid arguments
# are drawn from a copy of the schema whose date formats are renamed to these.
VALID_FORMATS: dict[str, st.SearchStrategy[str]] = {
    "x-fuzz-date": st.dates(date(1970, 1, 1), date(2100, 12, 31)).map(str),
    "x-fuzz-date-time": st.datetimes(
        datetime(1970, 1, 2),  # noqa: DTZ001 - hypothesis takes naive bounds, then adds the zone
        datetime(2100, 12, 31),  # noqa: DTZ001
        timezones=st.just(UTC),
    ).map(lambda moment: moment.isoformat()),
}


def _with_int32_maximum(node: Any) -> Any:
    """A copy of `node` where each integer without a maximum has the 32-bit one."""
    if isinstance(node, list):
        return [_with_int32_maximum(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _with_int32_maximum(value) for key, value in node.items()}
    if "integer" in str(node.get("type")) and "maximum" not in node:
        out["maximum"] = INT32_MAX
    return out


@dataclass
class Schema:
    """One tool's input schema, walked for valid and invalid values."""

    root: dict[str, Any]
    defs: dict[str, Any] = field(init=False)

    def __post_init__(self) -> None:
        # Every integer argument is 32-bit; a published schema leaves that maximum out
        # (contract/schema.py), so it is put back here for the values drawn and the bounds bent.
        self.root = _with_int32_maximum(self.root)
        self.defs = self.root.get("$defs", {})
        self._validator = jsonschema_rs.validator_for(
            self.root, formats=FORMATS, validate_formats=True
        )

    def valid(self, arguments: Any) -> bool:
        return bool(self._validator.is_valid(stand_in(arguments)))

    def branches(self, node: dict[str, Any]) -> list[dict[str, Any]]:
        """The concrete alternatives of `node`: $ref resolved, anyOf/oneOf flattened."""
        if "$ref" in node:
            return self.branches(self.defs[node["$ref"].rsplit("/", 1)[-1]])
        for key in ("anyOf", "oneOf"):
            if key in node:
                return [b for member in node[key] for b in self.branches(member)]
        if isinstance(node.get("type"), list):
            # `type: [T, "null"]`: the null branch is null alone (T's keywords do not apply).
            return [{**node, "type": t} if t != "null" else {"type": "null"} for t in node["type"]]
        return [node]

    def types(self, node: dict[str, Any]) -> set[str]:
        found: set[str] = set()
        for branch in self.branches(node):
            if "type" in branch:
                found.add(branch["type"])
            else:
                found.update(_json_type(v) for v in branch.get("enum", [branch.get("const")]))
        if "number" in found:
            found.add("integer")
        return found

    def minimal(self, node: dict[str, Any], want: str | None = None) -> Any:
        """A small valid value of `node` (of JSON type `want` when given; null first)."""
        branches = self.branches(node)
        if want is None and any(b.get("type") == "null" for b in branches):
            return None
        branch = next(b for b in branches if want is None or b.get("type") == want)
        if "const" in branch or "enum" in branch:
            return branch.get("const", branch.get("enum", [None])[0])
        kind = branch.get("type")
        if kind == "object":
            properties = branch.get("properties", {})
            return {name: self.minimal(properties[name]) for name in branch.get("required", [])}
        if kind == "array":
            return [self.minimal(branch.get("items", {}))] * branch.get("minItems", 0)
        return _minimal_scalar(branch)

    def mutations(self) -> list[Mutation]:
        """Every mutation of the arguments, the top level first, then each property in turn."""
        found = [
            Mutation("not_an_object", (), value, quick=index == 0)
            for index, value in enumerate(([], "fuzz", 7))
        ]
        found.extend(self._object_mutations(self.root, (), ()))
        return found

    def _object_mutations(
        self, node: dict[str, Any], path: Path, scaffold: tuple[Any, ...]
    ) -> Iterator[Mutation]:
        yield Mutation("unknown_property", (*path, UNKNOWN), 1, scaffold)
        for name in node.get("required", []):
            yield Mutation("missing_required", (*path, name), MISSING, scaffold)
        for name, prop in node.get("properties", {}).items():
            yield from self._property_mutations(prop, (*path, name), scaffold)

    def _property_mutations(
        self, node: dict[str, Any], path: Path, scaffold: tuple[Any, ...]
    ) -> Iterator[Mutation]:
        types = self.types(node)

        def make(kind: str, value: Any, quick: bool = True) -> Mutation:
            return Mutation(kind, path, value, scaffold, quick)

        # The quick sweep sends the types a lenient parser coerces (a string, an integer, a
        # boolean) to every property, and one of the others, in turn.
        others = [kind for kind in ("number", "null", "object", "array") if kind not in types]
        turn = others[zlib.crc32(repr(path).encode()) % len(others)] if others else None
        for kind in JSON_TYPES:
            if kind not in types:
                quick = kind in ("string", "integer", "boolean") or kind == turn
                for index, value in enumerate(WRONG[kind]):
                    yield make("wrong_type", value, quick and index == 0)
        deep_first = zlib.crc32(repr(path).encode()) % 2 == 0
        yield make("deep_nesting", deep_array(), quick=len(path) == 1 and deep_first)
        yield make("deep_nesting", deep_object(), quick=len(path) == 1 and not deep_first)
        for branch in self.branches(node):
            yield from self._branch_mutations(branch, path, make)
        if len(path) < 4:
            yield from self._nested_mutations(node, path, scaffold)

    def _branch_mutations(
        self, branch: dict[str, Any], path: Path, make: Any
    ) -> Iterator[Mutation]:
        kind = branch.get("type")
        if kind in ("integer", "number"):
            for number in HUGE_INTEGERS:
                yield make("huge_number", number)
            for text in HUGE_NUMBERS:
                yield make("huge_number", raw_number(text))
            for text in NOT_JSON_NUMBERS:
                yield make("not_json_number", raw_number(text))
            for bound, step in (("minimum", -1), ("maximum", 1)):
                if bound in branch:
                    yield make("out_of_range", branch[bound] + step)
                exclusive = f"exclusive{bound.title()}"
                if exclusive in branch:
                    yield make("out_of_range", branch[exclusive])
        elif kind == "string":
            yield from self._string_mutations(branch, path, make)
        elif kind == "array":
            item = self.minimal(branch.get("items", {}))
            if "maxItems" in branch:
                yield make("too_many", [item] * (branch["maxItems"] + 1))
                fit = max(branch["maxItems"] + 1, BODY_BUDGET // (len(encode(item)) + 1))
                yield make("too_many", [item] * min(LONG, fit), quick=len(path) == 1)
            if branch.get("minItems", 0) > 0:
                yield make("too_few", [item] * (branch["minItems"] - 1))
        elif kind == "object" and isinstance(branch.get("additionalProperties"), dict):
            yield from self._map_mutations(branch, make)

    def _string_mutations(
        self, branch: dict[str, Any], path: Path, make: Any
    ) -> Iterator[Mutation]:
        yield make("nul", "fuzz\x00fuzz")
        if any(key in branch for key in ("maxLength", "enum", "const", "format", "pattern")):
            yield make("huge_string", "x" * max(LONG, branch.get("maxLength", 0) + 1))
        if "pattern" in branch:
            yield make("bad_pattern", "fuzz: not of the pattern")  # kept when the schema says so
        if branch.get("minLength", 0) > 0:
            yield make("out_of_range", "")
        if "enum" in branch or "const" in branch:
            yield make("not_in_enum", "fuzz-not-a-choice")
        for value in {"date": BAD_DATES, "date-time": BAD_MOMENTS}.get(
            branch.get("format", ""), ()
        ):
            yield make("bad_date", value)
        if "timezone" in str(path[-1]).lower():
            for value in BAD_TIME_ZONES:
                yield make("bad_time_zone", value)

    def _map_mutations(self, branch: dict[str, Any], make: Any) -> Iterator[Mutation]:
        value = self.minimal(branch["additionalProperties"])
        if "maxProperties" in branch:
            yield make("too_many", {f"k{i}": value for i in range(branch["maxProperties"] + 1)})
        longest = branch.get("propertyNames", {}).get("maxLength")
        if longest is not None:
            yield make("huge_string", {"k" * max(LONG, longest + 1): value})

    def _nested_mutations(
        self, node: dict[str, Any], path: Path, scaffold: tuple[Any, ...]
    ) -> Iterator[Mutation]:
        for branch in self.branches(node):
            kind = branch.get("type")
            if kind == "object" and "properties" in branch:
                holder = (*scaffold, self.minimal(branch, "object"))
                yield from self._object_mutations(branch, path, holder)
            elif kind == "object" and isinstance(branch.get("additionalProperties"), dict):
                holder = (*scaffold, {})
                yield from self._property_mutations(
                    branch["additionalProperties"], (*path, MAP_KEY), holder
                )
            elif kind == "array" and "items" in branch:
                items = branch["items"]
                holder = (*scaffold, [self.minimal(items)] * max(1, branch.get("minItems", 0)))
                yield from self._property_mutations(items, (*path, 0), holder)

    def valid_arguments(self, node: dict[str, Any] | None = None) -> st.SearchStrategy[Any]:
        """Valid arguments without NUL (refused wherever it is): hypothesis-jsonschema draws
        each scalar; objects and arrays are built here, since its object strategy fails on
        Hypothesis 6.170 (AttributeError: 'many' object has no attribute 'more')."""
        node = self.root if node is None else node
        branches = self.branches(node)
        if len(branches) > 1:
            return st.one_of([self.valid_arguments(b) for b in branches])
        branch = branches[0]
        kind = branch.get("type")
        if kind == "object" and isinstance(branch.get("additionalProperties"), dict):
            names = {"type": "string", **branch.get("propertyNames", {})}
            return st.dictionaries(
                from_schema(names, allow_x00=False),
                self.valid_arguments(branch["additionalProperties"]),
                max_size=min(branch.get("maxProperties", 5), 5),
            )
        if kind == "object":
            properties, required = branch.get("properties", {}), branch.get("required", [])
            return st.fixed_dictionaries(
                {name: self.valid_arguments(properties[name]) for name in required},
                optional={
                    name: self.valid_arguments(prop)
                    for name, prop in properties.items()
                    if name not in required
                },
            )
        if kind == "array":
            low = branch.get("minItems", 0)
            return st.lists(
                self.valid_arguments(branch.get("items", {})),
                min_size=low,
                max_size=min(branch.get("maxItems", low + 5), low + 5),
            )
        return from_schema(_renamed_formats(branch), custom_formats=VALID_FORMATS, allow_x00=False)


def _renamed_formats(node: Any) -> Any:
    if isinstance(node, dict):
        return {
            k: f"x-fuzz-{v}"
            if k == "format" and f"x-fuzz-{v}" in VALID_FORMATS
            else _renamed_formats(v)
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [_renamed_formats(v) for v in node]
    return node


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _minimal_scalar(branch: dict[str, Any]) -> Any:
    kind = branch.get("type")
    if kind in ("integer", "number"):
        low = branch.get("minimum", branch.get("exclusiveMinimum", -1) + 1)
        value = min(max(low, 0), branch.get("maximum", math.inf))
        return value if kind == "integer" else float(value)
    if kind == "string":
        return _minimal_string(branch)
    return False if kind == "boolean" else None


def _minimal_string(branch: dict[str, Any]) -> str:
    fmt = branch.get("format")
    if fmt == "date":
        return "2026-03-02"
    if fmt == "date-time":
        return "2026-03-02T09:00:00Z"
    if "pattern" in branch:
        found: str = hypothesis.find(
            st.from_regex(branch["pattern"], fullmatch=True),
            lambda _text: True,
            settings=hypothesis.settings(database=None, derandomize=True),
        )
        return found
    low, high = branch.get("minLength", 0), branch.get("maxLength", 4)
    return ("fuzz" * (1 + low // 4))[: max(low, min(4, high))]


TEXT = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=20)
JSON_VALUES: st.SearchStrategy[Any] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(TEXT, children, max_size=3),
    max_leaves=6,
)


def respelled(mutation: Mutation) -> st.SearchStrategy[Mutation]:
    """The same mutation with a value of the same sort drawn afresh (for the random suite)."""
    value = mutation.value
    if mutation.kind == "wrong_type":
        kind = _json_type(value)
        if kind == "object":
            strategy: st.SearchStrategy[Any] = st.dictionaries(TEXT, JSON_VALUES, max_size=4)
        elif kind == "array":
            strategy = st.lists(JSON_VALUES, max_size=4)
        elif kind == "number":  # 2.0 is an integer to JSON Schema (and to pydantic)
            strategy = st.floats(allow_nan=False, allow_infinity=False).filter(
                lambda v: not v.is_integer()
            )
        elif kind == "null":
            strategy = st.none()
        else:
            strategy = from_schema({"type": kind}, allow_x00=False).filter(
                lambda v: _json_type(v) == kind
            )
        return strategy.map(lambda v: replace(mutation, value=v))
    if mutation.kind == "huge_number" and isinstance(value, int):
        huge = st.integers(2**63, 10**40) | st.integers(-(10**40), -(2**63) - 1)
        return huge.map(lambda v: replace(mutation, value=v))
    if mutation.kind == "huge_string" and isinstance(value, str):
        letters = st.characters(min_codepoint=0x20, max_codepoint=0x7E)  # the body stays small
        return st.tuples(st.integers(len(value), len(value) + 1000), letters).map(
            lambda drawn: replace(mutation, value=drawn[1] * drawn[0])
        )
    return st.just(mutation)


# --- What an answer must be ----------------------------------------------------------------


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def strict_json(text: str) -> Any:
    """Parse JSON, refusing NaN and Infinity (Python's json module takes them by default)."""
    return json.loads(text, parse_constant=_refuse_constant)


def judge_http(
    status: int, content_type: str, text: str, mutation: Mutation, id_: int
) -> str | None:
    """None when the HTTP answer to a mutated call is a proper refusal; else what is wrong."""
    if status >= 500:
        return f"HTTP {status}: {text[:300]}"
    if "text/event-stream" in content_type:
        data = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
        text = data[-1] if data else ""
    try:
        message = strict_json(text)
    except ValueError as error:
        return f"HTTP {status}, body is not strict JSON ({error}): {text[:300]}"
    if isinstance(message, dict) and "error" in message:
        code = (message["error"] or {}).get("code")
        if code in ACCEPTED_RPC_ERRORS:
            return None
        return f"HTTP {status}, JSON-RPC error {code}: {short(message['error'])}"
    if status != 200 or not isinstance(message, dict) or message.get("id") != id_:
        return f"HTTP {status}, not the answer to request {id_}: {text[:300]}"
    return judge_result(message.get("result"), mutation)


def judge_result(result: Any, mutation: Mutation) -> str | None:
    """None when a tool result is an error result naming the mutated field; else what is wrong."""
    if not isinstance(result, dict) or result.get("isError") is not True:
        shown = result.get("content") if isinstance(result, dict) else result
        return f"accepted (no error): {short(shown, 200)}"
    error = result.get("structuredContent")
    if not isinstance(error, dict) or set(error) != {"code", "message", "details"}:
        return f"error result without {{code, message, details}}: {short(error)}"
    code, message, details = error["code"], error["message"], error["details"]
    if code not in set(ErrorCode) or code == "INTERNAL":
        return f"error code {code!r}: {message}"
    if not isinstance(message, str) or not message or not isinstance(details, dict):
        return f"error without a message or details: {short(error)}"
    if not names(mutation.field, message, details):
        return f"{code} names {details.get('field')!r}, not {mutation.field}: {message}"
    return None


def names(wanted: str, message: str, details: dict[str, Any]) -> bool:
    """Whether an error names `wanted` (a dotted path), its container or a place inside it:
    `details.field` when there is one, else the message."""
    named = details.get("field")
    if named is None:
        return wanted in message
    return isinstance(named, str) and (
        named == wanted or named.startswith(f"{wanted}.") or wanted.startswith(f"{named}.")
    )


# --- What the database holds ---------------------------------------------------------------


class Fingerprint:
    """Each table's row count, each sum of revisions and versions, and the newest event id,
    read in one SELECT: a refused call leaves every one of them as it was. The SELECT runs on
    a connection kept for the purpose (`Reader`); `close` gives it back."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.reader = Reader(db)
        self.labels: list[str] = []
        parts: list[str] = []
        for table in metadata.sorted_tables:
            if table.name in UNCOUNTED_TABLES:
                continue
            self.labels.append(f"{table.name} rows")
            parts.append(f'(SELECT count(*) FROM "{table.name}")')
            for column in ("revision", "version"):
                if column in table.c:
                    self.labels.append(f"{table.name} {column}s")
                    parts.append(f'(SELECT coalesce(sum("{column}"), 0) FROM "{table.name}")')
        self.labels.append("newest event")
        parts.append('(SELECT coalesce(max("id"), 0) FROM "events")')
        self.query = "SELECT " + ", ".join(parts)

    def take(self) -> tuple[Any, ...]:
        return self.reader.one(self.query)

    def close(self) -> None:
        self.reader.close()

    def changed(self, before: tuple[Any, ...], after: tuple[Any, ...]) -> str:
        """What differs, e.g. "tasks rows 3 -> 4"; empty when nothing does."""
        return ", ".join(
            f"{label} {old} -> {new}"
            for label, old, new in zip(self.labels, before, after, strict=True)
            if old != new
        )
