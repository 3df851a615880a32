"""The wire forms of artifacts, their revisions and files, as every door answers them."""

from __future__ import annotations

from typing import Any

from crewboard.domain.artifacts import Artifact, ArtifactFile, ArtifactRevision, oldest_kept
from crewboard.domain.files import FileKind
from crewboard.services.views import iso


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
