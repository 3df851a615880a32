"""Importing an export archive (see `services/transfer/archive.py`) in one transaction: the
plan, the clash checks, landing every document through the checks of `checks.py`, and the
people the projects name."""

from __future__ import annotations

import secrets
import time
import zipfile
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from crewboard.domain.identity.passwords import hash_password
from crewboard.domain.identity.records import User
from crewboard.domain.ids import new_id
from crewboard.domain.projects import check_project_key
from crewboard.errors import (
    AlreadyExists,
    LimitExceeded,
    NotFound,
    ValidationFailed,
)
from crewboard.services.transfer import checks
from crewboard.services.transfer.format import (
    ANY_ID,
    DIGEST,
    Advance,
    counted,
    no_progress,
)
from crewboard.services.transfer.reading import (
    archive_people,
    blob_bytes,
    blob_size,
    checked_manifest,
    new_ids_for,
    open_archive,
    read_documents,
)
from crewboard.storage import transfer as rows
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork


@dataclass
class _Plan:
    manifest: dict[str, Any]
    people: list[dict[str, Any]]
    new_ids: bool
    key: str | None
    workspace_id: str | None
    ids: dict[str, str] = field(default_factory=dict)
    # The password hash of every account the import makes: a secret nobody holds. Hashed once
    # and before the write (argon2 is slow on purpose; the write lock is not held for it), when
    # someone of the archive has no account here yet.
    locked_password: str = ""
    key_rules: tuple[str, str] | None = None  # (old key, new key)
    match_people: bool = False


def read_manifest(path: Path) -> dict[str, Any]:
    """The archive's manifest, checked. Raises ValidationFailed naming what is wrong."""
    with open_archive(path) as archive:
        return checked_manifest(archive)


def import_archive(
    db: Database,
    path: Path,
    *,
    new_ids: bool = False,
    key: str | None = None,
    workspace_id: str | None = None,
    dry_run: bool = False,
    match_people: bool = False,
    advance: Advance = no_progress,
) -> dict[str, Any]:
    """Import every project of the archive in one transaction; the report of what it did (or,
    with `dry_run`, what it would do: the same work, rolled back). `match_people` lets the
    archive's people be matched by email to accounts already here.

    Raises ValidationFailed (a damaged or foreign archive, a value the API would refuse, a row
    of another project: naming the document, line and column; people who would be matched
    without `match_people`), LimitExceeded (a value or file over the API's limits),
    AlreadyExists (a project or key already on this server), NotFound (the workspace)."""
    started = time.perf_counter()
    with open_archive(path) as archive:
        manifest = checked_manifest(archive)
        people = archive_people(archive)
        if key is not None:
            key = check_project_key(key)
            if len(manifest["projects"]) != 1:
                raise ValidationFailed.field(
                    "key",
                    f"renames one project, and this archive holds {len(manifest['projects'])}.",
                )
        plan = _Plan(manifest, people, new_ids, key, workspace_id, match_people=match_people)
        if db.read(lambda uow: any(uow.users.get_by_email(p["email"]) is None for p in people)):
            plan.locked_password = _locked_password()
        if new_ids:
            plan.ids = new_ids_for(archive, manifest)
        run = db.rehearse if dry_run else db.write
        report = run(lambda uow: _import(uow, archive, plan, dry_run, advance))
    report["seconds"] = round(time.perf_counter() - started, 3)
    return report


def _import(
    uow: UnitOfWork, archive: zipfile.ZipFile, plan: _Plan, dry_run: bool, advance: Advance
) -> dict[str, Any]:
    uow.long_transaction()  # a big archive is one long transaction
    conn = uow.conn
    if plan.workspace_id is not None and uow.workspaces.get(plan.workspace_id) is None:
        raise NotFound(
            f"workspace: no workspace {plan.workspace_id!r} on this server.",
            {"resource": "workspace", "ref": plan.workspace_id},
        )
    for project in plan.manifest["projects"]:
        _check_clash(uow, plan, project)
    people = _land_people(uow, plan)
    report: dict[str, Any] = {
        "dryRun": dry_run,
        "newIds": plan.new_ids,
        "people": {k: v for k, v in people.items() if k != "ids"},
        "projects": [],
    }
    digests: set[str] = set()
    mapping = {**plan.ids, **people["mapped"]}
    for project in plan.manifest["projects"]:
        target_key = plan.key or project["key"]
        target_id = plan.ids.get(project["id"], project["id"])
        plan.key_rules = (project["key"], target_key) if target_key != project["key"] else None
        owned = checks.Ownership(target_id, target_key, people["ids"])
        counts: dict[str, int] = {}
        for carried in rows.CARRIED:
            where = f"projects/{project['id']}/{carried.name}.jsonl"
            documents = read_documents(archive, project, carried)
            landed = (
                _landed(
                    row,
                    carried,
                    mapping=mapping,
                    plan=plan,
                    digests=digests,
                    archive=archive,
                    owned=owned,
                    where=where,
                    line=line,
                )
                for line, row in documents
            )
            try:
                count = rows.write_rows(conn, carried, counted(landed, advance), where=where)
            finally:
                documents.close()  # a refused row leaves its document open otherwise
            owned.finish()
            if count:
                counts[carried.name] = count
        owned.settle(conn)
        report["projects"].append(
            {"id": target_id, "key": target_key, "name": project["name"], "documents": counts}
        )
    stored = 0
    for digest in sorted(digests):
        data = blob_bytes(archive, digest)
        if uow.blobs.put(data) != digest:  # pragma: no cover - _blob checked the digest
            raise ValidationFailed.field(f"blobs/{digest}", "does not match its name.")
        stored += len(data)
        advance("files", 1)
    report["blobs"] = {"count": len(digests), "bytes": stored}
    return report


def _check_clash(uow: UnitOfWork, plan: _Plan, project: dict[str, Any]) -> None:
    """Refuse a project whose id or key is already on this server."""
    target_key = plan.key or project["key"]
    target_id = plan.ids.get(project["id"], project["id"])
    if uow.projects.get(target_id) is not None:
        raise AlreadyExists(
            f"project {project['key']} ({project['id']}) is already on this server: to "
            f"import a second copy, use new ids and another key (--new-ids --key NEWKEY).",
            {"resource": "project", "ref": project["id"]},
        )
    if uow.projects.get_by_key(target_key) is not None:
        raise AlreadyExists(
            f"key: a project with key {target_key} is already on this server; import "
            f"under another key (--key NEWKEY).",
            {"field": "key", "resource": "project", "ref": target_key},
        )


def _landed(
    row: dict[str, Any],
    carried: rows.Carried,
    *,
    mapping: dict[str, str],
    plan: _Plan,
    digests: set[str],
    archive: zipfile.ZipFile,
    owned: checks.Ownership,
    where: str,
    line: int,
) -> dict[str, Any]:
    for column in rows.BLOB_COLUMNS[carried.name]:
        digest = row.get(column)
        if not isinstance(digest, str) or not DIGEST.match(digest):
            raise checks.refusal(
                where, line, column, f"{digest!r} is not a sha256 digest.", ValidationFailed
            )
        limit = checks.BLOB_LIMITS.get((carried.name, column))
        size = blob_size(archive, digest)
        if limit is not None and size is not None and size > limit:
            raise checks.refusal(
                where,
                line,
                column,
                f"names a file of {size} bytes, over the limit of {limit}.",
                LimitExceeded,
            )
        digests.add(digest)
    landed = {name: _remap(value, mapping, plan.key_rules) for name, value in row.items()}
    if carried.name == "projects" and plan.key_rules is not None:
        landed["key"] = plan.key_rules[1]
    owned.check(carried, row, landed, where, line)
    if carried.name in ("events", "projects"):
        landed["workspace_id"] = plan.workspace_id
    return landed


def _remap(value: Any, mapping: dict[str, str], keys: tuple[str, str] | None) -> Any:
    if isinstance(value, str):
        if mapping and "_" in value:  # an id, or ids inside a text (`handoff:hof_…`, links)
            value = ANY_ID.sub(lambda m: mapping.get(m.group(0), m.group(0)), value)
        if keys is not None:
            old, new = keys
            if value.startswith(f"{old}-") and value[len(old) + 1 :].isdigit():
                return f"{new}-{value[len(old) + 1 :]}"
            value = value.replace(f"/p/{old}/", f"/p/{new}/")
        return value
    if isinstance(value, list):
        return [_remap(v, mapping, keys) for v in value]
    if isinstance(value, dict):
        return {k: _remap(v, mapping, keys) for k, v in value.items()}
    return value


def _land_people(uow: UnitOfWork, plan: _Plan) -> dict[str, Any]:
    """Give each person an account without a usable password, or (with `match_people`) match
    them by email to the account already here. Without it, an archive naming people who have
    an account here is refused listing them: the operator decides whether the archive's rows
    may stand in those accounts' names."""
    found = {p["email"]: uow.users.get_by_email(p["email"]) for p in plan.people}
    existing = sorted(email for email, user in found.items() if user is not None)
    if existing and not plan.match_people:
        raise ValidationFailed(
            f"people.json: {len(existing)} of the archive's people already have an account "
            f"here ({', '.join(existing)}): their rows would be written in those accounts' "
            "names. If these are the same people, import with --match-people.",
            {"field": "people.json", "wouldMatch": existing},
        )
    mapped: dict[str, str] = {}
    matched: list[str] = []
    created: list[str] = []
    for person in plan.people:
        email = person["email"]
        user = found[email] or uow.users.get_by_email(email)  # twice in people.json
        if user is not None:
            mapped[person["id"]] = user.id
            if email not in matched and email not in created:
                matched.append(email)
            continue
        if not plan.locked_password:  # made here since the check before the write
            plan.locked_password = _locked_password()
        user_id = person["id"]
        if not rows.USER_ID.match(user_id) or uow.users.get(user_id) is not None or plan.new_ids:
            user_id = new_id("usr")
        mapped[person["id"]] = user_id
        uow.users.add(
            User(user_id, email, person["display_name"], _created_at(person, uow.now)),
            plan.locked_password,
        )
        created.append(email)
    return {
        "matched": matched,
        "created": created,
        "mapped": {old: new for old, new in mapped.items() if old != new},
        "ids": set(mapped.values()),
    }


def _locked_password() -> str:
    """The password hash of an account the import makes: of a secret nobody holds."""
    return hash_password(secrets.token_urlsafe(32))


def _created_at(person: dict[str, Any], now: datetime) -> datetime:
    """When the account was made on the server it comes from (people.json was checked); now,
    when the archive does not say."""
    return datetime.fromisoformat(person["created_at"]) if person.get("created_at") else now
