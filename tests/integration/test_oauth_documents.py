"""Client ID metadata documents: fetched over real HTTPS (a local server with a CA of the test's
own) within their fences — https only, no redirects, a size and a time bound, no private
address unless allowed — and cached in the database for as long as they say, within bounds."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from typing import Any
from uuid import uuid4

import anyio
import pytest

from crewboard.domain.clock import ManualClock
from crewboard.domain.oauth import DOCUMENT_MAX_BYTES, DOCUMENT_MIN_CACHE
from crewboard.services.oauth.clients import ClientPolicy, find_client
from crewboard.services.oauth.documents import DocumentRefused, FetchPolicy, fetch_document
from crewboard.storage.database import Database
from tests.support.factories import count_rows
from tests.support.https_server import DocumentServer, TlsFiles, make_tls
from tests.support.oauth import CALLBACK

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> TlsFiles:
    return make_tls(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module")
def server(tls: TlsFiles) -> Iterator[DocumentServer]:
    with DocumentServer(tls) as running:
        yield running


@pytest.fixture
def policy(tls: TlsFiles) -> FetchPolicy:
    """Our CA trusted and the loopback server allowed: the fences under test are the others."""
    return FetchPolicy(allow_private=True, ca_file=tls.ca_file)


def document(url: str, **fields: object) -> dict[str, object]:
    return {
        "client_id": url,
        "client_name": "Doc app",
        "redirect_uris": [CALLBACK],
        "token_endpoint_auth_method": "none",
        **fields,
    }


def serve_document(server: DocumentServer, path: str, **fields: object) -> str:
    """A good document at `path` (fields changed as given); its URL, which is its client_id."""
    url = server.url(path)
    how: dict[str, Any] = {
        k: fields.pop(k) for k in ("headers", "status", "chunked", "delay") if k in fields
    }
    server.answer(path, json_body=document(url, **fields), **how)
    return url


async def refused(url: str, policy: FetchPolicy) -> str:
    with pytest.raises(DocumentRefused) as caught:
        await fetch_document(url, policy)
    return str(caught.value)


# --- fetch_document --------------------------------------------------------------------------


async def test_a_good_document_is_fetched_with_its_cache_header(
    server: DocumentServer, policy: FetchPolicy
) -> None:
    url = serve_document(server, "/good.json", headers={"Cache-Control": "max-age=900"})
    fetched = await fetch_document(url, policy)
    assert fetched.body == document(url)
    assert fetched.cache_control == "max-age=900"
    assert server.hits("/good.json") == 1


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
async def test_a_loopback_address_is_refused_by_default_naming_it_before_connecting(
    server: DocumentServer, tls: TlsFiles, host: str
) -> None:
    path = f"/loopback-{host}.json"
    serve_document(server, path)
    url = f"https://{host}:{server.port}{path}"
    message = await refused(url, FetchPolicy(ca_file=tls.ca_file))
    assert "127.0.0.1" in message or "::1" in message
    assert "private or loopback" in message
    assert server.hits(path) == 0


async def test_a_certificate_from_an_unknown_ca_is_refused(server: DocumentServer) -> None:
    url = serve_document(server, "/untrusted.json")
    message = await refused(url, FetchPolicy(allow_private=True))
    assert "failed" in message


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
async def test_a_document_over_5_kib_is_refused(
    server: DocumentServer, policy: FetchPolicy, chunked: bool
) -> None:
    path = f"/big-{chunked}.json"
    url = server.url(path)
    body = json.dumps(document(url, padding="x" * DOCUMENT_MAX_BYTES)).encode()
    server.answer(path, body=body, chunked=chunked)
    message = await refused(url, policy)
    assert f"larger than {DOCUMENT_MAX_BYTES} bytes" in message


async def test_a_compressed_document_over_5_kib_once_inflated_is_refused(
    server: DocumentServer, policy: FetchPolicy
) -> None:
    url = server.url("/inflates.json")
    body = json.dumps(document(url, padding=" " * (200 * 1024))).encode()
    packed = gzip.compress(body)
    assert len(packed) < DOCUMENT_MAX_BYTES
    server.answer("/inflates.json", body=packed, headers={"Content-Encoding": "gzip"})
    assert f"larger than {DOCUMENT_MAX_BYTES} bytes" in await refused(url, policy)


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
async def test_a_document_of_exactly_5_kib_is_accepted(
    server: DocumentServer, policy: FetchPolicy, chunked: bool
) -> None:
    path = f"/just-fits-{chunked}.json"
    url = server.url(path)
    body = json.dumps(document(url)).encode()
    body += b" " * (DOCUMENT_MAX_BYTES - len(body))
    server.answer(path, body=body, chunked=chunked)
    assert (await fetch_document(url, policy)).body == document(url)


async def test_a_slow_server_is_refused_as_slow_within_the_bound(
    server: DocumentServer, tls: TlsFiles
) -> None:
    url = serve_document(server, "/slow.json", delay=5.0)
    quick = FetchPolicy(allow_private=True, ca_file=tls.ca_file, timeout=0.3)
    with anyio.fail_after(3):
        message = await refused(url, quick)
    assert "took longer than 0.3 s" in message


async def test_a_redirect_is_not_followed(server: DocumentServer, policy: FetchPolicy) -> None:
    target = serve_document(server, "/target.json")
    server.answer("/moved.json", status=302, headers={"Location": target})
    message = await refused(server.url("/moved.json"), policy)
    assert "302" in message
    assert server.hits("/target.json") == 0


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        ({"status": 404, "body": b"{}"}, "404"),
        ({"body": b"not json"}, "not JSON"),
        ({"body": b"[1, 2]"}, "not a JSON object"),
    ],
    ids=["not-found", "not-json", "array"],
)
async def test_a_failed_answer_or_a_body_that_is_not_an_object_is_refused(
    server: DocumentServer, policy: FetchPolicy, answer: dict[str, object], said: str
) -> None:
    path = f"/bad-{said.replace(' ', '-')}.json"
    server.answer(path, **answer)  # type: ignore[arg-type]
    assert said in await refused(server.url(path), policy)


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("http://127.0.0.1:9/client.json", "https"),
        ("https://127.0.0.1:9", "path"),
        ("https://127.0.0.1:9/", "path"),
        ("https://user@127.0.0.1:9/client.json", "credentials"),
        ("https://@127.0.0.1:9/client.json", "credentials"),
        ("https://evil.example\\@127.0.0.1:9/client.json", "character"),
        ("https://127.0.0.1%3a9/client.json", "percent"),
        ("HTTPS://127.0.0.1:9/client.json", "lowercase"),
        ("https://127.0.0.1:9/client.json ", "character"),
    ],
)
async def test_a_url_that_cannot_name_a_document_is_refused_before_any_fetch(
    policy: FetchPolicy, url: str, said: str
) -> None:
    assert said in await refused(url, policy)


# --- find_client: the document as a client, cached in the database ---------------------------


def client_policy(policy: FetchPolicy, **fields: object) -> ClientPolicy:
    return ClientPolicy(fetch=policy, **fields)  # type: ignore[arg-type]


async def test_a_document_is_cached_then_fetched_again_once_its_cache_expires(
    server: DocumentServer, policy: FetchPolicy, db: Database, clock: ManualClock
) -> None:
    path = f"/cached-{uuid4().hex}.json"
    url = serve_document(server, path, headers={"Cache-Control": "max-age=600"})
    found = await find_client(db, client_policy(policy), url)
    assert found is not None
    client, secret_hash = found
    assert (client.kind, client.name, client.redirect_uris) == ("document", "Doc app", (CALLBACK,))
    assert secret_hash is None
    assert client.expires_at == clock.now() + timedelta(seconds=600)
    assert server.hits(path) == 1
    clock.advance(timedelta(seconds=599))
    again = await find_client(db, client_policy(policy), url)
    assert again is not None
    assert again[0].name == "Doc app"
    assert server.hits(path) == 1  # from the database
    # The app changes its document; once the cache expires, the server sees the new one.
    serve_document(server, path, client_name="Doc app v2")
    clock.advance(timedelta(seconds=2))
    renewed = await find_client(db, client_policy(policy), url)
    assert renewed is not None
    assert renewed[0].name == "Doc app v2"
    assert server.hits(path) == 2
    assert renewed[0].expires_at == clock.now() + timedelta(hours=1)  # no header: the default
    assert count_rows(db, "oauth_clients") == 1


async def test_a_document_cached_from_a_private_address_is_refused_once_those_are_not_allowed(
    server: DocumentServer, policy: FetchPolicy, db: Database
) -> None:
    path = f"/private-{uuid4().hex}.json"
    url = serve_document(server, path, headers={"Cache-Control": "max-age=3600"})
    assert await find_client(db, client_policy(policy), url) is not None  # private allowed
    closed = replace(policy, allow_private=False)
    with pytest.raises(DocumentRefused, match=r"127\.0\.0\.1"):
        await find_client(db, client_policy(closed), url)
    assert server.hits(path) == 1  # refused from the cache, nothing fetched again


async def test_a_no_store_document_is_kept_for_the_minimum(
    server: DocumentServer, policy: FetchPolicy, db: Database, clock: ManualClock
) -> None:
    path = f"/no-store-{uuid4().hex}.json"
    url = serve_document(server, path, headers={"Cache-Control": "no-store"})
    found = await find_client(db, client_policy(policy), url)
    assert found is not None
    assert found[0].expires_at == clock.now() + DOCUMENT_MIN_CACHE


@pytest.mark.parametrize(
    ("fields", "said"),
    [
        ({"client_id": "https://elsewhere.example/client.json"}, "client_id"),
        ({"token_endpoint_auth_method": "client_secret_post"}, "public"),
        ({"redirect_uris": ["http://app.example.com/cb"]}, "http"),
        ({"redirect_uris": "http://127.0.0.1:9999/callback"}, "redirect_uris"),
        ({"redirect_uris": []}, "redirect URI"),
        ({"redirect_uris": ["http://127.0.0.1:1@evil.example/cb"]}, "credentials"),
        ({"redirect_uris": ["http://evil.example\\@127.0.0.1/cb"]}, "character"),
        ({"redirect_uris": ["http://127.0.0.1\t@evil.example/cb"]}, "character"),
        ({"redirect_uris": ["https://[evil.example/cb"]}, "well-formed"),
        ({"redirect_uris": ["http://127.0.0.1:99999/cb"]}, "well-formed"),
    ],
    ids=[
        "client-id-differs",
        "secret-method",
        "http-redirect",
        "not-a-list",
        "no-redirects",
        "loopback-as-user-info",
        "backslash",
        "tab",
        "unclosed-bracket",
        "port-out-of-range",
    ],
)
async def test_a_document_a_client_cannot_be_made_of_is_refused_and_not_stored(
    server: DocumentServer,
    policy: FetchPolicy,
    db: Database,
    fields: dict[str, object],
    said: str,
) -> None:
    path = f"/unusable-{uuid4().hex}.json"
    url = serve_document(server, path, **fields)
    with pytest.raises(DocumentRefused) as caught:
        await find_client(db, client_policy(policy), url)
    assert said in str(caught.value)
    assert count_rows(db, "oauth_clients") == 0


async def test_a_document_scope_is_kept_as_the_names_this_server_knows_once_each(
    server: DocumentServer, policy: FetchPolicy, db: Database
) -> None:
    path = f"/scope-{uuid4().hex}.json"
    url = serve_document(server, path, scope="read " * 900 + "no.such\x00scope tasks.manage")
    found = await find_client(db, client_policy(policy), url)
    assert found is not None
    assert found[0].scope == "read tasks.manage"


async def test_documents_turned_off_are_refused_without_a_fetch(
    server: DocumentServer, policy: FetchPolicy, db: Database
) -> None:
    path = f"/off-{uuid4().hex}.json"
    url = serve_document(server, path)
    with pytest.raises(DocumentRefused):
        await find_client(db, client_policy(policy, documents=False), url)
    assert server.hits(path) == 0
