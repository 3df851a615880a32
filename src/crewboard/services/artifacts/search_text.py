"""What search finds of an artifact (storage/search_texts.py): kept at each revision."""

from __future__ import annotations

import re

from crewboard.domain.artifacts import Artifact, ArtifactFile
from crewboard.domain.files import FileKind
from crewboard.storage.search_texts import MAX_TEXT, put_text
from crewboard.storage.uow import UnitOfWork

_TAG = re.compile(r"<[^>]*>")


def index_text(uow: UnitOfWork, artifact: Artifact, files: dict[str, ArtifactFile]) -> None:
    """Keep what search finds of the artifact: its title, description and text files' words."""
    parts = [artifact.description]
    room = MAX_TEXT
    for file in files.values():
        if file.kind is FileKind.TEXT and room > 0:
            text = uow.blobs.read(file.digest, 0, room).decode("utf-8", "replace")
            # A page's words, not its tags (search shows them as text).
            parts.append(_TAG.sub(" ", text) if "html" in file.media_type else text)
            room -= len(parts[-1])
    put_text(
        uow.conn, kind="artifact", id=artifact.id, project_id=artifact.project_id,
        title=artifact.title, content="\n\n".join(parts), at=uow.now,
    )  # fmt: skip
