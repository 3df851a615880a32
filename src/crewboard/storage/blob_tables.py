"""The two tables of content-addressed blobs (`storage/blobs.py` reads and writes them):
`blobs`, one row per digest, and `blob_chunks`, the bytes of a blob kept in the database.

Apart from the store so that `storage/tables.py` can gather them with every area's tables
while the store reads the whole gathered schema, with no import going round in a circle."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Column,
    Integer,
    LargeBinary,
    PrimaryKeyConstraint,
    String,
    Table,
)

from crewboard.storage.schema import metadata
from crewboard.storage.types import UTCDateTime

blobs = Table(
    "blobs",
    metadata,
    Column("digest", String(64), primary_key=True),
    Column("size", BigInteger, nullable=False),
    Column("chunk_size", Integer, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
)

blob_chunks = Table(
    "blob_chunks",
    metadata,
    Column("digest", String(64), nullable=False),
    Column("seq", Integer, nullable=False),
    Column("data", LargeBinary, nullable=False),
    PrimaryKeyConstraint("digest", "seq"),
)
