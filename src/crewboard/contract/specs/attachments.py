"""Attachment tools: list, details, read (text in line windows, images within the server's
bounds), upload (base64, or a local file on the stdio server)."""

from __future__ import annotations

import base64
import binascii
from typing import Any

from pydantic import Field

from crewboard.contract.args import Args, IdempotencyKey, Offset, ProjectRef, WorkspaceId
from crewboard.contract.images import image_reply
from crewboard.contract.operation import Area, Call, Cli, Rest, keyed
from crewboard.contract.reply import WINDOW_ROOM, Reply, paged_reply, window_note
from crewboard.contract.specs import local, present
from crewboard.domain.files import MAX_WINDOW_LINES
from crewboard.domain.identity.access import Scope, Toolset
from crewboard.domain.specs import MAX_ATTACHMENT_BYTES, MAX_ATTACHMENT_NAME
from crewboard.errors import ValidationFailed
from crewboard.services.idempotency import KeyedResult
from crewboard.services.specs import attachments

# Characters of the largest attachment as base64: four for every three bytes, padded.
MAX_ATTACHMENT_BASE64 = -(-MAX_ATTACHMENT_BYTES // 3) * 4
AttachmentId = Field(min_length=1, max_length=200)


class ListAttachments(Args):
    project_id: ProjectRef
    workspace_id: WorkspaceId = None
    limit: int = Field(default=present.DEFAULT_PAGE, ge=1, le=present.MAX_PAGE)
    offset: Offset = 0


class GetAttachment(Args):
    project_id: ProjectRef
    workspace_id: WorkspaceId = None
    attachment_id: str = AttachmentId


class ReadAttachment(GetAttachment):
    offset: int = Field(default=1, ge=1, le=2**31 - 1, description="First line, from 1 (text).")
    limit: int = Field(default=MAX_WINDOW_LINES, ge=1, le=MAX_WINDOW_LINES)


class UploadAttachment(Args):
    project_id: ProjectRef
    workspace_id: WorkspaceId = None
    name: str = Field(min_length=1, max_length=MAX_ATTACHMENT_NAME)
    content_base64: str | None = Field(
        default=None,
        max_length=MAX_ATTACHMENT_BASE64,
        description="The bytes as base64 (standard alphabet, with padding), up to 10 MiB.",
    )
    local_file_path: str | None = Field(
        default=None,
        min_length=1,
        max_length=1024,
        description="Or a file under the working folder (stdio server only).",
    )
    override: bool = Field(default=False, description="Replace the attachment of this name.")
    idempotency_key: IdempotencyKey = None

    def data(self, call: Call) -> bytes:
        """The bytes, from the one source given.

        Raises:
            ValidationFailed: none or both sources, bad base64, a refused local path.
        """
        if (self.content_base64 is None) == (self.local_file_path is None):
            # Checked here, not in the model: the schema cannot say "exactly one of".
            raise ValidationFailed.field(
                "contentBase64",
                "give exactly one of contentBase64 (the bytes) or localFilePath (stdio server).",
            )
        if self.content_base64 is not None:
            try:
                return base64.b64decode(self.content_base64, validate=True)
            except (binascii.Error, ValueError):
                raise ValidationFailed.field(
                    "contentBase64", "is not valid base64 (standard alphabet, with padding)."
                ) from None
        assert self.local_file_path is not None  # noqa: S101 - one source, checked above
        return local.read_local(call, self.local_file_path, limit=MAX_ATTACHMENT_BYTES)


# A read's whole answer, which REST gives as it is; MCP and the CLI fit a page to the budget.


def attachments_page(call: Call, args: ListAttachments) -> dict[str, Any]:
    return present.list_attachments(
        call.db, call.actor, project=args.project_id, workspace_id=args.workspace_ref(),
        limit=args.limit, offset=args.offset,
    )  # fmt: skip


def attachment_shown(call: Call, args: GetAttachment) -> dict[str, Any]:
    return present.get_attachment(
        call.db, call.actor, project=args.project_id, workspace_id=args.workspace_ref(),
        attachment_id=args.attachment_id,
    )  # fmt: skip


def list_attachments(call: Call, args: ListAttachments) -> Reply:
    return paged_reply(attachments_page(call, args), "attachments", args.offset)


def get_attachment(call: Call, args: GetAttachment) -> Reply:
    return Reply(attachment_shown(call, args))


def read_attachment(call: Call, args: ReadAttachment) -> Reply:
    body = present.read_attachment(
        call.db, call.actor, project=args.project_id, workspace_id=args.workspace_ref(),
        attachment_id=args.attachment_id, offset=args.offset, limit=args.limit,
        room=WINDOW_ROOM,
    )  # fmt: skip
    image = body.pop("image", None)
    if image is not None:
        item = body["attachment"]
        where = (
            f"GET /api/v1/projects/{item['projectId']}/attachments/{item['id']}/content, "
            "or the project's attachments in the web app"
        )
        return image_reply(
            call, body, image, item["mediaType"], field="attachmentId", original=where
        )
    return Reply(body, window_note(body))


def upload_attachment(call: Call, args: UploadAttachment) -> KeyedResult:
    given = "contentBase64" if args.content_base64 is not None else "localFilePath"
    return save_attachment(call, args, args.data(call), given)


def save_attachment(
    call: Call, args: UploadAttachment, content: bytes, content_field: str
) -> KeyedResult:
    """`attachments.upload_attachment` with these bytes, sent as `content_field` (REST reads
    them its own way)."""
    return attachments.upload_attachment(
        call.db, call.actor, project=args.project_id, workspace_id=args.workspace_ref(),
        name=args.name, content=content, content_field=content_field, override=args.override,
        idempotency_key=args.idempotency_key, answer=present.uploaded_view,
    )  # fmt: skip


SPECS = Area(Toolset.SPECS, write_scopes=(Scope.SPECS_WRITE,))

OPERATIONS = (
    SPECS.read(
        "list_attachments",
        "List attachments",
        "A project's attachments by name, with kind, type and size.",
        ListAttachments,
        list_attachments,
        Rest("GET", "/api/v1/projects/{project}/attachments"),
        Cli(("attachment", "list")),
    ),
    SPECS.read(
        "get_attachment",
        "Attachment details",
        "One attachment's name, kind, media type, size and who added it.",
        GetAttachment,
        get_attachment,
        Rest("GET", "/api/v1/projects/{project}/attachments/{attachment}"),
        Cli(("attachment", "show")),
    ),
    SPECS.read(
        "read_attachment",
        "Read an attachment",
        "Text in windows of lines (offset from 1, limit; nextOffset for more); PNG, JPEG, "
        "GIF and WebP as an image, scaled down when large. PDF, DOCX and XLSX cannot be read "
        "here: they open in the web app.",
        ReadAttachment,
        read_attachment,
        Rest("GET", "/api/v1/projects/{project}/attachments/{attachment}/lines"),
        Cli(("attachment", "read")),
    ),
    SPECS.write(
        "upload_attachment",
        "Add an attachment",
        "Add a file of up to 10 MiB: PDF, DOCX, XLSX, PNG, JPEG, GIF, WebP or UTF-8 text (the "
        "type is read from the bytes). contentBase64, or localFilePath on the stdio server; "
        "override: true replaces the attachment of the same name.",
        UploadAttachment,
        keyed(upload_attachment),
        Rest.created("/api/v1/projects/{project}/attachments"),
        Cli(("attachment", "upload")),
    ),
)
