"""Artifact tools: list, details with one revision's files, read a text file in line windows,
create, write a revision (whole or a delta), roll back by adding a revision."""

from __future__ import annotations

import base64
import binascii
from typing import Any

from pydantic import Field

from crewboard.contract.args import Args, IdempotencyKey, Offset, ProjectRef, WorkspaceId
from crewboard.contract.artifacts import present
from crewboard.contract.operation import Area, Call, Cli, Rest, keyed
from crewboard.contract.reply import WINDOW_ROOM, Reply, paged_reply, window_note
from crewboard.domain.artifacts import (
    KEPT_REVISIONS,
    MAX_DESCRIPTION,
    MAX_FILE_BYTES,
    MAX_FILES,
    MAX_SLUG,
    MAX_TITLE,
)
from crewboard.domain.files import MAX_PATH, MAX_WINDOW_LINES
from crewboard.domain.identity.access import Scope, Toolset
from crewboard.errors import ValidationFailed
from crewboard.services.artifacts import artifacts
from crewboard.services.artifacts.artifacts import FileInput
from crewboard.services.idempotency import KeyedResult

# Characters of the largest file as base64: four for every three bytes, padded.
MAX_FILE_BASE64 = -(-MAX_FILE_BYTES // 3) * 4
ArtifactRef = Field(min_length=1, max_length=200, description="The artifact's id or slug.")
Revision = Field(
    default=None, ge=1, le=2**31 - 1, description="A kept revision; the newest if left out."
)


class ListArtifacts(Args):
    project_id: ProjectRef
    workspace_id: WorkspaceId = None
    limit: int = Field(default=artifacts.DEFAULT_PAGE, ge=1, le=artifacts.MAX_PAGE)
    offset: Offset = 0


class GetArtifact(Args):
    project_id: ProjectRef
    workspace_id: WorkspaceId = None
    artifact_id: str = ArtifactRef
    revision: int | None = Revision


class ReadArtifactFile(GetArtifact):
    path: str = Field(min_length=1, max_length=MAX_PATH, description="The file's path.")
    offset: int = Field(default=1, ge=1, le=2**31 - 1, description="First line, from 1.")
    limit: int = Field(default=MAX_WINDOW_LINES, ge=1, le=MAX_WINDOW_LINES)


class ArtifactFileIn(Args):
    path: str = Field(
        min_length=1, max_length=MAX_PATH, description="Where it sits, e.g. css/site.css."
    )
    content: str | None = Field(
        default=None, max_length=MAX_FILE_BYTES, description="The whole text (UTF-8)."
    )
    content_base64: str | None = Field(
        default=None,
        max_length=MAX_FILE_BASE64,
        description="Or the bytes as base64 (images, fonts); at most 2 MiB a file.",
    )

    def data(self, field: str) -> bytes:
        """The bytes, from the one source given.

        Raises:
            ValidationFailed: none or both, or bad base64.
        """
        if (self.content is None) == (self.content_base64 is None):
            raise ValidationFailed.field(
                f"{field}.content", "give exactly one of content (text) or contentBase64 (bytes)."
            )
        if self.content is not None:
            return self.content.encode("utf-8")
        try:
            return base64.b64decode(self.content_base64 or "", validate=True)
        except (binascii.Error, ValueError):
            raise ValidationFailed.field(
                f"{field}.contentBase64", "is not valid base64 (standard alphabet, with padding)."
            ) from None


def inputs(files: list[ArtifactFileIn]) -> list[FileInput]:
    return [FileInput(f.path, f.data(f"files[{i}]")) for i, f in enumerate(files)]


class CreateArtifact(Args):
    project_id: ProjectRef
    workspace_id: WorkspaceId = None
    slug: str = Field(
        min_length=1,
        max_length=MAX_SLUG,
        description="Unique in the project: lowercase letters, digits, hyphens (login-mockup).",
    )
    title: str | None = Field(
        default=None, max_length=MAX_TITLE, description="Defaults to the slug."
    )
    description: str | None = Field(default=None, max_length=MAX_DESCRIPTION)
    files: list[ArtifactFileIn] = Field(min_length=1, max_length=MAX_FILES)
    idempotency_key: IdempotencyKey = None


class WriteArtifactRevision(Args):
    project_id: ProjectRef
    workspace_id: WorkspaceId = None
    artifact_id: str = ArtifactRef
    files: list[ArtifactFileIn] = Field(
        default_factory=list,
        max_length=MAX_FILES,
        description="Without baseRevision: every file of the new revision. With it: the files "
        "that change or are added.",
    )
    remove: list[str] = Field(
        default_factory=list,
        max_length=MAX_FILES,
        description="With baseRevision: paths of the base to leave out.",
    )
    base_revision: int | None = Field(
        default=None,
        ge=1,
        le=2**31 - 1,
        description="Send only the changes on this revision, the newest.",
    )
    merge_onto_current: bool = Field(
        default=False,
        description="With an older baseRevision: apply these files and removals onto the "
        "newest revision instead of being refused.",
    )
    expected_version: int = Field(
        ge=0, le=2**31 - 1, description="The revisionCount you read (get_artifact)."
    )
    idempotency_key: IdempotencyKey = None


class RollbackArtifact(Args):
    project_id: ProjectRef
    workspace_id: WorkspaceId = None
    artifact_id: str = ArtifactRef
    revision: int = Field(ge=1, le=2**31 - 1, description="The kept revision to bring back.")
    expected_version: int = Field(
        ge=0, le=2**31 - 1, description="The revisionCount you read (get_artifact)."
    )
    idempotency_key: IdempotencyKey = None


# A read's whole answer, which REST gives as it is; MCP and the CLI fit it to the budget.


def artifacts_page(call: Call, args: ListArtifacts) -> dict[str, Any]:
    found = artifacts.list_artifacts(
        call.db, call.actor, project=args.project_id, workspace_id=args.workspace_ref(),
        limit=args.limit, offset=args.offset,
    )  # fmt: skip
    return present.page_view(found)


def artifact_shown(call: Call, args: GetArtifact) -> dict[str, Any]:
    return present.shown_view(
        artifacts.get_artifact(
            call.db, call.actor, ref=args.artifact_id, revision=args.revision,
            project=args.project_id, workspace_id=args.workspace_ref(),
        )
    )  # fmt: skip


def artifact_lines(call: Call, args: ReadArtifactFile) -> dict[str, Any]:
    read = artifacts.read_artifact_file(
        call.db, call.actor, project=args.project_id, workspace_id=args.workspace_ref(),
        ref=args.artifact_id, path=args.path, revision=args.revision, offset=args.offset,
        limit=args.limit, room=WINDOW_ROOM,
    )  # fmt: skip
    return present.lines_view(read)


def list_artifacts(call: Call, args: ListArtifacts) -> Reply:
    return paged_reply(artifacts_page(call, args), "artifacts", args.offset)


def get_artifact(call: Call, args: GetArtifact) -> Reply:
    return Reply(*present.fit_revisions(artifact_shown(call, args)))


def read_artifact_file(call: Call, args: ReadArtifactFile) -> Reply:
    body = artifact_lines(call, args)
    return Reply(body, window_note(body))


def create_artifact(call: Call, args: CreateArtifact) -> KeyedResult:
    return artifacts.create_artifact(
        call.db, call.actor, project=args.project_id, workspace_id=args.workspace_ref(),
        slug=args.slug, title=args.title, description=args.description,
        files=inputs(args.files), idempotency_key=args.idempotency_key,
        answer=present.written_view,
    )  # fmt: skip


def write_artifact_revision(call: Call, args: WriteArtifactRevision) -> KeyedResult:
    return artifacts.write_artifact_revision(
        call.db, call.actor, project=args.project_id, workspace_id=args.workspace_ref(),
        ref=args.artifact_id, files=inputs(args.files), remove=args.remove,
        base_revision=args.base_revision, expected_version=args.expected_version,
        idempotency_key=args.idempotency_key, merge_onto_current=args.merge_onto_current,
        answer=present.written_view,
    )  # fmt: skip


def rollback_artifact(call: Call, args: RollbackArtifact) -> KeyedResult:
    return artifacts.rollback_artifact(
        call.db, call.actor, project=args.project_id, workspace_id=args.workspace_ref(),
        ref=args.artifact_id, revision=args.revision, expected_version=args.expected_version,
        idempotency_key=args.idempotency_key, answer=present.written_view,
    )  # fmt: skip


ARTIFACTS = Area(Toolset.ARTIFACTS, write_scopes=(Scope.SPECS_WRITE,))

OPERATIONS = (
    ARTIFACTS.read(
        "list_artifacts",
        "List artifacts",
        "A project's artifacts, most recently changed first, with revisionCount.",
        ListArtifacts,
        list_artifacts,
        Rest("GET", "/api/v1/projects/{project}/artifacts"),
        Cli(("artifact", "list")),
    ),
    ARTIFACTS.read(
        "get_artifact",
        "Artifact details",
        "An artifact and the files of its newest revision (or of revision): path, type, "
        "size, checksum; with the kept revisions. revisionCount is the expectedVersion a "
        "write names.",
        GetArtifact,
        get_artifact,
        Rest("GET", "/api/v1/projects/{project}/artifacts/{artifact}"),
        Cli(("artifact", "show")),
    ),
    ARTIFACTS.read(
        "read_artifact_file",
        "Read an artifact file",
        "One text file of an artifact in windows of lines (offset from 1, limit up to "
        "2,000; nextOffset for more). Binary files (images, fonts) cannot be read here.",
        ReadArtifactFile,
        read_artifact_file,
        Rest("GET", "/api/v1/projects/{project}/artifacts/{artifact}/lines"),
        Cli(("artifact", "read")),
    ),
    ARTIFACTS.write(
        "create_artifact",
        "Create an artifact",
        f"A new artifact from a set of files, as revision 1: at most {MAX_FILES} files, 2 MiB a "
        "file and 10 MiB in all; each file as content (text) or contentBase64 (bytes). The slug "
        "is unique in the project.",
        CreateArtifact,
        keyed(create_artifact),
        Rest.created("/api/v1/projects/{project}/artifacts"),
        Cli(("artifact", "create")),
    ),
    ARTIFACTS.write(
        "write_artifact_revision",
        "Write an artifact revision",
        "Add a revision. Without baseRevision the files sent are the whole artifact; with it "
        "(the newest revision), only the changed or added files, and remove lists paths to "
        "drop; an older baseRevision is refused unless mergeOntoCurrent. expectedVersion is "
        "the revisionCount you read: if someone wrote since, nothing is written.",
        WriteArtifactRevision,
        keyed(write_artifact_revision),
        Rest.created("/api/v1/projects/{project}/artifacts/{artifact}/revisions"),
        Cli(("artifact", "write")),
    ),
    ARTIFACTS.write(
        "rollback_artifact",
        "Roll an artifact back",
        f"Bring back an earlier revision's files by adding a new revision (history is never "
        f"rewritten). Only the {KEPT_REVISIONS} newest revisions are kept; an older one is not "
        "found.",
        RollbackArtifact,
        keyed(rollback_artifact),
        Rest.created("/api/v1/projects/{project}/artifacts/{artifact}/rollback"),
        Cli(("artifact", "rollback")),
    ),
)
