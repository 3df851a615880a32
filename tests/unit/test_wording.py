"""What a page shows of a refusal: labels, no tool names, times as people write them."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from crewboard.errors import NotFound, RevisionConflict, ValidationFailed
from crewboard.web.wording import human_message, label


def test_labels_read_as_words() -> None:
    assert label("assigneeId") == "Assignee"
    assert label("patch.dueDate") == "Due date"
    assert label("blockedByTaskIds") == "Blocked by"
    assert label("timeZone") == "Time zone"
    assert label("title") == "Title"


def test_a_field_refusal_names_the_label_and_keeps_the_accepted_values() -> None:
    error = ValidationFailed.field("assigneeId", "no such person or role.", ["me", "none"])
    assert human_message(error) == "Assignee: no such person or role. Accepted values: me, none."


def test_the_sentence_about_tools_is_dropped() -> None:
    error = NotFound(
        "No task 'CRW-9' is open to you; list_tasks finds tasks by number, text or status.",
        {"resource": "task"},
    )
    assert human_message(error) == "No task 'CRW-9' is open to you."


def test_a_revision_conflict_names_who_and_when_in_words() -> None:
    error = RevisionConflict(
        "The task is at revision 3, not 2: Ann changed it at 2026-12-02T10:05:09.123456+00:00. "
        "Read it again with get_task, then retry with that revision.",
        {
            "currentRevision": 3,
            "updatedBy": {"displayName": "Ann"},
            "updatedAt": "2026-12-02T10:05:09.123456+00:00",
        },
    )
    assert human_message(error) == (
        "Not saved: Ann changed it at 2026-12-02 10:05 UTC (it is at revision 3 now). "
        "Reload to see the change, then try again."
    )


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=200))
def test_any_message_gives_some_text_back(message: str) -> None:
    shown = human_message(NotFound(message))
    assert isinstance(shown, str)
    if message.strip():
        assert shown.strip()


def test_something_that_only_looks_like_a_time_stays_as_it_is() -> None:
    assert human_message(NotFound("At 2026-13-45T99:99 nothing.")) == "At 2026-13-45T99:99 nothing."
