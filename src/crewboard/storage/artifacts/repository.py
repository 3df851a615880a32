"""The artifact repository: artifacts by id and slug, lists, kept revisions and their files,
a new revision checked against the count the writer read, and dropping the revisions past
what is kept."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Row, bindparam, delete, func, select, update

from crewboard.domain.artifacts import Artifact, ArtifactFile, ArtifactRevision, RevisionKind
from crewboard.domain.files import FileKind, LineIndex
from crewboard.storage.artifacts.tables import (
    artifact_files,
    artifact_previews,
    artifact_revisions,
    artifacts,
)
from crewboard.storage.rows import record_from_row, record_values

_a = artifacts.c
_r = artifact_revisions.c
_f = artifact_files.c
_BY_ID = select(artifacts).where(_a.id == bindparam("id"))
_BY_SLUG = select(artifacts).where(
    _a.project_id == bindparam("project_id"), _a.slug == bindparam("slug")
)
_REVISION = select(artifact_revisions).where(
    _r.artifact_id == bindparam("artifact_id"), _r.revision == bindparam("revision")
)
_FILES = (
    select(artifact_files)
    .where(_f.artifact_id == bindparam("artifact_id"), _f.revision == bindparam("revision"))
    .order_by(_f.path)
)


def _artifact(row: Row[Any]) -> Artifact:
    return record_from_row(Artifact, row)


def _revision(row: Row[Any]) -> ArtifactRevision:
    return record_from_row(
        ArtifactRevision, row, kind=RevisionKind(row.kind), total_size=int(row.total_size)
    )


def _file(row: Row[Any]) -> ArtifactFile:
    return record_from_row(
        ArtifactFile,
        row,
        kind=FileKind(row.kind),
        size=int(row.size),
        lines=LineIndex(row.total_lines, tuple(row.line_marks)),
    )


class ArtifactRepository:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def get(self, artifact_id: str) -> Artifact | None:
        row = self.conn.execute(_BY_ID, {"id": artifact_id}).first()
        return None if row is None else _artifact(row)

    def get_by_slug(self, project_id: str, slug: str) -> Artifact | None:
        row = self.conn.execute(_BY_SLUG, {"project_id": project_id, "slug": slug}).first()
        return None if row is None else _artifact(row)

    def page(self, project_id: str, *, limit: int, offset: int) -> tuple[list[Artifact], int]:
        """One page of the project's artifacts, most recently changed first, and the total."""
        where = _a.project_id == project_id
        rows = self.conn.execute(
            select(artifacts)
            .where(where)
            .order_by(_a.updated_at.desc(), _a.slug)
            .limit(limit)
            .offset(offset)
        )
        total = self.conn.execute(select(func.count()).select_from(artifacts).where(where))
        return [_artifact(row) for row in rows], int(total.scalar_one())

    def add(self, item: Artifact) -> None:
        self.conn.execute(
            artifacts.insert(),
            record_values(item, artifacts),
        )

    def advance(self, item: Artifact, *, expected_count: int) -> bool:
        """Move the artifact to `item.revision_count` if it still has `expected_count`
        revisions (compare and set); False when another write got there first."""
        moved = self.conn.execute(
            update(artifacts)
            .where(_a.id == item.id, _a.revision_count == expected_count)
            .values(
                revision_count=item.revision_count,
                updated_by=item.updated_by,
                updated_at=item.updated_at,
            )
            .returning(_a.id)
        )
        return moved.first() is not None

    def add_revision(self, revision: ArtifactRevision, files: Iterable[ArtifactFile]) -> None:
        self.conn.execute(
            artifact_revisions.insert(),
            record_values(revision, artifact_revisions, kind=revision.kind.value),
        )
        rows = [
            {
                "artifact_id": revision.artifact_id,
                "revision": revision.revision,
                "path": f.path,
                "kind": f.kind.value,
                "media_type": f.media_type,
                "size": f.size,
                "digest": f.digest,
                "total_lines": f.lines.total_lines,
                "line_marks": list(f.lines.marks),
            }
            for f in files
        ]
        if rows:
            self.conn.execute(artifact_files.insert(), rows)

    def revision(self, artifact_id: str, revision: int) -> ArtifactRevision | None:
        row = self.conn.execute(
            _REVISION, {"artifact_id": artifact_id, "revision": revision}
        ).first()
        return None if row is None else _revision(row)

    def revisions(self, artifact_id: str) -> list[ArtifactRevision]:
        """The kept revisions, newest first."""
        rows = self.conn.execute(
            select(artifact_revisions)
            .where(_r.artifact_id == artifact_id)
            .order_by(_r.revision.desc())
        )
        return [_revision(row) for row in rows]

    def files(self, artifact_id: str, revision: int) -> dict[str, ArtifactFile]:
        """A kept revision's files by path, in path order."""
        rows = self.conn.execute(_FILES, {"artifact_id": artifact_id, "revision": revision})
        return {row.path: _file(row) for row in rows}

    def drop_before(self, artifact_id: str, revision: int) -> set[str]:
        """Delete the revisions older than `revision` with their files; the digests those
        files named (for the blob collector to check)."""
        old = (_f.artifact_id == artifact_id) & (_f.revision < revision)
        digests = {row.digest for row in self.conn.execute(select(_f.digest).where(old).distinct())}
        self.conn.execute(delete(artifact_files).where(old))
        self.conn.execute(
            delete(artifact_revisions).where(_r.artifact_id == artifact_id, _r.revision < revision)
        )
        return digests

    def add_preview(
        self, token_hash: str, artifact_id: str, revision: int, by: dict[str, Any], until: datetime
    ) -> None:
        """Grant a look at one revision until `until`."""
        self.conn.execute(
            artifact_previews.insert(),
            {"token_hash": token_hash, "artifact_id": artifact_id, "revision": revision,
             "created_by": by, "expires_at": until},
        )  # fmt: skip

    def drop_expired_previews(self, now: datetime) -> None:
        self.conn.execute(delete(artifact_previews).where(artifact_previews.c.expires_at <= now))

    def preview(self, token_hash: str, now: datetime) -> tuple[str, int] | None:
        """The artifact and revision a grant still open shows."""
        row = self.conn.execute(
            select(artifact_previews.c.artifact_id, artifact_previews.c.revision).where(
                artifact_previews.c.token_hash == token_hash,
                artifact_previews.c.expires_at > now,
            )
        ).first()
        return None if row is None else (row.artifact_id, row.revision)
