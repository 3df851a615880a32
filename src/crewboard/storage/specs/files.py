"""The spec file repository: files by id and path, lists, revisions, saves checked against the
version the writer read, the trash."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Row, and_, bindparam, func, select, update

from crewboard.domain.files import FileKind, LineIndex
from crewboard.domain.specs import SpecFile, SpecRevision
from crewboard.storage.rows import record_from_row, record_values
from crewboard.storage.specs.tables import spec_file_revisions, spec_files

_f = spec_files.c
_r = spec_file_revisions.c
_BY_ID = select(spec_files).where(_f.id == bindparam("id"))
_BY_PATH = select(spec_files).where(
    _f.project_id == bindparam("project_id"), _f.path == bindparam("path")
)
_REVISION = select(spec_file_revisions).where(
    _r.file_id == bindparam("file_id"), _r.revision == bindparam("revision")
)


def _file(row: Row[Any]) -> SpecFile:
    return record_from_row(SpecFile, row, kind=FileKind(row.kind), size=int(row.size))


def _revision(row: Row[Any]) -> SpecRevision:
    return record_from_row(
        SpecRevision,
        row,
        kind=FileKind(row.kind),
        size=int(row.size),
        lines=LineIndex(row.total_lines, tuple(row.line_marks)),
    )


class SpecFileRepository:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def get(self, file_id: str) -> SpecFile | None:
        row = self.conn.execute(_BY_ID, {"id": file_id}).first()
        return None if row is None else _file(row)

    def get_by_path(self, project_id: str, path: str) -> SpecFile | None:
        row = self.conn.execute(_BY_PATH, {"project_id": project_id, "path": path}).first()
        return None if row is None else _file(row)

    def at_path(self, project_ids: Sequence[str], path: str) -> list[SpecFile]:
        """The file at `path` in each of these projects that has one (one query)."""
        rows = self.conn.execute(
            select(spec_files).where(_f.project_id.in_(list(project_ids)), _f.path == path)
        )
        return [_file(row) for row in rows]

    def paths(self, project_id: str, prefix: str) -> list[str]:
        """The paths of the project's files (not in the trash) under `prefix` (`specs/`), in
        no set order: only the paths, so that a look over many files stays cheap."""
        path = _f.path.collate("C") if self.conn.dialect.name == "postgresql" else _f.path
        upper = prefix[:-1] + chr(ord(prefix[-1]) + 1)
        where = and_(
            _f.project_id == project_id, _f.trashed_at.is_(None), path >= prefix, path < upper
        )
        rows = self.conn.execute(select(_f.path).where(where))
        return [str(row.path) for row in rows if str(row.path).startswith(prefix)]

    def page(
        self,
        project_id: str,
        *,
        prefix: str | None,
        trashed: bool,
        limit: int,
        offset: int,
        newest: bool = False,
    ) -> tuple[list[SpecFile], int]:
        """One page of the project's files (or its trash) in path order (or `newest` changed
        first), and how many there are."""
        # Paths compare as code points (bytes of UTF-8): SQLite's BINARY, and "C" on PostgreSQL,
        # whose database may sort by a language that puts `Docs/` or `docs#` between `docs/`
        # and `docs0`, or drops the `/` when it compares.
        path = _f.path.collate("C") if self.conn.dialect.name == "postgresql" else _f.path
        conditions = [
            _f.project_id == project_id,
            _f.trashed_at.is_not(None) if trashed else _f.trashed_at.is_(None),
        ]
        if prefix is not None:
            # A prefix range (not LIKE): `docs/` up to the next possible string.
            conditions += [path >= prefix, path < prefix[:-1] + chr(ord(prefix[-1]) + 1)]
        where = and_(*conditions)
        order = (_f.updated_at.desc(), _f.id.desc()) if newest else (path,)
        rows = self.conn.execute(
            select(spec_files).where(where).order_by(*order).limit(limit).offset(offset)
        )
        total = self.conn.execute(select(func.count()).select_from(spec_files).where(where))
        return [_file(row) for row in rows], int(total.scalar_one())

    def add(self, file: SpecFile, revision: SpecRevision) -> None:
        self.conn.execute(
            spec_files.insert(),
            record_values(file, spec_files, kind=file.kind.value, trashed_at=None, trashed_by=None),
        )
        self.add_revision(revision)

    def add_revision(self, revision: SpecRevision) -> None:
        self.conn.execute(
            spec_file_revisions.insert(),
            record_values(
                revision,
                spec_file_revisions,
                kind=revision.kind.value,
                total_lines=revision.lines.total_lines,
                line_marks=list(revision.lines.marks),
            ),
        )

    def advance(self, revision: SpecRevision, *, expected_version: str) -> bool:
        """Make `revision` the file's newest if the file is still at `expected_version`
        (compare and set); False when another save came first. The caller adds the revision
        row only after this succeeds."""
        result = self.conn.execute(
            update(spec_files)
            .where(_f.id == revision.file_id, _f.content_version == expected_version)
            .values(
                kind=revision.kind.value,
                size=revision.size,
                total_lines=revision.lines.total_lines,
                revision_count=revision.revision,
                content_version=revision.content_version,
                digest=revision.digest,
                updated_by=revision.author,
                updated_at=revision.created_at,
            )
        )
        return result.rowcount == 1

    def revision(self, file_id: str, revision: int) -> SpecRevision | None:
        row = self.conn.execute(_REVISION, {"file_id": file_id, "revision": revision}).first()
        return None if row is None else _revision(row)

    def revisions(self, file_id: str, *, limit: int, offset: int) -> tuple[list[SpecRevision], int]:
        """Revisions newest first, and how many there are."""
        rows = self.conn.execute(
            select(spec_file_revisions)
            .where(_r.file_id == file_id)
            .order_by(_r.revision.desc())
            .limit(limit)
            .offset(offset)
        )
        total = self.conn.execute(
            select(func.count()).select_from(spec_file_revisions).where(_r.file_id == file_id)
        )
        return [_revision(row) for row in rows], int(total.scalar_one())

    def set_trashed(self, file_id: str, *, at: datetime | None, by: dict[str, Any] | None) -> None:
        self.conn.execute(
            update(spec_files).where(_f.id == file_id).values(trashed_at=at, trashed_by=by)
        )
