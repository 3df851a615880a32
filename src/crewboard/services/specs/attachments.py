"""Attachments: files people and agents add to a project for reference (PDF, DOCX, XLSX, PNG,
JPEG, GIF, WebP, UTF-8 text; at most 10 MiB). The type comes from the bytes, never from the
name. Text is read in line windows, images whole; other documents open in the web app.

An attachment is named within its project; an upload with a name already taken is refused
unless it asks to `override`, which replaces the bytes (and type) under the same id.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from crewboard.domain.files import (
    MAX_WINDOW_BYTES,
    MAX_WINDOW_LINES,
    LineIndex,
    check_window,
    digest_of,
    index_lines,
)
from crewboard.domain.identity.access import Role, Scope
from crewboard.domain.identity.records import Actor
from crewboard.domain.ids import new_id
from crewboard.domain.packages import UnreadablePackage
from crewboard.domain.specs import (
    ATTACHMENT_TYPES,
    MAX_ATTACHMENT_BYTES,
    Attachment,
    AttachmentKind,
    AttachmentPage,
    AttachmentRead,
    AttachmentUpload,
    TextWindow,
    check_attachment_name,
    sniff_attachment,
)
from crewboard.errors import AlreadyExists, LimitExceeded, NotFound, ValidationFailed
from crewboard.services.idempotency import Ack, KeyedResult, do_keyed_write
from crewboard.services.identity.access import ANY_WORKSPACE, WorkspaceRef, access_project
from crewboard.services.paging import check_page
from crewboard.services.views import stamp_of
from crewboard.services.windows import TextBlob, read_window
from crewboard.storage.database import Database
from crewboard.storage.specs.attachments import AttachmentRepository
from crewboard.storage.uow import UnitOfWork

MAX_PAGE = 200
DEFAULT_PAGE = 50


def attachments_of(uow: UnitOfWork) -> AttachmentRepository:
    return AttachmentRepository(uow.conn)


def _find(
    uow: UnitOfWork,
    actor: Actor,
    project: str,
    attachment_id: str,
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
) -> Attachment:
    access = access_project(uow, actor, project, workspace_id=workspace_id)
    found = attachments_of(uow).get(attachment_id) if "\x00" not in attachment_id else None
    if found is None or found.project_id != access.project.id:
        raise NotFound(
            f"No attachment {attachment_id!r} in this project; list_attachments shows them.",
            {"resource": "attachment", "ref": attachment_id},
        )
    return found


def list_attachments(
    db: Database,
    actor: Actor,
    *,
    project: str,
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
    limit: int = DEFAULT_PAGE,
    offset: int = 0,
) -> AttachmentPage:
    """The project's attachments by name.

    Raises:
        ValidationFailed: limit outside 1..200, negative offset. NotFound.
    """
    check_page(limit, offset, MAX_PAGE)

    def work(uow: UnitOfWork) -> AttachmentPage:
        access = access_project(uow, actor, project, workspace_id=workspace_id)
        items, total = attachments_of(uow).page(access.project.id, limit=limit, offset=offset)
        return AttachmentPage(tuple(items), total, offset)

    return db.read(work)


def get_attachment(
    db: Database,
    actor: Actor,
    *,
    project: str,
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
    attachment_id: str,
) -> Attachment:
    """One attachment's details. Raises: NotFound."""
    return db.read(lambda uow: _find(uow, actor, project, attachment_id, workspace_id))


def read_attachment(
    db: Database,
    actor: Actor,
    *,
    project: str,
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
    attachment_id: str,
    offset: int = 1,
    limit: int = MAX_WINDOW_LINES,
    room: int = MAX_WINDOW_BYTES,
) -> AttachmentRead:
    """A text attachment's window of lines, or an image's bytes whole (`image`: bytes and
    media type, for the door to send as an image).

    Raises:
        ValidationFailed: a document (PDF, DOCX, XLSX) that has no lines to read; a window
        outside the text. NotFound.
    """
    check_window(offset, limit)

    def work(uow: UnitOfWork) -> AttachmentRead:
        item = _find(uow, actor, project, attachment_id, workspace_id)
        if item.kind is AttachmentKind.IMAGE:
            return AttachmentRead(item, image=uow.blobs.read(item.digest))
        if item.kind is AttachmentKind.DOCUMENT:
            raise ValidationFailed(
                f"{item.name} is a document ({item.media_type}) with no lines to read here. "
                "Open it from the project's attachments in the web app, or ask a person to.",
                {"field": "attachmentId", "kind": item.kind.value, "mediaType": item.media_type},
            )
        window = read_window(
            uow.blobs,
            TextBlob(item.digest, item.size, item.lines, item.name),
            offset=offset,
            limit=limit,
            room=min(room, MAX_WINDOW_BYTES),
        )
        return AttachmentRead(
            item,
            window=TextWindow(
                offset=offset,
                lines=window.lines,
                total_lines=item.lines.total_lines,
                text=window.text,
                truncated=window.truncated,
                next_offset=window.next_offset,
            ),
        )

    return db.read(work)


def read_attachment_bytes(
    db: Database,
    actor: Actor,
    *,
    project: str,
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
    attachment_id: str,
) -> tuple[Attachment, bytes]:
    """An attachment and its whole bytes (for a download). Raises: NotFound."""

    def work(uow: UnitOfWork) -> tuple[Attachment, bytes]:
        item = _find(uow, actor, project, attachment_id, workspace_id)
        return item, uow.blobs.read(item.digest)

    return db.read(work)


def check_attachment(
    content: bytes, field: str = "content", name: str | None = None
) -> tuple[AttachmentKind, str]:
    """The attachment's kind and media type, from its bytes (`name` is the file's, for the
    refusal).

    Raises:
        LimitExceeded: over 10 MiB. ValidationFailed: not one of the accepted types, or a
        ZIP package (DOCX, XLSX) that cannot be read whole.
    """
    if len(content) > MAX_ATTACHMENT_BYTES:
        raise LimitExceeded(
            f"{field}: {len(content)} bytes is over the attachment limit of "
            f"{MAX_ATTACHMENT_BYTES} bytes (10 MiB).",
            {"field": field, "limit": MAX_ATTACHMENT_BYTES, "actual": len(content)},
        )
    try:
        found = sniff_attachment(content)
    except UnreadablePackage as error:
        called = f"{name!r}" if name is not None else "the file"
        raise ValidationFailed(
            f"{field}: {called} is a ZIP package that cannot be read ({error}); save it again "
            f"from the program that made it. Accepted types: {', '.join(ATTACHMENT_TYPES)}.",
            {"field": field, "name": name, "accepted": list(ATTACHMENT_TYPES)},
        ) from None
    if found is None:
        raise ValidationFailed(
            f"{field}: these bytes are none of the accepted types ({', '.join(ATTACHMENT_TYPES)}); "
            "the type is read from the content, not the name.",
            {"field": field, "accepted": list(ATTACHMENT_TYPES)},
        )
    return found


def upload_attachment(
    db: Database,
    actor: Actor,
    *,
    project: str,
    workspace_id: WorkspaceRef,
    name: str,
    content: bytes,
    override: bool,
    idempotency_key: str | None,
    answer: Callable[[AttachmentUpload], dict[str, Any]],
    content_field: str = "content",
) -> KeyedResult:
    """Add an attachment, or with `override` replace the one of that name (keyed).
    `content_field` is what the caller calls the bytes, named when they are refused; `answer`
    words the result for the door and the ledger.

    Raises:
        AlreadyExists: the name is taken and `override` is off. ValidationFailed,
        LimitExceeded, NotFound, PermissionDenied, IdempotencyConflict.
    """
    stored_name = check_attachment_name(name)
    kind, media_type = check_attachment(content, content_field, stored_name)

    def work(uow: UnitOfWork) -> KeyedResult:
        access = access_project(
            uow, actor, project, scope=Scope.SPECS_WRITE, role=Role.WRITE,
            workspace_id=workspace_id,
        )  # fmt: skip
        repo = attachments_of(uow)

        def perform() -> Ack:
            existing = repo.get_by_name(access.project.id, stored_name)
            if existing is not None and not override:
                raise AlreadyExists(
                    f"An attachment named {stored_name} exists. Pass override: true to replace "
                    "it, or choose another name.",
                    {"field": "name", "attachmentId": existing.id, "name": stored_name},
                )
            stamp = stamp_of(uow, actor)
            item = Attachment(
                id=existing.id if existing else new_id("att"),
                project_id=access.project.id,
                name=stored_name,
                kind=kind,
                media_type=media_type,
                size=len(content),
                digest=uow.blobs.put(content),
                lines=index_lines(content) if kind is AttachmentKind.TEXT else LineIndex(0, (0,)),
                created_by=existing.created_by if existing else stamp,
                created_at=existing.created_at if existing else uow.now,
                updated_by=stamp,
                updated_at=uow.now,
            )
            if existing is None:
                repo.add(item)
            else:
                repo.replace(item)
                uow.blobs.collect({existing.digest} - {item.digest})  # the bytes replaced
            uow.record_event(
                "attachment.replaced" if existing else "attachment.added",
                actor=actor.as_payload(),
                payload={"attachmentId": item.id, "name": item.name, "size": item.size,
                         "mediaType": item.media_type},
                project_id=access.project.id,
                workspace_id=access.project.workspace_id,
            )  # fmt: skip
            return Ack(
                answer(AttachmentUpload(item, replaced=existing is not None)),
                resource_type="attachment",
                resource_id=item.id,
                project_id=access.project.id,
            )

        return do_keyed_write(
            uow, actor, key=idempotency_key, operation="upload_attachment",
            arguments={"project": access.project.id, "name": stored_name,
                       "digest": digest_of(content), "override": override},
            perform=perform,
        )  # fmt: skip

    return db.write(work)
