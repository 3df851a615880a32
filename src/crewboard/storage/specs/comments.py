"""The spec comment repository: threads anchored to a passage of a file, and their comments."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, fields
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Row, and_, bindparam, delete, func, select, update

from crewboard.domain.spec_comments import Anchor, CommentThread, SpecComment, ThreadStatus
from crewboard.storage.rows import record_from_row, record_values
from crewboard.storage.specs.tables import spec_comment_threads, spec_comments

_t = spec_comment_threads.c
_c = spec_comments.c
_THREAD = select(spec_comment_threads).where(_t.id == bindparam("id"))
_COMMENT = select(spec_comments).where(_c.id == bindparam("id"))
# A thread's anchor is kept in a column per field of it, named `anchor_<field>`.
_ANCHOR_FIELDS = tuple(field.name for field in fields(Anchor))
_MOVE = (
    update(spec_comment_threads)
    .where(_t.id == bindparam("thread_id"))
    .values(
        {f"anchor_{name}": bindparam(name) for name in _ANCHOR_FIELDS}
        | {"anchor_revision": bindparam("revision")}
    )
)


def _anchor_columns(anchor: Anchor) -> dict[str, Any]:
    return {f"anchor_{name}": getattr(anchor, name) for name in _ANCHOR_FIELDS}


def _thread(row: Row[Any]) -> CommentThread:
    return record_from_row(
        CommentThread,
        row,
        status=ThreadStatus(row.status),
        orphaned=bool(row.orphaned),
        anchor=Anchor(**{name: row._mapping[f"anchor_{name}"] for name in _ANCHOR_FIELDS}),
    )


def _comment(row: Row[Any]) -> SpecComment:
    return record_from_row(SpecComment, row, deleted=bool(row.deleted), ai_work=bool(row.ai_work))


def _filter(status: str | None) -> Any:
    """The condition of a list filter: `open`/`resolved` (passage still there), `orphaned`."""
    if status == "orphaned":
        return _t.orphaned.is_(True)
    if status is None:
        return None
    return and_(_t.status == status, _t.orphaned.is_(False))


class SpecCommentRepository:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    # --- threads ---------------------------------------------------------------------------

    def add_thread(self, thread: CommentThread) -> None:
        self.conn.execute(
            spec_comment_threads.insert(),
            record_values(
                thread,
                spec_comment_threads,
                status=thread.status.value,
                **_anchor_columns(thread.anchor),
                resolved_by=None,
                resolved_at=None,
            ),
        )

    def get_thread(self, thread_id: str) -> CommentThread | None:
        row = self.conn.execute(_THREAD, {"id": thread_id}).first()
        return None if row is None else _thread(row)

    def threads_of_file(
        self, file_id: str, *, status: str | None, limit: int, offset: int
    ) -> tuple[list[CommentThread], int]:
        """A file's threads in the order of their passages (orphaned ones last), and how many
        match."""
        conditions = [_t.file_id == file_id]
        wanted = _filter(status)
        if wanted is not None:
            conditions.append(wanted)
        where = and_(*conditions)
        rows = self.conn.execute(
            select(spec_comment_threads)
            .where(where)
            .order_by(_t.orphaned, _t.anchor_start, _t.created_at, _t.id)
            .limit(limit)
            .offset(offset)
        )
        total = self.conn.execute(
            select(func.count()).select_from(spec_comment_threads).where(where)
        )
        return [_thread(row) for row in rows], int(total.scalar_one())

    def anchored_threads(self, file_id: str) -> list[CommentThread]:
        """The threads of a file whose passage is still there (open or resolved)."""
        rows = self.conn.execute(
            select(spec_comment_threads)
            .where(_t.file_id == file_id, _t.orphaned.is_(False))
            .order_by(_t.id)
        )
        return [_thread(row) for row in rows]

    def move_anchors(self, moves: Sequence[tuple[str, Anchor, int]]) -> None:
        """New anchors (thread id, anchor, the revision it is in), in one statement."""
        if not moves:
            return
        self.conn.execute(
            _MOVE,
            [
                {"thread_id": thread_id, **asdict(anchor), "revision": revision}
                for thread_id, anchor, revision in moves
            ],
        )

    def set_orphaned(self, thread_ids: Sequence[str], at: datetime) -> None:
        if thread_ids:
            self.conn.execute(
                update(spec_comment_threads)
                .where(_t.id.in_(list(thread_ids)))
                .values(orphaned=True, updated_at=at)
            )

    def set_status(
        self,
        thread_id: str,
        status: ThreadStatus,
        *,
        by: dict[str, Any] | None,
        at: datetime,
    ) -> None:
        resolved = status is ThreadStatus.RESOLVED
        self.conn.execute(
            update(spec_comment_threads)
            .where(_t.id == thread_id)
            .values(
                status=status.value,
                resolved_by=by if resolved else None,
                resolved_at=at if resolved else None,
                updated_at=at,
            )
        )

    def touch_thread(self, thread_id: str, at: datetime) -> None:
        self.conn.execute(
            update(spec_comment_threads).where(_t.id == thread_id).values(updated_at=at)
        )

    def delete_thread(self, thread_id: str) -> None:
        """The thread and (by the foreign key's cascade, and here for SQLite's sake) its
        comments."""
        self.conn.execute(delete(spec_comments).where(_c.thread_id == thread_id))
        self.conn.execute(delete(spec_comment_threads).where(_t.id == thread_id))

    # --- comments --------------------------------------------------------------------------

    def add_comment(self, comment: SpecComment) -> None:
        self.conn.execute(
            spec_comments.insert(),
            record_values(comment, spec_comments),
        )

    def get_comment(self, comment_id: str) -> SpecComment | None:
        row = self.conn.execute(_COMMENT, {"id": comment_id}).first()
        return None if row is None else _comment(row)

    def comments_of(self, thread_ids: Sequence[str]) -> dict[str, list[SpecComment]]:
        """The comments of each thread, in order."""
        found: dict[str, list[SpecComment]] = {thread_id: [] for thread_id in thread_ids}
        if not thread_ids:
            return found
        rows = self.conn.execute(
            select(spec_comments)
            .where(_c.thread_id.in_(list(thread_ids)))
            .order_by(_c.thread_id, _c.seq)
        )
        for row in rows:
            found[row.thread_id].append(_comment(row))
        return found

    def rewrite(
        self, comment_id: str, *, body: str, version: str, expected: str, at: datetime
    ) -> bool:
        """A new body (and version) for a comment still at `expected` (compare and set);
        False when it changed first."""
        result = self.conn.execute(
            update(spec_comments)
            .where(_c.id == comment_id, _c.content_version == expected)
            .values(body=body, content_version=version, updated_at=at)
        )
        return result.rowcount == 1

    def make_placeholder(self, comment_id: str, *, version: str, at: datetime) -> None:
        """Keep the comment's place in its thread, without its text."""
        self.conn.execute(
            update(spec_comments)
            .where(_c.id == comment_id)
            .values(body="", deleted=True, content_version=version, updated_at=at)
        )

    def delete_comment(self, comment_id: str) -> None:
        self.conn.execute(delete(spec_comments).where(_c.id == comment_id))
