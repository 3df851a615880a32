"""task search scoped to the project inside the text index

A search named one project but the text index held every project's words, so a search in a
small project still gathered, then threw away, a large project's matches (5 ms for 21 hits in
a project of 1,000 beside one of 100,000). The index now holds each task's project too:

- SQLite: tasks_fts gains a `scope` column, the project id without its underscore (one token;
  with the underscore the tokenizer makes a two-token phrase whose first token is in every
  row). Its content comes through the view `tasks_search`, so `rebuild` and the triggers index
  the same text.
- PostgreSQL: the GIN expression gains the project id as a lexeme; a query ANDs the project
  lexeme(s) with the words, so the index answers only that project's matches.

Revision ID: 0008_task_search_scope
Revises: 0007_project_sequences
Create Date: 2026-12-02
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0008_task_search_scope"
down_revision: str | None = "0007_project_sequences"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TRIGGERS = ("tasks_fts_insert", "tasks_fts_delete", "tasks_fts_update")
_SCOPE = "replace({row}.project_id, '_', '')"

_SQLITE_SCOPED = [
    """CREATE VIEW tasks_search AS SELECT rowid AS task_rowid,
        replace(project_id, '_', '') AS scope, title, brief, description FROM tasks""",
    """CREATE VIRTUAL TABLE tasks_fts USING fts5(
        scope, title, brief, description, content='tasks_search', content_rowid='task_rowid',
        tokenize='unicode61 remove_diacritics 2')""",
    f"""CREATE TRIGGER tasks_fts_insert AFTER INSERT ON tasks BEGIN
        INSERT INTO tasks_fts(rowid, scope, title, brief, description)
        VALUES (new.rowid, {_SCOPE.format(row="new")}, new.title, new.brief, new.description);
    END""",
    f"""CREATE TRIGGER tasks_fts_delete AFTER DELETE ON tasks BEGIN
        INSERT INTO tasks_fts(tasks_fts, rowid, scope, title, brief, description)
        VALUES ('delete', old.rowid, {_SCOPE.format(row="old")}, old.title, old.brief,
            old.description);
    END""",
    f"""CREATE TRIGGER tasks_fts_update
    AFTER UPDATE OF project_id, title, brief, description ON tasks BEGIN
        INSERT INTO tasks_fts(tasks_fts, rowid, scope, title, brief, description)
        VALUES ('delete', old.rowid, {_SCOPE.format(row="old")}, old.title, old.brief,
            old.description);
        INSERT INTO tasks_fts(rowid, scope, title, brief, description)
        VALUES (new.rowid, {_SCOPE.format(row="new")}, new.title, new.brief, new.description);
    END""",
    "INSERT INTO tasks_fts(tasks_fts) VALUES ('rebuild')",
]
# The 0003 form, for a downgrade.
_SQLITE_UNSCOPED = [
    """CREATE VIRTUAL TABLE tasks_fts USING fts5(
        title, brief, description, content='tasks', content_rowid='rowid',
        tokenize='unicode61 remove_diacritics 2')""",
    """CREATE TRIGGER tasks_fts_insert AFTER INSERT ON tasks BEGIN
        INSERT INTO tasks_fts(rowid, title, brief, description)
        VALUES (new.rowid, new.title, new.brief, new.description);
    END""",
    """CREATE TRIGGER tasks_fts_delete AFTER DELETE ON tasks BEGIN
        INSERT INTO tasks_fts(tasks_fts, rowid, title, brief, description)
        VALUES ('delete', old.rowid, old.title, old.brief, old.description);
    END""",
    """CREATE TRIGGER tasks_fts_update AFTER UPDATE OF title, brief, description ON tasks BEGIN
        INSERT INTO tasks_fts(tasks_fts, rowid, title, brief, description)
        VALUES ('delete', old.rowid, old.title, old.brief, old.description);
        INSERT INTO tasks_fts(rowid, title, brief, description)
        VALUES (new.rowid, new.title, new.brief, new.description);
    END""",
    "INSERT INTO tasks_fts(tasks_fts) VALUES ('rebuild')",
]
# Must stay the exact expression storage/board/tasks.py matches, or the planner skips it.
POSTGRES_DOCUMENT = (
    "(to_tsvector('simple', title || ' ' || brief || ' ' || description)"
    " || array_to_tsvector(ARRAY[project_id::text]))"
)


def _drop_sqlite() -> None:
    for name in _TRIGGERS:
        op.execute(f"DROP TRIGGER IF EXISTS {name}")
    op.execute("DROP TABLE IF EXISTS tasks_fts")
    op.execute("DROP VIEW IF EXISTS tasks_search")


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        _drop_sqlite()
        for statement in _SQLITE_SCOPED:
            op.execute(statement)
        return
    op.execute("DROP INDEX IF EXISTS ix_tasks_search")
    op.execute(f"CREATE INDEX ix_tasks_search ON tasks USING gin ({POSTGRES_DOCUMENT})")


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        _drop_sqlite()
        for statement in _SQLITE_UNSCOPED:
            op.execute(statement)
        return
    op.execute("DROP INDEX IF EXISTS ix_tasks_search")
    op.execute(
        "CREATE INDEX ix_tasks_search ON tasks USING gin ("
        "to_tsvector('simple', title || ' ' || brief || ' ' || description))"
    )
