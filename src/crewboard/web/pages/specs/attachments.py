"""Web pages: a project's attachments. The list with image previews, upload (with "replace the
one of this name"), and the bytes: images inline, anything else as a download."""

from __future__ import annotations

from starlette.responses import Response
from starlette.routing import BaseRoute

from crewboard.contract.specs import present
from crewboard.domain.validation import parse_whole
from crewboard.errors import CrewboardError, ValidationFailed
from crewboard.jsonbody import MAX_UPLOAD_BODY
from crewboard.services.specs import attachments
from crewboard.web.context import Page, project_routes
from crewboard.web.downloads import download
from crewboard.web.forms import show_refusal

PAGE_SIZE = 100


def _listed(page: Page, offset: int = 0) -> dict[str, object]:
    return present.list_attachments(
        page.db, page.actor, project=page.project_key, limit=PAGE_SIZE, offset=offset
    )


def attachment_list(page: Page) -> Response:
    raw = page.param("offset").strip()
    offset = parse_whole("offset", raw) if raw else 0
    return page.render(
        "attachments.html",
        title="Attachments",
        found=_listed(page, offset),
        offset=offset,
        page_size=PAGE_SIZE,
    )


def attachment_upload(page: Page) -> Response:
    uploaded = page.upload("file")
    try:
        if uploaded is None:
            raise ValidationFailed.field("file", "choose a file to attach.")
        name = page.field("name").strip() or uploaded[0]
        assert page.project is not None  # noqa: S101 - a project route
        made = attachments.upload_attachment(
            page.db,
            page.actor,
            project=page.project_key,
            workspace_id=page.project["workspaceId"],
            name=name,
            content=uploaded[1],
            override=page.field("override") == "1",
            idempotency_key=page.field("key") or None,
            content_field="file",
            answer=present.uploaded_view,
        )
    except CrewboardError as error:
        show_refusal(page, error)
        return page.render(
            "attachments.html",
            status_code=error.http_status,
            title="Attachments",
            found=_listed(page),
            offset=0,
            page_size=PAGE_SIZE,
        )
    item = made.body["attachment"]
    verb = "Replaced" if made.body["replaced"] else "Attached"
    return page.redirect(page.path("attachments"), notice=f"{verb} {item['name']}.")


def attachment_raw(page: Page) -> Response:
    view, data = present.read_attachment_bytes(
        page.db,
        page.actor,
        project=page.project_key,
        attachment_id=page.request.path_params["attachment_id"],
    )
    return download(data, view["name"], view["mediaType"], inline=page.param("download") != "1")


ROUTES: list[BaseRoute] = [
    *project_routes(
        "attachments", get=attachment_list, post=attachment_upload, body_limit=MAX_UPLOAD_BODY
    ),
    *project_routes("attachments/{attachment_id}/raw", get=attachment_raw),
]
