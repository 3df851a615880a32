"""tasks.md parsing, box rewriting, matching lines to tasks across edits, and the mapping of
the seven board statuses to the three boxes and back."""

from __future__ import annotations

import pytest

from crewboard.domain.board.tasks import TaskStatus
from crewboard.domain.tasks_md import (
    BOX_OF,
    STATUS_OF_BOX,
    Box,
    Known,
    TaskItem,
    is_tasks_file,
    match,
    parse,
    set_box,
    status_for_box,
    task_title,
)

FILE = (
    "# Release 1.2\n"
    "\n"
    "Some prose with a [x] in it, and a - [ ] not at the start.\n"
    "- [ ] Write the migration\n"
    "  - add the two columns\n"
    "  - index them\n"
    "\n"
    "    more about it\n"
    "* [-] Parse the file\n"
    "+ [x] Map the statuses\n"
    "- [X] Upper-case done\n"
    "- plain bullet\n"
    "```\n"
    "- [ ] inside a fence\n"
    "```\n"
    "\t- [ ] tab-indented\n"
    "- [ ]no space is not a task\n"
)


def test_checkbox_lines_with_any_bullet_and_box_are_tasks_and_other_lines_are_not() -> None:
    items = parse(FILE.encode())
    assert [(i.line, i.box, i.title) for i in items] == [
        (4, Box.PENDING, "Write the migration"),
        (9, Box.IN_PROGRESS, "Parse the file"),
        (10, Box.DONE, "Map the statuses"),
        (11, Box.DONE, "Upper-case done"),
        (16, Box.PENDING, "tab-indented"),
    ]


def test_the_indented_lines_below_a_task_are_its_details_dedented() -> None:
    first = parse(FILE.encode())[0]
    assert first.details == "- add the two columns\n- index them\n\n  more about it"
    assert parse(FILE.encode())[1].details == ""


def test_a_nested_task_line_ends_the_details_of_the_one_above_and_is_a_task_itself() -> None:
    items = parse(b"- [ ] parent\n  note\n  - [x] child\n    child note\n")
    assert [(i.title, i.details) for i in items] == [("parent", "note"), ("child", "child note")]


def test_crlf_lines_parse_without_the_carriage_return() -> None:
    items = parse(b"- [ ] one\r\n  detail\r\n- [x] two\r\n")
    assert [(i.title, i.details, i.box) for i in items] == [
        ("one", "detail", Box.PENDING),
        ("two", "", Box.DONE),
    ]


@pytest.mark.parametrize("box", list(Box))
def test_rewriting_a_box_changes_that_one_byte_and_no_other(box: Box) -> None:
    data = ("# T\r\n" + "- [x] café ünïcode\r\n" + FILE).encode()
    for item in parse(data):
        rewritten = set_box(data, item, box)
        assert len(rewritten) == len(data)
        differing = [i for i, (a, b) in enumerate(zip(data, rewritten, strict=True)) if a != b]
        assert differing in ([], [item.box_offset])
        assert parse(rewritten)[parse(data).index(item)].box is box


def test_rewriting_refuses_an_offset_that_holds_no_box() -> None:
    item = parse(b"- [ ] one\n")[0]
    with pytest.raises(ValueError, match="no box"):
        set_box(b"# changed\n- [ ] one\n", item, Box.DONE)


def test_every_status_shows_as_its_box() -> None:
    assert {s: BOX_OF[s] for s in TaskStatus} == {
        TaskStatus.BACKLOG: Box.PENDING,
        TaskStatus.READY_FOR_AI: Box.PENDING,
        TaskStatus.IN_PROGRESS: Box.IN_PROGRESS,
        TaskStatus.BLOCKED: Box.IN_PROGRESS,
        TaskStatus.REVIEW: Box.IN_PROGRESS,
        TaskStatus.APPROVED: Box.DONE,
        TaskStatus.DONE: Box.DONE,
    }


def test_each_box_moves_a_task_from_another_group_to_its_own_status() -> None:
    assert STATUS_OF_BOX == {
        Box.PENDING: TaskStatus.BACKLOG,
        Box.IN_PROGRESS: TaskStatus.IN_PROGRESS,
        Box.DONE: TaskStatus.DONE,
    }
    assert status_for_box(TaskStatus.DONE, Box.PENDING) is TaskStatus.BACKLOG
    assert status_for_box(TaskStatus.BACKLOG, Box.IN_PROGRESS) is TaskStatus.IN_PROGRESS
    assert status_for_box(TaskStatus.REVIEW, Box.DONE) is TaskStatus.DONE
    assert status_for_box(None, Box.DONE) is TaskStatus.DONE


@pytest.mark.parametrize("status", list(TaskStatus))
def test_a_box_in_the_tasks_own_group_leaves_its_status_as_it_is(status: TaskStatus) -> None:
    assert status_for_box(status, BOX_OF[status]) is status


def test_only_files_named_tasks_md_are_task_files() -> None:
    assert is_tasks_file("tasks.md")
    assert is_tasks_file("docs/release/tasks.md")
    assert not is_tasks_file("docs/tasks.md.bak")
    assert not is_tasks_file("mytasks.md")
    assert not is_tasks_file("Tasks.md")


def _items(text: str) -> list[TaskItem]:
    return parse(text.encode())


def test_a_moved_line_keeps_its_task_by_its_exact_title() -> None:
    known = [Known("t1", "one", 1), Known("t2", "two", 2)]
    assert match(known, _items("- [ ] two\n- [ ] new\n- [ ] one\n")) == {0: "t2", 2: "t1"}


def test_a_reworded_line_keeps_its_task_and_an_unlike_one_is_new() -> None:
    known = [Known("t1", "Write the migration for tasks", 1), Known("t2", "Ship it", 2)]
    found = match(known, _items("- [ ] Write the migrations for the tasks\n- [ ] Dance\n"))
    assert found == {0: "t1"}


def test_a_repeated_title_goes_to_the_nearest_old_line() -> None:
    known = [Known("a", "same", 1), Known("b", "same", 5)]
    found = match(known, _items("x\nx\nx\nx\n- [ ] same\n"))
    assert found == {0: "b"}


# --- spec layouts' task ids -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("T001 [P] [US1] Create the model in src/models/user.py", "Create the model in src/models/user.py"),
        ("T012 Write the docs", "Write the docs"),
        ("T0100 [US12] [P] Wire the route", "Wire the route"),
        ("1.1 Add the table", "Add the table"),
        ("2.10. Check the totals", "Check the totals"),
        ("1.2.3 Nested step", "Nested step"),
        # only at the start, and never the whole text
        ("Fix T001 again", "Fix T001 again"),
        ("Ship 1.2 to staging", "Ship 1.2 to staging"),
        ("T001", "T001"),
        ("T001 [P] [US2]", "T001 [P] [US2]"),
        ("T01 short id", "T01 short id"),
        ("2024 roadmap review", "2024 roadmap review"),
        ("T001[P] glued", "T001[P] glued"),
        ("[P] a marker alone", "[P] a marker alone"),
    ],
)  # fmt: skip
def test_a_leading_speckit_or_openspec_task_id_is_left_out_of_the_title(
    text: str, title: str
) -> None:
    assert task_title(text) == title
    # In a file that numbers its tasks: the next box carries an id too.
    item, _ = parse(f"- [ ] {text}\n- [ ] T002 Next\n".encode())
    assert item.title == title


@pytest.mark.parametrize(
    "text",
    [
        b"- [ ] 1.5 times faster checkout\n",  # one box: nothing says the file numbers them
        b"- [ ] Keep the cart\n- [ ] 1.5 times faster checkout\n- [ ] Ship it\n",
        b"- [ ] 1.5 times faster checkout\n- [ ] 2.0 release notes\n- [ ] Ship it\n"
        b"- [ ] Tell support\n- [ ] Update the docs\n",  # two of five: under half
    ],
)
def test_a_file_that_does_not_number_its_tasks_keeps_a_title_starting_with_a_number(
    text: bytes,
) -> None:
    titles = [item.title for item in parse(text)]
    assert any(title.startswith("1.5 times faster") for title in titles)


def test_renumbered_layout_ids_keep_their_tasks_and_the_file_keeps_its_ids() -> None:
    before = parse(b"## 1. Database\n- [ ] 1.1 Add the table\n- [ ] 1.2 Index it\n")
    after = parse(
        b"## 1. Database\n- [ ] 1.1 Write the migration\n- [ ] 1.2 Add the table\n"
        b"- [x] 1.3 Index it\n"
    )
    known = [Known(f"t{i}", item.title, item.line) for i, item in enumerate(before)]
    assert match(known, after) == {1: "t0", 2: "t1"}
    text = b"- [ ] T001 [P] Create the model\n"
    (item,) = parse(text)
    assert set_box(text, item, Box.DONE) == b"- [x] T001 [P] Create the model\n"
