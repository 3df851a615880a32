"""The attachment tools over real HTTP with the official SDK client, both protocol eras: an
image comes back whole as an image part, text in line windows, a document is refused with
where to open it, and `localFilePath` is the stdio server's alone."""

from __future__ import annotations

import base64

import mcp_types as types
import pytest

from crewboard.contract.specs import present as attachments
from crewboard.domain.identity.records import User
from crewboard.domain.specs import MAX_ATTACHMENT_BYTES
from crewboard.services.identity import tokens, users
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support import zips
from tests.support.factories import make_project, make_user
from tests.support.mcp_client import body_of, mcp_client

pytestmark = pytest.mark.anyio

SPECS = {"X-MCP-Toolsets": "specs"}
ON = {"projectId": "CRW", "workspaceId": None}
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))
PDF = b"%PDF-1.7\n1 0 obj\n<<>>\nendobj\n"


@pytest.fixture
def secret(db: Database) -> str:
    user: User = make_user(db, "alice@example.com")
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
        assert body_of(read)["attachment"]["id"] == made["id"]


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
