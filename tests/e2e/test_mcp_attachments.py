"""The attachment tools over real HTTP with the official SDK client, both protocol eras: a small
image comes back whole as an image part and a large one scaled within the bounds (its original
whole over REST and in the web app), text in line windows, a document is refused with where to
open it, and `localFilePath` is the stdio server's alone."""

from __future__ import annotations

import base64
import hashlib
import os
from io import BytesIO

import httpx2
import mcp_types as types
import pytest
from PIL import Image

from crewboard.contract.specs import present as attachments
from crewboard.domain.identity.records import User
from crewboard.domain.specs import MAX_ATTACHMENT_BYTES
from crewboard.services.identity import tokens, users
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support import zips
from tests.support.factories import make_project, make_user
from tests.support.mcp_client import body_of, mcp_client
from tests.support.web import sign_in

pytestmark = pytest.mark.anyio

SPECS = {"X-MCP-Toolsets": "specs"}
ON = {"projectId": "CRW", "workspaceId": None}
PNG_HEAD = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))  # a PNG's magic only


def png(picture: Image.Image) -> bytes:
    out = BytesIO()
    picture.save(out, format="PNG")
    return out.getvalue()


PNG = png(Image.linear_gradient("L").resize((320, 200)))
PDF = b"%PDF-1.7\n1 0 obj\n<<>>\nendobj\n"


EMAIL = "alice@example.com"


@pytest.fixture
def secret(db: Database) -> str:
    user: User = make_user(db, EMAIL)
    make_project(db, user, "CRW")
    issued = tokens.issue_token(
        db, person_actor(user), kind="personal", scopes=["read", "specs.write"]
    )
    return issued.secret


def encoded(data: bytes) -> str:
    return base64.b64encode(data).decode()


async def test_an_image_is_read_whole_as_an_image_part(url: str, secret: str, mode: str) -> None:
    async with mcp_client(url, secret, mode, SPECS) as client:
        made = body_of(
            await client.call_tool(
                "upload_attachment", {**ON, "name": "logo.txt", "contentBase64": encoded(PNG)}
            )
        )["attachment"]
        assert made["mediaType"] == "image/png"  # the bytes decide, not the name
        read = await client.call_tool(
            "read_attachment", {"projectId": "CRW", "attachmentId": made["id"]}
        )
        assert not read.is_error
        images = [part for part in read.content if isinstance(part, types.ImageContent)]
        assert len(images) == 1
        assert images[0].mime_type == "image/png"
        assert base64.b64decode(images[0].data) == PNG
        answer = body_of(read)
        assert answer["attachment"]["id"] == made["id"]
        assert answer["image"] == {
            "mediaType": "image/png", "width": 320, "height": 200, "size": len(PNG),
            "scaled": False,
        }  # fmt: skip


async def test_a_large_image_is_scaled_within_the_bounds_and_the_original_downloads_whole(
    url: str, secret: str, mode: str
) -> None:
    noise = Image.frombytes("RGB", (1800, 1300), os.urandom(1800 * 1300 * 3))
    noise.putalpha(255)  # RGBA, as a screenshot: the noise does not compress
    big = png(noise)
    assert len(big) > 6_500_000
    async with mcp_client(url, secret, mode, SPECS) as client:
        made = body_of(
            await client.call_tool(
                "upload_attachment", {**ON, "name": "screen.png", "contentBase64": encoded(big)}
            )
        )["attachment"]
        read = await client.call_tool(
            "read_attachment", {"projectId": "CRW", "attachmentId": made["id"]}
        )
        assert not read.is_error, read.content
        (image,) = [part for part in read.content if isinstance(part, types.ImageContent)]
        shown = base64.b64decode(image.data)
        assert image.mime_type == "image/png"
        assert len(shown) <= 1024 * 1024
        opened = Image.open(BytesIO(shown))
        assert opened.format == "PNG"
        assert max(opened.size) <= 1568
        view = body_of(read)["image"]
        assert (view["scaled"], view["width"], view["height"]) == (True, *opened.size)
        assert (view["original"]["width"], view["original"]["size"]) == (1800, len(big))
        download = f"/api/v1/projects/{made['projectId']}/attachments/{made['id']}/content"
        assert download in view["original"]["download"]
        note = read.content[1]
        assert isinstance(note, types.TextContent)
        assert "1800×1300" in note.text
        assert download in note.text
    original = hashlib.sha256(big).hexdigest()
    rest = httpx2.get(f"{url}{download}", headers={"Authorization": f"Bearer {secret}"}, timeout=30)
    assert rest.status_code == 200
    assert hashlib.sha256(rest.content).hexdigest() == original
    person = sign_in(url, EMAIL)
    try:
        web = person.get(f"/p/CRW/attachments/{made['id']}/raw")
    finally:
        person.close()
    assert web.status_code == 200
    assert hashlib.sha256(web.content).hexdigest() == original


async def test_an_image_that_cannot_be_decoded_is_refused_with_where_to_download_it(
    url: str, secret: str, mode: str
) -> None:
    async with mcp_client(url, secret, mode, SPECS) as client:
        made = body_of(
            await client.call_tool(
                "upload_attachment", {**ON, "name": "odd.png", "contentBase64": encoded(PNG_HEAD)}
            )
        )["attachment"]
        refused = await client.call_tool(
            "read_attachment", {"projectId": "CRW", "attachmentId": made["id"]}
        )
        assert refused.is_error
        error = refused.structured_content
        assert isinstance(error, dict)
        assert (error["code"], error["details"]["field"]) == ("VALIDATION", "attachmentId")
        assert f"attachments/{made['id']}/content" in error["message"]


async def test_text_reads_in_windows_and_a_document_is_refused_with_where_to_open_it(
    url: str, secret: str, mode: str
) -> None:
    text = "".join(f"requirement {n}\n" for n in range(1, 4001))
    async with mcp_client(url, secret, mode, SPECS) as client:
        notes = body_of(
            await client.call_tool(
                "upload_attachment",
                {**ON, "name": "notes.md", "contentBase64": encoded(text.encode())},
            )
        )["attachment"]
        pieces, offset = [], 1
        while offset is not None:
            window = body_of(
                await client.call_tool(
                    "read_attachment",
                    {"projectId": "CRW", "attachmentId": notes["id"], "offset": offset},
                )
            )
            pieces.append(window["text"])
            offset = window["nextOffset"]
        assert "".join(pieces) == text
        pdf = body_of(
            await client.call_tool(
                "upload_attachment", {**ON, "name": "spec.pdf", "contentBase64": encoded(PDF)}
            )
        )["attachment"]
        refused = await client.call_tool(
            "read_attachment", {"projectId": "CRW", "attachmentId": pdf["id"]}
        )
        assert refused.is_error
        assert isinstance(refused.structured_content, dict)
        assert refused.structured_content["code"] == "VALIDATION"
        assert "web app" in refused.structured_content["message"]
        listed = body_of(await client.call_tool("list_attachments", {"projectId": "CRW"}))
        assert [a["name"] for a in listed["attachments"]] == ["notes.md", "spec.pdf"]


async def test_override_replaces_and_a_local_path_is_refused_over_http(
    url: str, secret: str, mode: str
) -> None:
    async with mcp_client(url, secret, mode, SPECS) as client:
        first = body_of(
            await client.call_tool(
                "upload_attachment", {**ON, "name": "a.txt", "contentBase64": encoded(b"one\n")}
            )
        )["attachment"]
        taken = await client.call_tool(
            "upload_attachment", {**ON, "name": "a.txt", "contentBase64": encoded(b"two\n")}
        )
        assert taken.is_error
        assert isinstance(taken.structured_content, dict)
        assert taken.structured_content["code"] == "ALREADY_EXISTS"
        replaced = body_of(
            await client.call_tool(
                "upload_attachment",
                {**ON, "name": "a.txt", "contentBase64": encoded(b"two\n"), "override": True},
            )
        )
        assert replaced["replaced"] is True
        assert replaced["attachment"]["id"] == first["id"]
        local = await client.call_tool(
            "upload_attachment", {**ON, "name": "b.txt", "localFilePath": "b.txt"}
        )
        assert local.is_error
        assert isinstance(local.structured_content, dict)
        assert "stdio" in local.structured_content["message"]


async def test_a_docx_whose_zip_directory_needs_a_newer_version_is_a_validation_error(
    url: str, secret: str, mode: str
) -> None:
    async with mcp_client(url, secret, mode, SPECS) as client:
        refused = await client.call_tool(
            "upload_attachment",
            {
                **ON,
                "name": "report.docx",
                "contentBase64": encoded(zips.high_version_needed()),
            },
        )
        assert refused.is_error
        assert isinstance(refused.structured_content, dict)
        assert refused.structured_content["code"] == "VALIDATION"
        assert refused.structured_content["details"]["field"] == "contentBase64"
        assert "report.docx" in refused.structured_content["message"]
        listed = body_of(await client.call_tool("list_attachments", {"projectId": "CRW"}))
    assert listed["attachments"] == []


async def test_a_ten_mib_attachment_goes_over_http_and_one_byte_more_is_refused(
    url: str, secret: str, db: Database, mode: str
) -> None:
    largest = PNG + bytes(MAX_ATTACHMENT_BYTES - len(PNG))
    async with mcp_client(url, secret, mode, SPECS) as client:
        made = body_of(
            await client.call_tool(
                "upload_attachment", {**ON, "name": "big.png", "contentBase64": encoded(largest)}
            )
        )["attachment"]
        assert made["size"] == MAX_ATTACHMENT_BYTES
        over = await client.call_tool(
            "upload_attachment",
            {**ON, "name": "bigger.png", "contentBase64": encoded(largest + b"\x00")},
        )
        assert over.is_error
        assert isinstance(over.structured_content, dict)
        assert over.structured_content["details"]["field"] == "contentBase64"
        listed = body_of(await client.call_tool("list_attachments", {"projectId": "CRW"}))
    assert [a["name"] for a in listed["attachments"]] == ["big.png"]
    alice = person_actor(users.get_user_by_email(db, "alice@example.com"))
    _view, stored = attachments.read_attachment_bytes(
        db, alice, project="CRW", attachment_id=made["id"]
    )
    assert stored == largest
