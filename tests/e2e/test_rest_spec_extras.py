"""REST: attachments and comment threads on spec files, over real HTTP, on both databases.

Attachments: upload (keyed, 201, a taken name refused unless `override`), list pages, details,
text in line windows (images and documents have none), the bytes with their media type as a
download (only the four image types inline, never sniffed). Threads: start on a quoted passage,
reply, list by status, edit an own comment from its contentVersion in `If-Match` (412 when
stale) or the body (409), delete as the service says; who may write, another project's rows,
no route that resolves or reopens, and what OpenAPI states of each route.
"""

from __future__ import annotations

import base64
import io
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from crewboard.config import Settings
from crewboard.contract.specs import present as comments
from crewboard.domain.identity.access import Role
from crewboard.domain.specs import MAX_ATTACHMENT_BYTES
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support.factories import count_rows, grant, make_project, make_user
from tests.support.server import free_port, running_server

SCOPES = ["read", "specs.write"]
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256))
JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF" + bytes(100)
GIF = b"GIF89a" + bytes(50)
WEBP = b"RIFF" + (100).to_bytes(4, "little") + b"WEBPVP8 " + bytes(90)
PDF = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\n"
SPEC = "# Plan\nThe cache bursts at noon.\nThe queue drains.\nThe cache bursts at noon.\n"
A = "/projects/CRW/attachments"


def office(part: str) -> bytes:
    """A minimal OOXML package: its content types and the part that makes it DOCX or XLSX."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as package:
        package.writestr("[Content_Types].xml", "<Types/>")
        package.writestr(part, "<x/>")
    return buffer.getvalue()


@pytest.fixture
def server(db: Database, tmp_path: Path) -> Iterator[str]:
    with running_server(Settings(data_dir=tmp_path, port=free_port()), db) as base:
        yield f"{base}/api/v1"


def client_for(
    db: Database, server: str, email: str, role: Role | None, scopes: list[str] = SCOPES
) -> httpx2.Client:
    """A client with a personal token of a new user holding `role` on CRW (None: no role)."""
    user = make_user(db, email)
    if role is not None:
        owner = db.read(lambda uow: uow.users.get_by_email("owner@example.com"))
        assert owner is not None
        grant(db, owner, "CRW", user, role)
    secret = tokens.issue_token(db, person_actor(user), kind="personal", scopes=scopes).secret
    return httpx2.Client(base_url=server, headers={"Authorization": f"Bearer {secret}"})


@pytest.fixture
def api(db: Database, server: str) -> Iterator[httpx2.Client]:
    """The owner of CRW and OTH, with a token that may read and write spec files."""
    owner = make_user(db, "owner@example.com")
    make_project(db, owner, "CRW")
    make_project(db, owner, "OTH")
    secret = tokens.issue_token(db, person_actor(owner), kind="personal", scopes=SCOPES).secret
    with httpx2.Client(base_url=server, headers={"Authorization": f"Bearer {secret}"}) as client:
        yield client


def error_of(answer: httpx2.Response) -> tuple[int, str, Any]:
    error = answer.json()["error"]
    assert error["message"]
    return answer.status_code, error["code"], error["details"].get("field")


def attach(
    api: httpx2.Client, name: str, data: bytes, key: str, project: str = "CRW", **more: Any
) -> httpx2.Response:
    body = {"name": name, "contentBase64": base64.b64encode(data).decode(), **more}
    return api.post(f"/projects/{project}/attachments", json=body, headers={"Idempotency-Key": key})


def attached(api: httpx2.Client, name: str, data: bytes, key: str, **more: Any) -> Any:
    answer = attach(api, name, data, key, **more)
    assert answer.status_code == 201, answer.text
    return answer.json()["attachment"]


def spec_file(api: httpx2.Client, project: str = "CRW", text: str = SPEC) -> Any:
    answer = api.post(
        f"/projects/{project}/specs",
        json={"workspaceId": None, "path": "plan.md", "content": text},
        headers={"Idempotency-Key": f"spec-{project}"},
    )
    assert answer.status_code == 201, answer.text
    return answer.json()["file"]


def start(
    api: httpx2.Client, file: dict[str, Any], quote: str = "The queue drains.", **more: Any
) -> httpx2.Response:
    return api.post(
        f"/projects/CRW/specs/{file['id']}/threads",
        json={"anchorQuote": quote, "body": "Why?", **more},
    )


def started(api: httpx2.Client, file: dict[str, Any], **more: Any) -> Any:
    answer = start(api, file, **more)
    assert answer.status_code == 201, answer.text
    return answer.json()["thread"]


def reply(api: httpx2.Client, thread_id: str, body: str = "Because.") -> Any:
    answer = api.post(f"/projects/CRW/threads/{thread_id}/replies", json={"body": body})
    assert answer.status_code == 201, answer.text
    return answer.json()["comment"]


# --- attachments ---------------------------------------------------------------------------------


def test_an_attachment_is_uploaded_listed_read_in_windows_and_downloaded_as_its_bytes(
    api: httpx2.Client, db: Database
) -> None:
    text = b"one\ntwo\nthree\n"
    made = attach(api, "notes.txt", text, "a-1")
    assert (made.status_code, made.json()["replayed"], made.json()["replaced"]) == (
        201,
        False,
        False,
    )
    item = made.json()["attachment"]
    assert (item["kind"], item["mediaType"], item["size"], item["totalLines"]) == (
        "text",
        "text/plain; charset=utf-8",
        len(text),
        3,
    )
    again = attach(api, "notes.txt", text, "a-1")
    assert (again.status_code, again.json()["replayed"]) == (201, True)
    assert again.json()["attachment"]["id"] == item["id"]
    taken = attach(api, "notes.txt", b"other\n", "a-2")
    assert error_of(taken) == (409, "ALREADY_EXISTS", "name")
    assert taken.json()["error"]["details"]["attachmentId"] == item["id"]
    assert count_rows(db, "attachments") == 1

    details = api.get(f"{A}/{item['id']}")
    assert details.json()["attachment"] == item
    window = api.get(f"{A}/{item['id']}/lines", params={"offset": 2, "limit": 1}).json()
    assert (window["text"], window["totalLines"], window["nextOffset"]) == ("two\n", 3, 3)
    download = api.get(f"{A}/{item['id']}/content")
    assert download.content == text
    assert download.headers["content-type"] == "text/plain; charset=utf-8"
    assert download.headers["content-disposition"] == 'attachment; filename="notes.txt"'
    assert download.headers["x-content-type-options"] == "nosniff"

    replaced = attach(api, "notes.txt", PNG, "a-3", override=True)
    assert (replaced.status_code, replaced.json()["replaced"]) == (201, True)
    now = replaced.json()["attachment"]
    assert (now["id"], now["kind"], now["mediaType"]) == (item["id"], "image", "image/png")
    assert api.get(f"{A}/{item['id']}/content").content == PNG
    assert count_rows(db, "attachments") == 1


def test_the_list_pages_by_name_and_refuses_a_bad_page_or_parameter(api: httpx2.Client) -> None:
    for index, name in enumerate(("c.txt", "a.txt", "b.txt")):
        attached(api, name, f"{name}\n".encode(), f"a-{index}")
    first = api.get(A, params={"limit": 2}).json()
    assert ([i["name"] for i in first["attachments"]], first["total"], first["nextOffset"]) == (
        ["a.txt", "b.txt"],
        3,
        2,
    )
    rest = api.get(A, params={"limit": 2, "offset": 2}).json()
    assert ([i["name"] for i in rest["attachments"]], rest["nextOffset"]) == (["c.txt"], None)
    for params, field in (
        ({"limit": 0}, "limit"),
        ({"limit": 201}, "limit"),
        ({"offset": -1}, "offset"),
        ({"name": "a.txt"}, "name"),
    ):
        status, _, named = error_of(api.get(A, params=params))
        assert (status, named) == (422, field), params
    item = api.get(A).json()["attachments"][0]
    extra = api.get(f"{A}/{item['id']}", params={"revision": 1})
    assert error_of(extra) == (422, "VALIDATION", "revision")


def test_images_download_inline_and_documents_as_attachments_and_neither_has_lines(
    api: httpx2.Client,
) -> None:
    cases = (
        ("shot.png", PNG, "image/png", "inline"),
        ("photo.jpg", JPEG, "image/jpeg", "inline"),
        ("anim.gif", GIF, "image/gif", "inline"),
        ("pic.webp", WEBP, "image/webp", "inline"),
        ("brief.pdf", PDF, "application/pdf", "attachment"),
        (
            "memo.docx",
            office("word/document.xml"),
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
            "attachment",
        ),
        (
            "sheet.xlsx",
            office("xl/workbook.xml"),
            "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
            "attachment",
        ),
    )
    for index, (name, data, media, disposition) in enumerate(cases):
        item = attached(api, name, data, f"a-{index}")
        download = api.get(f"{A}/{item['id']}/content")
        assert download.content == data, name
        assert download.headers["content-type"] == media, name
        assert download.headers["content-disposition"] == f'{disposition}; filename="{name}"'
        assert download.headers["x-content-type-options"] == "nosniff", name
        assert download.headers["content-security-policy"].startswith("sandbox"), name
        lines = api.get(f"{A}/{item['id']}/lines")
        assert error_of(lines) == (422, "VALIDATION", "attachmentId"), name
        assert lines.json()["error"]["details"]["mediaType"] == media
    html = attached(api, 'x "<b>".html', b"<script>alert(1)</script>\n", "a-html")
    page = api.get(f"{A}/{html['id']}/content")
    assert page.headers["content-type"] == "text/plain; charset=utf-8"
    assert page.headers["content-disposition"].startswith('attachment; filename="x _<b>_.html"')


def test_a_bad_upload_is_refused_naming_its_field_and_stores_nothing(
    api: httpx2.Client, db: Database
) -> None:
    def post(body: dict[str, Any]) -> httpx2.Response:
        return api.post(A, json=body, headers={"Idempotency-Key": "bad"})

    for body, answer in (
        ({"name": "x.txt", "contentBase64": "not base64!"}, (422, "VALIDATION", "contentBase64")),
        ({"name": "x.txt"}, (422, "VALIDATION", "contentBase64")),
        (
            {"name": "x.bin", "contentBase64": base64.b64encode(b"\x00\xff\xfe").decode()},
            (422, "VALIDATION", "contentBase64"),
        ),
        ({"name": "a/b.txt", "contentBase64": "eA=="}, (422, "VALIDATION", "name")),
        (
            {"name": "x.txt", "contentBase64": None, "localFilePath": "/etc/passwd"},
            (422, "VALIDATION", "localFilePath"),
        ),
        (
            {"name": "x.txt", "contentBase64": "eA==", "projectId": "OTH"},
            (422, "VALIDATION", "projectId"),
        ),
        ({"name": "x.txt", "contentBase64": "eA==", "override": "yes"}, (422, "VALIDATION", None)),
    ):
        refused = post(body)
        code = error_of(refused)
        assert code[:2] == answer[:2], body
        if answer[2] is not None:
            assert code[2] == answer[2], body
    assert count_rows(db, "attachments") == 0


def test_ten_mib_is_the_most_an_attachment_takes_over_rest(
    api: httpx2.Client, db: Database
) -> None:
    largest = b"%PDF-1.7\n" + bytes(MAX_ATTACHMENT_BYTES - 9)
    made = attached(api, "big.pdf", largest, "big")
    assert made["size"] == MAX_ATTACHMENT_BYTES
    assert api.get(f"{A}/{made['id']}/content").content == largest
    over = attach(api, "bigger.pdf", largest + b"\x00", "bigger")
    assert error_of(over) == (422, "LIMIT_EXCEEDED", "contentBase64")
    assert count_rows(db, "attachments") == 1
    # Other writes keep the smaller limit.
    huge = api.post(
        "/projects/CRW/tasks",
        json={"title": "x", "description": "a" * (5 << 20)},
        headers={"Idempotency-Key": "huge"},  # required there, and refused before the body
    )
    assert huge.status_code == 413


def test_a_reader_or_a_token_without_specs_write_reads_but_every_write_is_403(
    api: httpx2.Client, db: Database, server: str
) -> None:
    item = attached(api, "notes.txt", b"x\n", "a-1")
    file = spec_file(api)
    thread = started(api, file)
    first = thread["comments"][0]
    rows = {t: count_rows(db, t) for t in ("attachments", "spec_comment_threads", "spec_comments")}
    reader = client_for(db, server, "reader@example.com", Role.READ)
    unscoped = client_for(db, server, "writer@example.com", Role.WRITE, scopes=["read"])
    for client in (reader, unscoped):
        with client:
            assert client.get(f"{A}/{item['id']}/content").content == b"x\n"
            listed = client.get(f"/projects/CRW/specs/{file['id']}/threads").json()
            assert [t["id"] for t in listed["threads"]] == [thread["id"]]
            writes = (
                attach(client, "new.txt", b"y\n", "r-1"),
                start(client, file),
                client.post(f"/projects/CRW/threads/{thread['id']}/replies", json={"body": "x"}),
                client.patch(
                    f"/projects/CRW/comments/{first['id']}",
                    json={"body": "x", "expectedVersion": first["contentVersion"]},
                ),
                client.delete(f"/projects/CRW/comments/{first['id']}"),
            )
            for refused in writes:
                assert error_of(refused)[:2] == (403, "PERMISSION_DENIED"), refused.request.url
    after = {t: count_rows(db, t) for t in rows}
    assert after == rows


def test_another_projects_attachment_thread_or_comment_is_404_and_no_role_is_404(
    api: httpx2.Client, db: Database, server: str
) -> None:
    theirs = attached(api, "secret.txt", b"secret\n", "a-1", project="OTH")
    file = spec_file(api, "OTH")
    other_thread = api.post(
        f"/projects/OTH/specs/{file['id']}/threads",
        json={"anchorQuote": "The queue drains.", "body": "Hm."},
    ).json()["thread"]
    comment = other_thread["comments"][0]
    for answer in (
        api.get(f"{A}/{theirs['id']}"),
        api.get(f"{A}/{theirs['id']}/lines"),
        api.get(f"{A}/{theirs['id']}/content"),
        api.get(f"/projects/CRW/specs/{file['id']}/threads"),
        start(api, file),
        api.post(f"/projects/CRW/threads/{other_thread['id']}/replies", json={"body": "x"}),
        api.patch(
            f"/projects/CRW/comments/{comment['id']}",
            json={"body": "x", "expectedVersion": comment["contentVersion"]},
        ),
        api.delete(f"/projects/CRW/comments/{comment['id']}"),
        api.get(f"{A}/att_nothing"),
    ):
        assert error_of(answer)[:2] == (404, "NOT_FOUND"), answer.request.url
    assert count_rows(db, "spec_comments") == 1
    with client_for(db, server, "stranger@example.com", None) as stranger:
        for answer in (
            stranger.get("/projects/OTH/attachments"),
            stranger.get(f"/projects/OTH/attachments/{theirs['id']}/content"),
            stranger.get(f"/projects/OTH/specs/{file['id']}/threads"),
        ):
            assert error_of(answer)[:2] == (404, "NOT_FOUND")
    assert httpx2.get(f"{server}/projects/OTH/attachments").status_code == 401


# --- comment threads -----------------------------------------------------------------------------


def test_a_thread_starts_on_a_passage_gets_replies_and_lists_by_status(
    api: httpx2.Client, db: Database
) -> None:
    file = spec_file(api)
    url = f"/projects/CRW/specs/{file['id']}/threads"
    made = api.post(
        url,
        json={"anchorQuote": "The queue drains.", "body": "Why?"},
        headers={"Idempotency-Key": "t-1"},
    )
    assert (made.status_code, made.json()["replayed"]) == (201, False)
    thread = made.json()["thread"]
    assert (thread["anchor"]["quote"], thread["status"], thread["commentCount"]) == (
        "The queue drains.",
        "open",
        1,
    )
    again = api.post(
        url,
        json={"anchorQuote": "The queue drains.", "body": "Why?"},
        headers={"Idempotency-Key": "t-1"},
    )
    assert (again.json()["replayed"], again.json()["thread"]["id"]) == (True, thread["id"])
    answer = reply(api, thread["id"], "Because it is full.")
    assert (answer["threadId"], answer["yours"]) == (thread["id"], True)
    second = started(api, file, quote="# Plan")

    comments.resolve_thread(
        db,
        person_actor(db.read(lambda uow: uow.users.get_by_email("owner@example.com"))),
        project="CRW",
        workspace_id=None,
        thread_id=second["id"],
    )
    listed = api.get(url).json()
    assert ([t["id"] for t in listed["threads"]], listed["total"]) == (
        [second["id"], thread["id"]],
        2,
    )
    assert listed["file"]["id"] == file["id"]
    assert [c["body"] for c in listed["threads"][1]["comments"]] == ["Why?", "Because it is full."]
    open_only = api.get(url, params={"status": "open"}).json()
    assert [t["id"] for t in open_only["threads"]] == [thread["id"]]
    resolved = api.get(url, params={"status": "resolved"}).json()
    assert [t["id"] for t in resolved["threads"]] == [second["id"]]
    paged = api.get(url, params={"limit": 1, "offset": 1}).json()
    assert ([t["id"] for t in paged["threads"]], paged["nextOffset"]) == ([thread["id"]], None)
    for params, field in (({"status": "closed"}, "status"), ({"limit": 101}, "limit")):
        assert error_of(api.get(url, params=params)) == (422, "VALIDATION", field)


def test_a_repeated_or_missing_quote_is_refused_until_context_singles_it_out(
    api: httpx2.Client, db: Database
) -> None:
    file = spec_file(api)
    repeated = start(api, file, quote="The cache bursts at noon.")
    assert error_of(repeated) == (422, "VALIDATION", "anchorQuote")
    missing = start(api, file, quote="Nowhere in the file.")
    assert error_of(missing) == (422, "VALIDATION", "anchorQuote")
    in_body = start(api, file, fileId=file["id"])
    assert error_of(in_body) == (422, "VALIDATION", "fileId")
    assert count_rows(db, "spec_comment_threads") == 0
    thread = started(api, file, quote="The cache bursts at noon.", anchorPrefix="drains.\n")
    assert thread["anchor"]["start"] == SPEC.rindex("The cache bursts at noon.")

    api.post(f"/projects/CRW/specs/{file['id']}/trash")
    trashed = start(api, file, quote="# Plan")
    assert error_of(trashed) == (422, "VALIDATION", "fileId")
    no_reply = api.post(f"/projects/CRW/threads/{thread['id']}/replies", json={"body": "x"})
    assert error_of(no_reply) == (422, "VALIDATION", "threadId")
    assert count_rows(db, "spec_comments") == 1


def test_a_comment_edit_with_a_stale_if_match_is_412_and_a_stale_body_version_is_409(
    api: httpx2.Client, db: Database
) -> None:
    thread = started(api, spec_file(api))
    first = thread["comments"][0]
    url = f"/projects/CRW/comments/{first['id']}"
    edited = api.patch(
        url, json={"body": "Why, really?"}, headers={"If-Match": first["contentVersion"]}
    )
    assert edited.status_code == 200, edited.text
    now = edited.json()["comment"]
    assert (now["body"], now["id"]) == ("Why, really?", first["id"])
    assert now["contentVersion"] != first["contentVersion"]

    stale = first["contentVersion"]
    by_header = api.patch(url, json={"body": "Mine."}, headers={"If-Match": f'"{stale}"'})
    assert error_of(by_header) == (412, "REVISION_CONFLICT", "expectedVersion")
    assert by_header.json()["error"]["details"]["currentVersion"] == now["contentVersion"]
    by_body = api.patch(url, json={"body": "Mine.", "expectedVersion": stale})
    assert error_of(by_body) == (409, "REVISION_CONFLICT", "expectedVersion")
    neither = api.patch(url, json={"body": "Mine."})
    assert error_of(neither) == (422, "VALIDATION", "expectedVersion")
    for bad in ("*", '"a", "b"', 'W/"x"'):
        refused = api.patch(url, json={"body": "Mine."}, headers={"If-Match": bad})
        assert error_of(refused) == (422, "VALIDATION", "If-Match"), bad
    listed = api.get(f"/projects/CRW/specs/{thread['fileId']}/threads").json()
    assert listed["threads"][0]["comments"][0]["body"] == "Why, really?"
    from_body = api.patch(url, json={"body": "Third.", "expectedVersion": now["contentVersion"]})
    assert from_body.json()["comment"]["body"] == "Third."


def test_another_principals_comment_is_neither_edited_nor_deleted(
    api: httpx2.Client, db: Database, server: str
) -> None:
    thread = started(api, spec_file(api))
    first = thread["comments"][0]
    with client_for(db, server, "writer@example.com", Role.WRITE) as writer:
        edit = writer.patch(
            f"/projects/CRW/comments/{first['id']}",
            json={"body": "Not mine.", "expectedVersion": first["contentVersion"]},
        )
        assert error_of(edit) == (403, "PERMISSION_DENIED", "commentId")
        gone = writer.delete(f"/projects/CRW/comments/{first['id']}")
        assert error_of(gone) == (403, "PERMISSION_DENIED", "commentId")
        theirs = writer.post(f"/projects/CRW/threads/{thread['id']}/replies", json={"body": "Hi"})
        assert theirs.json()["comment"]["yours"] is True
    listed = api.get(f"/projects/CRW/specs/{thread['fileId']}/threads").json()
    assert [c["body"] for c in listed["threads"][0]["comments"]] == ["Why?", "Hi"]
    assert [c["yours"] for c in listed["threads"][0]["comments"]] == [True, False]


def test_deleting_removes_a_reply_keeps_a_placeholder_then_takes_the_empty_thread(
    api: httpx2.Client, db: Database
) -> None:
    file = spec_file(api)
    thread = started(api, file)
    first = thread["comments"][0]
    one, two = reply(api, thread["id"], "One."), reply(api, thread["id"], "Two.")
    removed = api.delete(f"/projects/CRW/comments/{one['id']}")
    assert removed.status_code == 200
    assert removed.json() == {
        "outcome": "removed",
        "commentId": one["id"],
        "threadId": thread["id"],
    }
    placeholder = api.delete(f"/projects/CRW/comments/{first['id']}", params=None)
    assert placeholder.json()["outcome"] == "placeholder"
    listed = api.get(f"/projects/CRW/specs/{file['id']}/threads").json()
    assert [c["deleted"] for c in listed["threads"][0]["comments"]] == [True, False]
    last = api.request("DELETE", f"/projects/CRW/comments/{two['id']}", json={"workspaceId": None})
    assert last.json()["outcome"] == "threadDeleted"
    assert api.get(f"/projects/CRW/specs/{file['id']}/threads").json()["total"] == 0
    again = api.delete(f"/projects/CRW/comments/{two['id']}")
    assert error_of(again)[:2] == (404, "NOT_FOUND")
    assert count_rows(db, "spec_comment_threads") == 0


def test_no_route_resolves_or_reopens_a_thread(api: httpx2.Client, server: str) -> None:
    thread = started(api, spec_file(api))
    for tail in ("resolve", "reopen"):
        answer = api.post(f"/projects/CRW/threads/{thread['id']}/{tail}")
        assert answer.status_code == 404, tail
    status = api.patch(f"/projects/CRW/threads/{thread['id']}", json={"status": "resolved"})
    assert status.status_code in (404, 405)
    paths = httpx2.get(f"{server}/openapi.json").json()["paths"]
    assert not [p for p in paths if "resolve" in p or "reopen" in p]
    listed = api.get(f"/projects/CRW/specs/{thread['fileId']}/threads").json()
    assert listed["threads"][0]["status"] == "open"


def test_openapi_lists_every_attachment_and_thread_route_with_its_parameters_and_bodies(
    server: str,
) -> None:
    paths = httpx2.get(f"{server}/openapi.json").json()["paths"]
    p = "/api/v1/projects/{project}"
    at, threads = f"{p}/attachments", f"{p}/specs/{{file}}/threads"
    assert set(paths[at]) == {"get", "post"}
    assert set(paths[f"{at}/{{attachment}}"]) == {"get"}
    assert set(paths[threads]) == {"get", "post"}
    assert set(paths[f"{p}/threads/{{thread}}/replies"]) == {"post"}
    assert set(paths[f"{p}/comments/{{comment}}"]) == {"patch", "delete"}

    def query(path: str) -> set[str]:
        """The route's own query parameters, besides the optional workspaceId every route
        naming a project may take (checked here: never required)."""
        listed = {p["name"]: p for p in paths[path]["get"]["parameters"] if p["in"] == "query"}
        assert not listed.pop("workspaceId", {"required": False})["required"]
        return set(listed)

    def body(method: str, path: str) -> dict[str, Any]:
        schema: dict[str, Any] = paths[path][method]["requestBody"]["content"]["application/json"][
            "schema"
        ]
        return schema

    assert query(at) == {"limit", "offset"}
    assert query(f"{at}/{{attachment}}") == set()
    assert query(f"{at}/{{attachment}}/lines") == {"offset", "limit"}
    assert query(f"{at}/{{attachment}}/content") == set()
    assert query(threads) == {"status", "limit", "offset"}
    content = paths[f"{at}/{{attachment}}/content"]["get"]["responses"]["200"]["content"]
    assert {"image/png", "application/pdf", "text/plain; charset=utf-8"} <= set(content)
    assert len(content) == 8

    upload = body("post", at)
    assert set(upload["properties"]) == {
        "workspaceId",
        "name",
        "contentBase64",
        "override",
    }
    assert set(upload["required"]) == {"name", "contentBase64"}
    assert "201" in paths[at]["post"]["responses"]
    start_body = body("post", threads)
    assert set(start_body["properties"]) == {
        "workspaceId",
        "anchorQuote",
        "anchorPrefix",
        "anchorSuffix",
        "body",
    }
    assert set(start_body["required"]) == {"anchorQuote", "body"}
    assert set(body("post", f"{p}/threads/{{thread}}/replies")["properties"]) == {
        "workspaceId",
        "body",
    }
    edit = body("patch", f"{p}/comments/{{comment}}")
    assert set(edit["properties"]) == {"workspaceId", "body", "expectedVersion"}
    assert edit["required"] == ["body"]
    assert set(body("delete", f"{p}/comments/{{comment}}")["properties"]) == {"workspaceId"}
