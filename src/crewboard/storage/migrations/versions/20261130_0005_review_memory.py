"""review inbox and project memory: drafts, receipts, memory records and documents,
proposals, acceptance rules, inbox messages; events name their task and token

Revision ID: 0005_review_memory
Revises: 0004_task_indexes
Create Date: 2026-11-30
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005_review_memory"
down_revision: str | None = "0004_task_indexes"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "acceptance_rules",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("project_id", sa.String(length=32), nullable=False),
        sa.Column("match", sa.String(length=12), nullable=False),
        sa.Column("value", sa.String(length=200), nullable=True),
        sa.Column("collection", sa.String(length=200), nullable=True),
        sa.Column("document", sa.String(length=16), nullable=True),
        sa.Column("created_by", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "match IN ('all', 'task_type', 'ai_role')", name=op.f("ck_acceptance_rules_match")
        ),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_acceptance_rules_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_acceptance_rules")),
    )
    op.create_index(
        "ix_acceptance_rules_project_id", "acceptance_rules", ["project_id"], unique=False
    )
    op.create_table(
        "context_receipts",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("project_id", sa.String(length=32), nullable=False),
        sa.Column("task_id", sa.String(length=32), nullable=False),
        sa.Column("token_id", sa.String(length=32), nullable=False),
        sa.Column("items", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_context_receipts_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_context_receipts")),
    )
    op.create_index(
        "ix_context_receipts_project_id_created_at",
        "context_receipts",
        ["project_id", "created_at"],
        unique=False,
    )
    op.create_table(
        "memory_records",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("project_id", sa.String(length=32), nullable=False),
        sa.Column("title", sa.String(length=300), nullable=False),
        sa.Column("summary", sa.Text(), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("collection", sa.String(length=200), nullable=True),
        sa.Column("document", sa.String(length=16), nullable=True),
        sa.Column("status", sa.String(length=8), nullable=False),
        sa.Column("source_draft_id", sa.String(length=32), nullable=True),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("created_by", sa.JSON(), nullable=False),
        sa.Column("updated_by", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "status IN ('approved', 'canon')", name=op.f("ck_memory_records_status")
        ),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_memory_records_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_memory_records")),
    )
    op.create_index(
        "ix_memory_records_project_id_collection",
        "memory_records",
        ["project_id", "collection"],
        unique=False,
    )
    op.create_index(
        "ix_memory_records_project_id_document",
        "memory_records",
        ["project_id", "document"],
        unique=False,
    )
    op.create_index(
        "ix_memory_records_project_id_updated_at",
        "memory_records",
        ["project_id", "updated_at"],
        unique=False,
    )
    op.create_table(
        "project_document_versions",
        sa.Column("project_id", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=16), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("author", sa.JSON(), nullable=False),
        sa.Column("source_draft_id", sa.String(length=32), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_project_document_versions_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint(
            "project_id", "name", "version", name=op.f("pk_project_document_versions")
        ),
    )
    op.create_table(
        "project_documents",
        sa.Column("project_id", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=16), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("updated_by", sa.JSON(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "name IN ('overview', 'context', 'decisions', 'notes', 'legal')",
            name=op.f("ck_project_documents_name"),
        ),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_project_documents_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("project_id", "name", name=op.f("pk_project_documents")),
    )
    op.create_table(
        "proposals",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("project_id", sa.String(length=32), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("task_id", sa.String(length=32), nullable=True),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("status", sa.String(length=12), nullable=False),
        sa.Column("author", sa.JSON(), nullable=False),
        sa.Column("token_id", sa.String(length=32), nullable=True),
        sa.Column("result", sa.JSON(), nullable=True),
        sa.Column("decided_by", sa.JSON(), nullable=True),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "kind IN ('task', 'task_update', 'task_delete', 'role', 'composition')",
            name=op.f("ck_proposals_kind"),
        ),
        sa.CheckConstraint(
            "status IN ('pending', 'accepted', 'dismissed')", name=op.f("ck_proposals_status")
        ),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_proposals_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_proposals")),
    )
    op.create_index(
        "ix_proposals_project_id_status_created_at",
        "proposals",
        ["project_id", "status", "created_at"],
        unique=False,
    )
    op.create_table(
        "drafts",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("project_id", sa.String(length=32), nullable=False),
        sa.Column("task_id", sa.String(length=32), nullable=True),
        sa.Column("root_task_id", sa.String(length=32), nullable=False),
        sa.Column("title", sa.String(length=300), nullable=False),
        sa.Column("summary", sa.Text(), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("collection", sa.String(length=200), nullable=True),
        sa.Column("document", sa.String(length=16), nullable=True),
        sa.Column("references", sa.JSON(), nullable=False),
        sa.Column("context_receipt_id", sa.String(length=32), nullable=True),
        sa.Column("status", sa.String(length=24), nullable=False),
        sa.Column("via", sa.String(length=8), nullable=False),
        sa.Column("author", sa.JSON(), nullable=False),
        sa.Column("token_id", sa.String(length=32), nullable=True),
        sa.Column("role_id", sa.String(length=32), nullable=True),
        sa.Column("idempotency_key", sa.String(length=128), nullable=True),
        sa.Column("task_moved", sa.Boolean(), nullable=False),
        sa.Column("task_status_before", sa.String(length=16), nullable=True),
        sa.Column("follow_up_task_id", sa.String(length=32), nullable=True),
        sa.Column("review_comment", sa.Text(), nullable=True),
        sa.Column("memory_record_id", sa.String(length=32), nullable=True),
        sa.Column("rule_id", sa.String(length=32), nullable=True),
        sa.Column("decided_by", sa.JSON(), nullable=True),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "status IN ('pending', 'revision_requested', 'approved', 'rejected', 'saved_to_memory', 'accepted_by_rule', 'returned_to_review', 'superseded')",
            name=op.f("ck_drafts_status"),
        ),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_drafts_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["task_id"], ["tasks.id"], name=op.f("fk_drafts_task_id_tasks"), ondelete="SET NULL"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_drafts")),
    )
    op.create_index(
        "ix_drafts_project_id_status_created_at",
        "drafts",
        ["project_id", "status", "created_at"],
        unique=False,
    )
    op.create_index("ix_drafts_root_task_id", "drafts", ["root_task_id"], unique=False)
    op.create_index("ix_drafts_task_id", "drafts", ["task_id"], unique=False)
    op.create_index("ix_drafts_context_receipt_id", "drafts", ["context_receipt_id"], unique=False)
    op.create_table(
        "inbox_messages",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("project_id", sa.String(length=32), nullable=False),
        sa.Column("participant_id", sa.String(length=32), nullable=False),
        sa.Column("task_id", sa.String(length=32), nullable=True),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("author", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_inbox_messages_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["task_id"],
            ["tasks.id"],
            name=op.f("fk_inbox_messages_task_id_tasks"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_inbox_messages")),
    )
    op.create_index(
        "ix_inbox_messages_project_id_created_at",
        "inbox_messages",
        ["project_id", "created_at"],
        unique=False,
    )
    op.create_index(
        "ix_inbox_messages_project_id_participant_id_created_at",
        "inbox_messages",
        ["project_id", "participant_id", "created_at"],
        unique=False,
    )
    op.create_table(
        "memory_record_versions",
        sa.Column("record_id", sa.String(length=32), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.String(length=32), nullable=False),
        sa.Column("title", sa.String(length=300), nullable=False),
        sa.Column("summary", sa.Text(), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("collection", sa.String(length=200), nullable=True),
        sa.Column("document", sa.String(length=16), nullable=True),
        sa.Column("status", sa.String(length=8), nullable=False),
        sa.Column("author", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["record_id"],
            ["memory_records.id"],
            name=op.f("fk_memory_record_versions_record_id_memory_records"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("record_id", "version", name=op.f("pk_memory_record_versions")),
    )
    op.add_column("events", sa.Column("task_id", sa.String(length=32), nullable=True))
    op.add_column("events", sa.Column("token_id", sa.String(length=32), nullable=True))
    op.create_index(
        "ix_events_project_id_task_id_id", "events", ["project_id", "task_id", "id"], unique=False
    )
    op.create_index(
        "ix_events_project_id_token_id_id", "events", ["project_id", "token_id", "id"], unique=False
    )
    _create_search_index()


def downgrade() -> None:
    _drop_search_index()
    op.drop_index("ix_events_project_id_token_id_id", table_name="events")
    op.drop_index("ix_events_project_id_task_id_id", table_name="events")
    op.drop_column("events", "token_id")
    op.drop_column("events", "task_id")
    op.drop_table("memory_record_versions")
    op.drop_index(
        "ix_inbox_messages_project_id_participant_id_created_at", table_name="inbox_messages"
    )
    op.drop_index("ix_inbox_messages_project_id_created_at", table_name="inbox_messages")
    op.drop_table("inbox_messages")
    op.drop_index("ix_drafts_context_receipt_id", table_name="drafts")
    op.drop_index("ix_drafts_task_id", table_name="drafts")
    op.drop_index("ix_drafts_root_task_id", table_name="drafts")
    op.drop_index("ix_drafts_project_id_status_created_at", table_name="drafts")
    op.drop_table("drafts")
    op.drop_index("ix_proposals_project_id_status_created_at", table_name="proposals")
    op.drop_table("proposals")
    op.drop_table("project_documents")
    op.drop_table("project_document_versions")
    op.drop_index("ix_memory_records_project_id_updated_at", table_name="memory_records")
    op.drop_index("ix_memory_records_project_id_document", table_name="memory_records")
    op.drop_index("ix_memory_records_project_id_collection", table_name="memory_records")
    op.drop_table("memory_records")
    op.drop_index("ix_context_receipts_project_id_created_at", table_name="context_receipts")
    op.drop_table("context_receipts")
    op.drop_index("ix_acceptance_rules_project_id", table_name="acceptance_rules")
    op.drop_table("acceptance_rules")


# The text index behind context packs: the records whose title, summary or content share words
# with a task. SQLite: an FTS5 table over `memory_records` kept in step by triggers (ranked by
# bm25). PostgreSQL: a GIN index on the 'simple' tsvector of the same text (ranked by ts_rank).
_SQLITE_SEARCH = [
    # project_id is indexed too: a match names its project, so FTS5 ranks only that
    # project's records instead of every project's before a join throws most away.
    """CREATE VIRTUAL TABLE memory_fts USING fts5(
        project_id, title, summary, content, content='memory_records', content_rowid='rowid',
        tokenize='unicode61 remove_diacritics 2')""",
    """CREATE TRIGGER memory_fts_insert AFTER INSERT ON memory_records BEGIN
        INSERT INTO memory_fts(rowid, project_id, title, summary, content)
        VALUES (new.rowid, new.project_id, new.title, new.summary, new.content);
    END""",
    """CREATE TRIGGER memory_fts_delete AFTER DELETE ON memory_records BEGIN
        INSERT INTO memory_fts(memory_fts, rowid, project_id, title, summary, content)
        VALUES ('delete', old.rowid, old.project_id, old.title, old.summary, old.content);
    END""",
    """CREATE TRIGGER memory_fts_update AFTER UPDATE OF title, summary, content ON memory_records
    BEGIN
        INSERT INTO memory_fts(memory_fts, rowid, project_id, title, summary, content)
        VALUES ('delete', old.rowid, old.project_id, old.title, old.summary, old.content);
        INSERT INTO memory_fts(rowid, project_id, title, summary, content)
        VALUES (new.rowid, new.project_id, new.title, new.summary, new.content);
    END""",
]
_POSTGRES_SEARCH = [
    """CREATE INDEX ix_memory_records_search ON memory_records USING gin (
        to_tsvector('simple', title || ' ' || summary || ' ' || content))""",
]


def _create_search_index() -> None:
    dialect = op.get_bind().dialect.name
    for statement in _SQLITE_SEARCH if dialect == "sqlite" else _POSTGRES_SEARCH:
        op.execute(statement)


def _drop_search_index() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for name in ("memory_fts_insert", "memory_fts_delete", "memory_fts_update"):
            op.execute(f"DROP TRIGGER IF EXISTS {name}")
        op.execute("DROP TABLE IF EXISTS memory_fts")
    else:
        op.execute("DROP INDEX IF EXISTS ix_memory_records_search")
