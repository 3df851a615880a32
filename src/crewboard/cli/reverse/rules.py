"""What of a folder `crewboard reverse` may show: the path rules, secrets and .gitignore.

A path a model names is relative to the offered folder; it is normalised, then resolved with
its links, and refused when the resolved file lies outside the folder. Both the name as written
and the resolved name must pass the secret and ignore rules: a link called `config` that points
at `.env` is still `.env`.

Ignore rules are git's own (the pathspec library's gitwildmatch semantics): a deeper .gitignore
wins over a shallower one, the last matching line of a file wins, `!` re-includes, a leading
`/` anchors to the file's folder, a trailing `/` matches folders only, and nothing inside an
ignored folder comes back. `.git/info/exclude` counts below the root's .gitignore, as in git.
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pathspec

# Names never read, in any folder; compared in lower case (a case-insensitive file system finds
# `.ENV` as `.env`).
SECRET_NAMES: tuple[str, ...] = (
    ".env", ".env.*", "*.pem", "*.key", "*.p12", "*.pfx", "*.crt", "*.cer", "*.der", "*.jks",
    "*.keystore", "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*", ".netrc", ".pgpass",
    ".npmrc", ".pypirc", "credentials*.json", "*.kdbx",
)  # fmt: skip
# A folder holding one of these is a Crewboard data folder: its database, its key.
DATA_MARKERS = ("crewboard.db", "secret.key")


class Refused(Exception):
    """A path the rules refuse, with the code of the error answer and its message."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class Target:
    """A path that passed the rules: as the model names it, and where it is on disk."""

    rel: str  # normalised, "/"-separated, "." for the root
    real: Path  # links resolved


def is_secret_name(name: str) -> bool:
    """Whether one file or folder name is a secret's, whatever its letter case."""
    lowered = name.lower()
    return any(fnmatch.fnmatchcase(lowered, pattern) for pattern in SECRET_NAMES)


def normalised(path: str) -> str:
    """The relative path a model wrote, "/"-separated and without `.` or `x/..` steps.

    Raises:
        Refused: `outside_folder` for an absolute path or one climbing out with `..`.
    """
    unified = path.replace("\\", "/")
    if unified.startswith("/") or (len(unified) > 1 and unified[1] == ":"):
        raise Refused(
            "outside_folder", f"{path!r} is absolute: name a path relative to the folder."
        )
    clean = posixpath.normpath(unified) if unified else "."
    if clean == ".." or clean.startswith("../"):
        raise Refused("outside_folder", f"{path!r} climbs out of the folder with '..'.")
    return clean


class Rules:
    """The rules for one answer: reads each .gitignore once while the answer runs, so a
    search over a big tree does not parse the same files again and again. Made afresh for
    every call, as the person may edit the folder while the bridge runs."""

    def __init__(self, root: Path, data_dirs: Sequence[Path] = ()) -> None:
        self.root = Path(os.path.realpath(root))
        self.data_dirs = tuple(Path(os.path.realpath(d)) for d in data_dirs)
        self._specs: dict[str, pathspec.GitIgnoreSpec | None] = {}
        self._data_folders: dict[str, bool] = {}
        self._exclude = self._read_spec(self.root / ".git" / "info" / "exclude")

    # -- one name, as the walk meets it --------------------------------------------------

    def secret(self, rel: str, real: Path, *, is_dir: bool) -> bool:
        """Whether a path (already within the root) is a secret or in Crewboard's data."""
        parts = [] if rel == "." else rel.split("/")
        if any(is_secret_name(part) for part in parts):
            return True
        # The folder itself and each folder above it up to the root: none may hold Crewboard data.
        folders = [
            self.root / "/".join(parts[:n]) for n in range(len(parts) + (1 if is_dir else 0))
        ]
        if any(self._is_data_folder(folder) for folder in folders):
            return True
        return any(real == d or d in real.parents for d in self.data_dirs)

    def ignored(self, rel: str, *, is_dir: bool) -> bool:
        """Whether git ignores `rel` itself, given its folder is not ignored: the deepest
        .gitignore with a matching line decides, then .git/info/exclude."""
        parts = rel.split("/")
        if parts[0] == ".git":
            return True
        for depth in range(len(parts) - 1, -1, -1):
            spec = self._spec_of("/".join(parts[:depth]))
            if spec is None:
                continue
            below = "/".join(parts[depth:]) + ("/" if is_dir else "")
            decided = spec.check_file(below).include
            if decided is not None:
                return decided
        if self._exclude is not None:
            return self._exclude.check_file(rel + ("/" if is_dir else "")).include is True
        return False

    # -- a whole path, as a model names it -----------------------------------------------

    def target(self, path: str) -> Target:
        """Check a path a model named, step by step from the root.

        Raises:
            Refused: outside_folder, secret, ignored or not_found.
        """
        rel = normalised(path)
        if rel == ".":
            return Target(".", self.root)
        real = Path(os.path.realpath(self.root / rel))
        if real != self.root and self.root not in real.parents:
            raise Refused("outside_folder", f"{rel!r} leads outside the folder (a link).")
        is_dir = real.is_dir()
        # The rules before existence: a refusal says nothing of whether a secret is there.
        self._check_steps(rel, is_dir=is_dir, shown=rel)
        if not os.path.lexists(self.root / rel):
            raise Refused("not_found", f"No file or folder {rel!r} in the folder.")
        resolved = real.relative_to(self.root).as_posix()
        if resolved not in (".", rel):
            self._check_steps(resolved, is_dir=is_dir, shown=rel)
        return Target(rel, real)

    def _check_steps(self, rel: str, *, is_dir: bool, shown: str) -> None:
        parts = rel.split("/")
        for step in range(1, len(parts) + 1):
            prefix = "/".join(parts[:step])
            step_is_dir = is_dir or step < len(parts)
            real = self.root / prefix
            if self.secret(prefix, real, is_dir=step_is_dir):
                raise Refused("secret", f"{shown!r} is a secret or Crewboard data: never read.")
            if self.ignored(prefix, is_dir=step_is_dir):
                raise Refused("ignored", f"{shown!r} is ignored by .gitignore: never read.")

    # -- the files behind the rules --------------------------------------------------------

    def _spec_of(self, folder: str) -> pathspec.GitIgnoreSpec | None:
        if folder not in self._specs:
            where = self.root / folder / ".gitignore" if folder else self.root / ".gitignore"
            self._specs[folder] = self._read_spec(where)
        return self._specs[folder]

    @staticmethod
    def _read_spec(where: Path) -> pathspec.GitIgnoreSpec | None:
        try:
            with where.open(encoding="utf-8", errors="replace") as file:
                lines = file.read(1024 * 1024).splitlines()
        except OSError:  # none there (the usual case), or not readable: no rules from it
            return None
        return pathspec.GitIgnoreSpec.from_lines(lines) if lines else None

    def _is_data_folder(self, folder: Path) -> bool:
        key = str(folder)
        if key not in self._data_folders:
            self._data_folders[key] = any((folder / m).exists() for m in DATA_MARKERS)
        return self._data_folders[key]
