"""Every table, gathered: importing this module puts the whole schema on `metadata`.

The migrations' environment and the schema-equals-tables test read `metadata` from here. Each
area owns its tables (`storage/<area>/tables.py`); the shared ones are in `storage/schema.py`.
"""

from __future__ import annotations

from crewboard.storage import blob_tables, search_texts
from crewboard.storage.artifacts import tables as artifacts
from crewboard.storage.board import claim_tables, view_tables
from crewboard.storage.board import tables as board
from crewboard.storage.github import tables as github
from crewboard.storage.handoffs import tables as handoffs
from crewboard.storage.identity import tables as identity
from crewboard.storage.memory import tables as memory
from crewboard.storage.notifications import tables as notifications
from crewboard.storage.oauth import tables as oauth
from crewboard.storage.projects import tables as projects
from crewboard.storage.review import tables as review
from crewboard.storage.schema import metadata
from crewboard.storage.sessions import tables as sessions
from crewboard.storage.specs import tables as specs
from crewboard.storage.webhooks import tables as webhooks

AREAS = (
    identity,
    projects,
    board,
    memory,
    review,
    specs,
    artifacts,
    handoffs,
    notifications,
    oauth,
    sessions,
    webhooks,
    github,
)

__all__ = ["AREAS", "blob_tables", "claim_tables", "metadata", "search_texts", "view_tables"]
