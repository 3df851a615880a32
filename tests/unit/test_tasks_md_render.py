"""The web's rendering of checkbox lines (web/pages/specs/tasks_md.py) and the line diff's rows
(web/diffs.py): boxes with their state and their own title, indented detail apart from the
title, the task of each line by its line number, nothing unsafe let through; a diff row's sign
kept out of its text, with the line numbers of both sides."""

from __future__ import annotations

import re
from typing import Any

from crewboard.web.diffs import diff_rows
from crewboard.web.pages.specs.review import review_page
from crewboard.web.pages.specs.tasks_md import TaskLine, review_document
from crewboard.web.render import render

PLAN = (
    "# Plan\n\n"
    "- [ ] Write the **migration**\n"
    "  two columns, both nullable\n"
    "  - backfill in batches\n"
    "- [x] Parse the file\n"
    "- [-] Wire the board\n"
    "  - [ ] A nested step\n"
    "\n"
    "Notes: `- [ ] not a task` and\n\n"
    "```\n- [ ] in a fence\n```\n"
)


def parts(text: str, tasks: list[dict[str, Any]] | None = None) -> list[tuple[str, Any]]:
    found = review_document(review_page(text, [], current=True), text, tasks)
    assert found is not None
    return found


def lines_of(found: list[tuple[str, Any]]) -> list[TaskLine]:
    return [part for kind, part in found if kind == "task"]


def test_each_checkbox_line_is_a_task_part_with_its_box_and_its_title_alone() -> None:
    shown = lines_of(parts(PLAN))
    assert [(t.line, t.box, str(t.title)) for t in shown] == [
        (3, " ", "Write the <strong>migration</strong>"),
        (6, "x", "Parse the file"),
        (7, "-", "Wire the board"),
        (8, " ", "A nested step"),
    ]
    assert [t.state for t in shown] == ["pending", "done", "in-progress", "pending"]
    assert shown[2].words == "in progress"


def test_indented_detail_renders_as_its_own_paragraph_and_list_not_in_the_title() -> None:
    found = parts(PLAN)
    after_first = str(found[2][1])  # the html that follows the first task's opening
    # its own paragraph, then its own list (each a numbered block of text for review)
    assert re.match(
        r'\s*<p><span class="src"[^>]*>two columns, both nullable</span></p>\n<ul>\n<li>'
        r'<span class="src"[^>]*>backfill',
        after_first,
    )
    assert "two columns" not in str(lines_of(found)[0].title)
    html = "".join(str(part) for kind, part in found if kind == "html")
    assert "[ ]" not in html.split("<code>")[0]  # no box left as text before the code span
    assert "<code>- [ ] not a task</code>" in html  # code and fences stay as written
    assert re.search(r'<pre><code>(<span class="src"[^>]*>)?- \[ \] in a fence\n', html)


def test_each_line_takes_its_board_task_by_line_number() -> None:
    tasks = [
        {"key": "CRW-7", "title": "Parse the file", "status": "done", "line": 6},
        {"key": "CRW-9", "title": "Gone", "status": "done", "line": None},
    ]
    shown = lines_of(parts(PLAN, tasks))
    assert [t.task["key"] if t.task else None for t in shown] == [None, "CRW-7", None, None]


def test_a_file_without_checkbox_lines_renders_as_usual() -> None:
    text = "# Notes\n\n- one\n- two\n1. [ ] ordered\n"
    assert review_document(review_page(text, [], current=True), text, None) is None


def test_text_stays_text_and_links_stay_safe_in_titles_and_details() -> None:
    text = (
        "- [ ] <script>alert(1)</script> [x](javascript:alert(1))\n"
        '  <img src=x onerror="alert(2)">\n'
    )
    found = parts(text)
    title = str(lines_of(found)[0].title)
    assert "<script>" not in title
    assert "&lt;script&gt;" in title
    assert "href" not in title  # a javascript: link stays text
    html = "".join(str(part) for kind, part in found if kind == "html")
    assert "<img" not in html
    assert "data-task-line" not in html  # the renderer's own marker never reaches the page


def test_the_partial_renders_real_checkboxes_labelled_by_their_titles() -> None:
    page = render(
        "tasks_md.html",
        {
            "tasks_doc": parts(PLAN, [{"key": "CRW-7", "status": "done", "line": 6}]),
            "file": {"id": "spf_1"},
            "base": "/p/CRW/specs",
            "csrf_token": "tok",
            "boxes_open": False,
            "boxes_why": "You can read this project: ticking a box needs the write role.",
            "boxes_version": "cv_1",
            "labels": {"done": "Done"},
            "page": type("P", (), {"path": staticmethod(lambda rest: f"/p/CRW/{rest}")})(),
        },
    )
    assert page.count('type="checkbox"') == 4
    assert page.count(" disabled") == 4
    assert '<label class="task-title" for="task-box-6">Parse the file</label>' in page
    assert '<a href="/p/CRW/tasks/CRW-7">CRW-7</a>' in page
    assert "data-indeterminate" in page  # [-] shows as a mixed box
    assert '<span class="badge warn" data-task-status>in progress</span>' in page
    assert "<noscript>" not in page  # no Save button for boxes that cannot be ticked


def test_diff_rows_keep_the_sign_out_of_the_text_and_number_both_sides() -> None:
    rows = diff_rows("- [ ] a\n- [ ] b\nc\n", "- [ ] a\n- [x] b\nc\nd\n", "old", "new")
    assert [(r["kind"], r["line"], r["old"], r["new"]) for r in rows] == [
        ("hunk", "Lines 1–4", None, None),
        ("same", "- [ ] a", 1, 1),
        ("removed", "- [ ] b", 2, None),
        ("added", "- [x] b", None, 2),
        ("same", "c", 3, 3),
        ("added", "d", None, 4),
    ]
    assert rows[2]["text"] == "-- [ ] b"  # the unified line, for pages that still show it


def test_diff_rows_of_equal_texts_are_none() -> None:
    assert diff_rows("a\n", "a\n", "old", "new") == []


def test_the_diff_partial_draws_signs_outside_the_text() -> None:
    rows = diff_rows("- [ ] b\n", "- [x] b\n", "old", "new")
    page = render("spec_diff.html", {"rows": rows})
    assert '<del class="t">- [ ] b</del>' in page
    assert '<ins class="t">- [x] b</ins>' in page
    assert "+- [" not in page
    assert "-- [" not in page
