"""Artifacts in words: the one place that turns the typed results of `services/artifacts`
(records of `domain/artifacts`) into the camelCase answers every door gives (MCP, REST, the
CLI's JSON and the web pages), and fits an artifact's list of revisions to the answer budget.

A door runs the use case and words its result with these views, so a use case answers alike
on every door; the keyed writes hand their wording (`written_view`) to the service, which
keeps it in the idempotency ledger for a retry.
"""

from __future__ import annotations

from typing import Any

from crewboard.contract.reply import RESPONSE_BUDGET, compact, fit_rows
from crewboard.domain.artifacts import (
    Artifact,
    ArtifactFile,
    ArtifactPage,
    ArtifactRevision,
    ArtifactShown,
    ArtifactWritten,
    FileLines,
    oldest_kept,
)
from crewboard.domain.files import FileKind
from crewboard.services.paging import next_offset
from crewboard.services.views import iso

# --- views ---------------------------------------------------------------------------------


def checksum(digest: str) -> str:
    return f"sha256:{digest}"


def artifact_view(item: Artifact) -> dict[str, Any]:
    return {
        "id": item.id,
        "projectId": item.project_id,
        "slug": item.slug,
        "title": item.title,
        "description": item.description,
        "revisionCount": item.revision_count,
        "oldestKeptRevision": oldest_kept(item.revision_count),
        "createdBy": item.created_by,
        "createdAt": iso(item.created_at),
        "updatedBy": item.updated_by,
        "updatedAt": iso(item.updated_at),
    }


def revision_view(revision: ArtifactRevision) -> dict[str, Any]:
    return {
        "revision": revision.revision,
        "kind": revision.kind.value,
        "baseRevision": revision.base_revision,
        "fileCount": revision.file_count,
        "size": revision.total_size,
        "savedBy": revision.author,
        "savedAt": iso(revision.created_at),
    }


def file_view(item: ArtifactFile) -> dict[str, Any]:
    return {
        "path": item.path,
        "type": item.media_type,
        "kind": item.kind.value,
        "size": item.size,
        "checksum": checksum(item.digest),
        "totalLines": item.lines.total_lines if item.kind is FileKind.TEXT else None,
    }


def page_view(page: ArtifactPage) -> dict[str, Any]:
    return {
        "artifacts": [artifact_view(i) for i in page.rows],
        "total": page.total,
        "nextOffset": next_offset(page.offset, len(page.rows), page.total),
    }


def shown_view(shown: ArtifactShown) -> dict[str, Any]:
    return {
        "artifact": artifact_view(shown.artifact),
        "revision": revision_view(shown.revision),
        "files": [file_view(f) for f in shown.files],
        "revisions": [revision_view(r) for r in shown.revisions],
    }


def fit_revisions(body: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """`shown_view`'s answer within the reply budget, and a note when it had to be cut.

    50 files at long paths and 50 revisions usually fit; when they do not, the revisions list
    is cut (the newest kept) and `revisionsTruncated` says so."""
    revisions = body["revisions"]
    rest = len(compact({**body, "revisions": []}).encode())
    kept = fit_rows(revisions, max(0, RESPONSE_BUDGET - rest - 512))
    if len(kept) == len(revisions):
        return body, None
    note = (
        f"The {len(kept)} newest revisions of {len(revisions)} are listed; pass revision "
        "to see an older one."
    )
    return {**body, "revisions": kept, "revisionsTruncated": True}, note


def lines_view(read: FileLines) -> dict[str, Any]:
    return {
        "artifact": artifact_view(read.artifact),
        "revision": read.revision,
        "file": file_view(read.file),
        "text": read.text,
        "offset": read.offset,
        "lines": read.lines,
        "totalLines": read.file.lines.total_lines,
        "truncated": read.truncated,
        "nextOffset": read.next_offset,
    }


def written_view(made: ArtifactWritten) -> dict[str, Any]:
    return {
        "artifact": artifact_view(made.artifact),
        "revision": revision_view(made.revision),
        "files": [file_view(f) for f in made.files],
    }
