"""text indexes for hand-ins and task comments, scoped to the project inside the index

Search read hand-ins (drafts) and task comments / agent updates by a LIKE over only the
project's newest 2,000 rows of the kind, so an older one could never be found. Both now have
a text index built like the tasks' of 0008, each row's project held beside its words:

- SQLite: FTS5 tables `drafts_fts` (scope, title, summary, content) and `comments_fts`
  (scope, content), kept in step by insert/delete/update triggers and filled from the rows
  already there. `scope` is the project id without its underscore (one token; with it the
  tokenizer makes a two-token phrase whose first token, `prj`, is in every row). Their content
  comes through the views `drafts_search` and `comments_search`, so `rebuild` (and
  `integrity-check`) read the same text the triggers index.
- PostgreSQL: GIN expression indexes `ix_drafts_search` and `ix_task_comments_search` on the
  'simple' tsvector of the text plus the project id as a lexeme; a query ANDs the project's
  lexeme with the words, so the index answers only that project's matches.

task_comments carries its own project_id (set from its task's when written; a task never
changes project), so both databases scope a comment by that column inside the index: no join
to tasks, whose cost would grow with every match of every project, is needed to find or count
a project's comments. The join to tasks is made only for the page of rows shown.

Never batch-alter `drafts` or `task_comments` on SQLite from here on: the table copy drops
the triggers.

Revision ID: 0012_handin_comment_search
Revises: 0011_inbox_reads
Create Date: 2026-12-03
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0012_handin_comment_search"
down_revision: str | None = "0011_inbox_reads"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_SCOPE = "replace({row}.project_id, '_', '')"

_SQLITE_DRAFTS = [
    """CREATE VIEW drafts_search AS SELECT rowid AS draft_rowid,
        replace(project_id, '_', '') AS scope, title, summary, content FROM drafts""",
    """CREATE VIRTUAL TABLE drafts_fts USING fts5(
        scope, title, summary, content, content='drafts_search', content_rowid='draft_rowid',
        tokenize='unicode61 remove_diacritics 2')""",
    f"""CREATE TRIGGER drafts_fts_insert AFTER INSERT ON drafts BEGIN
        INSERT INTO drafts_fts(rowid, scope, title, summary, content)
        VALUES (new.rowid, {_SCOPE.format(row="new")}, new.title, new.summary, new.content);
    END""",
    f"""CREATE TRIGGER drafts_fts_delete AFTER DELETE ON drafts BEGIN
        INSERT INTO drafts_fts(drafts_fts, rowid, scope, title, summary, content)
        VALUES ('delete', old.rowid, {_SCOPE.format(row="old")}, old.title, old.summary,
            old.content);
    END""",
    # Only a change of the indexed text (or project): a status change leaves the index alone.
    f"""CREATE TRIGGER drafts_fts_update
    AFTER UPDATE OF project_id, title, summary, content ON drafts BEGIN
        INSERT INTO drafts_fts(drafts_fts, rowid, scope, title, summary, content)
        VALUES ('delete', old.rowid, {_SCOPE.format(row="old")}, old.title, old.summary,
            old.content);
        INSERT INTO drafts_fts(rowid, scope, title, summary, content)
        VALUES (new.rowid, {_SCOPE.format(row="new")}, new.title, new.summary, new.content);
    END""",
    "INSERT INTO drafts_fts(drafts_fts) VALUES ('rebuild')",
]
_SQLITE_COMMENTS = [
    """CREATE VIEW comments_search AS SELECT rowid AS comment_rowid,
        replace(project_id, '_', '') AS scope, content FROM task_comments""",
    """CREATE VIRTUAL TABLE comments_fts USING fts5(
        scope, content, content='comments_search', content_rowid='comment_rowid',
        tokenize='unicode61 remove_diacritics 2')""",
    f"""CREATE TRIGGER comments_fts_insert AFTER INSERT ON task_comments BEGIN
        INSERT INTO comments_fts(rowid, scope, content)
        VALUES (new.rowid, {_SCOPE.format(row="new")}, new.content);
    END""",
    f"""CREATE TRIGGER comments_fts_delete AFTER DELETE ON task_comments BEGIN
        INSERT INTO comments_fts(comments_fts, rowid, scope, content)
        VALUES ('delete', old.rowid, {_SCOPE.format(row="old")}, old.content);
    END""",
    f"""CREATE TRIGGER comments_fts_update
    AFTER UPDATE OF project_id, content ON task_comments BEGIN
        INSERT INTO comments_fts(comments_fts, rowid, scope, content)
        VALUES ('delete', old.rowid, {_SCOPE.format(row="old")}, old.content);
        INSERT INTO comments_fts(rowid, scope, content)
        VALUES (new.rowid, {_SCOPE.format(row="new")}, new.content);
    END""",
    "INSERT INTO comments_fts(comments_fts) VALUES ('rebuild')",
]
_SQLITE_OBJECTS = {
    "drafts_fts": (
        "drafts_search",
        ("drafts_fts_insert", "drafts_fts_delete", "drafts_fts_update"),
    ),
    "comments_fts": (
        "comments_search",
        ("comments_fts_insert", "comments_fts_delete", "comments_fts_update"),
    ),
}

# Must stay the exact expressions storage/review/search.py and storage/board/search.py match,
# or the planner skips the index.
POSTGRES_DRAFTS_DOCUMENT = (
    "(to_tsvector('simple', title || ' ' || summary || ' ' || content)"
    " || array_to_tsvector(ARRAY[project_id::text]))"
)
POSTGRES_COMMENTS_DOCUMENT = (
    "(to_tsvector('simple', content) || array_to_tsvector(ARRAY[project_id::text]))"
)


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        _drop_sqlite()
        for statement in _SQLITE_DRAFTS + _SQLITE_COMMENTS:
            op.execute(statement)
        return
    _drop_postgres()
    op.execute(f"CREATE INDEX ix_drafts_search ON drafts USING gin ({POSTGRES_DRAFTS_DOCUMENT})")
    op.execute(
        "CREATE INDEX ix_task_comments_search ON task_comments "
        f"USING gin ({POSTGRES_COMMENTS_DOCUMENT})"
    )


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        _drop_sqlite()
    else:
        _drop_postgres()


def _drop_sqlite() -> None:
    for table, (view, triggers) in _SQLITE_OBJECTS.items():
        for name in triggers:
            op.execute(f"DROP TRIGGER IF EXISTS {name}")
        op.execute(f"DROP TABLE IF EXISTS {table}")
        op.execute(f"DROP VIEW IF EXISTS {view}")


def _drop_postgres() -> None:
    op.execute("DROP INDEX IF EXISTS ix_drafts_search")
    op.execute("DROP INDEX IF EXISTS ix_task_comments_search")
