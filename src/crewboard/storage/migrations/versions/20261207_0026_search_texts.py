"""searchable text of spec files, artifacts and handoffs, with its text index

Search found tasks, hand-ins, memory records and comments only. Spec files and artifacts keep
their bytes as blobs and a handoff its four bodies, so `search_texts` keeps the text to search
of each (one row per thing, its id the thing's own), written by the thing's service in the same
transaction as a save, and indexed as the hand-ins' are (0012):

- SQLite: FTS5 table `search_texts_fts` (scope, title, content) through the view
  `search_texts_search`, kept in step by insert/delete/update triggers; `scope` is the project
  id without its underscore (one token).
- PostgreSQL: the GIN expression index `ix_search_texts_search` on the 'simple' tsvector of
  the title and content plus the project id as a lexeme.

Handoffs already written are indexed here from their rows. Spec files and artifacts written
before this revision have their bytes in blobs (which may live in a folder this migration
cannot read): their path and title are indexed here, their text at their next save.

Revision ID: 0026_search_texts
Revises: 0025_token_seats
Create Date: 2026-12-07
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0026_search_texts"
down_revision: str | None = "0025_token_seats"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_SCOPE = "replace({row}.project_id, '_', '')"

_SQLITE = [
    """CREATE VIEW search_texts_search AS SELECT rowid AS text_rowid,
        replace(project_id, '_', '') AS scope, title, content FROM search_texts""",
    """CREATE VIRTUAL TABLE search_texts_fts USING fts5(
        scope, title, content, content='search_texts_search', content_rowid='text_rowid',
        tokenize='unicode61 remove_diacritics 2')""",
    f"""CREATE TRIGGER search_texts_fts_insert AFTER INSERT ON search_texts BEGIN
        INSERT INTO search_texts_fts(rowid, scope, title, content)
        VALUES (new.rowid, {_SCOPE.format(row="new")}, new.title, new.content);
    END""",
    f"""CREATE TRIGGER search_texts_fts_delete AFTER DELETE ON search_texts BEGIN
        INSERT INTO search_texts_fts(search_texts_fts, rowid, scope, title, content)
        VALUES ('delete', old.rowid, {_SCOPE.format(row="old")}, old.title, old.content);
    END""",
    f"""CREATE TRIGGER search_texts_fts_update
    AFTER UPDATE OF project_id, title, content ON search_texts BEGIN
        INSERT INTO search_texts_fts(search_texts_fts, rowid, scope, title, content)
        VALUES ('delete', old.rowid, {_SCOPE.format(row="old")}, old.title, old.content);
        INSERT INTO search_texts_fts(rowid, scope, title, content)
        VALUES (new.rowid, {_SCOPE.format(row="new")}, new.title, new.content);
    END""",
]
_TRIGGERS = ("search_texts_fts_insert", "search_texts_fts_delete", "search_texts_fts_update")

# Must stay the exact expression storage/search_texts.py matches, or the planner skips it.
POSTGRES_DOCUMENT = (
    "(to_tsvector('simple', translate(title, '/.-', '   ') || ' ' || content)"
    " || array_to_tsvector(ARRAY[project_id::text]))"
)

_FILL = [
    """INSERT INTO search_texts (id, project_id, kind, title, content, created_at)
    SELECT h.id, h.project_id, 'handoff',
        COALESCE(u.display_name, u.email) || '''s handoff for ' || CAST(h.day AS VARCHAR(10)),
        h.completed || ' ' || h.in_progress || ' ' || h.blockers || ' ' || h.next_steps,
        h.updated_at
    FROM handoffs AS h JOIN users AS u ON u.id = h.author_user_id""",
    """INSERT INTO search_texts (id, project_id, kind, title, content, created_at)
    SELECT id, project_id, 'spec_file', path, '', updated_at FROM spec_files""",
    """INSERT INTO search_texts (id, project_id, kind, title, content, created_at)
    SELECT id, project_id, 'artifact', title, description, updated_at FROM artifacts""",
]


def upgrade() -> None:
    op.create_table(
        "search_texts",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("project_id", sa.String(length=32), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("title", sa.String(length=512), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "kind IN ('spec_file', 'artifact', 'handoff')", name=op.f("ck_search_texts_kind")
        ),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_search_texts_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_search_texts")),
    )
    op.create_index("ix_search_texts_project_id_kind", "search_texts", ["project_id", "kind"])
    if op.get_bind().dialect.name == "sqlite":
        for statement in _SQLITE:
            op.execute(statement)
    else:
        op.execute(
            f"CREATE INDEX ix_search_texts_search ON search_texts USING gin ({POSTGRES_DOCUMENT})"
        )
    for statement in _FILL:
        op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for name in _TRIGGERS:
            op.execute(f"DROP TRIGGER IF EXISTS {name}")
        op.execute("DROP TABLE IF EXISTS search_texts_fts")
        op.execute("DROP VIEW IF EXISTS search_texts_search")
    else:
        op.execute("DROP INDEX IF EXISTS ix_search_texts_search")
    op.drop_index("ix_search_texts_project_id_kind", table_name="search_texts")
    op.drop_table("search_texts")
