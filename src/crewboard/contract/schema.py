"""The input schema an agent is shown: every constraint pydantic derives, in fewer characters.

An agent pays for `tools/list` in context on every session, so the published schema says each
thing once. From pydantic's schema it:

- writes an optional field `anyOf [{type: T, ...}, {type: null}]` as `type: [T, "null"]` (an
  enum also lists `null` among its values), and leaves out `default: null` (a field that is
  not required may be left out; null is what leaving it out means);
- drops generated titles;
- writes a shared shape (`$defs`) inline where only one place uses it, and once under `$defs`
  where several do;
- leaves out `maximum: 2147483647`: every integer argument is a 32-bit one, and the server
  refuses a larger value naming the field and its range (no caller nears it).

Nothing else that constrains a value is dropped: types, enums, lengths, item counts, minimums,
other maximums, formats, patterns, required lists and `additionalProperties: false` all stay.
The argument models stay the one source of validation; this only rewrites how they are shown.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from typing import Any

from crewboard.domain.validation import INT32_MAX

JSON = dict[str, Any]
REF_PREFIX = "#/$defs/"


def lean_schema(schema: JSON) -> JSON:
    """The published form of a tool's input schema (see the module docstring)."""
    schema = copy.deepcopy(schema)
    defs: JSON = schema.pop("$defs", {})
    uses = Counter(_refs(schema))
    for shape in defs.values():
        uses.update(_refs(shape))
    kept = {name: shape for name, shape in defs.items() if uses[name] > 1}
    inline = {name: shape for name, shape in defs.items() if uses[name] <= 1}
    body = _rewrite(schema, inline)
    if kept:
        body["$defs"] = {name: _rewrite(shape, inline) for name, shape in kept.items()}
    return _share_repeats(body)


def _share_repeats(body: JSON) -> JSON:
    """Write a shape that stands in several places once, under `$defs`, named after the first
    property it describes (an item of `blockedByTaskIds` is `blockedByTaskIdsItem`)."""
    counts: Counter[str] = Counter()
    names: dict[str, str] = {}
    for _name, node in _shapes(body, "root"):
        text = _key(node)
        if len(text) >= MIN_SHARED:
            counts[text] += 1
            names.setdefault(text, _shape_name(node))
    shared = {
        text: names[text]
        for text, seen in counts.items()
        if _pays(len(text), len(names[text]), seen)
    }
    if not shared:
        return body
    defs: JSON = body.setdefault("$defs", {})
    by_text: dict[str, str] = {}
    for text, name in sorted(shared.items(), key=lambda pair: -len(pair[0])):
        unique = name
        while unique in defs:
            unique += "_"
        defs[unique] = json.loads(text)
        by_text[text] = unique
    replaced = {
        key: _replace(value, by_text) if key != "$defs" else value for key, value in body.items()
    }
    # A shared shape is written out whole: no reference points from one into another, so a
    # client that resolves one level of $ref reads every shape.
    replaced["$defs"] = defs
    return replaced


KIND_NAMES = {"string": "text", "integer": "int", "number": "num", "array": "list"}


def _shape_name(node: JSON) -> str:
    """A short name saying what a shared shape is: `text200` (text of at most 200
    characters), `int`, `textList`, `enum`; `OrNull` when null is allowed too."""
    kind = node.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    main = next((k for k in kinds if k != "null"), "value")
    if "enum" in node:
        name = "enum"
    elif main == "array" and isinstance(node.get("items"), dict):
        name = _shape_name(node["items"]).removesuffix("OrNull") + "List"
    else:
        name = KIND_NAMES.get(str(main), str(main)) + str(node.get("maxLength", ""))
    return name + ("OrNull" if "null" in kinds else "")


MIN_SHARED = 40  # characters: a shorter shape costs less than the reference to it
REF_CHARS = len('{"$ref":"#/$defs/"}')


def _pays(size: int, name: int, seen: int) -> bool:
    """Whether writing a shape once plus a reference at each place is shorter than the copies."""
    return seen > 1 and seen * size > size + name + 3 + seen * (REF_CHARS + name)


def _shapes(node: Any, name: str) -> list[tuple[str, JSON]]:
    """Every object-valued schema below `node` (properties, items, union members), with the
    name of the property it describes."""
    found: list[tuple[str, JSON]] = []
    if not isinstance(node, dict):
        return found
    for key, value in node.items():
        if key == "properties" and isinstance(value, dict):
            for prop, child in value.items():
                found.append((prop, child))
                found.extend(_shapes(child, prop))
        elif key == "items" and isinstance(value, dict):
            found.append((f"{name}Item", value))
            found.extend(_shapes(value, f"{name}Item"))
        elif key in ("anyOf", "oneOf") and isinstance(value, list):
            for member in value:
                found.append((name, member))
                found.extend(_shapes(member, name))
        elif key == "$defs" and isinstance(value, dict):
            for shape_name, shape in value.items():
                found.extend(_shapes(shape, shape_name))
    return [(n, _bare(s)) for n, s in found if isinstance(s, dict) and "$ref" not in s]


def _bare(node: JSON) -> JSON:
    """A shape without its description: two fields of one shape share it whatever they say."""
    return {key: value for key, value in node.items() if key != "description"}


def _key(node: JSON) -> str:
    return json.dumps(_bare(node), sort_keys=True, separators=(",", ":"))


def _replace(node: Any, by_text: dict[str, str]) -> Any:
    if isinstance(node, list):
        return [_replace(item, by_text) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" not in node:
        name = by_text.get(_key(node))
        if name is not None:
            ref: JSON = {"$ref": REF_PREFIX + name}
            if "description" in node:
                ref["description"] = node["description"]
            return ref
    out: JSON = {}
    for key, value in node.items():
        if key == "properties" and isinstance(value, dict):
            out[key] = {prop: _replace(child, by_text) for prop, child in value.items()}
        else:
            out[key] = _replace(value, by_text)
    return out


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = []
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(REF_PREFIX):
            found.append(ref.removeprefix(REF_PREFIX))
        for value in node.values():
            found.extend(_refs(value))
        return found
    if isinstance(node, list):
        return [name for item in node for name in _refs(item)]
    return []


def _rewrite(node: Any, inline: JSON) -> Any:
    if isinstance(node, list):
        return [_rewrite(item, inline) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.removeprefix(REF_PREFIX) in inline:
        merged = {
            **inline[ref.removeprefix(REF_PREFIX)],
            **{k: v for k, v in node.items() if k != "$ref"},
        }
        return _rewrite(merged, inline)
    out: JSON = {}
    for key, value in node.items():
        if key == "title" or (key == "default" and _says_nothing(value)):
            continue
        if key == "maximum" and value == INT32_MAX and "integer" in str(node.get("type")):
            continue
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: _rewrite(prop, inline) for name, prop in value.items()}
        else:
            out[key] = _rewrite(value, inline)
    return _fold_nullable(out)


def _says_nothing(default: Any) -> bool:
    """A default no different from leaving the field out: nothing, no text, off, no items."""
    return default is None or default is False or default in ("", [])


def _fold_nullable(node: JSON) -> JSON:
    """`anyOf [X, {type: null}]` with a plainly typed X becomes X with `null` among its types."""
    members = node.get("anyOf")
    if not isinstance(members, list) or len(members) != 2 or {"type": "null"} not in members:
        return node
    other = next(m for m in members if m != {"type": "null"})
    kind = other.get("type")
    if not isinstance(kind, str) or "$ref" in other or any(k in other for k in ("anyOf", "oneOf")):
        return node
    folded = {k: v for k, v in node.items() if k != "anyOf"}
    folded.update(other)
    folded["type"] = [kind, "null"]
    if "enum" in other:
        folded["enum"] = [*other["enum"], None]
    if "const" in other:
        folded["enum"] = [other["const"], None]
        del folded["const"]
    return folded
