"""task board

Revision ID: 0003_task_board
Revises: 0002_state_team
Create Date: 2026-11-30
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003_task_board"
down_revision: str | None = "0002_state_team"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "repos",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("project_id", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("url", sa.String(length=500), nullable=False),
        sa.Column("default_branch", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_repos_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_repos")),
        sa.UniqueConstraint("project_id", "name", name="uq_repos_project_id_name"),
    )
    op.create_table(
        "tasks",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("project_id", sa.String(length=32), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("title", sa.String(length=300), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("brief", sa.Text(), nullable=False),
        sa.Column("type", sa.String(length=16), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("priority", sa.String(length=8), nullable=False),
        sa.Column("assignee_id", sa.String(length=32), nullable=True),
        sa.Column("assignee_type", sa.String(length=8), nullable=True),
        sa.Column("human_owner_id", sa.String(length=32), nullable=True),
        sa.Column("tags", sa.JSON(), nullable=False),
        sa.Column("labels", sa.JSON(), nullable=False),
        sa.Column("due_date", sa.Date(), nullable=True),
        sa.Column("start_date", sa.Date(), nullable=True),
        sa.Column("story_points", sa.Integer(), nullable=True),
        sa.Column("cycle", sa.String(length=64), nullable=True),
        sa.Column("parent_task_id", sa.String(length=32), nullable=True),
        sa.Column("context_refs", sa.JSON(), nullable=False),
        sa.Column("context_item_ids", sa.JSON(), nullable=False),
        sa.Column("external_reference_ids", sa.JSON(), nullable=False),
        sa.Column("output_destination", sa.String(length=200), nullable=True),
        sa.Column("board_order", sa.Float(), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("coverage", sa.String(length=12), nullable=False),
        sa.Column("created_by", sa.JSON(), nullable=False),
        sa.Column("updated_by", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "assignee_type IS NULL OR assignee_type IN ('ai', 'human')",
            name=op.f("ck_tasks_assignee_type"),
        ),
        sa.CheckConstraint(
            "status IN ('backlog', 'ready_for_ai', 'in_progress', 'blocked', 'review', 'approved', 'done')",
            name=op.f("ck_tasks_status"),
        ),
        sa.ForeignKeyConstraint(
            ["human_owner_id"],
            ["users.id"],
            name=op.f("fk_tasks_human_owner_id_users"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["parent_task_id"],
            ["tasks.id"],
            name=op.f("fk_tasks_parent_task_id_tasks"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_tasks_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tasks")),
        sa.UniqueConstraint("project_id", "number", name="uq_tasks_project_id_number"),
    )
    with op.batch_alter_table("tasks", schema=None) as batch_op:
        batch_op.create_index(
            "ix_tasks_project_id_assignee_id", ["project_id", "assignee_id"], unique=False
        )
        batch_op.create_index(
            "ix_tasks_project_id_due_date", ["project_id", "due_date"], unique=False
        )
        batch_op.create_index(
            "ix_tasks_project_id_parent_task_id", ["project_id", "parent_task_id"], unique=False
        )
        batch_op.create_index(
            "ix_tasks_project_id_status_number", ["project_id", "status", "number"], unique=False
        )
        batch_op.create_index(
            "ix_tasks_project_id_updated_at", ["project_id", "updated_at"], unique=False
        )

    op.create_table(
        "task_comments",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("project_id", sa.String(length=32), nullable=False),
        sa.Column("task_id", sa.String(length=32), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("author", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "kind IN ('comment', 'agent_update')", name=op.f("ck_task_comments_kind")
        ),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_task_comments_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["task_id"],
            ["tasks.id"],
            name=op.f("fk_task_comments_task_id_tasks"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_task_comments")),
    )
    with op.batch_alter_table("task_comments", schema=None) as batch_op:
        batch_op.create_index(
            "ix_task_comments_task_id_created_at", ["task_id", "created_at"], unique=False
        )

    op.create_table(
        "task_events",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("project_id", sa.String(length=32), nullable=False),
        sa.Column("task_id", sa.String(length=32), nullable=False),
        sa.Column("type", sa.String(length=24), nullable=False),
        sa.Column("occurred_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("actor", sa.JSON(), nullable=False),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("agent_assignee_id", sa.String(length=32), nullable=True),
        sa.Column("human_assignee_id", sa.String(length=32), nullable=True),
        sa.CheckConstraint(
            "type IN ('assignment_changed', 'status_changed', 'blocker_changed')",
            name=op.f("ck_task_events_type"),
        ),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_task_events_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["task_id"], ["tasks.id"], name=op.f("fk_task_events_task_id_tasks"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_task_events")),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("task_events", schema=None) as batch_op:
        batch_op.create_index(
            "ix_task_events_agent_assignee_id", ["agent_assignee_id", "occurred_at"], unique=False
        )
        batch_op.create_index(
            "ix_task_events_human_assignee_id", ["human_assignee_id", "occurred_at"], unique=False
        )
        batch_op.create_index(
            "ix_task_events_project_id_occurred_at", ["project_id", "occurred_at"], unique=False
        )
        batch_op.create_index("ix_task_events_task_id_id", ["task_id", "id"], unique=False)

    op.create_table(
        "task_labels",
        sa.Column("task_id", sa.String(length=32), nullable=False),
        sa.Column("kind", sa.String(length=8), nullable=False),
        sa.Column("value", sa.String(length=64), nullable=False),
        sa.Column("project_id", sa.String(length=32), nullable=False),
        sa.CheckConstraint("kind IN ('tag', 'label')", name=op.f("ck_task_labels_kind")),
        sa.ForeignKeyConstraint(
            ["task_id"], ["tasks.id"], name=op.f("fk_task_labels_task_id_tasks"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("task_id", "kind", "value", name=op.f("pk_task_labels")),
    )
    with op.batch_alter_table("task_labels", schema=None) as batch_op:
        batch_op.create_index(
            "ix_task_labels_project_id_kind_value", ["project_id", "kind", "value"], unique=False
        )

    op.create_table(
        "task_links",
        sa.Column("low_id", sa.String(length=32), nullable=False),
        sa.Column("high_id", sa.String(length=32), nullable=False),
        sa.Column("project_id", sa.String(length=32), nullable=False),
        sa.Column("type", sa.String(length=8), nullable=False),
        sa.Column("blocker_id", sa.String(length=32), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("type IN ('blocks', 'related')", name=op.f("ck_task_links_type")),
        sa.ForeignKeyConstraint(
            ["high_id"], ["tasks.id"], name=op.f("fk_task_links_high_id_tasks"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["low_id"], ["tasks.id"], name=op.f("fk_task_links_low_id_tasks"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("low_id", "high_id", name=op.f("pk_task_links")),
    )
    with op.batch_alter_table("task_links", schema=None) as batch_op:
        batch_op.create_index("ix_task_links_high_id", ["high_id"], unique=False)

    op.create_table(
        "task_outputs",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("project_id", sa.String(length=32), nullable=False),
        sa.Column("task_id", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("author", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_task_outputs_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["task_id"],
            ["tasks.id"],
            name=op.f("fk_task_outputs_task_id_tasks"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_task_outputs")),
    )
    with op.batch_alter_table("task_outputs", schema=None) as batch_op:
        batch_op.create_index(
            "ix_task_outputs_task_id_created_at", ["task_id", "created_at"], unique=False
        )

    op.create_table(
        "task_questions",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("project_id", sa.String(length=32), nullable=False),
        sa.Column("task_id", sa.String(length=32), nullable=False),
        sa.Column("question", sa.Text(), nullable=False),
        sa.Column("asked_by", sa.JSON(), nullable=False),
        sa.Column("asked_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("answer", sa.Text(), nullable=True),
        sa.Column("answered_by", sa.JSON(), nullable=True),
        sa.Column("answered_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_task_questions_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["task_id"],
            ["tasks.id"],
            name=op.f("fk_task_questions_task_id_tasks"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_task_questions")),
    )
    with op.batch_alter_table("task_questions", schema=None) as batch_op:
        batch_op.create_index(
            "ix_task_questions_project_id_answered_at", ["project_id", "answered_at"], unique=False
        )
        batch_op.create_index("ix_task_questions_task_id", ["task_id"], unique=False)

    op.create_table(
        "task_repo_links",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("project_id", sa.String(length=32), nullable=False),
        sa.Column("task_id", sa.String(length=32), nullable=False),
        sa.Column("repo_id", sa.String(length=32), nullable=False),
        sa.Column("agent", sa.String(length=32), nullable=False),
        sa.Column("branch", sa.String(length=200), nullable=False),
        sa.Column("target_branch", sa.String(length=200), nullable=True),
        sa.Column("title", sa.String(length=300), nullable=True),
        sa.Column("summary", sa.Text(), nullable=True),
        sa.Column("pr_url", sa.String(length=500), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_task_repo_links_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["repo_id"],
            ["repos.id"],
            name=op.f("fk_task_repo_links_repo_id_repos"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["task_id"],
            ["tasks.id"],
            name=op.f("fk_task_repo_links_task_id_tasks"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_task_repo_links")),
        sa.UniqueConstraint(
            "task_id", "repo_id", "agent", "branch", name="uq_task_repo_links_identity"
        ),
    )
    op.create_table(
        "task_repo_reports",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("project_id", sa.String(length=32), nullable=False),
        sa.Column("task_id", sa.String(length=32), nullable=False),
        sa.Column("repo_id", sa.String(length=32), nullable=True),
        sa.Column("branch", sa.String(length=200), nullable=True),
        sa.Column("commit_sha", sa.String(length=64), nullable=True),
        sa.Column("tests", sa.String(length=16), nullable=True),
        sa.Column("summary", sa.Text(), nullable=True),
        sa.Column("reported_by", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_task_repo_reports_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["repo_id"],
            ["repos.id"],
            name=op.f("fk_task_repo_reports_repo_id_repos"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["task_id"],
            ["tasks.id"],
            name=op.f("fk_task_repo_reports_task_id_tasks"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_task_repo_reports")),
    )
    with op.batch_alter_table("task_repo_reports", schema=None) as batch_op:
        batch_op.create_index(
            "ix_task_repo_reports_task_id_created_at", ["task_id", "created_at"], unique=False
        )

    _create_search_index()


def downgrade() -> None:
    _drop_search_index()
    with op.batch_alter_table("task_repo_reports", schema=None) as batch_op:
        batch_op.drop_index("ix_task_repo_reports_task_id_created_at")

    op.drop_table("task_repo_reports")
    op.drop_table("task_repo_links")
    with op.batch_alter_table("task_questions", schema=None) as batch_op:
        batch_op.drop_index("ix_task_questions_task_id")
        batch_op.drop_index("ix_task_questions_project_id_answered_at")

    op.drop_table("task_questions")
    with op.batch_alter_table("task_outputs", schema=None) as batch_op:
        batch_op.drop_index("ix_task_outputs_task_id_created_at")

    op.drop_table("task_outputs")
    with op.batch_alter_table("task_links", schema=None) as batch_op:
        batch_op.drop_index("ix_task_links_high_id")

    op.drop_table("task_links")
    with op.batch_alter_table("task_labels", schema=None) as batch_op:
        batch_op.drop_index("ix_task_labels_project_id_kind_value")

    op.drop_table("task_labels")
    with op.batch_alter_table("task_events", schema=None) as batch_op:
        batch_op.drop_index("ix_task_events_task_id_id")
        batch_op.drop_index("ix_task_events_project_id_occurred_at")
        batch_op.drop_index("ix_task_events_human_assignee_id")
        batch_op.drop_index("ix_task_events_agent_assignee_id")

    op.drop_table("task_events")
    with op.batch_alter_table("task_comments", schema=None) as batch_op:
        batch_op.drop_index("ix_task_comments_task_id_created_at")

    op.drop_table("task_comments")
    with op.batch_alter_table("tasks", schema=None) as batch_op:
        batch_op.drop_index("ix_tasks_project_id_updated_at")
        batch_op.drop_index("ix_tasks_project_id_status_number")
        batch_op.drop_index("ix_tasks_project_id_parent_task_id")
        batch_op.drop_index("ix_tasks_project_id_due_date")
        batch_op.drop_index("ix_tasks_project_id_assignee_id")

    op.drop_table("tasks")
    op.drop_table("repos")


# The text index behind list_tasks `q`: every word of the query must appear in the title, brief
# or description, in any order, case-insensitive. SQLite: an FTS5 table over `tasks` kept in step
# by triggers. PostgreSQL: a GIN index on the 'simple' (no stemming) tsvector of the same text.
_SQLITE_SEARCH = [
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
]
_POSTGRES_SEARCH = [
    """CREATE INDEX ix_tasks_search ON tasks USING gin (
        to_tsvector('simple', title || ' ' || brief || ' ' || description))""",
]


def _create_search_index() -> None:
    dialect = op.get_bind().dialect.name
    for statement in _SQLITE_SEARCH if dialect == "sqlite" else _POSTGRES_SEARCH:
        op.execute(statement)


def _drop_search_index() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for name in ("tasks_fts_insert", "tasks_fts_delete", "tasks_fts_update"):
            op.execute(f"DROP TRIGGER IF EXISTS {name}")
        op.execute("DROP TABLE IF EXISTS tasks_fts")
    else:
        op.execute("DROP INDEX IF EXISTS ix_tasks_search")
