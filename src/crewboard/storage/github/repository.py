"""The github repository: settings, deliveries seen, mirrored issues, pull request states."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, bindparam, delete, insert, select, update

from crewboard.domain.github import DeliverySeen, GithubSettings, OnMerge, PullState
from crewboard.storage.github.tables import (
    github_deliveries,
    github_issues,
    github_pulls,
    github_settings,
)
from crewboard.storage.rows import record_from_row, record_values

KEEP_DELIVERIES = 1000  # the newest kept per project
_s = github_settings.c
_d = github_deliveries.c
_i = github_issues.c
_p = github_pulls.c
_SETTINGS = select(github_settings).where(_s.project_id == bindparam("project_id"))
_DELIVERY = select(github_deliveries).where(_d.delivery_id == bindparam("delivery_id"))
_RECENT = (
    select(github_deliveries)
    .where(_d.project_id == bindparam("project_id"))
    .order_by(_d.received_at.desc(), _d.delivery_id.desc())
    .limit(bindparam("limit"))
)
_PULL = select(github_pulls).where(_p.link_id == bindparam("link_id"))
_ISSUE_TASK = select(_i.task_id).where(
    _i.repo_id == bindparam("repo_id"), _i.issue_number == bindparam("issue_number")
)


class GithubRepository:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    # --- settings -------------------------------------------------------------------------

    def settings(self, project_id: str) -> GithubSettings | None:
        row = self.conn.execute(_SETTINGS, {"project_id": project_id}).first()
        if row is None:
            return None
        return record_from_row(GithubSettings, row, on_merge=OnMerge(row.on_merge))

    def save_settings(self, settings: GithubSettings) -> None:
        values = record_values(settings, github_settings, on_merge=settings.on_merge.value)
        done = self.conn.execute(
            update(github_settings).where(_s.project_id == settings.project_id).values(values)
        )
        if done.rowcount == 0:
            self.conn.execute(insert(github_settings).values(values))

    def remove_settings(self, project_id: str) -> bool:
        done = self.conn.execute(delete(github_settings).where(_s.project_id == project_id))
        return bool(done.rowcount)

    # --- deliveries ------------------------------------------------------------------------

    def delivery(self, delivery_id: str) -> DeliverySeen | None:
        row = self.conn.execute(_DELIVERY, {"delivery_id": delivery_id}).first()
        return record_from_row(DeliverySeen, row) if row else None

    def add_delivery(self, seen: DeliverySeen) -> None:
        """Keep the delivery and drop the project's older ones past the newest 1,000."""
        self.conn.execute(insert(github_deliveries).values(record_values(seen, github_deliveries)))
        cutoff = (
            select(_d.received_at)
            .where(_d.project_id == seen.project_id)
            .order_by(_d.received_at.desc())
            .offset(KEEP_DELIVERIES)
            .limit(1)
            .scalar_subquery()
        )
        self.conn.execute(
            delete(github_deliveries).where(
                _d.project_id == seen.project_id, _d.received_at <= cutoff
            )
        )

    def recent_deliveries(self, project_id: str, limit: int) -> list[DeliverySeen]:
        rows = self.conn.execute(_RECENT, {"project_id": project_id, "limit": limit})
        return [record_from_row(DeliverySeen, row) for row in rows]

    # --- issues ----------------------------------------------------------------------------

    def issue_task(self, repo_id: str, number: int) -> str | None:
        found = self.conn.execute(_ISSUE_TASK, {"repo_id": repo_id, "issue_number": number})
        return found.scalar_one_or_none()

    def add_issue(self, project_id: str, repo_id: str, number: int, task_id: str) -> None:
        self.conn.execute(
            insert(github_issues).values(
                project_id=project_id, repo_id=repo_id, issue_number=number, task_id=task_id
            )
        )

    # --- pull requests ---------------------------------------------------------------------

    def pull(self, link_id: str) -> PullState | None:
        row = self.conn.execute(_PULL, {"link_id": link_id}).first()
        return record_from_row(PullState, row) if row else None

    def save_pull(self, state: PullState) -> None:
        values: dict[str, Any] = record_values(state, github_pulls)
        done = self.conn.execute(
            update(github_pulls).where(_p.link_id == state.link_id).values(values)
        )
        if done.rowcount == 0:
            self.conn.execute(insert(github_pulls).values(values))
