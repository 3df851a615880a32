"""task counts per statement on PostgreSQL

0009 kept each project's task count with a row trigger: every inserted task upserted the
project's `task_count` row. On PostgreSQL, updating one row many times in one transaction
leaves a chain of versions no one may prune yet, and each update walks it: a bulk load of
100,000 tasks into one project (an archive import, the benchmark seeder) slowed as it went.
Inserts and deletes now count per statement, through transition tables: one upsert per
statement and project, the same totals in the same transaction. A task moving between
projects keeps its row trigger (transition tables cannot go with a column list). SQLite has
no such chain and keeps its row triggers.

Revision ID: 0023_task_counts_per_statement
Revises: 0022_sessions
Create Date: 2026-12-05
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0023_task_counts_per_statement"
down_revision: str | None = "0022_sessions"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NAME = "task_count"  # storage/sequences.py TASK_COUNT

_UPGRADE = [
    "DROP TRIGGER IF EXISTS tasks_count_change ON tasks",
    f"""CREATE FUNCTION crewboard_count_inserted_tasks() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        INSERT INTO project_sequences (project_id, name, value)
        SELECT project_id, '{NAME}', count(*) FROM inserted_tasks GROUP BY project_id
        ON CONFLICT (project_id, name) DO UPDATE
        SET value = project_sequences.value + EXCLUDED.value;
        RETURN NULL;
    END $$""",
    # A task leaving only lowers a counter already there: when its project is being deleted,
    # the counter row has gone (or goes) with it.
    f"""CREATE FUNCTION crewboard_count_deleted_tasks() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        UPDATE project_sequences AS counter SET value = counter.value - gone.n
        FROM (SELECT project_id, count(*) AS n FROM deleted_tasks GROUP BY project_id) AS gone
        WHERE counter.project_id = gone.project_id AND counter.name = '{NAME}';
        RETURN NULL;
    END $$""",
    """CREATE TRIGGER tasks_count_insert AFTER INSERT ON tasks
    REFERENCING NEW TABLE AS inserted_tasks
    FOR EACH STATEMENT EXECUTE FUNCTION crewboard_count_inserted_tasks()""",
    """CREATE TRIGGER tasks_count_delete AFTER DELETE ON tasks
    REFERENCING OLD TABLE AS deleted_tasks
    FOR EACH STATEMENT EXECUTE FUNCTION crewboard_count_deleted_tasks()""",
]

_DOWNGRADE = [
    "DROP TRIGGER IF EXISTS tasks_count_insert ON tasks",
    "DROP TRIGGER IF EXISTS tasks_count_delete ON tasks",
    "DROP FUNCTION IF EXISTS crewboard_count_inserted_tasks()",
    "DROP FUNCTION IF EXISTS crewboard_count_deleted_tasks()",
    """CREATE TRIGGER tasks_count_change AFTER INSERT OR DELETE ON tasks
    FOR EACH ROW EXECUTE FUNCTION crewboard_count_tasks()""",
]


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for statement in _UPGRADE:
            op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for statement in _DOWNGRADE:
            op.execute(statement)
