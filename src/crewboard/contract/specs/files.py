"""Spec file tools: list, read in line windows, upload, save from the version read, the trash
bin; over stdio also download to disk and upload from a local file."""

from __future__ import annotations

import base64
import binascii
from typing import Any

from pydantic import Field

from crewboard.contract.args import Args, IdempotencyKey, Offset, ProjectRef, WorkspaceId
from crewboard.contract.operation import Area, Call, Cli, NoDoor, Rest, keyed
from crewboard.contract.reply import WINDOW_ROOM, Reply, paged_reply, window_note
from crewboard.contract.specs import local, present
from crewboard.domain.files import MAX_PATH, MAX_WINDOW_LINES
from crewboard.domain.identity.access import Scope, Toolset
from crewboard.errors import ValidationFailed
from crewboard.jsonbody import MAX_UPLOAD_BODY
from crewboard.services.idempotency import KeyedResult
from crewboard.services.specs import files
from crewboard.services.specs.file_lookup import FileRef

FilePath = Field(default=None, min_length=1, max_length=MAX_PATH, description="Or the file's path.")
# Characters of content one call carries: a message (HTTP body or stdio line) holds at most
# MAX_UPLOAD_BODY bytes, so a longer field could never arrive. Larger files (up to
# MAX_FILE_BYTES) come from localFilePath on the stdio server.
MAX_INLINE = MAX_UPLOAD_BODY * 3 // 4


class _Named(Args):
    project_id: ProjectRef
    workspace_id: WorkspaceId = None
    file_id: str | None = Field(default=None, min_length=1, max_length=200)
    path: str | None = FilePath

    def ref(self) -> FileRef:
        return FileRef(file_id=self.file_id, path=self.path)


class _Content(Args):
    content: str | None = Field(
        default=None, max_length=MAX_INLINE, description="The whole text (UTF-8)."
    )
    content_base64: str | None = Field(
        default=None,
        max_length=MAX_INLINE,
        description="Or the bytes as base64 (binary files).",
    )
    local_file_path: str | None = Field(
        default=None,
        min_length=1,
        max_length=1024,
        description="Or a file under the working folder (stdio server only).",
    )

    def data(self, call: Call) -> bytes:
        """The bytes to save, from the one source given.

        Raises:
            ValidationFailed: none or more than one source, bad base64, or (from
            local.read_local) a local path that is refused.
        """
        given = [
            n
            for n in ("content", "content_base64", "local_file_path")
            if getattr(self, n) is not None
        ]
        if len(given) != 1:
            # Checked here, not in the model: the schema cannot say "exactly one of", and the
            # model takes what the schema takes.
            raise ValidationFailed.field(
                "content",
                "give exactly one of content (text), contentBase64 (bytes) or localFilePath "
                f"(stdio server); got {len(given)}.",
            )
        if self.content is not None:
            return self.content.encode("utf-8")
        if self.content_base64 is not None:
            try:
                return base64.b64decode(self.content_base64, validate=True)
            except (binascii.Error, ValueError):
                raise ValidationFailed.field(
                    "contentBase64", "is not valid base64 (standard alphabet, with padding)."
                ) from None
        assert self.local_file_path is not None  # noqa: S101 - one source, checked above
        return local.read_local(call, self.local_file_path)


class ListSpecFiles(Args):
    project_id: ProjectRef
    workspace_id: WorkspaceId = None
    path: str | None = Field(
        default=None, min_length=1, max_length=MAX_PATH, description="Only this folder."
    )
    trashed: bool = Field(default=False, description="true: the trash bin instead.")
    limit: int = Field(default=present.DEFAULT_PAGE, ge=1, le=present.MAX_PAGE)
    offset: Offset = 0


class GetSpecFile(_Named):
    include_trashed: bool = False
    revisions: int = Field(
        default=0, ge=0, le=present.MAX_PAGE, description="Also list this many newest revisions."
    )


class ReadSpecFile(_Named):
    offset: int = Field(default=1, ge=1, le=2**31 - 1, description="First line, from 1.")
    limit: int = Field(default=MAX_WINDOW_LINES, ge=1, le=MAX_WINDOW_LINES)
    revision: int | None = Field(default=None, ge=1, le=2**31 - 1, description="An older one.")
    include_trashed: bool = False


class UploadSpecFile(_Content):
    project_id: ProjectRef
    workspace_id: WorkspaceId = None
    path: str = Field(min_length=1, max_length=MAX_PATH)
    idempotency_key: IdempotencyKey = None


class UpdateSpecFile(_Content, _Named):
    expected_version: str = Field(
        min_length=1, max_length=64, description="The contentVersion you read."
    )
    idempotency_key: IdempotencyKey = None


class TrashAction(_Named):
    pass


class DownloadSpecFile(_Named):
    revision: int | None = Field(default=None, ge=1, le=2**31 - 1)
    folder: str = Field(
        default=local.DEFAULT_FOLDER,
        min_length=1,
        max_length=1024,
        description="Under the working folder; the file lands at its path inside it.",
    )
    overwrite: bool = False
    include_trashed: bool = False


# A read's whole answer, which REST gives as it is; MCP and the CLI fit a page to the budget.


def spec_files_page(call: Call, args: ListSpecFiles) -> dict[str, Any]:
    return present.list_spec_files(
        call.db, call.actor, project=args.project_id, workspace_id=args.workspace_ref(),
        path=args.path, trashed=args.trashed, limit=args.limit, offset=args.offset,
    )  # fmt: skip


def spec_file_shown(call: Call, args: GetSpecFile) -> dict[str, Any]:
    return present.get_spec_file(
        call.db, call.actor, project=args.project_id, workspace_id=args.workspace_ref(),
        ref=args.ref(), include_trashed=args.include_trashed, revisions_limit=args.revisions,
    )  # fmt: skip


def list_spec_files(call: Call, args: ListSpecFiles) -> Reply:
    return paged_reply(spec_files_page(call, args), "files", args.offset)


def get_spec_file(call: Call, args: GetSpecFile) -> Reply:
    return Reply(spec_file_shown(call, args))


def read_spec_file(call: Call, args: ReadSpecFile) -> Reply:
    body = present.read_spec_file(
        call.db, call.actor, project=args.project_id, workspace_id=args.workspace_ref(),
        ref=args.ref(), offset=args.offset, limit=args.limit, revision=args.revision,
        room=WINDOW_ROOM, include_trashed=args.include_trashed,
    )  # fmt: skip
    return Reply(body, window_note(body))


def upload_spec_file(call: Call, args: UploadSpecFile) -> KeyedResult:
    return save_new_file(call, args, args.data(call))


def save_new_file(call: Call, args: UploadSpecFile, content: bytes) -> KeyedResult:
    """`files.upload_spec_file` with these bytes (REST reads them its own way)."""
    return files.upload_spec_file(
        call.db, call.actor, project=args.project_id, workspace_id=args.workspace_ref(),
        path=args.path, content=content, idempotency_key=args.idempotency_key,
        answer=present.new_file_view,
    )  # fmt: skip


def update_spec_file(call: Call, args: UpdateSpecFile) -> KeyedResult:
    return save_file(call, args, args.data(call))


def save_file(call: Call, args: UpdateSpecFile, content: bytes) -> KeyedResult:
    """`files.update_spec_file` with these bytes (REST reads them its own way)."""
    return files.update_spec_file(
        call.db, call.actor, project=args.project_id, workspace_id=args.workspace_ref(),
        ref=args.ref(), content=content, expected_version=args.expected_version,
        idempotency_key=args.idempotency_key, answer=present.saved_view,
    )  # fmt: skip


def move_spec_file_to_trash(call: Call, args: TrashAction) -> Reply:
    done = trash_change(call, args, trash=True)
    return Reply(done, None if done["changed"] else "It was already in the trash bin.")


def restore_spec_file_from_trash(call: Call, args: TrashAction) -> Reply:
    done = trash_change(call, args, trash=False)
    return Reply(done, None if done["changed"] else "It was not in the trash bin.")


def trash_change(call: Call, args: TrashAction, *, trash: bool) -> dict[str, Any]:
    """The file moved to the trash bin (`trash`) or out of it, as every door answers it."""
    change = files.move_spec_file_to_trash if trash else files.restore_spec_file_from_trash
    done = change(
        call.db, call.actor, project=args.project_id, workspace_id=args.workspace_ref(),
        ref=args.ref(),
    )  # fmt: skip
    return present.trash_view(done)


def download_spec_file(call: Call, args: DownloadSpecFile) -> Reply:
    local.require_stdio(call, "download_spec_file")
    view, data = present.read_file_bytes(
        call.db, call.actor, project=args.project_id, workspace_id=args.workspace_ref(),
        ref=args.ref(), revision=args.revision, include_trashed=args.include_trashed,
    )  # fmt: skip
    saved_to = local.write_local(call, args.folder, view["path"], data, overwrite=args.overwrite)
    return Reply({"file": view, "savedTo": str(saved_to), "bytes": len(data)})


_WRITE = (Scope.SPECS_WRITE,)

SPECS = Area(Toolset.SPECS, write_scopes=_WRITE)

OPERATIONS = (
    SPECS.read(
        "list_spec_files",
        "List spec files",
        "A project's spec files in path order, with kind, size, lines and revision count. "
        "path: only that folder; trashed: true lists the trash bin.",
        ListSpecFiles,
        list_spec_files,
        Rest("GET", "/api/v1/projects/{project}/specs"),
        Cli(("spec", "list")),
    ),
    SPECS.read(
        "get_spec_file",
        "Spec file details",
        "One file's details by fileId or path, with the contentVersion update_spec_file "
        "needs; revisions: N adds the N newest revisions (who saved, when).",
        GetSpecFile,
        get_spec_file,
        Rest("GET", "/api/v1/projects/{project}/specs/{file}"),
        Cli(("spec", "show")),
    ),
    SPECS.read(
        "read_spec_file",
        "Read a spec file",
        "Lines of a text file: offset (from 1), up to limit lines; totalLines, truncated "
        "and nextOffset say what is left. revision reads an older one. Binary files and "
        "files over 8 MiB are refused.",
        ReadSpecFile,
        read_spec_file,
        Rest("GET", "/api/v1/projects/{project}/specs/{file}/lines"),
        Cli(("spec", "read")),
    ),
    SPECS.write(
        "upload_spec_file",
        "Add a spec file",
        "A new file at a path that has none yet: content (text), contentBase64 (bytes) or, on "
        "the stdio server, localFilePath.",
        UploadSpecFile,
        keyed(upload_spec_file),
        Rest.created("/api/v1/projects/{project}/specs"),
        Cli(("spec", "upload")),
    ),
    SPECS.write(
        "update_spec_file",
        "Save a spec file",
        "Save a new revision of the whole file from the contentVersion you read "
        "(expectedVersion). If someone saved meanwhile nothing is written: read it again, "
        "merge, and save from the new version; do not resend your text as it was.",
        UpdateSpecFile,
        keyed(update_spec_file, "Already saved by this key"),
        Rest("PUT", "/api/v1/projects/{project}/specs/{file}"),
        Cli(("spec", "save")),
    ),
    SPECS.write(
        "move_spec_file_to_trash",
        "Move a spec file to the trash",
        "Move a file to the trash bin: it leaves lists and reads but can be restored. Not "
        "a delete.",
        TrashAction,
        move_spec_file_to_trash,
        Rest("POST", "/api/v1/projects/{project}/specs/{file}/trash"),
        Cli(("spec", "trash")),
    ),
    SPECS.write(
        "restore_spec_file_from_trash",
        "Restore a spec file",
        "Take a file out of the trash bin, back at its path.",
        TrashAction,
        restore_spec_file_from_trash,
        Rest("POST", "/api/v1/projects/{project}/specs/{file}/restore"),
        Cli(("spec", "restore")),
    ),
    SPECS.read(
        "download_spec_file",
        "Save a spec file to disk",
        "stdio server only: write a file (any kind, up to 50 MiB) under the working folder, "
        "by default at .specs/<its path>; refuses to replace a file unless overwrite: true. "
        "Answers where it saved, not the content.",
        DownloadSpecFile,
        download_spec_file,
        NoDoor("it writes the file on the caller's disk; over HTTP, GET the content route"),
        Cli(("spec", "download")),
        stdio_only=True,
        # It writes the caller's files and, with overwrite, replaces one.
        writes_locally=True,
        destructive=True,
    ),
)
