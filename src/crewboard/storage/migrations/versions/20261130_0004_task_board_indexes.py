"""task board indexes: subtasks in number order, board order within a status

Revision ID: 0004_task_indexes
Revises: 0003_task_board
Create Date: 2026-11-30
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0004_task_indexes"
down_revision: str | None = "0003_task_board"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Plain index operations (no batch mode): recreating `tasks` on SQLite would drop the
# triggers that keep its text index in step.


def upgrade() -> None:
    op.drop_index("ix_tasks_project_id_parent_task_id", table_name="tasks")
    op.create_index(
        "ix_tasks_project_id_parent_task_id_number",
        "tasks",
        ["project_id", "parent_task_id", "number"],
    )
    op.create_index(
        "ix_tasks_project_id_status_board_order", "tasks", ["project_id", "status", "board_order"]
    )


def downgrade() -> None:
    op.drop_index("ix_tasks_project_id_status_board_order", table_name="tasks")
    op.drop_index("ix_tasks_project_id_parent_task_id_number", table_name="tasks")
    op.create_index("ix_tasks_project_id_parent_task_id", "tasks", ["project_id", "parent_task_id"])
