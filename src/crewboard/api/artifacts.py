"""REST for artifacts under /api/v1/projects/{project}/artifacts: list, create, details with
one revision's files, a text file in line windows, one file's bytes, a revision as a zip,
a new revision (whole or a delta) and a rollback.

A write names the revision count it read: `expectedVersion` in the body (409 when stale) or
`If-Match: "<revisionCount>"` (412). Files come as `content` (text) or `contentBase64`.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable
from typing import Any

from pydantic import Field
from starlette.requests import Request
from starlette.responses import Response

from crewboard.api.common import (
    IDEMPOTENCY_KEY,
    IF_MATCH_REVISION,
    OPTIONAL_WORKSPACE,
    Created,
    Endpoint,
    content_disposition,
    created,
    expected_revision,
    guard_precondition,
    keyed_body,
    model_without,
    parse_args,
    query_params,
    reads_headers,
    refuse_carried,
    run_service,
)
from crewboard.api.operations import endpoint_for, keyed_endpoint, read_endpoint, run_made
from crewboard.contract import args as a
from crewboard.contract.artifacts import artifacts as contract
from crewboard.contract.artifacts import present
from crewboard.contract.artifacts.artifacts import (
    CreateArtifact,
    GetArtifact,
    ListArtifacts,
    ReadArtifactFile,
    RollbackArtifact,
    WriteArtifactRevision,
)
from crewboard.contract.operation import Call
from crewboard.errors import NotFound
from crewboard.jsonbody import MAX_BODY, MAX_UPLOAD_BODY
from crewboard.services.artifacts import artifacts
from crewboard.services.idempotency import KeyedResult

P = "/api/v1/projects/{project}"
A = f"{P}/artifacts"
ONE = f"{A}/{{artifact}}"
# Whatever an artifact's file holds (a mockup's HTML and script too), these bytes are never
# a page of this origin: a download, sandboxed, its type not sniffed.
SAFE = {
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "sandbox; default-src 'none'",
}


def _carried(data: dict[str, Any]) -> dict[str, Any]:
    return refuse_carried(
        data, ("projectId", "artifactId"), "the path names the project and the artifact"
    )


def _path(request: Request) -> dict[str, Any]:
    path = request.path_params
    return {"projectId": path["project"], "artifactId": path["artifact"]}


def _named(request: Request, model: type[a.Args]) -> dict[str, Any]:
    return {**query_params(request, model), **_path(request)}


async def artifact_file(request: Request) -> Response:
    args = parse_args(ReadArtifactFile, _named(request, FileQuery), strict=False)
    _artifact, number, files = await run_service(
        request,
        lambda db, actor: artifacts.revision_bytes(
            db, actor, project=args.project_id, ref=args.artifact_id, revision=args.revision
        ),
    )
    wanted = next(((f, data) for f, data in files if f.path == args.path), None)
    if wanted is None:
        raise NotFound(
            f"path: revision {number} has no file {args.path}; GET the artifact to list them.",
            {"resource": "artifactFile", "ref": args.path, "field": "path"},
        )
    found, data = wanted
    return Response(
        data,
        media_type=found.media_type,
        headers={
            **SAFE,
            "ETag": f'"{present.checksum(found.digest)}"',
            "Content-Disposition": content_disposition(found.path.rsplit("/", 1)[-1]),
        },
    )


async def artifact_zip(request: Request) -> Response:
    args = parse_args(GetArtifact, _named(request, RevisionQuery), strict=False)
    artifact, number, files = await run_service(
        request,
        lambda db, actor: artifacts.revision_bytes(
            db, actor, project=args.project_id, ref=args.artifact_id, revision=args.revision
        ),
    )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for found, data in files:
            archive.writestr(found.path, data)
    return Response(
        buffer.getvalue(),
        media_type="application/zip",
        headers={
            **SAFE,
            "Content-Disposition": content_disposition(f"{artifact.slug}-r{number}.zip"),
        },
    )


async def _revise(
    request: Request, model: type[a.Args], limit: int, made: Callable[[Call, Any], KeyedResult]
) -> Created:
    """A new revision from the count the writer read: If-Match (412 when stale) or
    expectedVersion in the body (409)."""
    data = _carried(await keyed_body(request, limit))
    expected, via_header = expected_revision(request, data, "expectedVersion")
    args = parse_args(model, {**_path(request), **data, "expectedVersion": expected})
    result = await guard_precondition(lambda: run_made(request, made, args), via_header)
    return created(result)


@reads_headers(IDEMPOTENCY_KEY, IF_MATCH_REVISION)
async def write_revision(request: Request) -> Created:
    return await _revise(
        request, WriteArtifactRevision, MAX_UPLOAD_BODY, contract.write_artifact_revision
    )


@reads_headers(IDEMPOTENCY_KEY, IF_MATCH_REVISION)
async def rollback(request: Request) -> Created:
    return await _revise(request, RollbackArtifact, MAX_BODY, contract.rollback_artifact)


# --- what OpenAPI shows of the queries and bodies ----------------------------------------------

_VERSION = (
    int | None,
    Field(
        default=None,
        ge=0,
        le=2**31 - 1,
        description='The revisionCount you read; or send If-Match: "<revisionCount>".',
    ),
)
_NAMED = ("project_id", "artifact_id")
RevisionQuery = model_without("ArtifactRevisionQuery", GetArtifact, drop=_NAMED)
LinesQuery = model_without("ArtifactLinesQuery", ReadArtifactFile, drop=_NAMED)
FileQuery = model_without("ArtifactFileQuery", ReadArtifactFile, drop=(*_NAMED, "offset", "limit"))
CreateBody = model_without(
    "ArtifactCreateBody", CreateArtifact, drop=("project_id",), workspace_id=OPTIONAL_WORKSPACE
)
RevisionBody = model_without(
    "ArtifactRevisionBody",
    WriteArtifactRevision,
    drop=_NAMED,
    workspace_id=OPTIONAL_WORKSPACE,
    expected_version=_VERSION,
)
RollbackBody = model_without(
    "ArtifactRollbackBody",
    RollbackArtifact,
    drop=_NAMED,
    workspace_id=OPTIONAL_WORKSPACE,
    expected_version=_VERSION,
)

ENDPOINTS: tuple[Endpoint, ...] = (
    read_endpoint(
        "list_artifacts",
        contract.artifacts_page,
        "The project's artifacts, most recently changed first, paged",
        query=ListArtifacts,
    ),
    keyed_endpoint(
        "create_artifact",
        contract.create_artifact,
        "Create an artifact from a set of files as revision 1 (at most 50 files, 2 MiB a file, "
        "10 MiB in all; Idempotency-Key header)",
        CreateBody,
        limit=MAX_UPLOAD_BODY,
    ),
    read_endpoint(
        "get_artifact",
        contract.artifact_shown,
        "An artifact (by id or slug), one revision's files and the kept revisions",
        query=RevisionQuery,
    ),
    read_endpoint(
        "read_artifact_file",
        contract.artifact_lines,
        "A text file of a revision in windows of lines (path, offset, limit)",
        query=LinesQuery,
    ),
    Endpoint(
        f"{ONE}/file",
        "GET",
        artifact_file,
        "One file's bytes (path), sent as a download that never runs as a page",
        query=FileQuery,
        # Served as the file's own type, from its name (any type `mimetypes` knows).
        produces=("*/*",),
    ),
    Endpoint(
        f"{ONE}/zip",
        "GET",
        artifact_zip,
        "A revision's files as a zip (the newest unless revision)",
        query=RevisionQuery,
        produces=("application/zip",),
    ),
    endpoint_for(
        "write_artifact_revision",
        write_revision,
        "Add a revision: every file, or with baseRevision (the newest, or an older one with "
        "mergeOntoCurrent) only the changes and remove (If-Match or expectedVersion: the "
        "revisionCount you read; Idempotency-Key header)",
        RevisionBody,
    ),
    endpoint_for(
        "rollback_artifact",
        rollback,
        "Bring back a kept revision's files as a new revision (If-Match or expectedVersion; "
        "Idempotency-Key header)",
        RollbackBody,
    ),
)
