"""The two tables of content-addressed blobs (`storage/blobs.py` reads and writes them):
`blobs`, one row per digest, and `blob_chunks`, the bytes of a blob kept in the database.

Apart from the store so that `storage/tables.py` can gather them with every area's tables
while the store reads the whole gathered schema, with no import going round in a circle."""

from __future__ import annotations

import sqlalchemy as sa

from crewboard.storage.schema import metadata, required
from crewboard.storage.types import UTCDateTime

blobs = sa.Table(
    "blobs",
    metadata,
    sa.Column("digest", sa.String(64), primary_key=True),
    required("size", sa.BigInteger),
    required("chunk_size", sa.Integer),
    required("created_at", UTCDateTime),
)

blob_chunks = sa.Table(
    "blob_chunks",
    metadata,
    required("digest", sa.String(64)),
    required("seq", sa.Integer),
    required("data", sa.LargeBinary),
    sa.PrimaryKeyConstraint("digest", "seq"),
)
