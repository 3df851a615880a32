"""What `tools/list` costs an agent's context, held to a budget, and the lean schemas' rules.

An agent pays for every tool it is shown, in every session. The default set (a token that
names no toolset: board and memory, the whole loop from finding a task to handing it in, with
memory reads) must stay under 20,000 characters, and the whole catalogue under 900 characters
a tool on average. Both hold every constraint the server enforces; what the listing leaves
out is said in contract/schema.py (the 32-bit maximum) and contract/args.py (UNLISTED
arguments, still taken). Lower the average when a change makes room; never raise it.
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema_rs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crewboard.contract.args import input_schema
from crewboard.contract.catalogue import DEFAULT_TOOLSETS, default_catalogue
from crewboard.contract.operation import Operation
from crewboard.mcp.server import tool_listing
from tests.support.fuzz import FORMATS, Schema

DEFAULT_SET_BUDGET = 20_000  # characters of the default set's tools/list entries
AVERAGE_BUDGET = 900  # characters a tool on average over the whole catalogue

TOOLS = list(default_catalogue())


def listed_chars(tool: Operation) -> int:
    """A tool's entry in tools/list as compact JSON, the way a client receives it."""
    entry = tool_listing(tool).model_dump(by_alias=True, exclude_none=True, mode="json")
    return len(json.dumps(entry, separators=(",", ":"), ensure_ascii=False))


def test_the_default_agent_set_costs_under_twenty_thousand_characters() -> None:
    shown = [t for t in TOOLS if t.toolset in DEFAULT_TOOLSETS]
    total = sum(listed_chars(t) for t in shown)
    assert total <= DEFAULT_SET_BUDGET, f"{total} characters for {len(shown)} tools"
    names = {t.name for t in shown}
    # The loop itself must stay in the default set.
    assert names >= LOOP, sorted(LOOP - names)


# find → claim → read → plan → note → hand in → check in, and memory reads.
LOOP = frozenset(
    {
        *("list_projects", "get_project", "get_project_state", "list_team", "list_tasks"),
        *("get_task", "list_task_notes", "claim_next_task", "claim_task", "release_task"),
        *("create_task", "update_task", "assign_task", "set_task_status", "post_comment"),
        *("save_output", "get_week", "list_task_events", "submit_result", "ask_question"),
        *("read_output", "get_updates", "get_project_memory"),
    }
)


def test_the_whole_catalogue_stays_within_its_average_per_tool() -> None:
    total = sum(listed_chars(t) for t in TOOLS)
    assert total / len(TOOLS) <= AVERAGE_BUDGET, f"{total} characters for {len(TOOLS)} tools"


def _nodes(node: Any) -> list[Any]:
    if isinstance(node, dict):
        return [node, *(n for value in node.values() for n in _nodes(value))]
    if isinstance(node, list):
        return [n for item in node for n in _nodes(item)]
    return []


@pytest.mark.parametrize("tool", TOOLS, ids=lambda t: t.name)
def test_a_published_schema_says_each_thing_once(tool: Operation) -> None:
    schema = tool.schema()
    for node in _nodes(schema):
        assert "title" not in node or not isinstance(node["title"], str), tool.name
        assert node.get("default", "set") is not None, f"{tool.name}: default null"
        members = node.get("anyOf", [])
        plain = [m for m in members if isinstance(m, dict) and isinstance(m.get("type"), str)]
        assert not (len(members) == 2 and {"type": "null"} in members and len(plain) == 2), (
            f"{tool.name}: nullable written as anyOf"
        )
    for name in schema.get("$defs", {}):
        assert json.dumps(schema).count(f'"#/$defs/{name}"') >= 2, f"{tool.name}: {name} once"


@pytest.mark.parametrize("tool", TOOLS, ids=lambda t: t.name)
@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_the_lean_schema_takes_exactly_what_the_full_one_takes(
    tool: Operation, data: st.DataObject
) -> None:
    """Rewriting loses no constraint and adds none: valid arguments drawn from the published
    schema, and each of the fuzz suite's one-place mutations of them, are judged alike by the
    full schema pydantic derives (the model the server validates with). The fuzz schema puts
    back the 32-bit maximum the listing leaves out (see tests/support/fuzz.py)."""
    full = jsonschema_rs.validator_for(
        input_schema(tool.args), formats=FORMATS, validate_formats=True
    )
    published = Schema(tool.schema())
    value = data.draw(published.valid_arguments())
    assert full.is_valid(value), value
    mutation = data.draw(st.sampled_from([m for m in published.mutations() if m.plain]))
    bent = mutation.apply(value)
    assert full.is_valid(bent) == published.valid(bent), (mutation.field, mutation.kind)
