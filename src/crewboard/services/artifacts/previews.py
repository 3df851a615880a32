"""Previews: a person looks at an artifact's revision as a page (an HTML mockup with its
styles, scripts and images) in a sandboxed frame of the web app.

The frame's document has no origin of its own (sandbox without allow-same-origin), so it
reaches neither the app's cookies nor its pages, and the requests it makes carry no session.
Its files are therefore fetched under a capability: `open_preview` grants a look at one
revision for PREVIEW_SECONDS and gives a random token (stored hashed); `preview_file` serves a
file of that revision to whoever holds the token, and nothing else.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from crewboard.domain.artifacts import ArtifactFile, PreviewGrant
from crewboard.domain.files import normalise_path
from crewboard.domain.identity.records import Actor
from crewboard.errors import NotFound
from crewboard.services.artifacts.artifacts import (
    artifacts_of,
    find_kept,
)
from crewboard.services.identity.access import ANY_WORKSPACE
from crewboard.services.views import stamp_of
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork

PREVIEW_SECONDS = 3600
START_PAGES = ("index.html", "index.htm")


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def open_preview(
    db: Database, actor: Actor, *, project: str, ref: str, revision: int | None = None
) -> PreviewGrant:
    """A token to look at a kept revision (the newest unless `revision`), and the page to
    start from: index.html when the revision has one, else its first HTML file, else None.

    Raises:
        NotFound: no such artifact or kept revision open to the actor.
    """
    token = secrets.token_urlsafe(24)

    def work(uow: UnitOfWork) -> PreviewGrant:
        artifact, number = find_kept(uow, actor, (project, ANY_WORKSPACE), ref, revision)
        repo = artifacts_of(uow)
        repo.drop_expired_previews(uow.now)
        repo.add_preview(
            _hash(token), artifact.id, number, stamp_of(uow, actor),
            uow.now + timedelta(seconds=PREVIEW_SECONDS),
        )  # fmt: skip
        paths = list(repo.files(artifact.id, number))
        pages = [p for p in paths if p.lower().endswith((".html", ".htm"))]
        start = next((p for p in START_PAGES if p in paths), pages[0] if pages else None)
        return PreviewGrant(token, number, start)

    return db.write(work)


def preview_file(db: Database, token: str, path: str) -> tuple[ArtifactFile, bytes]:
    """A file of the revision the token grants, with its bytes.

    Raises:
        NotFound: an unknown or expired token, or no such file in that revision.
    """
    wanted = normalise_path(path) if path else ""

    def work(uow: UnitOfWork) -> tuple[ArtifactFile, bytes]:
        granted = artifacts_of(uow).preview(_hash(token), uow.now)
        found = None
        if granted is not None:
            found = artifacts_of(uow).files(*granted).get(wanted)
        if found is None:
            raise NotFound(
                "This preview has ended or holds no such file; open the preview again.",
                {"resource": "artifactPreview"},
            )
        return found, uow.blobs.read(found.digest)

    return db.read(work)
