"""REST routes of spec files: list, details, line windows, the raw bytes, upload, save and
the trash bin.

A save names the `contentVersion` it was made from in `If-Match: "<version>"` (412 when
stale) or as `expectedVersion` in the body (409 when stale). `localFilePath` is not taken
here: the server's disk is not the caller's (the stdio server reads local files).
"""

from __future__ import annotations

from functools import partial
from typing import Any

from pydantic import ConfigDict
from starlette.requests import Request
from starlette.responses import Response

from crewboard.api.common import (
    IDEMPOTENCY_KEY,
    IF_MATCH_VERSION,
    OPTIONAL_WORKSPACE,
    Created,
    Endpoint,
    Handler,
    content_disposition,
    created,
    guard_precondition,
    keyed_body,
    model_without,
    parse_args,
    read_body,
    reads_headers,
    run_service,
)
from crewboard.api.operations import endpoint_for, read_endpoint, run_made
from crewboard.api.specs.common import (
    BINARY,
    CAP,
    NOT_IN_BODY,
    TEXT,
    body_of,
    content_of,
    expected_version,
    if_match_version,
    named,
)
from crewboard.contract import args as a
from crewboard.contract.specs import files as contract
from crewboard.contract.specs import present
from crewboard.contract.specs.files import (
    GetSpecFile,
    ListSpecFiles,
    ReadSpecFile,
    TrashAction,
    UpdateSpecFile,
    UploadSpecFile,
)
from crewboard.errors import ValidationFailed
from crewboard.jsonbody import MAX_UPLOAD_BODY

# --- reading ---------------------------------------------------------------------------------


async def read_spec_file(request: Request) -> dict[str, Any]:
    args = parse_args(ReadSpecFile, named(request, LinesQuery), strict=False)
    return await run_service(
        request,
        lambda db, actor: present.read_spec_file(
            db,
            actor,
            project=args.project_id,
            ref=args.ref(),
            offset=args.offset,
            limit=args.limit,
            revision=args.revision,
            include_trashed=args.include_trashed,
        ),
    )


async def spec_file_content(request: Request) -> Response:
    args = parse_args(ReadSpecFile, named(request, ContentQuery), strict=False)
    view, data = await run_service(
        request,
        lambda db, actor: present.read_file_bytes(
            db,
            actor,
            project=args.project_id,
            ref=args.ref(),
            revision=args.revision,
            include_trashed=args.include_trashed,
        ),
    )
    return Response(
        data,
        media_type=TEXT if view["kind"] == "text" else BINARY,
        headers={
            "ETag": f'"{view["contentVersion"]}"',
            "Content-Disposition": content_disposition(view["path"].rsplit("/", 1)[-1]),
        },
    )


# --- writing ---------------------------------------------------------------------------------


@reads_headers(IDEMPOTENCY_KEY)
async def upload_spec_file(request: Request) -> Created:
    data = body_of(await keyed_body(request, MAX_UPLOAD_BODY), ("projectId", "fileId"))
    args = parse_args(UploadSpecFile, {**data, "projectId": request.path_params["project"]})
    content = content_of(args.content, args.content_base64)
    return created(await run_made(request, partial(contract.save_new_file, content=content), args))


@reads_headers(IDEMPOTENCY_KEY, IF_MATCH_VERSION)
async def update_spec_file(request: Request) -> dict[str, Any]:
    data = body_of(await keyed_body(request, MAX_UPLOAD_BODY), NOT_IN_BODY)
    from_header = if_match_version(request)
    if from_header is None and "expectedVersion" not in data:
        raise ValidationFailed.field(
            "expectedVersion",
            'required: the contentVersion you read (or send it as If-Match: "cv_…").',
        )
    path = request.path_params
    filled = {**data, "projectId": path["project"], "fileId": path["file"]}
    if from_header is not None:
        filled["expectedVersion"] = from_header
    args = parse_args(UpdateSpecFile, filled)
    content = content_of(args.content, args.content_base64)
    result = await guard_precondition(
        lambda: run_made(request, partial(contract.save_file, content=content), args),
        from_header is not None,
    )
    return {**result.body, "replayed": result.replayed}


def _trash(trash: bool) -> Handler:
    async def handler(request: Request) -> dict[str, Any]:
        data = body_of(await read_body(request), NOT_IN_BODY)
        path = request.path_params
        args = parse_args(
            TrashAction, {**data, "projectId": path["project"], "fileId": path["file"]}
        )
        return await run_made(request, partial(contract.trash_change, trash=trash), args)

    return handler


# --- what OpenAPI shows of the queries and bodies ----------------------------------------------

_NAMED = ("project_id", "file_id", "path")
DetailsQuery = model_without("SpecFileQuery", GetSpecFile, drop=_NAMED)
LinesQuery = model_without("SpecFileLinesQuery", ReadSpecFile, drop=_NAMED)
ContentQuery = model_without(
    "SpecFileContentQuery", ReadSpecFile, drop=(*_NAMED, "offset", "limit")
)


class _OneSource(a.Args):
    """A body with the bytes as text or as base64, exactly one of the two (the check in
    `_content`, stated in the schema)."""

    model_config = ConfigDict(
        json_schema_extra={
            "oneOf": [
                {"required": [name], "properties": {name: {"type": "string"}}}
                for name in ("content", "contentBase64")
            ]
        }
    )


UploadBody = model_without(
    "SpecFileUploadBody", UploadSpecFile, drop=("project_id", "local_file_path"), base=_OneSource
)
UpdateBody = model_without(
    "SpecFileUpdateBody",
    UpdateSpecFile,
    drop=(*_NAMED, "local_file_path"),
    base=_OneSource,
    workspace_id=OPTIONAL_WORKSPACE,
    expected_version=expected_version(
        'The contentVersion you read; or send If-Match: "<contentVersion>".'
    ),
)
TrashBody = model_without(
    "SpecFileTrashBody", TrashAction, drop=_NAMED, workspace_id=OPTIONAL_WORKSPACE
)

P = "/api/v1/projects/{project}"
S = f"{P}/specs"
F = f"{S}/{{file}}"
ENDPOINTS: tuple[Endpoint, ...] = (
    read_endpoint(
        "list_spec_files",
        contract.spec_files_page,
        "Spec files in path order (path: a folder; trashed: the trash bin), paged",
        query=ListSpecFiles,
    ),
    endpoint_for(
        "upload_spec_file",
        upload_spec_file,
        f"Add a spec file at a new path: content or contentBase64 ({CAP}; Idempotency-Key header)",
        UploadBody,
    ),
    read_endpoint(
        "get_spec_file",
        contract.spec_file_shown,
        "One spec file with its contentVersion (revisions: the N newest)",
        query=DetailsQuery,
    ),
    endpoint_for(
        "update_spec_file",
        update_spec_file,
        "Save a new revision from the version you read (If-Match or expectedVersion; "
        f"{CAP}; Idempotency-Key header)",
        UpdateBody,
    ),
    endpoint_for(
        "read_spec_file",
        read_spec_file,
        "A window of a text file's lines (offset from 1, limit, revision; up to 1 MiB of text)",
        query=LinesQuery,
    ),
    Endpoint(
        f"{F}/content",
        "GET",
        spec_file_content,
        "A revision's bytes as a download (ETag: its contentVersion)",
        query=ContentQuery,
        produces=(TEXT, BINARY),
    ),
    endpoint_for(
        "move_spec_file_to_trash", _trash(True), "Move a spec file to the trash bin", TrashBody
    ),
    endpoint_for(
        "restore_spec_file_from_trash",
        _trash(False),
        "Take a spec file out of the trash",
        TrashBody,
    ),
)
