"""The check-in's rules on their own: whose events are news, how rows merge, where a cut stops."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from crewboard.domain.board.updates import (
    MAX_UPDATES,
    Context,
    Seen,
    UpdateKind,
    Watcher,
    classify,
    gather,
)

AGENT = Watcher(user_id="usr_p", token_id="tok_a", seat_id="rol_b", names=frozenset({"builder"}))
PERSON = {"userId": "usr_p", "tokenId": None}
OTHER_AGENT = {"userId": "usr_p", "tokenId": "tok_z"}
AT = datetime(2026, 12, 7, tzinfo=UTC)


def event(
    n: int, type_: str, actor: dict[str, Any], task: str | None = "tsk_1", **payload: Any
) -> Seen:
    return Seen(n, type_, actor, payload, task, payload.pop("token", None), AT)


def ctx(
    mine: tuple[str, ...] = (), free: tuple[str, ...] = (), mentioned: tuple[str, ...] = ()
) -> Context:
    return Context(
        mine=set(mine), free=set(free), mentioned=set(mentioned), keys={"tsk_1": "CRW-1"}
    )


def test_its_own_writes_are_not_news_but_a_lost_claim_is_whoever_ended_it() -> None:
    mine = ctx(mine=("tsk_1",))
    assert (
        classify(event(1, "task.updated", {"tokenId": "tok_a"}, changed=["title"]), AGENT, mine)
        is None
    )
    claim = {"holder": {"userId": "usr_p", "tokenId": "tok_a"}, "ended": "lapsed"}
    lost = classify(event(2, "task.claim_lapsed", {"kind": "system"}, claim=claim), AGENT, mine)
    assert lost is not None
    assert (lost.kind, lost.status, lost.task_key) == (
        UpdateKind.CLAIM_LOST,
        "lapsed",
        "CRW-1",
    )
    # Another agent's lapse is its business, unless the task is now free for this one.
    theirs = {"holder": {"userId": "usr_p", "tokenId": "tok_z"}, "ended": "lapsed"}
    gone = event(3, "task.claim_lapsed", {"kind": "system"}, claim=theirs)
    assert classify(gone, AGENT, ctx()) is None
    freed = classify(gone, AGENT, ctx(free=("tsk_1",)))
    assert freed is not None
    assert freed.kind is UpdateKind.READY


def test_answers_decisions_and_messages_reach_only_the_agent_they_are_for() -> None:
    answered = event(1, "task.question_answered", PERSON, token="tok_a", excerpt="Yes")
    for_other = event(2, "task.question_answered", PERSON, token="tok_z", excerpt="No")
    decided = event(3, "draft.approved", PERSON, handInTokenId="tok_a", status="approved")
    decided_other = event(4, "draft.rejected", PERSON, handInTokenId="tok_z", status="rejected")
    to_seat = event(5, "message.posted", PERSON, None, participantId="rol_b", preview="Hi")
    to_other = event(6, "message.posted", PERSON, None, participantId="rol_c", preview="Hey")
    by_other_agent = event(7, "task.question_answered", OTHER_AGENT, token="tok_a", excerpt="Ok")
    kinds = [
        found.kind if (found := classify(e, AGENT, ctx())) else None
        for e in (answered, for_other, decided, decided_other, to_seat, to_other, by_other_agent)
    ]
    assert kinds == [
        UpdateKind.ANSWER, None, UpdateKind.DECISION, None, UpdateKind.MESSAGE, None,
        UpdateKind.ANSWER,
    ]  # fmt: skip


def test_changes_to_one_task_merge_into_one_row_and_a_task_taken_away_is_told() -> None:
    events = [
        event(1, "task.updated", PERSON, changed=["title"]),
        event(2, "task.comment_posted", PERSON, commentId="cmt_1", excerpt="Looks good"),
        event(3, "task.updated", PERSON, changed=["priority"]),
        event(
            4,
            "task.updated",
            PERSON,
            "tsk_2",
            changed=["assigneeId"],
            changes={"assigneeId": {"from": "rol_b", "to": "rol_c"}},
        ),
    ]
    told, last, more = gather(events, AGENT, ctx(mine=("tsk_1",)))
    assert (last, more) == (4, False)
    assert [(u.kind, u.task_id, u.changed, u.text) for u in told] == [
        (UpdateKind.TASK, "tsk_1", ("title", "comment", "priority"), "Looks good"),
        (UpdateKind.TASK, "tsk_2", ("assigneeId",), None),
    ]


def test_a_full_answer_stops_before_the_first_event_it_could_not_tell() -> None:
    events = [
        event(n, "message.posted", PERSON, None, participantId="rol_b", preview=f"m{n}")
        for n in range(1, MAX_UPDATES + 6)
    ]
    told, last, more = gather(events, AGENT, ctx())
    assert (len(told), last, more) == (MAX_UPDATES, MAX_UPDATES, True)
    rest, last_rest, more_rest = gather(events[last:], AGENT, ctx())
    assert (len(rest), last_rest, more_rest) == (5, MAX_UPDATES + 5, False)
