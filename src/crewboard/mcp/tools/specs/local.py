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

from crewboard.domain.specs import MAX_FILE_BYTES
from crewboard.errors import AlreadyExists, LimitExceeded, PermissionDenied, ValidationFailed
from crewboard.mcp.tooldef import Call

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
        a missing file or not a regular file; LimitExceeded over MAX_FILE_BYTES.
    """
    root = require_stdio(call, "localFilePath")
    path = _contained(root, _inside(root, raw, "localFilePath"), "localFilePath")
    if not path.is_file():
        raise ValidationFailed.field("localFilePath", f"{raw!r} is not a file in {root}.")
    size = path.stat().st_size
    if size > limit:
        raise LimitExceeded(
            f"localFilePath: {size} bytes is over the limit of {limit} bytes.",
            {"field": "localFilePath", "limit": limit, "actual": size},
        )
    return path.read_bytes()


def write_local(call: Call, folder: str, file_path: str, data: bytes, *, overwrite: bool) -> Path:
    """Write `data` at `folder/file_path` under the working folder; where it landed.

    Raises:
        PermissionDenied over HTTP; ValidationFailed for a folder outside the working folder
        or a link on the way; AlreadyExists for an existing file without `overwrite`.
    """
    root = require_stdio(call, "download_spec_file")
    base = _inside(root, folder, "folder")
    target = base.joinpath(*PurePosixPath(file_path).parts)
    # Every existing step must stay inside the working folder, links resolved.
    _contained(root, base if base.exists() else root, "folder")
    existing = target.parent
    # A link counts as there even when what it names is not (yet): it must lead inside too.
    while not (existing.exists() or existing.is_symlink()):
        existing = existing.parent
    _contained(root, existing, "folder")
    if target.is_symlink():
        raise ValidationFailed.field(
            "folder", f"{target} is a symbolic link; it is not written through."
        )
    if target.exists() and not overwrite:
        raise AlreadyExists(
            f"{target} exists. Pass overwrite: true to replace it, or choose another folder.",
            {"field": "overwrite", "path": str(target)},
        )
    if target.exists() and not target.is_file():
        raise ValidationFailed.field("folder", f"{target} exists and is not a file.")
    target.parent.mkdir(parents=True, exist_ok=True)
    real_parent = _contained(root, target.parent, "folder")
    handle, temporary = tempfile.mkstemp(dir=real_parent, prefix=".download-")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        Path(temporary).replace(real_parent / target.name)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return real_parent / target.name
