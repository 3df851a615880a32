"""The importers' parsers on malformed files: each refusal names the file and the line, or the
field path, and for an enumeration the values it accepts; recognising sources by contents."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crewboard.domain.board.imports import BacklogFile, SourceFiles, parse, sniff
from crewboard.domain.board.imports.backlog import parse_backlog, status_of
from crewboard.domain.board.imports.github import parse_github
from crewboard.domain.board.imports.linear import parse_linear
from crewboard.domain.board.imports.model import parse_time
from crewboard.domain.board.imports.taskmaster import parse_taskmaster
from crewboard.domain.board.tasks import TaskStatus
from crewboard.errors import ValidationFailed

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "imports"
TASKMASTER = (FIXTURES / "taskmaster" / "tasks.json").read_text(encoding="utf-8")
GITHUB = (FIXTURES / "github" / "issues.json").read_text(encoding="utf-8")
LINEAR = (FIXTURES / "linear" / "export.csv").read_text(encoding="utf-8")
BACKLOG_TASK = next((FIXTURES / "backlog" / "backlog" / "tasks").glob("task-2 *.md")).read_text(
    encoding="utf-8"
)


def refusal(call: object) -> ValidationFailed:
    with pytest.raises(ValidationFailed) as refused:
        call()  # type: ignore[operator]
    return refused.value


def test_sniff_tells_every_sample_apart() -> None:
    assert sniff(TASKMASTER) == "taskmaster"
    assert sniff(GITHUB) == "github"
    assert sniff(LINEAR) == "linear"
    assert sniff("just some notes") is None
    assert sniff('{"name": "not a tool"}') is None
    assert sniff("[]") is None


def test_json_that_does_not_parse_names_line_and_column() -> None:
    broken = TASKMASTER.replace(
        '"title": "Set up the database",', '"title": "Set up the database"', 1
    )
    error = refusal(lambda: parse_taskmaster(broken, "tasks.json"))
    line = broken[: broken.index('"Set up the database"')].count("\n") + 2
    assert error.details["file"] == "tasks.json"
    assert error.details["where"].startswith(f"line {line}, column ")
    error = refusal(lambda: parse_github("[{]", "issues.json"))
    assert error.details["where"] == "line 1, column 3"


def test_a_taskmaster_status_it_does_not_know_names_the_path_and_the_statuses() -> None:
    data = json.loads(TASKMASTER)
    data["master"]["tasks"][3]["status"] = "someday"
    error = refusal(lambda: parse_taskmaster(json.dumps(data)))
    assert error.details["where"] == "master.tasks[3].status"
    assert "pending" in error.details["accepted"]
    assert "cancelled" in error.details["accepted"]


def test_a_taskmaster_dependency_that_is_not_an_id_names_its_path() -> None:
    data = json.loads(TASKMASTER)
    data["master"]["tasks"][2]["dependencies"] = ["2", {"id": 1}]
    error = refusal(lambda: parse_taskmaster(json.dumps(data)))
    assert error.details["where"] == "master.tasks[2].dependencies[1]"


def test_the_old_untagged_taskmaster_format_is_refused() -> None:
    error = refusal(lambda: parse_taskmaster('{"tasks": [], "metadata": {}}'))
    assert "tagged" in error.message


def test_a_github_state_or_reason_it_does_not_know_names_the_path_and_the_values() -> None:
    issues = json.loads(GITHUB)
    issues[3]["state"] = "merged"
    error = refusal(lambda: parse_github(json.dumps(issues)))
    assert error.details["where"] == "[3].state"
    assert error.details["accepted"] == ["open", "closed"]
    issues[3]["state"], issues[3]["state_reason"] = "closed", "abandoned"
    error = refusal(lambda: parse_github(json.dumps(issues)))
    assert error.details["where"] == "[3].state_reason"
    assert "not_planned" in error.details["accepted"]


def test_a_github_page_array_is_read_as_one_list() -> None:
    issues = json.loads(GITHUB)
    pages = json.dumps([issues[:3], issues[3:]])
    assert [t.external_id for t in parse_github(pages).tasks] == [
        t.external_id for t in parse_github(GITHUB).tasks
    ]


def test_a_linear_row_with_a_bad_priority_names_its_line() -> None:
    lines = LINEAR.split("\n")
    row = next(i for i, line in enumerate(lines) if line.startswith("ENG-104,"))
    lines[row] = lines[row].replace(",Low,", ",Whenever,")
    error = refusal(lambda: parse_linear("\n".join(lines), "export.csv"))
    assert error.details["where"] == f"line {row + 1}"
    assert "No priority" in error.details["accepted"]


def test_a_linear_file_without_its_columns_is_refused_at_line_1() -> None:
    error = refusal(lambda: parse_linear("Name,State\nA,Todo\n", "export.csv"))
    assert error.details["where"] == "line 1"
    assert "ID" in error.message


def test_a_backlog_front_matter_line_it_cannot_read_names_file_and_line() -> None:
    broken = BACKLOG_TASK.replace("priority: high", "priority high")
    line = broken.split("\n").index("priority high") + 1
    error = refusal(lambda: parse_backlog([BacklogFile("backlog/tasks/task-2.md", broken)]))
    assert error.details == {
        "field": f"backlog/tasks/task-2.md: line {line}",
        "file": "backlog/tasks/task-2.md",
        "where": f"line {line}",
    }


def test_a_backlog_status_no_configuration_explains_is_refused_naming_it() -> None:
    odd = BACKLOG_TASK.replace("status: In Progress", "status: Parked")
    line = odd.split("\n").index("status: Parked") + 1
    config = BacklogFile("backlog/config.yml", 'statuses: ["To Do", "Done"]\n')
    error = refusal(lambda: parse_backlog([BacklogFile("t.md", odd)], config=config))
    assert error.details["where"] == f"line {line}"
    assert error.details["accepted"] == ["To Do", "Done"]
    assert "Parked" in error.message


def test_backlog_custom_statuses_map_by_words_then_by_place() -> None:
    order = ["Ideas", "Building", "Shipped"]
    assert status_of("In Review", order) is TaskStatus.REVIEW
    assert status_of("Waiting on design", order) is TaskStatus.BLOCKED
    assert status_of("Ideas", order) is TaskStatus.BACKLOG
    assert status_of("Building", order) is TaskStatus.IN_PROGRESS
    assert status_of("Shipped", order) is TaskStatus.DONE
    assert status_of("Parked", ["To Do", "Done"]) is None


def test_a_file_without_front_matter_is_refused_at_line_1() -> None:
    error = refusal(lambda: parse_backlog([BacklogFile("notes.md", "# Notes\n")]))
    assert error.details["where"] == "line 1"


def test_parse_refuses_an_unknown_source_naming_the_sources() -> None:
    error = refusal(lambda: parse("jira", SourceFiles.one("x.csv", "")))
    assert error.details["accepted"] == ["taskmaster", "backlog", "github", "linear"]


def test_times_as_the_tools_write_them() -> None:
    assert parse_time("2026-12-05 03:23").isoformat() == "2026-12-05T03:23:00+00:00"  # type: ignore[union-attr]
    assert parse_time("2025-10-01T09:12:44Z").isoformat() == "2025-10-01T09:12:44+00:00"  # type: ignore[union-attr]
    js = "Tue Sep 02 2025 10:15:30 GMT+0200 (Central European Summer Time)"
    assert parse_time(js).isoformat() == "2025-09-02T08:15:30+00:00"  # type: ignore[union-attr]
    assert parse_time("soon") is None


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_any_text_is_read_or_refused_never_crashed(garbage: str) -> None:
    for reader in (parse_taskmaster, parse_github, parse_linear):
        with contextlib.suppress(ValidationFailed):
            reader(garbage)
    with contextlib.suppress(ValidationFailed):
        parse_backlog([BacklogFile("x.md", "---\n" + garbage + "\n---\n")])
