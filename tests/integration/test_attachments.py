"""Attachments on both databases: the type read from the bytes (never the name), the accepted
types and the 10 MiB limit, names and `override`, text in line windows, images whole, documents
refused with where to open them, access, keys and events."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable
from typing import Any

import pytest

from crewboard.contract.specs import present as attachments
from crewboard.domain.identity.access import Role
from crewboard.domain.identity.records import Actor, User
from crewboard.domain.packages import MAX_PACKAGE_MEMBERS, MAX_PACKAGE_UNPACKED_BYTES
from crewboard.domain.specs import MAX_ATTACHMENT_BYTES
from crewboard.errors import (
    AlreadyExists,
    CrewboardError,
    ErrorCode,
    IdempotencyConflict,
    LimitExceeded,
    NotFound,
    PermissionDenied,
    ValidationFailed,
)
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support import spec_calls, zips
from tests.support.factories import count_rows, grant, make_project, make_user, token_actor

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
JPEG = b"\xff\xd8\xff\xe0" + b"\x00\x10JFIF" + bytes(100)
GIF = b"GIF89a" + bytes(50)
WEBP = b"RIFF" + (100).to_bytes(4, "little") + b"WEBPVP8 " + bytes(90)
PDF = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\n"


def office(part: str) -> bytes:
    """A minimal OOXML package: its content types and the part that makes it DOCX or XLSX."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as package:
        package.writestr("[Content_Types].xml", "<Types/>")
        package.writestr(part, "<x/>")
    return buffer.getvalue()


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    return user


@pytest.fixture
def me(owner: User) -> Actor:
    return person_actor(owner)


def upload(db: Database, actor: Actor, name: str, content: bytes, **options: Any) -> dict[str, Any]:
    made = spec_calls.upload_attachment(
        db,
        actor,
        project="CRW",
        workspace_id=None,
        name=name,
        content=content,
        override=options.pop("override", False),
        idempotency_key=options.pop("key", None),
    )
    return dict(made.body["attachment"])


@pytest.mark.parametrize(
    ("content", "kind", "media_type"),
    [
        (PNG, "image", "image/png"),
        (JPEG, "image", "image/jpeg"),
        (GIF, "image", "image/gif"),
        (WEBP, "image", "image/webp"),
        (PDF, "document", "application/pdf"),
        (
            office("word/document.xml"),
            "document",
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        ),
        (
            office("xl/workbook.xml"),
            "document",
            "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        ),
        ("Notes — déjà vu\n".encode(), "text", "text/plain; charset=utf-8"),
    ],
)
def test_each_accepted_type_is_known_by_its_bytes(
    db: Database, me: Actor, content: bytes, kind: str, media_type: str
) -> None:
    made = upload(db, me, "file.bin", content)
    assert (made["kind"], made["mediaType"], made["size"]) == (kind, media_type, len(content))


def test_the_type_comes_from_the_bytes_not_the_name(db: Database, me: Actor) -> None:
    png_named_txt = upload(db, me, "screenshot.txt", PNG)
    text_named_png = upload(db, me, "notes.png", b"plain words\n")
    assert png_named_txt["mediaType"] == "image/png"
    assert text_named_png["mediaType"] == "text/plain; charset=utf-8"
    read = attachments.read_attachment(db, me, project="CRW", attachment_id=text_named_png["id"])
    assert read["text"] == "plain words\n"


@pytest.mark.parametrize(
    "content",
    [
        b"\x00\x01\x02binary",  # not text, no known signature
        b"PK\x03\x04not really a zip",
        office("content.xml"),  # a zip, but not DOCX or XLSX
        b"\xff\xfe\xfd not utf-8",
    ],
)
def test_other_bytes_are_refused_naming_the_accepted_types(
    db: Database, me: Actor, content: bytes
) -> None:
    with pytest.raises(ValidationFailed) as refused:
        upload(db, me, "x", content)
    assert "PDF, DOCX, XLSX, PNG, JPEG, GIF, WebP, UTF-8 text" in refused.value.message
    assert refused.value.details["field"] == "content"
    assert count_rows(db, "attachments") == 0


@pytest.mark.parametrize("make", list(zips.UNREADABLE.values()), ids=list(zips.UNREADABLE))
def test_a_zip_package_that_cannot_be_read_whole_is_refused_naming_the_file(
    db: Database, me: Actor, make: Callable[[], bytes]
) -> None:
    with pytest.raises(ValidationFailed) as refused:
        upload(db, me, "report.docx", make())
    assert refused.value.code == ErrorCode.VALIDATION
    assert refused.value.details["field"] == "content"
    assert refused.value.details["name"] == "report.docx"
    assert "report.docx" in refused.value.message
    assert count_rows(db, "attachments") == 0


def test_a_zip_bomb_is_refused_once_it_unpacks_past_the_bound(db: Database, me: Actor) -> None:
    bomb = zips.bomb(MAX_PACKAGE_UNPACKED_BYTES + 1)
    assert len(bomb) < MAX_ATTACHMENT_BYTES
    with pytest.raises(ValidationFailed) as refused:
        upload(db, me, "bomb.docx", bomb)
    assert "MiB" in refused.value.message
    assert count_rows(db, "attachments") == 0


def test_a_package_of_more_members_than_the_bound_is_refused(db: Database, me: Actor) -> None:
    with pytest.raises(ValidationFailed) as refused:
        upload(db, me, "many.docx", zips.many_members(MAX_PACKAGE_MEMBERS))
    assert str(MAX_PACKAGE_MEMBERS) in refused.value.message
    assert count_rows(db, "attachments") == 0


def test_every_mutant_of_a_docx_is_taken_or_refused_as_validation(db: Database, me: Actor) -> None:
    """150 DOCX files with a few header bytes changed: each is either a readable DOCX or a
    VALIDATION refusal; never another error."""
    assert upload(db, me, "plain.docx", zips.docx())["kind"] == "document"
    outcomes: set[str] = set()
    for index, mutant in enumerate(zips.mutants(150)):
        outcomes.add(_taken_or_refused(db, me, f"mutant-{index}.docx", mutant))
    assert outcomes == {"taken", "refused"}


def _taken_or_refused(db: Database, me: Actor, name: str, content: bytes) -> str:
    """'taken', or 'refused' for a VALIDATION naming the content (anything else fails)."""
    try:
        upload(db, me, name, content)
    except ValidationFailed as refused:
        return (
            f"refused {refused.details}" if refused.details.get("field") != "content" else "refused"
        )
    return "taken"


def test_ten_mebibytes_are_taken_and_one_byte_more_is_refused(db: Database, me: Actor) -> None:
    line = b"x" * 1023 + b"\n"
    largest = line * (MAX_ATTACHMENT_BYTES // len(line))
    assert len(largest) == MAX_ATTACHMENT_BYTES
    assert upload(db, me, "largest.txt", largest)["size"] == MAX_ATTACHMENT_BYTES
    with pytest.raises(LimitExceeded) as refused:
        upload(db, me, "too-large.txt", largest + b"y")
    assert refused.value.details == {
        "field": "content",
        "limit": MAX_ATTACHMENT_BYTES,
        "actual": MAX_ATTACHMENT_BYTES + 1,
    }


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("", ErrorCode.VALIDATION),
        ("   ", ErrorCode.VALIDATION),
        ("docs/a.txt", ErrorCode.VALIDATION),
        ("a\\b.txt", ErrorCode.VALIDATION),
        ("a\x01.txt", ErrorCode.VALIDATION),
        ("..", ErrorCode.VALIDATION),
        ("n" * 256, ErrorCode.LIMIT_EXCEEDED),
    ],
)
def test_a_bad_name_is_refused_naming_the_field(
    db: Database, me: Actor, name: str, code: ErrorCode
) -> None:
    with pytest.raises(CrewboardError) as refused:
        upload(db, me, name, b"text\n")
    assert refused.value.code == code
    assert refused.value.details["field"] == "name"


def test_a_taken_name_is_refused_unless_override_replaces_it_under_the_same_id(
    db: Database, me: Actor
) -> None:
    first = upload(db, me, "brief.txt", b"first\n")
    with pytest.raises(AlreadyExists) as refused:
        upload(db, me, "brief.txt", PNG)
    assert refused.value.details["attachmentId"] == first["id"]
    replaced = upload(db, me, "brief.txt", PNG, override=True)
    assert replaced["id"] == first["id"]
    assert (replaced["mediaType"], replaced["size"]) == ("image/png", len(PNG))
    assert replaced["createdAt"] == first["createdAt"]
    listed = attachments.list_attachments(db, me, project="CRW")
    assert listed["total"] == 1


def test_text_reads_in_windows_images_whole_and_documents_are_refused(
    db: Database, me: Actor
) -> None:
    text = "".join(f"line {n}\n" for n in range(1, 5001)).encode()
    notes = upload(db, me, "notes.txt", text)
    pieces, offset, reads = [], 1, 0
    while offset is not None:
        window = attachments.read_attachment(
            db, me, project="CRW", attachment_id=notes["id"], offset=offset, limit=2000
        )
        pieces.append(window["text"])
        offset = window["nextOffset"]
        reads += 1
    assert "".join(pieces).encode() == text
    assert reads == 3
    image = upload(db, me, "logo.png", PNG)
    read = attachments.read_attachment(db, me, project="CRW", attachment_id=image["id"])
    assert read["image"] == PNG
    document = upload(db, me, "spec.pdf", PDF)
    with pytest.raises(ValidationFailed) as refused:
        attachments.read_attachment(db, me, project="CRW", attachment_id=document["id"])
    assert "web app" in refused.value.message
    assert refused.value.details["mediaType"] == "application/pdf"


def test_the_same_bytes_are_stored_once(db: Database, me: Actor) -> None:
    upload(db, me, "a.png", PNG)
    upload(db, me, "b.png", PNG)
    assert count_rows(db, "attachments") == 2
    assert count_rows(db, "blobs") == 1


def test_access_follows_the_project_roles_and_token_scopes(
    db: Database, owner: User, me: Actor
) -> None:
    made = upload(db, me, "a.txt", b"a\n")
    stranger = person_actor(make_user(db, "stranger@example.com"))
    with pytest.raises(NotFound):
        attachments.get_attachment(db, stranger, project="CRW", attachment_id=made["id"])
    reader = make_user(db, "reader@example.com")
    grant(db, owner, "CRW", reader, Role.READ)
    assert (
        attachments.get_attachment(
            db, person_actor(reader), project="CRW", attachment_id=made["id"]
        )["attachment"]["name"]
        == "a.txt"
    )
    with pytest.raises(PermissionDenied):
        upload(db, person_actor(reader), "b.txt", b"b\n")
    read_only = token_actor(db, owner, ["read"])
    with pytest.raises(PermissionDenied):
        upload(db, read_only, "c.txt", b"c\n")
    make_project(db, owner, "OTH")
    with pytest.raises(NotFound):
        attachments.get_attachment(db, me, project="OTH", attachment_id=made["id"])


def test_a_keyed_upload_replays_and_a_changed_payload_is_refused(db: Database, me: Actor) -> None:
    first = upload(db, me, "a.txt", b"a\n", key="att-1")
    assert upload(db, me, "a.txt", b"a\n", key="att-1")["id"] == first["id"]
    with pytest.raises(IdempotencyConflict):
        upload(db, me, "a.txt", b"other\n", key="att-1")
    assert count_rows(db, "attachments") == 1


def test_uploads_record_events(db: Database, me: Actor) -> None:
    made = upload(db, me, "a.txt", b"a\n")
    upload(db, me, "a.txt", b"b\n", override=True)
    rows = db.read(lambda uow: uow.events.list_after(project_id=None, limit=100))
    kinds = [(r["type"], r["payload"].get("attachmentId")) for r in rows]
    assert ("attachment.added", made["id"]) in kinds
    assert ("attachment.replaced", made["id"]) in kinds
