"""Reading an export archive (see `services/transfer/archive.py`): opening the zip, its
manifest and people (checked against their models), each project's documents line by line,
and the bytes of its blobs, every failure a refusal naming the entry."""

from __future__ import annotations

import zipfile
import zlib
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Annotated, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr
from pydantic import ValidationError as ModelError

from crewboard.domain.files import digest_of
from crewboard.domain.ids import new_id
from crewboard.domain.projects import check_project_key
from crewboard.domain.validation import check_email, check_text
from crewboard.errors import (
    CrewboardError,
    ValidationFailed,
)
from crewboard.jsonbody import BadJson, first_problem, parse_json
from crewboard.services.identity.users import check_display_name
from crewboard.services.transfer import checks
from crewboard.services.transfer.format import (
    AN_ID,
    FORMAT,
    VERSION,
)
from crewboard.storage import migrate
from crewboard.storage import transfer as rows

# What zipfile raises for an entry it cannot read: a checksum that differs, a compression or
# encryption it does not know, a stream cut short.
_UNREADABLE = (zipfile.BadZipFile, zlib.error, NotImplementedError, EOFError, RuntimeError)

MAX_LINE = 64 * 1024 * 1024  # one row's document: far above any row the limits allow
MAX_BLOB = 1024 * 1024 * 1024


@contextmanager
def reading(name: str) -> Iterator[None]:
    """Turn zipfile's failures to read the entry `name` into a refusal naming it."""
    try:
        yield
    except _UNREADABLE as error:
        raise ValidationFailed.field(name, f"cannot be read from the archive: {error}.") from None


def open_archive(path: Path) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(path)
    except (*_UNREADABLE, OSError, ValueError) as error:
        raise ValidationFailed.field(
            "file", f"{path} is not a Crewboard export archive (a zip file): {error}."
        ) from None


Count = Annotated[StrictInt, Field(ge=0, le=2**53)]


class _ManifestProject(BaseModel):
    """One project as the manifest names it."""

    model_config = ConfigDict(extra="ignore")

    id: Annotated[StrictStr, Field(pattern=AN_ID)]
    key: StrictStr
    name: StrictStr
    documents: dict[StrictStr, Count] = Field(default_factory=dict)


class _Manifest(BaseModel):
    """The manifest's parts an import reads, typed: a value of another type is refused naming
    where it is, before anything is read by it."""

    model_config = ConfigDict(extra="ignore")

    format: StrictStr
    version: StrictInt
    schemaRevision: StrictStr  # noqa: N815 - the manifest's own name
    projects: Annotated[list[_ManifestProject], Field(min_length=1)]


class _Person(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: StrictStr
    email: StrictStr
    display_name: StrictStr
    created_at: StrictStr | None = None


M = TypeVar("M", bound=BaseModel)


def _typed(model: type[M], value: Any, document: str) -> M:
    """`value` read as `model`; the first problem named by its place in the document."""
    try:
        return model.model_validate(value)
    except ModelError as error:
        place, problem = first_problem(error)
        separator = "." if document.endswith("]") else " "
        where = f"{document}{separator}{place}" if place else document
        raise ValidationFailed.field(where, problem) from None


def checked_manifest(archive: zipfile.ZipFile) -> dict[str, Any]:
    manifest = _json_entry(archive, "manifest.json")
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ValidationFailed.field(
            "manifest.json format", f"this is not a {FORMAT} archive.", [FORMAT]
        )
    if manifest.get("version") != VERSION or isinstance(manifest.get("version"), bool):
        raise ValidationFailed.field(
            "manifest.json version",
            f"archive format version {manifest.get('version')!r} is not one this Crewboard reads.",
            [str(VERSION)],
        )
    head = migrate.head_revision()
    if manifest.get("schemaRevision") != head:
        raise ValidationFailed.field(
            "manifest.json schemaRevision",
            f"the archive was written at database schema {manifest.get('schemaRevision')!r} "
            f"and this server is at {head!r}: export again from a server running the same "
            f"Crewboard version as this one (upgrade the older of the two first).",
            [str(head)],
        )
    if not isinstance(manifest.get("projects"), list) or not manifest["projects"]:
        raise ValidationFailed.field("manifest.json projects", "the archive names no project.")
    typed = _typed(_Manifest, manifest, "manifest.json")
    seen: set[str] = set()
    for index, project in enumerate(typed.projects):
        where = f"manifest.json projects[{index}]"
        unknown = sorted(set(project.documents) - set(rows.BY_NAME))
        if unknown:
            raise ValidationFailed.field(
                f"{where}.documents",
                f"names documents this Crewboard does not know: {', '.join(unknown)}.",
            )
        try:
            if check_project_key(project.key) != project.key:
                raise ValidationFailed.field("key", "is not written as a project key.")
            check_text("name", project.name, max_length=200, required=True)
        except CrewboardError as error:
            field = f"{where}.{error.details.get('field')}"
            raise ValidationFailed.field(field, error.message.split(": ", 1)[-1]) from None
        if project.id in seen:
            raise ValidationFailed.field(f"{where}.id", "names a project twice.")
        seen.add(project.id)
    return {**manifest, "projects": [p.model_dump() for p in typed.projects]}


def _loads(data: bytes | str, where: str, *, nesting: bool = True) -> Any:
    """One JSON document of the archive: no NaN, no nesting deeper than a request may hold
    (a row's values are walked for it by their columns' checks: `nesting` False)."""
    try:
        return parse_json(data, nesting=nesting)
    except BadJson as error:
        raise ValidationFailed.field(where, f"is not valid JSON: {error.message}") from None
    except UnicodeDecodeError as error:
        raise ValidationFailed.field(where, f"is not valid JSON: {error}.") from None


def _json_entry(archive: zipfile.ZipFile, name: str) -> Any:
    try:
        with reading(name), archive.open(name) as entry:
            data = entry.read(MAX_LINE + 1)
    except KeyError:
        raise ValidationFailed.field(name, "missing from the archive.") from None
    if len(data) > MAX_LINE:
        raise ValidationFailed.field(name, "is larger than any archive writes.")
    return _loads(data, name)


def archive_people(archive: zipfile.ZipFile) -> list[dict[str, Any]]:
    people = _json_entry(archive, "people.json")
    if not isinstance(people, list):
        raise ValidationFailed.field("people.json", "must be a list of accounts.")
    checked: list[dict[str, Any]] = []
    for index, raw in enumerate(people):
        where = f"people.json[{index}]"
        if not isinstance(raw, dict) or not all(
            isinstance(raw.get(k), str) for k in ("id", "email", "display_name")
        ):
            raise ValidationFailed.field(where, "needs an id, an email and a display_name.")
        person = _typed(_Person, raw, where)
        try:
            email = check_email(person.email)
        except ValidationFailed:
            raise ValidationFailed.field(
                f"{where}.email", f"{person.email!r} is not an email address."
            ) from None
        try:
            name = check_display_name(person.display_name)
        except CrewboardError as error:
            field = f"{where}.display_name"
            problem = error.message.split(": ", 1)[-1]
            raise type(error)(f"{field}: {problem}", {"field": field}) from None
        if person.created_at is not None and (moment := rows.moment_problem(person.created_at)):
            raise ValidationFailed.field(f"{where}.created_at", moment)
        checked.append({**person.model_dump(), "email": email, "display_name": name})
    return checked


def read_documents(
    archive: zipfile.ZipFile, project: dict[str, Any], carried: rows.Carried
) -> Generator[tuple[int, dict[str, Any]], None, None]:
    """The rows of one document with their line numbers, each a JSON object whose every value
    passes its column's type and the API's rule for it; the count checked against the
    manifest's."""
    name = f"projects/{project['id']}/{carried.name}.jsonl"
    expected = int(project.get("documents", {}).get(carried.name, 0))
    try:
        with reading(name):
            entry: IO[bytes] = archive.open(name)
    except KeyError:
        if expected:
            raise ValidationFailed.field(name, "missing from the archive.") from None
        return
    seen = 0
    known = {c.name for c in carried.columns}
    with entry:
        while True:
            with reading(name):
                line = entry.readline(MAX_LINE + 1)
            if not line:
                break
            seen += 1
            if len(line) > MAX_LINE:
                raise ValidationFailed.field(f"{name} line {seen}", "is too long.")
            row = _loads(line, f"{name} line {seen}", nesting=False)
            if not isinstance(row, dict):
                raise ValidationFailed.field(f"{name} line {seen}", "must be a JSON object.")
            unknown = set(row) - known
            if unknown:
                raise ValidationFailed.field(
                    f"{name} line {seen}",
                    f"has columns this Crewboard does not know: {', '.join(sorted(unknown))}.",
                )
            checks.check_values(carried, row, name, seen)
            yield seen, row
    if seen != expected:
        raise ValidationFailed.field(
            name, f"holds {seen} rows where the manifest says {expected}: the archive is damaged."
        )


def new_ids_for(archive: zipfile.ZipFile, manifest: dict[str, Any]) -> dict[str, str]:
    """A new id for every row id of the archive (same prefix), and for each project."""
    ids: dict[str, str] = {}
    for project in manifest["projects"]:
        ids[project["id"]] = new_id(project["id"].split("_", 1)[0])
        for carried in rows.CARRIED:
            if "id" not in carried.table.c or carried.name == "projects":
                continue
            if [c.name for c in carried.table.primary_key.columns] != ["id"]:
                continue
            for _line, row in read_documents(archive, project, carried):
                old = row.get("id")
                if isinstance(old, str) and "_" in old:
                    ids[old] = new_id(old.split("_", 1)[0])
    return ids


def blob_size(archive: zipfile.ZipFile, digest: str) -> int | None:
    try:
        return archive.getinfo(f"blobs/{digest}").file_size
    except KeyError:
        return None  # refused as missing when the files are stored


def blob_bytes(archive: zipfile.ZipFile, digest: str) -> bytes:
    name = f"blobs/{digest}"
    try:
        info = archive.getinfo(name)
    except KeyError:
        raise ValidationFailed.field(name, "missing from the archive.") from None
    if info.file_size > MAX_BLOB:
        raise ValidationFailed.field(name, "is larger than any file Crewboard stores.")
    with reading(name), archive.open(info) as entry:
        data = entry.read(MAX_BLOB + 1)
    if digest_of(data) != digest:
        raise ValidationFailed.field(name, "does not match its name: the archive is damaged.")
    return data
