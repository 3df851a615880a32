"""Content-addressed blobs: bytes stored once under their sha256, read whole or by range.

Spec files, attachments and (next) artifacts keep their bytes here and only the digest in
their own rows, so the same bytes saved twice (a file re-uploaded, a revision rolled back, one
logo in ten artifacts) take their room once.

Two stores behind one interface, `BlobStore`:

- `DatabaseBlobStore` (the default): the `blobs` row (digest, size) and the bytes in
  `blob_chunks` of CHUNK bytes each, in the same transaction as the rows that name them. A
  read of a byte range reads only the chunks it covers, so a window of a large file costs the
  window, not the file.
- `FolderBlobStore` (`CREWBOARD_BLOB_DIR`): the `blobs` row in the database, the bytes in a
  file named by the digest under the folder (`ab/cdef…`), written to a temporary name and
  renamed into place, so a reader never sees half a blob. A write that rolls back leaves at
  most an unnamed file behind, which holds nothing anyone can reach and is the same bytes a
  later save would write.

Blobs are never changed. `collect` deletes, in the caller's transaction, those of some
digests that no row names any more: every column that names a blob is marked
`info={"blob_ref": True}` in its table, and the collector looks in each. On PostgreSQL the
collector locks the blob's row (FOR UPDATE) before it looks, and a `put` that finds the bytes
already stored locks the same row (FOR SHARE) before the row naming them is written, so a
blob is never deleted under a reference another transaction is adding: whichever comes
second waits, then sees what the first committed (a put whose blob was just collected stores
the bytes again). SQLite runs write transactions one at a time. With a blob folder the
collector deletes the rows; the files stay (the same bytes put again reuse them).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Protocol

from sqlalchemy import (
    Column,
    Connection,
    Integer,
    Row,
    bindparam,
    case,
    delete,
    func,
    literal,
    select,
    update,
)
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from crewboard.domain.files import digest_of
from crewboard.storage.blob_tables import blob_chunks, blobs
from crewboard.storage.tables import metadata

CHUNK = 256 * 1024  # bytes of one stored chunk
IN_FOLDER = 0  # the chunk size of a blob whose bytes are a file in the blob folder

_SIZE = select(blobs.c.size, blobs.c.chunk_size).where(blobs.c.digest == bindparam("digest"))
_LOCK_SHARED = _SIZE.with_for_update(read=True)  # FOR SHARE; SQLite has no row locks
_LOCK_FOR_DELETE = _SIZE.with_for_update()
# Only the bytes of the range: from `skip` in the first chunk, up to `stop` in the last (SQL's
# substr counts from 1), so a small window of a large chunk crosses the wire as itself.
_FROM = case(
    (blob_chunks.c.seq == bindparam("first"), bindparam("skip", type_=Integer) + 1), else_=1
)
_TO = case(
    (blob_chunks.c.seq == bindparam("last"), bindparam("stop", type_=Integer)),
    else_=bindparam("chunk", type_=Integer),
)
_CHUNKS = (
    select(blob_chunks.c.seq, func.substr(blob_chunks.c.data, _FROM, _TO - _FROM + 1))
    .where(
        blob_chunks.c.digest == bindparam("digest"),
        blob_chunks.c.seq >= bindparam("first"),
        blob_chunks.c.seq <= bindparam("last"),
    )
    .order_by(blob_chunks.c.seq)
)


class BlobStore(Protocol):
    def put(self, data: bytes) -> str:
        """Store the bytes (once); their digest."""
        ...

    def size(self, digest: str) -> int | None:
        """The blob's size in bytes, None when there is no such blob."""
        ...

    def read(self, digest: str, start: int = 0, length: int | None = None) -> bytes:
        """`length` bytes from `start` (to the end when None); fewer at the end of the blob."""
        ...

    def collect(self, digests: Iterable[str]) -> set[str]:
        """Delete those of these blobs that no row names any more; the digests deleted."""
        ...

    def sweep(self) -> set[str]:
        """Delete every blob no row names (after rows went without their digests in hand, as
        when a project is deleted); the digests deleted."""
        ...


def file_name(digest: str) -> str:
    """Where a blob's file lies under a blob folder (`ab/cdef…`): in CREWBOARD_BLOB_DIR, and
    under `blobs/` in a backup set."""
    return f"{digest[:2]}/{digest[2:]}"


def _insert_blob_row(conn: Connection, digest: str, size: int, chunk_size: int, at: object) -> bool:
    """Add the `blobs` row unless it is there; True when this call added it. When it was
    there, it is locked against the collector until this transaction ends (PostgreSQL); a row
    the collector deleted meanwhile is added again."""
    values = {"digest": digest, "size": size, "chunk_size": chunk_size, "created_at": at}
    insert = pg_insert if conn.dialect.name == "postgresql" else sqlite_insert
    # RETURNING, not rowcount: psycopg gives -1 for a conflict-guarded insert, and then the
    # chunks of every new blob were never written on PostgreSQL.
    statement = insert(blobs).values(values).on_conflict_do_nothing().returning(blobs.c.digest)
    while True:
        if conn.execute(statement).first() is not None:
            return True
        if conn.execute(_LOCK_SHARED, {"digest": digest}).first() is not None:
            return False
        # Collected between the two statements (its deletion committed): store it again.


def referencing_columns() -> list[Column[Any]]:
    """Every column that names a blob by digest (marked `info={"blob_ref": True}`), of the
    whole schema (hence `metadata` from `tables`, which gathers every area's): a table left out
    would have its blobs collected under it."""
    return [
        column
        for table in metadata.tables.values()
        for column in table.columns
        if column.info.get("blob_ref")
    ]


def _unreferenced(conn: Connection) -> list[str]:
    """The digests of blobs no marked column names (candidates; `_collect` re-checks)."""
    query = select(blobs.c.digest)
    for column in referencing_columns():
        query = query.where(~select(literal(1)).where(column == blobs.c.digest).exists())
    return [row.digest for row in conn.execute(query)]


def _collect(conn: Connection, digests: Iterable[str]) -> set[str]:
    """Delete the `blobs` rows (and chunks) of those of `digests` no row names; those deleted."""
    columns = referencing_columns()
    gone: set[str] = set()
    for digest in sorted(set(digests)):
        # Lock first, then look (a new statement sees what a put committed meanwhile).
        if conn.execute(_LOCK_FOR_DELETE, {"digest": digest}).first() is None:
            continue
        named = any(
            conn.execute(select(literal(1)).where(column == digest).limit(1)).first()
            for column in columns
        )
        if named:
            continue
        conn.execute(delete(blob_chunks).where(blob_chunks.c.digest == digest))
        conn.execute(delete(blobs).where(blobs.c.digest == digest))
        gone.add(digest)
    return gone


class _BlobRows:
    """What both stores keep alike: the `blobs` rows, read and collected in the caller's
    transaction. Collecting deletes rows (and chunks), never files: removing a file could race
    a put of the same bytes that found it still there, and would not come back if the
    transaction rolled back."""

    def __init__(self, conn: Connection, now: object) -> None:
        self.conn = conn
        self.now = now

    def size(self, digest: str) -> int | None:
        row = self.conn.execute(_SIZE, {"digest": digest}).first()
        return None if row is None else int(row.size)

    def _row(self, digest: str) -> Row[Any, Any]:
        """The blob's row.

        Raises:
            LookupError: no such blob.
        """
        row = self.conn.execute(_SIZE, {"digest": digest}).first()
        if row is None:
            raise LookupError(f"no blob {digest}")
        return row

    def collect(self, digests: Iterable[str]) -> set[str]:
        return _collect(self.conn, digests)

    def sweep(self) -> set[str]:
        return _collect(self.conn, _unreferenced(self.conn))


class DatabaseBlobStore(_BlobRows):
    """Blobs in the database, chunked, inside the caller's transaction."""

    def put(self, data: bytes) -> str:
        digest = digest_of(data)
        added = _insert_blob_row(self.conn, digest, len(data), CHUNK, self.now)
        row = None if added else self.conn.execute(_SIZE, {"digest": digest}).first()
        if added or (row is not None and int(row.chunk_size) == IN_FOLDER):
            # New bytes, or bytes a folder store kept before the server was moved off it:
            # from now on the database holds them.
            rows = [
                {"digest": digest, "seq": n, "data": data[at : at + CHUNK]}
                for n, at in enumerate(range(0, len(data), CHUNK))
            ]
            if rows:
                self.conn.execute(blob_chunks.insert(), rows)
            if not added:
                self.conn.execute(
                    update(blobs).where(blobs.c.digest == digest).values(chunk_size=CHUNK)
                )
        return digest

    def read(self, digest: str, start: int = 0, length: int | None = None) -> bytes:
        row = self._row(digest)
        end = int(row.size) if length is None else min(int(row.size), start + length)
        if start >= end:
            return b""
        chunk = int(row.chunk_size)
        if chunk == IN_FOLDER:
            raise LookupError(
                f"blob {digest} is kept in a blob folder, and this server has none: set "
                "CREWBOARD_BLOB_DIR to that folder"
            )
        first, last = start // chunk, (end - 1) // chunk
        parts = self.conn.execute(
            _CHUNKS,
            {"digest": digest, "first": first, "last": last, "chunk": chunk,
             "skip": start - first * chunk, "stop": end - last * chunk},
        )  # fmt: skip
        return b"".join(bytes(part[1]) for part in parts)


class FolderBlobStore(_BlobRows):
    """Blob rows in the database, bytes in files under a folder, named by their digest."""

    def __init__(self, conn: Connection, now: object, folder: Path) -> None:
        super().__init__(conn, now)
        self.folder = folder

    def path_of(self, digest: str) -> Path:
        return self.folder / file_name(digest)

    def put(self, data: bytes) -> str:
        digest = digest_of(data)
        _insert_blob_row(self.conn, digest, len(data), IN_FOLDER, self.now)
        target = self.path_of(digest)
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=".incoming-")
            try:
                with os.fdopen(handle, "wb") as out:
                    out.write(data)
                    out.flush()
                    os.fsync(out.fileno())
                Path(temporary).replace(target)
            except BaseException:
                Path(temporary).unlink(missing_ok=True)
                raise
        return digest

    def read(self, digest: str, start: int = 0, length: int | None = None) -> bytes:
        row = self._row(digest)
        if int(row.chunk_size) != IN_FOLDER:  # saved in the database before the folder was set
            return DatabaseBlobStore(self.conn, self.now).read(digest, start, length)
        with self.path_of(digest).open("rb") as source:
            source.seek(start)
            return source.read() if length is None else source.read(length)


def blob_store(conn: Connection, now: object, folder: Path | None) -> BlobStore:
    """The configured store over this connection."""
    if folder is None:
        return DatabaseBlobStore(conn, now)
    return FolderBlobStore(conn, now, folder)
