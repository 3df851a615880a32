"""Comment threads follow their passages on every save of a spec file.

`update_spec_file` calls `do_reanchor_threads` in its own transaction, right after it writes
the new revision. This module stays below `services/specs/comments.py` (which finds files
through `services/specs/files.py`), so that the file service can call it.
"""

from __future__ import annotations

from collections import defaultdict

from crewboard.domain.files import FileKind
from crewboard.domain.identity.records import Actor
from crewboard.domain.spec_comments import Anchor, CommentThread, reanchor
from crewboard.domain.specs import Reanchored, SpecFile, SpecRevision
from crewboard.storage.specs.comments import SpecCommentRepository
from crewboard.storage.specs.files import SpecFileRepository
from crewboard.storage.uow import UnitOfWork


def do_reanchor_threads(
    uow: UnitOfWork,
    actor: Actor,
    *,
    file: SpecFile,
    saved: SpecRevision,
    content: bytes,
    workspace_id: str | None,
) -> Reanchored:
    """Move the anchors of `file`'s threads (open or resolved, not orphaned) into the text of
    `saved`, its new revision (`content`); mark the threads whose passage is gone orphaned and
    record `spec_comment.orphaned` for each. Nothing happens for a binary revision: its threads
    stay in the text they were anchored in until a text revision follows.

    Returns how many threads moved and which were orphaned.
    """
    repo = SpecCommentRepository(uow.conn)
    threads = repo.anchored_threads(file.id)
    if not threads or saved.kind is not FileKind.TEXT:
        return Reanchored(moved=0, orphaned=())
    new_text = content.decode("utf-8")
    by_revision: dict[int, list[CommentThread]] = defaultdict(list)
    for thread in threads:
        by_revision[thread.anchor_revision].append(thread)
    moves: list[tuple[str, Anchor, int]] = []
    orphaned: list[CommentThread] = []
    for revision, group in by_revision.items():
        old_text = _text_of(uow, file.id, revision)
        if old_text is None:
            continue
        for thread, anchor in zip(
            group, reanchor(old_text, new_text, [t.anchor for t in group]), strict=True
        ):
            if anchor is None:
                orphaned.append(thread)
            else:
                moves.append((thread.id, anchor, saved.revision))
    repo.move_anchors(moves)
    repo.set_orphaned([t.id for t in orphaned], uow.now)
    for thread in orphaned:
        uow.record_event(
            "spec_comment.orphaned",
            actor=actor.as_payload(),
            payload={
                "fileId": file.id,
                "path": file.path,
                "threadId": thread.id,
                "revision": saved.revision,
                "quote": thread.anchor.quote,
            },
            project_id=file.project_id,
            workspace_id=workspace_id,
        )
    return Reanchored(moved=len(moves), orphaned=tuple(t.id for t in orphaned))


def _text_of(uow: UnitOfWork, file_id: str, revision: int) -> str | None:
    """The text of one revision of the file; None when it has none (binary, or gone)."""
    found = SpecFileRepository(uow.conn).revision(file_id, revision)
    if found is None or found.kind is not FileKind.TEXT:
        return None
    return uow.blobs.read(found.digest).decode("utf-8")
