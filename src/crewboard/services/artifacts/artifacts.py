"""Artifacts: sets of files versioned as one unit (see `domain/artifacts`).

`create_artifact` makes revision 1; `write_artifact_revision` adds one, whole or as a delta on a
kept revision; `rollback_artifact` adds one with an earlier revision's files. Every write names
the revision count it read (`expected_version`): a write that lost the race is refused naming
who wrote meanwhile, and nothing is written. After each write only the KEPT_REVISIONS newest
revisions stay; the files of the dropped ones are checked by the blob collector, so bytes no
revision, spec file or attachment names any more are deleted in the same transaction.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from crewboard.domain.artifacts import (
    KEPT_REVISIONS,
    MAX_DESCRIPTION,
    MAX_TITLE,
    Artifact,
    ArtifactFile,
    ArtifactPage,
    ArtifactRevision,
    ArtifactShown,
    ArtifactWritten,
    FileLines,
    RevisionKind,
    apply_delta,
    check_file_size,
    check_paths,
    check_revision,
    check_slug,
    media_type_of,
    oldest_kept,
)
from crewboard.domain.files import (
    FileKind,
    LineIndex,
    check_window,
    digest_of,
    index_lines,
    kind_of,
)
from crewboard.domain.identity.access import Role, Scope
from crewboard.domain.identity.records import Actor
from crewboard.domain.ids import new_id
from crewboard.domain.projects import ProjectAccess
from crewboard.domain.validation import check_text
from crewboard.errors import (
    AlreadyExists,
    NotFound,
    RevisionConflict,
    StaleBaseRevision,
    ValidationFailed,
)
from crewboard.services.artifacts.search_text import index_text
from crewboard.services.idempotency import Ack, KeyedResult, do_keyed_write
from crewboard.services.identity.access import ANY_WORKSPACE, WorkspaceRef, access_project
from crewboard.services.paging import check_page
from crewboard.services.views import iso, stamp_of, who_of
from crewboard.services.windows import TextBlob, read_window
from crewboard.storage.artifacts.repository import ArtifactRepository
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork

MAX_PAGE = 100
DEFAULT_PAGE = 50


@dataclass(frozen=True)
class FileInput:
    """A file a write sends: its path and bytes (decoded by the door)."""

    path: str
    data: bytes


def artifacts_of(uow: UnitOfWork) -> ArtifactRepository:
    return ArtifactRepository(uow.conn)


def not_found(ref: str) -> NotFound:
    return NotFound(
        f"No artifact {ref!r} in this project; list_artifacts shows them (by id or slug).",
        {"resource": "artifact", "ref": ref},
    )


def find_artifact(
    uow: UnitOfWork,
    actor: Actor,
    *,
    project: str,
    ref: str,
    scope: Scope = Scope.READ,
    role: Role = Role.READ,
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
) -> tuple[Artifact, ProjectAccess]:
    """The artifact (by id or slug) of a project the actor may act on this way.

    Raises:
        NotFound, PermissionDenied.
    """
    access = access_project(uow, actor, project, scope=scope, role=role, workspace_id=workspace_id)
    repo = artifacts_of(uow)
    found = None
    if "\x00" not in ref:
        found = repo.get(ref) if ref.startswith("art_") else None
        if found is None:
            found = repo.get_by_slug(access.project.id, ref)
    if found is None or found.project_id != access.project.id:
        raise not_found(ref)
    return found, access


def kept_revision(uow: UnitOfWork, artifact: Artifact, number: int, field: str) -> int:
    """`number` when that revision is kept.

    Raises:
        NotFound: a revision past the newest or older than the kept ones.
    """
    if (
        not 1 <= number <= artifact.revision_count
        or artifacts_of(uow).revision(artifact.id, number) is None
    ):
        oldest = oldest_kept(artifact.revision_count)
        raise NotFound(
            f"{field}: {artifact.slug} has no revision {number}; revisions {oldest} to "
            f"{artifact.revision_count} are kept (the {KEPT_REVISIONS} newest).",
            {"resource": "artifactRevision", "ref": str(number), "field": field,
             "oldestKept": oldest, "newest": artifact.revision_count},
        )  # fmt: skip
    return number


def find_kept(
    uow: UnitOfWork,
    actor: Actor,
    where: tuple[str, WorkspaceRef],
    ref: str,
    revision: int | None,
) -> tuple[Artifact, int]:
    """An artifact of the project `where` names and the number of a kept revision of it
    (None: the newest).

    Raises:
        NotFound: no such artifact, or the revision is not kept.
    """
    project, workspace_id = where
    artifact, _access = find_artifact(
        uow, actor, project=project, ref=ref, workspace_id=workspace_id
    )
    number = artifact.revision_count if revision is None else revision
    return artifact, kept_revision(uow, artifact, number, "revision")


# --- reading -------------------------------------------------------------------------------------


def list_artifacts(
    db: Database,
    actor: Actor,
    *,
    project: str,
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
    limit: int = DEFAULT_PAGE,
    offset: int = 0,
) -> ArtifactPage:
    """The project's artifacts, most recently changed first.

    Raises:
        ValidationFailed: limit outside 1..100, negative offset. NotFound.
    """
    check_page(limit, offset, MAX_PAGE)

    def work(uow: UnitOfWork) -> ArtifactPage:
        access = access_project(uow, actor, project, workspace_id=workspace_id)
        items, total = artifacts_of(uow).page(access.project.id, limit=limit, offset=offset)
        return ArtifactPage(tuple(items), total, offset)

    return db.read(work)


def get_artifact(
    db: Database,
    actor: Actor,
    *,
    project: str,
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
    ref: str,
    revision: int | None = None,
) -> ArtifactShown:
    """An artifact, one revision's files (the newest unless `revision`), and the kept
    revisions, newest first.

    Raises:
        NotFound: no such artifact, or a revision that is not kept.
    """

    def work(uow: UnitOfWork) -> ArtifactShown:
        artifact, number = find_kept(uow, actor, (project, workspace_id), ref, revision)
        repo = artifacts_of(uow)
        shown = repo.revision(artifact.id, number)
        assert shown is not None  # noqa: S101 - checked kept above
        files = tuple(repo.files(artifact.id, number).values())
        return ArtifactShown(artifact, shown, files, tuple(repo.revisions(artifact.id)))

    return db.read(work)


def read_artifact_file(
    db: Database,
    actor: Actor,
    *,
    project: str,
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
    ref: str,
    path: str,
    revision: int | None = None,
    offset: int = 1,
    limit: int,
    room: int,
) -> FileLines:
    """A window of lines of one text file of a revision (the newest unless `revision`).

    Raises:
        NotFound: no such artifact, revision or file. ValidationFailed: a binary file, a bad
        window.
    """
    check_window(offset, limit)
    (wanted,) = check_paths([path], "path") if path else (path,)

    def work(uow: UnitOfWork) -> FileLines:
        artifact, number = find_kept(uow, actor, (project, workspace_id), ref, revision)
        found = artifacts_of(uow).files(artifact.id, number).get(wanted)
        if found is None:
            raise NotFound(
                f"path: revision {number} of {artifact.slug} has no file {wanted}; "
                "get_artifact lists its files.",
                {"resource": "artifactFile", "ref": wanted, "field": "path"},
            )
        if found.kind is not FileKind.TEXT:
            raise ValidationFailed.field(
                "path",
                f"{wanted} is a binary file ({found.media_type}) and cannot be read as lines; "
                "download the revision from the web app or the REST API instead.",
            )
        window = read_window(
            uow.blobs,
            TextBlob(found.digest, found.size, found.lines, wanted),
            offset=offset,
            limit=limit,
            room=room,
        )
        return FileLines(
            artifact, number, found, window.text, offset, window.lines, window.truncated,
            window.next_offset,
        )  # fmt: skip

    return db.read(work)


def revision_bytes(
    db: Database,
    actor: Actor,
    *,
    project: str,
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
    ref: str,
    revision: int | None = None,
) -> tuple[Artifact, int, list[tuple[ArtifactFile, bytes]]]:
    """A kept revision's files with their bytes (for a download).

    Raises:
        NotFound.
    """

    def work(uow: UnitOfWork) -> tuple[Artifact, int, list[tuple[ArtifactFile, bytes]]]:
        artifact, number = find_kept(uow, actor, (project, workspace_id), ref, revision)
        files = artifacts_of(uow).files(artifact.id, number).values()
        return artifact, number, [(f, uow.blobs.read(f.digest)) for f in files]

    return db.read(work)


# --- writing -------------------------------------------------------------------------------------


def _stored_files(uow: UnitOfWork, inputs: Sequence[FileInput]) -> dict[str, ArtifactFile]:
    """The files sent, checked (paths, sizes) and their bytes put in the blob store."""
    paths = check_paths([f.path for f in inputs], "files")
    stored: dict[str, ArtifactFile] = {}
    for i, (path, sent) in enumerate(zip(paths, inputs, strict=True)):
        check_file_size(len(sent.data), f"files[{i}]")
        kind = kind_of(sent.data)
        stored[path] = ArtifactFile(
            path=path,
            kind=kind,
            media_type=media_type_of(path, kind),
            size=len(sent.data),
            digest=uow.blobs.put(sent.data),
            lines=index_lines(sent.data) if kind is FileKind.TEXT else LineIndex(0, (0,)),
        )
    return stored


def _fingerprint(inputs: Sequence[FileInput]) -> list[list[str]]:
    return [[f.path, digest_of(f.data)] for f in inputs]


def _conflict(artifact: Artifact, expected: int) -> RevisionConflict:
    by = artifact.updated_by
    who = who_of(by)
    return RevisionConflict(
        f"{artifact.slug} has moved on: {who} wrote revision {artifact.revision_count} at "
        f"{iso(artifact.updated_at)}, and you named revision count {expected}. Nothing was "
        "written. Read it again with get_artifact and write from its revisionCount.",
        {
            "field": "expectedVersion",
            "expectedVersion": expected,
            "currentVersion": artifact.revision_count,
            "updatedBy": by,
            "updatedAt": iso(artifact.updated_at),
        },
    )


def _delta_base(uow: UnitOfWork, artifact: Artifact, given: int, *, merge: bool) -> int:
    """The revision a delta applies to: `given` when it is the newest; the newest when the
    writer asked to merge onto it.

    Raises:
        NotFound: `given` is not a kept revision. StaleBaseRevision: `given` is older than
        the newest and no merge was asked.
    """
    base = kept_revision(uow, artifact, given, "baseRevision")
    current = artifact.revision_count
    if base == current or merge:
        return current
    by = artifact.updated_by
    newer = f"revision {current}" if current == base + 1 else f"revisions {base + 1} to {current}"
    raise StaleBaseRevision(
        f"baseRevision: {base} is not the newest revision of {artifact.slug}; {who_of(by)} "
        f"wrote revision {current} at {iso(artifact.updated_at)}. A delta on {base} would undo "
        f"what {newer} changed in the files it does not name, so nothing was written. Send "
        f"the delta on baseRevision {current} (get_artifact shows its files), or pass "
        f"mergeOntoCurrent: true to apply these files and removals onto revision {current}.",
        {
            "field": "baseRevision",
            "baseRevision": base,
            "currentRevision": current,
            "updatedBy": by,
            "updatedAt": iso(artifact.updated_at),
        },
    )


def _add_revision(
    uow: UnitOfWork,
    actor: Actor,
    access: ProjectAccess,
    artifact: Artifact,
    files: dict[str, ArtifactFile],
    *,
    kind: RevisionKind,
    base: int | None,
) -> tuple[Artifact, ArtifactRevision]:
    """Write the next revision of `artifact` (read in this transaction), drop what falls out
    of the kept window, and collect the blobs nobody names any more."""
    check_revision(files)
    repo = artifacts_of(uow)
    stamp = stamp_of(uow, actor)
    number = artifact.revision_count + 1
    saved = ArtifactRevision(
        artifact_id=artifact.id,
        revision=number,
        kind=kind,
        base_revision=base,
        file_count=len(files),
        total_size=sum(f.size for f in files.values()),
        author=stamp,
        created_at=uow.now,
    )
    moved = replace(artifact, revision_count=number, updated_by=stamp, updated_at=uow.now)
    if not repo.advance(moved, expected_count=artifact.revision_count):
        raise _conflict(repo.get(artifact.id) or artifact, artifact.revision_count)
    repo.add_revision(saved, files.values())
    index_text(uow, moved, files)
    dropped = repo.drop_before(artifact.id, oldest_kept(number))
    if dropped:
        uow.blobs.collect(dropped)
    uow.record_event(
        "artifact.created" if number == 1 else "artifact.revised",
        actor=actor.as_payload(),
        payload={"artifactId": artifact.id, "slug": artifact.slug, "revision": number,
                 "kind": kind.value, "baseRevision": base, "fileCount": len(files)},
        project_id=access.project.id,
        workspace_id=access.project.workspace_id,
    )  # fmt: skip
    return moved, saved


Answer = Callable[[ArtifactWritten], dict[str, Any]]
"""The door's wording of what a write made, kept in the idempotency ledger for a retry."""


def _written(
    answer: Answer, artifact: Artifact, saved: ArtifactRevision, files: dict[str, ArtifactFile]
) -> Ack:
    return Ack(
        answer(ArtifactWritten(artifact, saved, tuple(files.values()))),
        resource_type="artifact",
        resource_id=artifact.id,
        project_id=artifact.project_id,
    )


def create_artifact(
    db: Database,
    actor: Actor,
    *,
    project: str,
    workspace_id: WorkspaceRef,
    slug: str,
    title: str | None,
    description: str | None,
    files: Sequence[FileInput],
    idempotency_key: str | None,
    answer: Answer,
) -> KeyedResult:
    """A new artifact with these files as revision 1 (keyed); the body is `answer`'s wording
    of what was made.

    Raises:
        AlreadyExists: the slug is taken in the project. ValidationFailed, LimitExceeded,
        NotFound, PermissionDenied, IdempotencyConflict.
    """
    slug = check_slug(slug)
    shown_title = check_text("title", title or "", max_length=MAX_TITLE) or slug
    about = check_text("description", description or "", max_length=MAX_DESCRIPTION)
    check_paths([f.path for f in files], "files")

    def work(uow: UnitOfWork) -> KeyedResult:
        access = access_project(
            uow, actor, project, scope=Scope.SPECS_WRITE, role=Role.WRITE,
            workspace_id=workspace_id,
        )  # fmt: skip
        repo = artifacts_of(uow)

        def perform() -> Ack:
            taken = repo.get_by_slug(access.project.id, slug)
            if taken is not None:
                raise AlreadyExists(
                    f"slug: the project already has an artifact {slug}; write a revision of it "
                    "(write_artifact_revision) or choose another slug.",
                    {"field": "slug", "artifactId": taken.id, "slug": slug},
                )
            stamp = stamp_of(uow, actor)
            # Added with no revision; _add_revision then moves it to 1 like any write.
            artifact = Artifact(
                id=new_id("art"), project_id=access.project.id, slug=slug, title=shown_title,
                description=about, revision_count=0, created_by=stamp, created_at=uow.now,
                updated_by=stamp, updated_at=uow.now,
            )  # fmt: skip
            repo.add(artifact)
            stored = _stored_files(uow, files)
            moved, saved = _add_revision(
                uow, actor, access, artifact, stored, kind=RevisionKind.FULL, base=None
            )
            return _written(answer, moved, saved, stored)

        return do_keyed_write(
            uow, actor, key=idempotency_key, operation="create_artifact",
            arguments={"project": access.project.id, "slug": slug, "title": shown_title,
                       "description": about, "files": _fingerprint(files)},
            perform=perform,
        )  # fmt: skip

    return db.write(work)


def write_artifact_revision(
    db: Database,
    actor: Actor,
    *,
    project: str,
    workspace_id: WorkspaceRef,
    ref: str,
    files: Sequence[FileInput],
    remove: Sequence[str],
    base_revision: int | None,
    expected_version: int,
    idempotency_key: str | None,
    answer: Answer,
    merge_onto_current: bool = False,
) -> KeyedResult:
    """The next revision: without `base_revision` the files sent are the whole artifact; with
    it, they replace or add to that revision's files and the paths in `remove` go (keyed).
    The base must be the newest revision, unless `merge_onto_current` asks for the files and
    removals to be applied onto the newest one instead.

    Raises:
        RevisionConflict: the artifact no longer has `expected_version` revisions.
        StaleBaseRevision: the base is older than the newest revision and no merge was asked.
        NotFound (the artifact, or a base revision that is not kept), ValidationFailed,
        LimitExceeded, PermissionDenied, IdempotencyConflict.
    """
    check_paths([f.path for f in files], "files")
    removed = check_paths(remove, "remove")
    for name, given in (("remove", bool(removed)), ("mergeOntoCurrent", merge_onto_current)):
        if given and base_revision is None:
            raise ValidationFailed.field(
                name, "applies to a delta: pass baseRevision, the revision the change is on."
            )

    def work(uow: UnitOfWork) -> KeyedResult:
        artifact, access = find_artifact(
            uow, actor, project=project, ref=ref, scope=Scope.SPECS_WRITE, role=Role.WRITE,
            workspace_id=workspace_id,
        )  # fmt: skip

        def perform() -> Ack:
            if artifact.revision_count != expected_version:
                raise _conflict(artifact, expected_version)
            stored = _stored_files(uow, files)
            base = None
            if base_revision is None:
                result, kind = stored, RevisionKind.FULL
            else:
                base = _delta_base(uow, artifact, base_revision, merge=merge_onto_current)
                base_files = artifacts_of(uow).files(artifact.id, base)
                result, kind = apply_delta(base_files, stored, removed), RevisionKind.DELTA
            moved, saved = _add_revision(uow, actor, access, artifact, result, kind=kind, base=base)
            return _written(answer, moved, saved, result)

        arguments: dict[str, Any] = {
            "artifact": artifact.id, "files": _fingerprint(files), "remove": removed,
            "base": base_revision, "expected": expected_version,
        }  # fmt: skip
        if merge_onto_current:  # keys taken before the option keep their fingerprint
            arguments["merge"] = True
        return do_keyed_write(
            uow, actor, key=idempotency_key, operation="write_artifact_revision",
            arguments=arguments, perform=perform,
        )  # fmt: skip

    return db.write(work)


def rollback_artifact(
    db: Database,
    actor: Actor,
    *,
    project: str,
    workspace_id: WorkspaceRef,
    ref: str,
    revision: int,
    expected_version: int,
    idempotency_key: str | None,
    answer: Answer,
) -> KeyedResult:
    """A new revision with the files of an earlier kept one; history is never rewritten
    (keyed).

    Raises:
        RevisionConflict, NotFound (a revision no longer kept), PermissionDenied,
        IdempotencyConflict.
    """

    def work(uow: UnitOfWork) -> KeyedResult:
        artifact, access = find_artifact(
            uow, actor, project=project, ref=ref, scope=Scope.SPECS_WRITE, role=Role.WRITE,
            workspace_id=workspace_id,
        )  # fmt: skip

        def perform() -> Ack:
            if artifact.revision_count != expected_version:
                raise _conflict(artifact, expected_version)
            number = kept_revision(uow, artifact, revision, "revision")
            files = artifacts_of(uow).files(artifact.id, number)
            moved, saved = _add_revision(
                uow, actor, access, artifact, files, kind=RevisionKind.ROLLBACK, base=number
            )
            return _written(answer, moved, saved, files)

        return do_keyed_write(
            uow, actor, key=idempotency_key, operation="rollback_artifact",
            arguments={"artifact": artifact.id, "revision": revision,
                       "expected": expected_version},
            perform=perform,
        )  # fmt: skip

    return db.write(work)
