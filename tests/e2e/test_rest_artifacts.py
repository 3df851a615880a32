"""REST: artifacts over real HTTP, on both databases. Create (keyed, 201), details by slug or
id, line windows, one file's bytes as a sandboxed download, a revision as a zip, a delta and a
full revision from the revision count in `If-Match` (412 when stale) or the body (409), a
rollback, another project's artifact, and what OpenAPI states of each route."""

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
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support.factories import count_rows, make_project, make_user
from tests.support.server import free_port, running_server

A = "/projects/CRW/artifacts"
PAGE = "<!doctype html>\n<script>document.title = document.cookie</script>\n"
LOGO = b"\x89PNG\r\n\x1a\n" + bytes(range(64))


@pytest.fixture
def server(db: Database, tmp_path: Path) -> Iterator[str]:
    with running_server(Settings(data_dir=tmp_path, port=free_port()), db) as base:
        yield f"{base}/api/v1"


@pytest.fixture
def api(db: Database, server: str) -> Iterator[httpx2.Client]:
    owner = make_user(db, "owner@example.com")
    make_project(db, owner, "CRW")
    make_project(db, owner, "OTH")
    secret = tokens.issue_token(
        db, person_actor(owner), kind="personal", scopes=["read", "specs.write"]
    ).secret
    with httpx2.Client(base_url=server, headers={"Authorization": f"Bearer {secret}"}) as client:
        yield client


def made(api: httpx2.Client, project: str = "CRW", slug: str = "login") -> Any:
    answer = api.post(
        f"/projects/{project}/artifacts",
        json={"slug": slug, "files": [
            {"path": "index.html", "content": PAGE},
            {"path": "img/logo.png", "contentBase64": base64.b64encode(LOGO).decode()},
        ]},
        headers={"Idempotency-Key": f"make-{project}-{slug}"},
    )  # fmt: skip
    assert answer.status_code == 201, answer.text
    return answer.json()


def test_create_then_read_details_lines_a_file_and_the_zip(api: httpx2.Client) -> None:
    body = made(api)
    assert (body["artifact"]["revisionCount"], body["replayed"]) == (1, False)
    assert made(api)["replayed"] is True  # the same key again
    shown = api.get(f"{A}/login").json()
    assert [f["path"] for f in shown["files"]] == ["img/logo.png", "index.html"]
    by_id = api.get(f"{A}/{body['artifact']['id']}").json()
    assert by_id["artifact"]["slug"] == "login"
    lines = api.get(f"{A}/login/lines", params={"path": "index.html", "limit": 1}).json()
    assert (lines["text"], lines["nextOffset"]) == ("<!doctype html>\n", 2)
    served = api.get(f"{A}/login/file", params={"path": "index.html"})
    assert served.text == PAGE
    assert served.headers["content-security-policy"] == "sandbox; default-src 'none'"
    assert served.headers["content-disposition"].startswith("attachment")
    assert served.headers["x-content-type-options"] == "nosniff"
    logo = api.get(f"{A}/login/file", params={"path": "img/logo.png"})
    assert (logo.content, logo.headers["content-type"]) == (LOGO, "image/png")
    archive = api.get(f"{A}/login/zip")
    assert archive.headers["content-type"] == "application/zip"
    assert 'filename="login-r1.zip"' in archive.headers["content-disposition"]
    with zipfile.ZipFile(io.BytesIO(archive.content)) as z:
        assert sorted(z.namelist()) == ["img/logo.png", "index.html"]
        assert z.read("img/logo.png") == LOGO


def test_revisions_from_if_match_or_the_body_and_a_rollback(
    api: httpx2.Client, db: Database
) -> None:
    made(api)
    css = {"path": "site.css", "content": "body {}\n"}
    delta = api.post(
        f"{A}/login/revisions", json={"baseRevision": 1, "files": [css]},
        headers={"If-Match": '"1"', "Idempotency-Key": "r2"},
    )  # fmt: skip
    assert delta.status_code == 201, delta.text
    assert delta.json()["revision"]["kind"] == "delta"
    stale_header = api.post(
        f"{A}/login/revisions", json={"files": [css]}, headers={"If-Match": '"1"'}
    )
    assert stale_header.status_code == 412
    stale_body = api.post(f"{A}/login/revisions", json={"files": [css], "expectedVersion": 1})
    assert stale_body.status_code == 409
    assert stale_body.json()["error"]["details"]["currentVersion"] == 2
    missing = api.post(f"{A}/login/revisions", json={"files": [css]})
    assert missing.status_code == 422
    full = api.post(f"{A}/login/revisions", json={"files": [css], "expectedVersion": 2})
    assert full.status_code == 201, full.text
    back = api.post(f"{A}/login/rollback", json={"revision": 2, "expectedVersion": 3})
    assert back.status_code == 201, back.text
    assert [f["path"] for f in back.json()["files"]] == ["img/logo.png", "index.html", "site.css"]
    old = api.get(f"{A}/login/zip", params={"revision": 3})
    with zipfile.ZipFile(io.BytesIO(old.content)) as z:
        assert z.namelist() == ["site.css"]
    assert count_rows(db, "artifact_revisions") == 4


def test_a_delta_on_an_older_base_is_409_even_with_a_current_if_match_unless_merged(
    api: httpx2.Client, db: Database
) -> None:
    made(api)
    page = {"path": "index.html", "content": "<p>v2</p>\n"}
    second = api.post(
        f"{A}/login/revisions", json={"baseRevision": 1, "files": [page]},
        headers={"If-Match": '"1"'},
    )  # fmt: skip
    assert second.status_code == 201, second.text
    css = {"baseRevision": 1, "files": [{"path": "site.css", "content": "p {}\n"}]}
    stale = api.post(f"{A}/login/revisions", json=css, headers={"If-Match": '"2"'})
    assert stale.status_code == 409, stale.text  # the If-Match held: no 412
    error = stale.json()["error"]
    assert error["code"] == "REVISION_CONFLICT"
    assert (error["details"]["baseRevision"], error["details"]["currentRevision"]) == (1, 2)
    assert count_rows(db, "artifact_revisions") == 2
    merged = api.post(
        f"{A}/login/revisions", json={**css, "mergeOntoCurrent": True, "expectedVersion": 2}
    )
    assert merged.status_code == 201, merged.text
    shown = api.get(f"{A}/login/lines", params={"path": "index.html"}).json()
    assert shown["text"] == "<p>v2</p>\n"


def test_refusals_name_the_field_and_another_projects_artifact_is_404(
    api: httpx2.Client, db: Database
) -> None:
    made(api, project="OTH")
    assert api.get(f"{A}/login").status_code == 404
    assert api.get(f"{A}/login/zip").status_code == 404
    bad = api.post(A, json={"slug": "Bad Slug", "files": [{"path": "a", "content": "x"}]})
    assert (bad.status_code, bad.json()["error"]["details"]["field"]) == (422, "slug")
    carried = api.post(A, json={"projectId": "OTH", "slug": "x", "files": []})
    assert carried.json()["error"]["details"]["field"] == "projectId"
    made(api)
    unknown = api.get(f"{A}/login", params={"nope": 1})
    assert unknown.json()["error"]["details"]["field"] == "nope"
    gone = api.get(f"{A}/login/file", params={"path": "missing.txt"})
    assert gone.status_code == 404
    assert count_rows(db, "artifacts") == 2


def test_openapi_lists_every_artifact_route_with_headers_and_bodies(
    api: httpx2.Client, server: str
) -> None:
    document = httpx2.get(f"{server}/openapi.json").json()
    base = "/api/v1/projects/{project}/artifacts"
    paths = document["paths"]
    assert set(paths[base]) == {"get", "post"}
    for tail in ("", "/lines", "/file", "/zip"):
        assert "get" in paths[f"{base}/{{artifact}}{tail}"]
    write = paths[f"{base}/{{artifact}}/revisions"]["post"]
    headers = {p["name"] for p in write["parameters"] if p["in"] == "header"}
    assert headers == {"Idempotency-Key", "If-Match"}
    assert "412" in write["responses"]
    body = write["requestBody"]["content"]["application/json"]["schema"]
    assert {"files", "remove", "baseRevision", "mergeOntoCurrent", "expectedVersion"} <= set(
        body["properties"]
    )
    zipped = paths[f"{base}/{{artifact}}/zip"]["get"]
    assert "application/zip" in zipped["responses"]["200"]["content"]
