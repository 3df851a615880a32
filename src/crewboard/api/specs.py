"""REST routes of spec files (list, details, line windows, the raw bytes, upload, save, the
trash bin), attachments (list, details, text windows, the raw bytes, upload) and comment
threads on spec files (list, start, reply, edit and delete one's own comment).

Queries and bodies are checked by the tools' argument models (camelCase, as on MCP), so a bad
value is refused with the same code and field. The path names the project and the file,
attachment, thread or comment (by id). A save names the `contentVersion` it was made from in
`If-Match: "<version>"` (412 when stale) or as `expectedVersion` in the body (409 when stale);
so does a comment edit, with the comment's own contentVersion. `localFilePath` is not taken
here: the server's disk is not the caller's (the stdio server reads local files). No route
resolves or reopens a thread: people do that in the web app, never a token.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from pydantic import ConfigDict, Field
from starlette.requests import Request
from starlette.responses import Response

from crewboard.api.common import (
    IDEMPOTENCY_KEY,
    IF_MATCH_VERSION,
    OPTIONAL_WORKSPACE,
    Created,
    Endpoint,
    Handler,
    M,
    content_disposition,
    created,
    guard_precondition,
    keyed_body,
    model_without,
    parse_args,
    query_params,
    read_body,
    reads_headers,
    refuse_carried,
    run_service,
    workspace_of,
)
from crewboard.api.operations import endpoint_for
from crewboard.contract import args as a
from crewboard.contract.specs.attachments import (
    MAX_ATTACHMENT_BASE64,
    GetAttachment,
    ListAttachments,
    ReadAttachment,
    UploadAttachment,
)
from crewboard.contract.specs.comments import (
    CreateSpecFileCommentThread,
    DeleteSpecFileComment,
    ListSpecFileComments,
    ReplySpecFileCommentThread,
    UpdateSpecFileComment,
)
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
from crewboard.services.specs import attachments, comments, files

TEXT = "text/plain; charset=utf-8"
BINARY = "application/octet-stream"
# What an attachment's bytes may be (the types attachments accept); the images show inline.
INLINE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
ATTACHMENT_TYPES = (
    "application/pdf",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    *INLINE_TYPES,
    TEXT,
)
# Fields the path carries: the project, and the file (by id, so neither fileId nor path).
NOT_IN_BODY = ("projectId", "fileId", "path")


# --- the query string and body ---------------------------------------------------------------


def _body(data: dict[str, Any], carried: tuple[str, ...]) -> dict[str, Any]:
    """The body, refusing the fields the path carries and `localFilePath`.

    Raises:
        ValidationFailed: naming the field.
    """
    if "localFilePath" in data:
        raise ValidationFailed.field(
            "localFilePath",
            "is taken only by the stdio server, which runs on your machine; over REST send "
            "content (text) or contentBase64 (bytes).",
        )
    return refuse_carried(data, tuple(carried), "the path names the project and the file")


def _content(text: str | None, encoded: str | None) -> bytes:
    """The bytes to save, from the one source given.

    Raises:
        ValidationFailed: neither or both given, or bad base64.
    """
    if (text is None) == (encoded is None):
        raise ValidationFailed.field(
            "content", "give exactly one of content (text) or contentBase64 (bytes)."
        )
    if text is not None:
        return text.encode("utf-8")
    return _decoded(encoded or "")


def _decoded(encoded: str) -> bytes:
    """The bytes `contentBase64` holds.

    Raises:
        ValidationFailed: bad base64.
    """
    try:
        return base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise ValidationFailed.field(
            "contentBase64", "is not valid base64 (standard alphabet, with padding)."
        ) from None


def _if_match(request: Request, source: str = "GET …/specs/{fileId}") -> str | None:
    """The contentVersion an `If-Match` header names, quoted as an entity tag or bare;
    `source` says where the caller reads it.

    Raises:
        ValidationFailed: not one content version (`*`, a list, a weak tag, empty).
    """
    raw = request.headers.get("if-match")
    if raw is None:
        return None
    tag = raw.strip()
    if len(tag) >= 2 and tag[0] == tag[-1] == '"':
        tag = tag[1:-1]
    if not tag or len(tag) > 64 or any(c in tag for c in '"*, '):
        raise ValidationFailed.field(
            "If-Match",
            f'must name one contentVersion, as {source} gives it: If-Match: "<contentVersion>".',
        )
    return tag


# --- reading ---------------------------------------------------------------------------------


async def list_spec_files(request: Request) -> dict[str, Any]:
    query = query_params(request, ListQuery)
    args = parse_args(
        ListSpecFiles, {**query, "projectId": request.path_params["project"]}, strict=False
    )
    return await run_service(
        request,
        lambda db, actor: files.list_spec_files(
            db,
            actor,
            project=args.project_id,
            path=args.path,
            trashed=args.trashed,
            limit=args.limit,
            offset=args.offset,
        ),
    )


def _named(request: Request, model: type[a.Args]) -> dict[str, Any]:
    """The query with the project and file the path names."""
    path = request.path_params
    return {**query_params(request, model), "projectId": path["project"], "fileId": path["file"]}


async def get_spec_file(request: Request) -> dict[str, Any]:
    args = parse_args(GetSpecFile, _named(request, DetailsQuery), strict=False)
    return await run_service(
        request,
        lambda db, actor: files.get_spec_file(
            db,
            actor,
            project=args.project_id,
            ref=args.ref(),
            include_trashed=args.include_trashed,
            revisions_limit=args.revisions,
        ),
    )


async def read_spec_file(request: Request) -> dict[str, Any]:
    args = parse_args(ReadSpecFile, _named(request, LinesQuery), strict=False)
    return await run_service(
        request,
        lambda db, actor: files.read_spec_file(
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
    args = parse_args(ReadSpecFile, _named(request, ContentQuery), strict=False)
    view, data = await run_service(
        request,
        lambda db, actor: files.read_file_bytes(
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
    data = _body(await keyed_body(request, MAX_UPLOAD_BODY), ("projectId", "fileId"))
    args = parse_args(UploadSpecFile, {**data, "projectId": request.path_params["project"]})
    content = _content(args.content, args.content_base64)
    result = await run_service(
        request,
        lambda db, actor: files.upload_spec_file(
            db,
            actor,
            project=args.project_id,
            workspace_id=args.workspace_id,
            path=args.path,
            content=content,
            idempotency_key=args.idempotency_key,
        ),
    )
    return created(result)


@reads_headers(IDEMPOTENCY_KEY, IF_MATCH_VERSION)
async def update_spec_file(request: Request) -> dict[str, Any]:
    data = _body(await keyed_body(request, MAX_UPLOAD_BODY), NOT_IN_BODY)
    from_header = _if_match(request)
    if from_header is None and "expectedVersion" not in data:
        raise ValidationFailed.field(
            "expectedVersion",
            'required: the contentVersion you read (or send it as If-Match: "cv_…").',
        )
    workspace = workspace_of(data)
    path = request.path_params
    filled = {"workspaceId": None, **data, "projectId": path["project"], "fileId": path["file"]}
    if from_header is not None:
        filled["expectedVersion"] = from_header
    args = parse_args(UpdateSpecFile, filled)
    content = _content(args.content, args.content_base64)
    result = await guard_precondition(
        lambda: run_service(
            request,
            lambda db, actor: files.update_spec_file(
                db,
                actor,
                project=args.project_id,
                workspace_id=workspace,
                ref=args.ref(),
                content=content,
                expected_version=args.expected_version,
                idempotency_key=args.idempotency_key,
            ),
        ),
        from_header is not None,
    )
    return {**result.body, "replayed": result.replayed}


def _trash(trash: bool) -> Handler:
    service = files.move_spec_file_to_trash if trash else files.restore_spec_file_from_trash

    async def handler(request: Request) -> dict[str, Any]:
        data = _body(await read_body(request), NOT_IN_BODY)
        path = request.path_params
        args = parse_args(
            TrashAction,
            {"workspaceId": None, **data, "projectId": path["project"], "fileId": path["file"]},
        )
        workspace = workspace_of(data)
        return await run_service(
            request,
            lambda db, actor: service(
                db, actor, project=args.project_id, workspace_id=workspace, ref=args.ref()
            ),
        )

    return handler


# --- attachments -----------------------------------------------------------------------------


def _attachment_args(request: Request, model: type[M], query: type[a.Args]) -> M:
    path = request.path_params
    named = {"projectId": path["project"], "attachmentId": path["attachment"]}
    return parse_args(model, {**query_params(request, query), **named}, strict=False)


async def list_attachments(request: Request) -> dict[str, Any]:
    query = query_params(request, AttachmentsQuery)
    args = parse_args(
        ListAttachments, {**query, "projectId": request.path_params["project"]}, strict=False
    )
    return await run_service(
        request,
        lambda db, actor: attachments.list_attachments(
            db, actor, project=args.project_id, limit=args.limit, offset=args.offset
        ),
    )


async def get_attachment(request: Request) -> dict[str, Any]:
    args = _attachment_args(request, GetAttachment, NoQuery)
    return await run_service(
        request,
        lambda db, actor: attachments.get_attachment(
            db, actor, project=args.project_id, attachment_id=args.attachment_id
        ),
    )


async def read_attachment(request: Request) -> dict[str, Any]:
    args = _attachment_args(request, ReadAttachment, AttachmentLinesQuery)
    body: dict[str, Any] = await run_service(
        request,
        lambda db, actor: attachments.read_attachment(
            db,
            actor,
            project=args.project_id,
            attachment_id=args.attachment_id,
            offset=args.offset,
            limit=args.limit,
        ),
    )
    if "image" in body:
        view = body["attachment"]
        raise ValidationFailed(
            f"{view['name']} is an image ({view['mediaType']}) with no lines to read; "
            "GET …/attachments/{attachmentId}/content sends its bytes.",
            {"field": "attachmentId", "kind": view["kind"], "mediaType": view["mediaType"]},
        )
    return body


async def attachment_content(request: Request) -> Response:
    args = _attachment_args(request, GetAttachment, NoQuery)
    view, data = await run_service(
        request,
        lambda db, actor: attachments.read_attachment_bytes(
            db, actor, project=args.project_id, attachment_id=args.attachment_id
        ),
    )
    media = view["mediaType"]
    disposition = content_disposition(view["name"])
    if media in INLINE_TYPES:
        disposition = disposition.replace("attachment", "inline", 1)
    return Response(
        data,
        media_type=media,
        headers={
            "Content-Disposition": disposition,
            "X-Content-Type-Options": "nosniff",
            # Never a page, whatever the bytes hold: nothing runs, nothing loads.
            "Content-Security-Policy": "sandbox; default-src 'none'",
        },
    )


@reads_headers(IDEMPOTENCY_KEY)
async def upload_attachment(request: Request) -> Created:
    data = _body(await keyed_body(request, MAX_UPLOAD_BODY), ("projectId", "attachmentId"))
    workspace = workspace_of(data)
    args = parse_args(
        UploadAttachment,
        {"workspaceId": None, **data, "projectId": request.path_params["project"]},
    )
    if args.content_base64 is None:
        raise ValidationFailed.field("contentBase64", "required: the bytes, as base64.")
    content = _decoded(args.content_base64)
    result = await run_service(
        request,
        lambda db, actor: attachments.upload_attachment(
            db,
            actor,
            project=args.project_id,
            workspace_id=workspace,
            name=args.name,
            content=content,
            override=args.override,
            idempotency_key=args.idempotency_key,
            content_field="contentBase64",
        ),
    )
    return created(result)


# --- comment threads -------------------------------------------------------------------------


async def list_threads(request: Request) -> dict[str, Any]:
    args = parse_args(ListSpecFileComments, _named(request, ThreadsQuery), strict=False)
    return await run_service(
        request,
        lambda db, actor: comments.list_spec_file_comments(
            db,
            actor,
            project=args.project_id,
            ref=args.ref(),
            status=args.status,
            limit=args.limit,
            offset=args.offset,
        ),
    )


def _on(request: Request, data: dict[str, Any], **named: str) -> dict[str, Any]:
    """The body with the project and the ids the path names (and no workspace check unless
    the body asks for one)."""
    return {"workspaceId": None, **data, "projectId": request.path_params["project"], **named}


@reads_headers(IDEMPOTENCY_KEY)
async def start_thread(request: Request) -> Created:
    data = _body(await keyed_body(request), NOT_IN_BODY)
    workspace = workspace_of(data)
    args = parse_args(
        CreateSpecFileCommentThread, _on(request, data, fileId=request.path_params["file"])
    )
    result = await run_service(
        request,
        lambda db, actor: comments.create_spec_file_comment_thread(
            db,
            actor,
            project=args.project_id,
            workspace_id=workspace,
            ref=args.ref(),
            anchor_quote=args.anchor_quote,
            anchor_prefix=args.anchor_prefix,
            anchor_suffix=args.anchor_suffix,
            body=args.body,
            idempotency_key=args.idempotency_key,
        ),
    )
    return created(result)


@reads_headers(IDEMPOTENCY_KEY)
async def reply_to_thread(request: Request) -> Created:
    data = _body(await keyed_body(request), ("projectId", "threadId"))
    workspace = workspace_of(data)
    args = parse_args(
        ReplySpecFileCommentThread, _on(request, data, threadId=request.path_params["thread"])
    )
    result = await run_service(
        request,
        lambda db, actor: comments.reply_spec_file_comment_thread(
            db,
            actor,
            project=args.project_id,
            workspace_id=workspace,
            thread_id=args.thread_id,
            body=args.body,
            idempotency_key=args.idempotency_key,
        ),
    )
    return created(result)


@reads_headers(IF_MATCH_VERSION)
async def update_comment(request: Request) -> dict[str, Any]:
    data = _body(await read_body(request), ("projectId", "commentId"))
    from_header = _if_match(request, "GET …/specs/{fileId}/threads (the comment's)")
    if from_header is None and "expectedVersion" not in data:
        raise ValidationFailed.field(
            "expectedVersion",
            'required: the comment\'s contentVersion (or send it as If-Match: "<contentVersion>").',
        )
    workspace = workspace_of(data)
    filled = _on(request, data, commentId=request.path_params["comment"])
    if from_header is not None:
        filled["expectedVersion"] = from_header
    args = parse_args(UpdateSpecFileComment, filled)
    return await guard_precondition(
        lambda: run_service(
            request,
            lambda db, actor: comments.update_spec_file_comment(
                db,
                actor,
                project=args.project_id,
                workspace_id=workspace,
                comment_id=args.comment_id,
                body=args.body,
                expected_version=args.expected_version,
            ),
        ),
        from_header is not None,
    )


async def delete_comment(request: Request) -> dict[str, Any]:
    data = _body(await read_body(request), ("projectId", "commentId"))
    workspace = workspace_of(data)
    args = parse_args(
        DeleteSpecFileComment, _on(request, data, commentId=request.path_params["comment"])
    )
    return await run_service(
        request,
        lambda db, actor: comments.delete_spec_file_comment(
            db, actor, project=args.project_id, workspace_id=workspace, comment_id=args.comment_id
        ),
    )


# --- what OpenAPI shows of the queries and bodies ----------------------------------------------

_NAMED = ("project_id", "file_id", "path")
ListQuery = model_without("SpecFilesQuery", ListSpecFiles, drop=("project_id",))
DetailsQuery = model_without("SpecFileQuery", GetSpecFile, drop=_NAMED)
LinesQuery = model_without("SpecFileLinesQuery", ReadSpecFile, drop=_NAMED)
ContentQuery = model_without(
    "SpecFileContentQuery", ReadSpecFile, drop=(*_NAMED, "offset", "limit")
)


def _no_default(schema: dict[str, Any]) -> None:
    schema.pop("default", None)


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
    expected_version=(
        # Optional (If-Match may carry it) but never null: the schema has no null for it.
        str,
        Field(
            default=None,
            min_length=1,
            max_length=64,
            description='The contentVersion you read; or send If-Match: "<contentVersion>".',
            json_schema_extra=_no_default,
        ),
    ),
)
TrashBody = model_without(
    "SpecFileTrashBody", TrashAction, drop=_NAMED, workspace_id=OPTIONAL_WORKSPACE
)

NoQuery = model_without("NoQuery", a.Args, drop=())
AttachmentsQuery = model_without("AttachmentsQuery", ListAttachments, drop=("project_id",))
AttachmentLinesQuery = model_without(
    "AttachmentLinesQuery", ReadAttachment, drop=("project_id", "attachment_id")
)
AttachmentUploadBody = model_without(
    "AttachmentUploadBody",
    UploadAttachment,
    drop=("project_id", "local_file_path"),
    workspace_id=OPTIONAL_WORKSPACE,
    content_base64=(
        str,
        Field(
            max_length=MAX_ATTACHMENT_BASE64,
            description="The bytes, as base64 (standard alphabet, with padding), up to 10 MiB.",
        ),
    ),
)
ThreadsQuery = model_without("SpecFileThreadsQuery", ListSpecFileComments, drop=_NAMED)
ThreadBody = model_without(
    "SpecFileThreadBody",
    CreateSpecFileCommentThread,
    drop=_NAMED,
    workspace_id=OPTIONAL_WORKSPACE,
)
ReplyBody = model_without(
    "SpecFileReplyBody",
    ReplySpecFileCommentThread,
    drop=("project_id", "thread_id"),
    workspace_id=OPTIONAL_WORKSPACE,
)
CommentEditBody = model_without(
    "SpecFileCommentEditBody",
    UpdateSpecFileComment,
    drop=("project_id", "comment_id"),
    workspace_id=OPTIONAL_WORKSPACE,
    expected_version=(
        str,
        Field(
            default=None,
            min_length=1,
            max_length=64,
            description='The comment\'s contentVersion; or send If-Match: "<contentVersion>".',
            json_schema_extra=_no_default,
        ),
    ),
)
CommentDeleteBody = model_without(
    "SpecFileCommentDeleteBody",
    DeleteSpecFileComment,
    drop=("project_id", "comment_id"),
    workspace_id=OPTIONAL_WORKSPACE,
)

CAP = f"a body of at most {MAX_UPLOAD_BODY // (1024 * 1024)} MiB: 12 MiB of text or 9 MiB of bytes"
P = "/api/v1/projects/{project}"
S = f"{P}/specs"
AT = f"{P}/attachments"
F = f"{S}/{{file}}"
ENDPOINTS: tuple[Endpoint, ...] = (
    endpoint_for(
        "list_spec_files",
        list_spec_files,
        "Spec files in path order (path: a folder; trashed: the trash bin), paged",
        query=ListQuery,
    ),
    endpoint_for(
        "upload_spec_file",
        upload_spec_file,
        f"Add a spec file at a new path: content or contentBase64 ({CAP}; Idempotency-Key header)",
        UploadBody,
    ),
    endpoint_for(
        "get_spec_file",
        get_spec_file,
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
    endpoint_for(
        "list_spec_file_comments",
        list_threads,
        "A file's comment threads in file order (status: open, resolved or orphaned), paged",
        query=ThreadsQuery,
    ),
    endpoint_for(
        "create_spec_file_comment_thread",
        start_thread,
        "Start a comment thread on a passage (anchorQuote copied exactly; anchorPrefix, "
        "anchorSuffix when it repeats; Idempotency-Key header)",
        ThreadBody,
    ),
    endpoint_for(
        "reply_spec_file_comment_thread",
        reply_to_thread,
        "Reply at the end of a comment thread (Idempotency-Key header)",
        ReplyBody,
    ),
    endpoint_for(
        "update_spec_file_comment",
        update_comment,
        "Edit your own comment from its contentVersion (If-Match or expectedVersion)",
        CommentEditBody,
    ),
    endpoint_for(
        "delete_spec_file_comment",
        delete_comment,
        "Delete your own comment (a reply goes; a first comment with replies stays as a "
        "placeholder; a lone first comment takes its thread)",
        CommentDeleteBody,
    ),
    endpoint_for(
        "list_attachments",
        list_attachments,
        "The project's attachments by name, paged",
        query=AttachmentsQuery,
    ),
    endpoint_for(
        "upload_attachment",
        upload_attachment,
        "Add an attachment (PDF, DOCX, XLSX, PNG, JPEG, GIF, WebP or UTF-8 text, the type read "
        "from the bytes): name and contentBase64, up to 10 MiB; override replaces the one of that "
        "name (Idempotency-Key header)",
        AttachmentUploadBody,
    ),
    endpoint_for("get_attachment", get_attachment, "One attachment's details"),
    endpoint_for(
        "read_attachment",
        read_attachment,
        "A window of a text attachment's lines (offset from 1, limit); images and documents "
        "have none (…/content sends their bytes)",
        query=AttachmentLinesQuery,
    ),
    Endpoint(
        f"{AT}/{{attachment}}/content",
        "GET",
        attachment_content,
        "An attachment's bytes with its media type (a download; the four image types inline)",
        produces=ATTACHMENT_TYPES,
    ),
)
