"""Files on the caller's own disk, for the stdio server only (the server runs on the caller's
machine, in its working folder). Over HTTP the server's disk is not the caller's: refused.

Every path given here is relative to the working folder and must stay inside it once links
are resolved: no absolute path, no `..`, no symbolic link that leads out. A download never
replaces a file unless asked (`overwrite`), never writes through a link, and lands whole or
not at all (written to a temporary name beside it, then renamed).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path, PurePosixPath

from crewboard.contract.operation import Call
from crewboard.domain.specs import MAX_FILE_BYTES
from crewboard.errors import AlreadyExists, LimitExceeded, PermissionDenied, ValidationFailed

DEFAULT_FOLDER = ".specs"


def require_stdio(call: Call, tool: str) -> Path:
    """The working folder. Raises: PermissionDenied over HTTP."""
    if call.local_root is None:
        raise PermissionDenied(
            f"{tool} works only on the stdio server (`crewboard mcp`), which runs on your "
            "machine: over HTTP the server cannot reach your disk. Read text with "
            "read_spec_file, or open the file in the web app.",
            {"tool": tool, "transport": "http"},
        )
    return call.local_root


def _inside(root: Path, raw: str, field: str) -> Path:
    """`raw` under `root`, refused when it names a place outside it (before links)."""
    if "\x00" in raw:
        raise ValidationFailed.field(field, "must not hold a NUL character.")
    given = PurePosixPath(raw.replace("\\", "/"))
    if given.is_absolute() or (len(raw) > 1 and raw[1] == ":"):
        raise ValidationFailed.field(
            field, f"{raw!r} is absolute; give a path inside the working folder ({root})."
        )
    if ".." in given.parts:
        raise ValidationFailed.field(field, "must not hold '..': it stays in the working folder.")
    return root.joinpath(*given.parts)


def _contained(root: Path, target: Path, field: str) -> Path:
    """`target` with links resolved, refused unless it is inside `root` (links resolved)."""
    real_root = root.resolve()
    real = target.resolve()
    if real != real_root and not real.is_relative_to(real_root):
        raise ValidationFailed.field(
            field,
            f"leads outside the working folder ({real_root}) through a symbolic link; "
            "give a path whose folders stay inside it.",
        )
    return real


def read_local(call: Call, raw: str, *, limit: int = MAX_FILE_BYTES) -> bytes:
    """A local file's bytes for an upload.

    Raises:
        PermissionDenied over HTTP; ValidationFailed for a path outside the working folder,
        a missing file, not a regular file or one that cannot be read; LimitExceeded over
        `limit` bytes.
    """
    root = require_stdio(call, "localFilePath")
    path = _contained(root, _inside(root, raw, "localFilePath"), "localFilePath")
    if not path.is_file():
        raise ValidationFailed.field("localFilePath", f"{raw!r} is not a file in {root}.")
    try:
        with path.open("rb") as source:
            data = source.read(limit + 1)
    except OSError as error:
        raise ValidationFailed.field(
            "localFilePath", f"{raw!r} cannot be read: {error.strerror or error}."
        ) from None
    if len(data) > limit:
        raise LimitExceeded(
            f"localFilePath: the file is over the limit of {limit} bytes.",
            {"field": "localFilePath", "limit": limit, "actual": path.stat().st_size},
        )
    return data


def _clash(saving: str, target: Path, blocker: Path, what: str) -> ValidationFailed:
    """A local file or folder stands where the spec file (or a folder it needs) would go."""
    return ValidationFailed(
        f"folder: cannot save {saving} at {target}: {blocker} {what}. The project holds a file "
        "and a folder of the same name; save this one under another folder (folder: …), or "
        f"move {blocker} away. Nothing was written.",
        {"field": "folder", "path": saving, "target": str(target), "conflictsWith": str(blocker)},
    )


def _check_steps(root: Path, target: Path, saving: str) -> None:
    """Every folder on the way from the working folder to `target` that exists already is a
    folder inside it (links resolved); the first one missing and those after it are made."""
    step = root
    for part in target.relative_to(root).parts[:-1]:
        step = step / part
        if not (step.exists() or step.is_symlink()):
            return
        _contained(root, step, "folder")
        if not step.exists():
            raise ValidationFailed.field(
                "folder", f"{step} is a symbolic link to nothing; remove it or choose a folder."
            )
        if not step.is_dir():
            raise _clash(saving, target, step, "is a file, not a folder")


def _check_target(target: Path, saving: str, *, overwrite: bool) -> None:
    if target.is_symlink():
        raise ValidationFailed.field(
            "folder", f"{target} is a symbolic link; it is not written through."
        )
    if target.is_dir():
        raise _clash(saving, target, target, "is a folder")
    if target.exists() and not target.is_file():
        raise ValidationFailed.field("folder", f"{target} exists and is not a file.")
    if target.exists() and not overwrite:
        raise AlreadyExists(
            f"{target} exists. Pass overwrite: true to replace it, or choose another folder.",
            {"field": "overwrite", "path": str(target)},
        )


def write_local(call: Call, folder: str, file_path: str, data: bytes, *, overwrite: bool) -> Path:
    """Write `data` at `folder/file_path` under the working folder; where it landed.

    Raises:
        PermissionDenied over HTTP; ValidationFailed for a folder outside the working folder,
        a link on the way, a local file where a folder is needed (or a folder where the file
        goes), or a write the disk refused; AlreadyExists for an existing file without
        `overwrite`.
    """
    root = require_stdio(call, "download_spec_file")
    target = _inside(_inside(root, folder, "folder"), file_path, "path")
    _check_steps(root, target, file_path)
    _check_target(target, file_path, overwrite=overwrite)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        real_parent = _contained(root, target.parent, "folder")
        _replace_whole(real_parent / target.name, data)
    except OSError as error:
        raise ValidationFailed.field(
            "folder", f"could not write {target}: {error.strerror or error}. Nothing was written."
        ) from None
    return real_parent / target.name


def _replace_whole(destination: Path, data: bytes) -> None:
    """Write to a temporary name beside `destination`, then rename: whole or not at all."""
    handle, temporary = tempfile.mkstemp(dir=destination.parent, prefix=".download-")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        Path(temporary).replace(destination)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
