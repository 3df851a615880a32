"""REST routes of attachments: list, details, text windows, the raw bytes and upload."""

from __future__ import annotations

from functools import partial
from typing import Any

from pydantic import Field
from starlette.requests import Request
from starlette.responses import Response

from crewboard.api.common import (
    IDEMPOTENCY_KEY,
    OPTIONAL_WORKSPACE,
    Created,
    Endpoint,
    M,
    content_disposition,
    created,
    keyed_body,
    model_without,
    parse_args,
    query_params,
    reads_headers,
    run_service,
)
from crewboard.api.operations import endpoint_for, read_endpoint, run_made
from crewboard.api.specs.common import (
    TEXT,
    body_of,
    decoded,
)
from crewboard.contract import args as a
from crewboard.contract.specs import attachments as contract
from crewboard.contract.specs import present
from crewboard.contract.specs.attachments import (
    MAX_ATTACHMENT_BASE64,
    GetAttachment,
    ListAttachments,
    ReadAttachment,
    UploadAttachment,
)
from crewboard.errors import ValidationFailed
from crewboard.jsonbody import MAX_UPLOAD_BODY

# What an attachment's bytes may be (the types attachments accept); the images show inline.
INLINE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
ATTACHMENT_TYPES = (
    "application/pdf",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    *INLINE_TYPES,
    TEXT,
)


# --- attachments -----------------------------------------------------------------------------


def _attachment_args(request: Request, model: type[M], query: type[a.Args]) -> M:
    path = request.path_params
    named = {"projectId": path["project"], "attachmentId": path["attachment"]}
    return parse_args(model, {**query_params(request, query), **named}, strict=False)


async def get_attachment(request: Request) -> dict[str, Any]:
    args = _attachment_args(request, GetAttachment, NoQuery)
    return await run_made(request, contract.attachment_shown, args)


async def read_attachment(request: Request) -> dict[str, Any]:
    args = _attachment_args(request, ReadAttachment, AttachmentLinesQuery)
    body: dict[str, Any] = await run_service(
        request,
        lambda db, actor: present.read_attachment(
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
        lambda db, actor: present.read_attachment_bytes(
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
    data = body_of(await keyed_body(request, MAX_UPLOAD_BODY), ("projectId", "attachmentId"))
    args = parse_args(UploadAttachment, {**data, "projectId": request.path_params["project"]})
    if args.content_base64 is None:
        raise ValidationFailed.field("contentBase64", "required: the bytes, as base64.")
    made = partial(
        contract.save_attachment,
        content=decoded(args.content_base64),
        content_field="contentBase64",
    )
    return created(await run_made(request, made, args))


NoQuery = model_without("NoQuery", a.Args, drop=())
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

AT = "/api/v1/projects/{project}/attachments"
ENDPOINTS: tuple[Endpoint, ...] = (
    read_endpoint(
        "list_attachments",
        contract.attachments_page,
        "The project's attachments by name, paged",
        query=ListAttachments,
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
