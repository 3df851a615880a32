"""REST: spec files over real HTTP, with the codes MCP gives and HTTP's statuses.

The whole cycle (upload, list, details, a line window, save, trash, restore), a save's version
in `If-Match` (412 when stale) against one in the body (409), the download's bytes and headers
for a text and a binary file, who may write, another project's file, a bad path, list pages.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from crewboard.config import Settings
from crewboard.domain.identity.access import Role
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support.factories import count_rows, grant, make_project, make_user
from tests.support.server import free_port, running_server

SCOPES = ["read", "specs.write"]
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))


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


def upload(api: httpx2.Client, path: str, key: str, project: str = "CRW", **body: Any) -> Any:
    answer = api.post(
        f"/projects/{project}/specs",
        json={"workspaceId": None, "path": path, **body},
        headers={"Idempotency-Key": key},
    )
    assert answer.status_code == 201, answer.text
    return answer.json()["file"]


def error_of(answer: httpx2.Response) -> tuple[int, str, Any]:
    error = answer.json()["error"]
    assert error["message"]
    return answer.status_code, error["code"], error["details"].get("field")


def test_a_spec_file_goes_through_upload_list_read_save_trash_and_restore(
    api: httpx2.Client,
) -> None:
    body = {"workspaceId": None, "path": "docs//./design.md", "content": "# Design\nline 2\n"}
    made = api.post("/projects/CRW/specs", json=body, headers={"Idempotency-Key": "u-1"})
    assert made.status_code == 201
    file = made.json()["file"]
    assert (file["path"], file["kind"], file["totalLines"], made.json()["replayed"]) == (
        "docs/design.md",
        "text",
        2,
        False,
    )
    again = api.post("/projects/CRW/specs", json=body, headers={"Idempotency-Key": "u-1"})
    assert (again.status_code, again.json()["replayed"]) == (201, True)
    assert again.json()["file"]["id"] == file["id"]
    taken = api.post("/projects/CRW/specs", json=body, headers={"Idempotency-Key": "u-2"})
    assert error_of(taken) == (409, "ALREADY_EXISTS", "path")

    listed = api.get("/projects/CRW/specs").json()
    assert [f["id"] for f in listed["files"]] == [file["id"]]
    details = api.get(f"/projects/CRW/specs/{file['id']}", params={"revisions": 5}).json()
    assert details["file"]["contentVersion"] == file["contentVersion"]
    assert [r["revision"] for r in details["revisions"]] == [1]

    saved = api.put(
        f"/projects/CRW/specs/{file['id']}",
        json={"content": "# Design\nline 2\nline 3\n"},
        headers={"If-Match": f'"{file["contentVersion"]}"', "Idempotency-Key": "s-1"},
    )
    assert saved.status_code == 200, saved.text
    newer = saved.json()["file"]
    assert (newer["revisionCount"], saved.json()["revision"]["revision"]) == (2, 2)
    assert newer["contentVersion"] != file["contentVersion"]
    window = api.get(f"/projects/CRW/specs/{file['id']}/lines", params={"offset": 2, "limit": 1})
    assert window.json()["text"] == "line 2\n"
    assert (window.json()["totalLines"], window.json()["nextOffset"]) == (3, 3)
    old = api.get(f"/projects/CRW/specs/{file['id']}/lines", params={"revision": 1}).json()
    assert (old["text"], old["contentVersion"]) == ("# Design\nline 2\n", file["contentVersion"])

    trashed = api.post(f"/projects/CRW/specs/{file['id']}/trash")
    assert (trashed.status_code, trashed.json()["changed"]) == (200, True)
    assert api.get("/projects/CRW/specs").json()["total"] == 0
    assert [f["id"] for f in api.get("/projects/CRW/specs?trashed=true").json()["files"]] == [
        file["id"]
    ]
    hidden = api.get(f"/projects/CRW/specs/{file['id']}")
    assert error_of(hidden)[:2] == (404, "NOT_FOUND")
    assert hidden.json()["error"]["details"]["trashed"] is True
    shown = api.get(f"/projects/CRW/specs/{file['id']}", params={"includeTrashed": "true"})
    assert shown.json()["file"]["trashed"] is True
    restored = api.post(f"/projects/CRW/specs/{file['id']}/restore", json={"workspaceId": None})
    assert (restored.status_code, restored.json()["changed"]) == (200, True)
    assert api.get("/projects/CRW/specs").json()["files"][0]["path"] == "docs/design.md"
    twice = api.post(f"/projects/CRW/specs/{file['id']}/restore")
    assert twice.json()["changed"] is False


def test_a_stale_if_match_is_412_and_a_stale_body_version_is_409_and_neither_writes(
    api: httpx2.Client, db: Database
) -> None:
    file = upload(api, "plan.md", "u-1", content="v1\n")
    first = file["contentVersion"]
    url = f"/projects/CRW/specs/{file['id']}"
    second = api.put(url, json={"content": "v2\n", "expectedVersion": first}).json()["file"]
    revisions = count_rows(db, "spec_file_revisions")

    by_header = api.put(url, json={"content": "mine\n"}, headers={"If-Match": f'"{first}"'})
    assert error_of(by_header) == (412, "REVISION_CONFLICT", "expectedVersion")
    details = by_header.json()["error"]["details"]
    assert (details["currentVersion"], details["currentRevision"]) == (
        second["contentVersion"],
        2,
    )
    assert details["updatedBy"]
    by_body = api.put(url, json={"content": "mine\n", "expectedVersion": first})
    assert error_of(by_body) == (409, "REVISION_CONFLICT", "expectedVersion")
    assert by_body.json()["error"]["details"]["currentVersion"] == second["contentVersion"]
    neither = api.put(url, json={"content": "mine\n"})
    assert error_of(neither) == (422, "VALIDATION", "expectedVersion")
    for bad in ("*", '"a", "b"', 'W/"x"', '""'):
        refused = api.put(url, json={"content": "mine\n"}, headers={"If-Match": bad})
        assert error_of(refused) == (422, "VALIDATION", "If-Match"), bad
    assert count_rows(db, "spec_file_revisions") == revisions
    assert api.get(f"{url}/content").content == b"v2\n"

    bare = api.put(url, json={"content": "v3\n"}, headers={"If-Match": second["contentVersion"]})
    assert bare.json()["file"]["revisionCount"] == 3


def test_the_download_of_a_text_file_is_its_utf8_bytes_with_etag_and_a_safe_filename(
    api: httpx2.Client,
) -> None:
    text = 'Größe "quoted"\r\nno newline at the end'
    file = upload(api, 'notes/Übersicht "v1".md', "u-1", content=text)
    answer = api.get(f"/projects/CRW/specs/{file['id']}/content")
    assert answer.status_code == 200
    assert answer.content == text.encode("utf-8")
    assert answer.headers["content-type"] == "text/plain; charset=utf-8"
    assert answer.headers["etag"] == f'"{file["contentVersion"]}"'
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert answer.headers["content-disposition"] == (
        "attachment; filename=\"_bersicht _v1_.md\"; filename*=UTF-8''%C3%9Cbersicht%20%22v1%22.md"
    )
    plain = upload(api, "plain.txt", "u-2", content="x")
    disposition = api.get(f"/projects/CRW/specs/{plain['id']}/content").headers
    assert disposition["content-disposition"] == 'attachment; filename="plain.txt"'


def test_the_download_of_a_binary_file_is_its_exact_bytes_and_an_older_revision_its_own(
    api: httpx2.Client,
) -> None:
    encoded = base64.b64encode(PNG).decode()
    file = upload(api, "img/logo.png", "u-1", contentBase64=encoded)
    assert (file["kind"], file["size"], file["totalLines"]) == ("binary", len(PNG), None)
    url = f"/projects/CRW/specs/{file['id']}"
    answer = api.get(f"{url}/content")
    assert answer.content == PNG
    assert answer.headers["content-type"] == "application/octet-stream"
    assert answer.headers["content-disposition"] == 'attachment; filename="logo.png"'
    assert answer.headers["etag"] == f'"{file["contentVersion"]}"'
    lines = api.get(f"{url}/lines")
    assert error_of(lines) == (422, "VALIDATION", "fileId")

    newer = api.put(
        url,
        json={"content": "now text\n"},
        headers={"If-Match": f'"{file["contentVersion"]}"'},
    ).json()["file"]
    now = api.get(f"{url}/content")
    assert (now.content, now.headers["content-type"]) == (
        b"now text\n",
        "text/plain; charset=utf-8",
    )
    assert now.headers["etag"] == f'"{newer["contentVersion"]}"'
    first = api.get(f"{url}/content", params={"revision": 1})
    assert (first.content, first.headers["content-type"]) == (PNG, "application/octet-stream")
    assert first.headers["etag"] == f'"{file["contentVersion"]}"'
    missing = api.get(f"{url}/content", params={"revision": 3})
    assert error_of(missing)[:2] == (404, "NOT_FOUND")
    bad = api.post(
        "/projects/CRW/specs",
        json={"workspaceId": None, "path": "x.bin", "contentBase64": "not base64!"},
        headers={"Idempotency-Key": "u-2"},
    )
    assert error_of(bad) == (422, "VALIDATION", "contentBase64")


def test_a_reader_or_a_token_without_specs_write_reads_but_every_write_is_403(
    api: httpx2.Client, db: Database, server: str
) -> None:
    file = upload(api, "spec.md", "u-1", content="v1\n")
    url = f"/projects/CRW/specs/{file['id']}"
    files_before = count_rows(db, "spec_files")
    reader = client_for(db, server, "reader@example.com", Role.READ)
    unscoped = client_for(db, server, "writer@example.com", Role.WRITE, scopes=["read"])
    for client in (reader, unscoped):
        with client:
            assert client.get(url).status_code == 200
            assert client.get(f"{url}/content").content == b"v1\n"
            writes = (
                client.post(
                    "/projects/CRW/specs",
                    json={"workspaceId": None, "path": "new.md", "content": "x"},
                    headers={"Idempotency-Key": "r-1"},
                ),
                client.put(
                    url, json={"content": "x"}, headers={"If-Match": file["contentVersion"]}
                ),
                client.post(f"{url}/trash"),
                client.post(f"{url}/restore"),
            )
            for refused in writes:
                assert error_of(refused)[:2] == (403, "PERMISSION_DENIED")
    assert count_rows(db, "spec_files") == files_before
    assert api.get(url).json()["file"] == file


def test_another_projects_file_and_a_project_without_a_role_are_404(
    api: httpx2.Client, db: Database, server: str
) -> None:
    theirs = upload(api, "other.md", "u-1", project="OTH", content="secret\n")
    on_crw = f"/projects/CRW/specs/{theirs['id']}"
    for answer in (
        api.get(on_crw),
        api.get(f"{on_crw}/lines"),
        api.get(f"{on_crw}/content"),
        api.put(on_crw, json={"content": "x"}, headers={"If-Match": theirs["contentVersion"]}),
        api.post(f"{on_crw}/trash"),
        api.get("/projects/CRW/specs/spf_nothing"),
    ):
        assert error_of(answer)[:2] == (404, "NOT_FOUND"), answer.request.url
    assert api.get(f"/projects/OTH/specs/{theirs['id']}/content").content == b"secret\n"
    with client_for(db, server, "stranger@example.com", None) as stranger:
        for answer in (
            stranger.get("/projects/OTH/specs"),
            stranger.get(f"/projects/OTH/specs/{theirs['id']}/content"),
        ):
            assert error_of(answer)[:2] == (404, "NOT_FOUND")
    assert httpx2.get(f"{server}/projects/OTH/specs").status_code == 401


def test_a_bad_path_or_a_local_file_path_is_refused_naming_the_field(
    api: httpx2.Client, db: Database
) -> None:
    def post(body: dict[str, Any]) -> httpx2.Response:
        full = {"workspaceId": None, "content": "x", **body}
        return api.post("/projects/CRW/specs", json=full, headers={"Idempotency-Key": "b-1"})

    for path in ("../escape.md", "/etc/passwd", "docs/../../x", "C:/x.md", "a\\b.md", "./"):
        assert error_of(post({"path": path})) == (422, "VALIDATION", "path"), path
    deep = "/".join(["d"] * 17)
    assert error_of(post({"path": deep})) == (422, "LIMIT_EXCEEDED", "path")
    local = post({"path": "x.md", "content": None, "localFilePath": "/etc/passwd"})
    assert error_of(local) == (422, "VALIDATION", "localFilePath")
    both = post({"path": "x.md", "contentBase64": "eA=="})
    assert error_of(both) == (422, "VALIDATION", "content")
    listed = api.get("/projects/CRW/specs", params={"path": "../up"})
    assert error_of(listed) == (422, "VALIDATION", "path")
    assert count_rows(db, "spec_files") == 0


def test_the_list_pages_by_limit_and_offset_in_path_order_and_filters_by_folder(
    api: httpx2.Client,
) -> None:
    paths = ["b.md", "docs/a.md", "a.md", "docs/sub/c.md", "docsx.md"]
    for index, path in enumerate(paths):
        upload(api, path, f"u-{index}", content=f"{path}\n")
    first = api.get("/projects/CRW/specs", params={"limit": 2}).json()
    assert ([f["path"] for f in first["files"]], first["total"], first["nextOffset"]) == (
        ["a.md", "b.md"],
        5,
        2,
    )
    rest = api.get("/projects/CRW/specs", params={"limit": 2, "offset": 4}).json()
    assert ([f["path"] for f in rest["files"]], rest["nextOffset"]) == (["docsx.md"], None)
    docs = api.get("/projects/CRW/specs", params={"path": "docs/"}).json()
    assert [f["path"] for f in docs["files"]] == ["docs/a.md", "docs/sub/c.md"]
    for params, field in (
        ({"limit": 0}, "limit"),
        ({"limit": 201}, "limit"),
        ({"offset": -1}, "offset"),
        ({"trashed": "maybe"}, "trashed"),
        ({"colour": "red"}, "colour"),
    ):
        assert error_of(api.get("/projects/CRW/specs", params=params))[2] == field, params


def test_openapi_lists_every_spec_route_with_its_parameters_bodies_and_media_types(
    server: str,
) -> None:
    paths = httpx2.get(f"{server}/openapi.json").json()["paths"]
    specs = "/api/v1/projects/{project}/specs"
    file = f"{specs}/{{file}}"
    assert set(paths[specs]) == {"get", "post"}
    assert set(paths[file]) == {"get", "put"}

    def query(path: str) -> set[str]:
        """The route's own query parameters, besides the optional workspaceId every route
        naming a project may take (checked here: never required)."""
        listed = {p["name"]: p for p in paths[path]["get"]["parameters"] if p["in"] == "query"}
        assert not listed.pop("workspaceId", {"required": False})["required"]
        return set(listed)

    assert query(specs) == {"path", "trashed", "limit", "offset"}
    assert query(file) == {"includeTrashed", "revisions"}
    assert query(f"{file}/lines") == {"offset", "limit", "revision", "includeTrashed"}
    assert query(f"{file}/content") == {"revision", "includeTrashed"}
    content = paths[f"{file}/content"]["get"]["responses"]["200"]["content"]
    assert set(content) == {"text/plain; charset=utf-8", "application/octet-stream"}

    def body(method: str, path: str) -> dict[str, Any]:
        schema: dict[str, Any] = paths[path][method]["requestBody"]["content"]["application/json"][
            "schema"
        ]
        return schema

    upload_body = body("post", specs)
    assert set(upload_body["properties"]) == {
        "workspaceId",
        "path",
        "content",
        "contentBase64",
    }
    # workspaceId is optional wherever a project is named (the project's own when left out)
    assert set(upload_body["required"]) == {"path"}
    assert "workspaceId" in upload_body["properties"]
    save = body("put", file)
    assert "expectedVersion" in save["properties"]
    assert not {"localFilePath", "fileId", "path", "projectId"} & set(save["properties"])
    assert "16 MiB" in paths[file]["put"]["summary"]
    assert "201" in paths[specs]["post"]["responses"]
    for tail in ("trash", "restore"):
        assert set(body("post", f"{file}/{tail}")["properties"]) == {"workspaceId"}
