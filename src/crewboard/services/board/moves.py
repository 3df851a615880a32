"""Where a task lands on the board when a person drops it between two others.

The board orders a column by `board_order` (a float) and then by number. A drop between two
tiles takes the midpoint of their orders; at the top or bottom of a column it steps 1,024 past
the end. When repeated drops into one gap have used up a float's precision, the column is
spaced out again (orders only: no revision changes, no events — order is how the board is
laid out, not a change of the task).
"""

from __future__ import annotations

from crewboard.domain.identity.records import Actor
from crewboard.errors import ValidationFailed
from crewboard.services.board.task_lookup import access_task
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork

STEP = 1024.0
# Below this gap a midpoint is no longer distinct enough to keep an order stable.
MIN_GAP = 1e-6


def _order_of(
    uow: UnitOfWork, actor: Actor, project: str, *, ref: str, status: str, field: str
) -> float:
    task, _project = access_task(uow, actor, ref, project=project)
    if task.status.value != status:
        raise ValidationFailed.field(
            field,
            f"{ref} is no longer in that column; reload the board and drop the task again.",
        )
    return task.board_order


def _between(after: float | None, before: float | None) -> float | None:
    if after is not None and before is not None:
        low, high = min(after, before), max(after, before)
        return None if high - low < MIN_GAP else (low + high) / 2
    if after is not None:
        return after + STEP
    if before is not None:
        return before - STEP
    return None


def board_order_between(
    db: Database,
    actor: Actor,
    *,
    project: str,
    status: str,
    after: str | None,
    before: str | None,
) -> float | None:
    """The board order for a task dropped in column `status` after the task `after` and before
    the task `before` (keys; either may be None at an end of the column). None when neither is
    given: the service then puts the task at the end of a new column, or leaves it in place.

    Raises:
        NotFound: a neighbour is not open to the actor. ValidationFailed: a neighbour has left
        that column since the page was drawn.
    """
    if after is None and before is None:
        return None

    def read(uow: UnitOfWork) -> tuple[float | None, float | None]:
        return (
            None
            if after is None
            else _order_of(uow, actor, project, ref=after, status=status, field="after"),
            None
            if before is None
            else _order_of(uow, actor, project, ref=before, status=status, field="before"),
        )

    low, high = db.read(read)
    chosen = _between(low, high)
    if chosen is not None or low is None or high is None:
        return chosen

    def respace(uow: UnitOfWork) -> tuple[float | None, float | None]:
        _task, proj = access_task(uow, actor, str(after), project=project)
        uow.tasks.respace_column(proj.id, status, STEP)
        return read(uow)

    low, high = db.write(respace)
    return _between(low, high)
