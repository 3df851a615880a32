"""task counts: each project's number of tasks, kept by the database

An unfiltered task list answered its `total` with count(*) over the project's tasks on every
page: 0.4 ms a page of a 5,000-task board (a fifth of the page), and it grows with the board.
The count now lives in project_sequences (name `task_count`), kept by triggers on tasks, so
every way a row comes or goes (a create, an accepted card deleting a task, a cascade, a bulk
load, a later import) moves it, in the same transaction. A project deleted with its tasks
takes its counter with it. Seeded from the tasks already there.

Revision ID: 0009_task_counts
Revises: 0008_task_search_scope
Create Date: 2026-12-02
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0009_task_counts"
down_revision: str | None = "0008_task_search_scope"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NAME = "task_count"  # storage/sequences.py TASK_COUNT

_BUMP = (
    "INSERT INTO project_sequences (project_id, name, value) VALUES ({project}, '"
    + NAME
    + "', {delta}) ON CONFLICT (project_id, name) DO UPDATE "
    "SET value = project_sequences.value + {delta}"
)
# A task leaving only lowers a counter already there: when its project is being deleted, the
# counter row has gone (or goes) with it, and an upsert would break the foreign key.
_LOWER = (
    "UPDATE project_sequences SET value = value - 1 "
    "WHERE project_id = {project} AND name = '" + NAME + "'"
)
_SQLITE = [
    f"""CREATE TRIGGER tasks_count_insert AFTER INSERT ON tasks BEGIN
        {_BUMP.format(project="new.project_id", delta=1)};
    END""",
    f"""CREATE TRIGGER tasks_count_delete AFTER DELETE ON tasks BEGIN
        {_LOWER.format(project="old.project_id")};
    END""",
    f"""CREATE TRIGGER tasks_count_move AFTER UPDATE OF project_id ON tasks
    WHEN old.project_id IS NOT new.project_id BEGIN
        {_LOWER.format(project="old.project_id")};
        {_BUMP.format(project="new.project_id", delta=1)};
    END""",
]
_POSTGRES = [
    f"""CREATE FUNCTION crewboard_count_tasks() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP IN ('DELETE', 'UPDATE') THEN
            {_LOWER.format(project="OLD.project_id")};
        END IF;
        IF TG_OP IN ('INSERT', 'UPDATE') THEN
            {_BUMP.format(project="NEW.project_id", delta=1)};
        END IF;
        RETURN NULL;
    END $$""",
    """CREATE TRIGGER tasks_count_change AFTER INSERT OR DELETE ON tasks
    FOR EACH ROW EXECUTE FUNCTION crewboard_count_tasks()""",
    """CREATE TRIGGER tasks_count_move AFTER UPDATE OF project_id ON tasks
    FOR EACH ROW WHEN (OLD.project_id IS DISTINCT FROM NEW.project_id)
    EXECUTE FUNCTION crewboard_count_tasks()""",
]
SEED = (
    f"INSERT INTO project_sequences (project_id, name, value) "
    f"SELECT project_id, '{NAME}', COUNT(*) FROM tasks GROUP BY project_id"
)


def upgrade() -> None:
    statements = _SQLITE if op.get_bind().dialect.name == "sqlite" else _POSTGRES
    for statement in statements:
        op.execute(statement)
    op.execute(SEED)


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for name in ("tasks_count_insert", "tasks_count_delete", "tasks_count_move"):
            op.execute(f"DROP TRIGGER IF EXISTS {name}")
    else:
        op.execute("DROP TRIGGER IF EXISTS tasks_count_change ON tasks")
        op.execute("DROP TRIGGER IF EXISTS tasks_count_move ON tasks")
        op.execute("DROP FUNCTION IF EXISTS crewboard_count_tasks()")
    op.execute(f"DELETE FROM project_sequences WHERE name = '{NAME}'")
