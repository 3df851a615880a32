"""Web pages: a project's artifacts. The list; one artifact with a revision's files, the kept
revisions and a line diff of a file between two of them; a zip of a revision; and the preview,
where an HTML mockup runs in a sandboxed frame.

The preview frame has `sandbox="allow-scripts"` and no `allow-same-origin`, and its files are
served with a CSP that sandboxes them the same way, so a mockup's script runs with an origin of
its own: it reads none of the app's cookies, storage or pages, and what it fetches goes out
without a session. It loads its own files under a short-lived capability in the path
(`services/artifacts/previews.py`).
"""

from __future__ import annotations

import io
import zipfile
from typing import Any
from urllib.parse import quote

from anyio import to_thread
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from crewboard.contract.artifacts import present
from crewboard.domain.validation import parse_whole
from crewboard.errors import CrewboardError, ValidationFailed
from crewboard.services.artifacts import artifacts, previews
from crewboard.web.context import Page, project_routes
from crewboard.web.diffs import diff_rows
from crewboard.web.downloads import download

PAGE_SIZE = 100
DIFF_BYTES = 1024 * 1024  # the most of each file a diff compares
# The preview's files: scripts and styles of the mockup itself (inline, or its own files under
# the grant's address), images and fonts from it or data: URLs, nothing fetched, no form sent,
# no plugin, framed only by the app; sandboxed without same-origin even when opened on their
# own. `{own}` is the grant's folder as an absolute URL: 'self' would not do, since a
# sandboxed document has no origin for it to match.
PREVIEW_CSP = (
    "sandbox allow-scripts; default-src 'none'; script-src {own} 'unsafe-inline'; "
    "style-src {own} 'unsafe-inline'; img-src {own} data:; font-src {own} data:; "
    "media-src {own}; connect-src 'none'; form-action 'none'; object-src 'none'; "
    "base-uri 'none'; frame-ancestors 'self'"
)


def _ref(page: Page) -> str:
    return str(page.request.path_params["artifact"])


def _revision(page: Page, name: str = "revision") -> int | None:
    raw = page.param(name).strip()
    return parse_whole(name, raw, minimum=1) if raw else None


def _shown(page: Page, revision: int | None) -> dict[str, Any]:
    return present.shown_view(
        artifacts.get_artifact(
            page.db, page.actor, project=page.project_key, ref=_ref(page), revision=revision
        )
    )


def artifact_list(page: Page) -> Response:
    raw = page.param("offset").strip()
    offset = parse_whole("offset", raw) if raw else 0
    found = present.page_view(
        artifacts.list_artifacts(
            page.db, page.actor, project=page.project_key, limit=PAGE_SIZE, offset=offset
        )
    )
    return page.render(
        "artifacts.html", title="Artifacts", found=found, offset=offset, page_size=PAGE_SIZE
    )


def artifact_page(page: Page) -> Response:
    shown = _shown(page, _revision(page))
    compare = None
    problem = None
    if page.param("path") and page.param("from") and page.param("to"):
        try:
            compare = _compare(page)
        except CrewboardError as error:
            problem = error.message
    return page.render(
        "artifact.html",
        title=shown["artifact"]["title"],
        shown=shown,
        compare=compare,
        problem=problem,
    )


def _compare(page: Page) -> dict[str, Any]:
    """One file's lines between two kept revisions (a file missing in one is empty there)."""
    path = page.param("path")
    numbers = [_revision(page, "from"), _revision(page, "to")]
    texts = []
    for number in numbers:
        _artifact, _n, files = artifacts.revision_bytes(
            page.db, page.actor, project=page.project_key, ref=_ref(page), revision=number
        )
        found = next((data for f, data in files if f.path == path), b"")
        if len(found) > DIFF_BYTES or b"\x00" in found:
            raise ValidationFailed.field("path", f"{path} is not text this page can compare.")
        texts.append(found.decode("utf-8", errors="replace"))
    rows = diff_rows(texts[0], texts[1], f"revision {numbers[0]}", f"revision {numbers[1]}")
    return {"path": path, "from": numbers[0], "to": numbers[1], "rows": rows, "same": not rows}


def artifact_zip(page: Page) -> Response:
    artifact, number, files = artifacts.revision_bytes(
        page.db, page.actor, project=page.project_key, ref=_ref(page), revision=_revision(page)
    )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for found, data in files:
            archive.writestr(found.path, data)
    name = f"{artifact.slug}-r{number}.zip"
    return download(buffer.getvalue(), name, "application/zip", inline=False)


def artifact_file(page: Page) -> Response:
    _artifact, number, files = artifacts.revision_bytes(
        page.db, page.actor, project=page.project_key, ref=_ref(page), revision=_revision(page)
    )
    path = page.param("path")
    for found, data in files:
        if found.path == path:
            return download(data, path.rsplit("/", 1)[-1], found.media_type, inline=True)
    raise ValidationFailed.field("path", f"revision {number} has no file {path}.")


def artifact_preview(page: Page) -> Response:
    opened = previews.open_preview(
        page.db, page.actor, project=page.project_key, ref=_ref(page), revision=_revision(page)
    )
    shown = _shown(page, opened.revision)
    start = opened.start
    frame = f"/preview/{opened.token}/{quote(start)}" if start else None
    return page.render(
        "artifact_preview.html", title=f"Preview of {shown['artifact']['title']}",
        shown=shown, frame=frame,
    )  # fmt: skip


async def preview_raw(request: Request) -> Response:
    """A file of the previewed revision, to the holder of the grant's token; no session."""
    token = request.path_params["token"]
    path = request.path_params["path"]
    try:
        found, data = await to_thread.run_sync(
            previews.preview_file, request.app.state.db, token, path
        )
    except CrewboardError as error:
        return Response(
            error.message,
            status_code=error.http_status,
            media_type="text/plain; charset=utf-8",
            headers={"Content-Security-Policy": "sandbox; default-src 'none'"},
        )
    return Response(
        data,
        media_type=found.media_type,
        headers={
            "Content-Security-Policy": PREVIEW_CSP.format(
                own=f"{str(request.base_url).rstrip('/')}/preview/{quote(token)}/"
            ),
            "X-Frame-Options": "SAMEORIGIN",
            "X-Content-Type-Options": "nosniff",
            "Cache-Control": "private, no-store",
            "Referrer-Policy": "no-referrer",
        },
    )


ROUTES: list[BaseRoute] = [
    *project_routes("artifacts", get=artifact_list),
    *project_routes("artifacts/{artifact}", get=artifact_page),
    *project_routes("artifacts/{artifact}/zip", get=artifact_zip),
    *project_routes("artifacts/{artifact}/file", get=artifact_file),
    *project_routes("artifacts/{artifact}/preview", get=artifact_preview),
    Route("/preview/{token}/{path:path}", preview_raw, methods=["GET"]),
]
