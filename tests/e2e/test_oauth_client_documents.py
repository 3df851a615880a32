"""A client known by the https URL of its metadata document, over real HTTP end to end: the
server fetches the document (from a local HTTPS server with a CA of the test's own) when the
client comes to /oauth/authorize, and refuses it, saying why, when the fences say no."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from crewboard.domain.identity.records import User
from crewboard.storage.database import Database
from tests.support.https_server import DocumentServer, TlsFiles, make_tls
from tests.support.oauth import (
    CALLBACK,
    App,
    approve,
    authorize,
    error_of,
    exchange,
    pkce,
    request_id_of,
    rows,
    served_app,
    works_on_mcp,
)
from tests.support.oauth_module import backend, module_db, owner

__all__ = ["backend", "module_db", "owner"]  # module fixtures used by name


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> TlsFiles:
    return make_tls(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module")
def documents(tls: TlsFiles) -> Iterator[DocumentServer]:
    with DocumentServer(tls) as running:
        yield running


def serve_document(documents: DocumentServer, path: str) -> str:
    """A public client's document at `path`; its URL, which is the client's id."""
    url = documents.url(path)
    documents.answer(
        path,
        json_body={
            "client_id": url,
            "client_name": "Doc app",
            "redirect_uris": [CALLBACK],
            "token_endpoint_auth_method": "none",
        },
    )
    return url


@pytest.fixture(scope="module")
def trusting(
    module_db: Database, owner: User, tls: TlsFiles, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[App]:
    """An app whose operator lets it fetch documents from the local network, with our CA."""
    with served_app(
        module_db,
        owner,
        tmp_path_factory.mktemp("trusting"),
        oauth_documents_private=True,
        oauth_documents_ca_file=tls.ca_file,
    ) as app:
        yield app


def test_a_document_client_reaches_consent_and_gets_tokens(
    trusting: App, documents: DocumentServer, backend: str
) -> None:
    path = f"/client-{backend}.json"  # the document server outlives each backend's app
    client_id = serve_document(documents, path)
    pair = pkce()
    response = authorize(trusting.url, client_id, pair.challenge, scope="read")
    request_id = request_id_of(trusting, response)
    assert documents.hits(path) == 1
    _grant, back = approve(trusting, request_id, ["read"])
    tokens = exchange(trusting.url, client_id, back["code"], pair.verifier)
    assert tokens.status_code == 200, tokens.text
    assert works_on_mcp(trusting.url, tokens.json()["access_token"])
    assert documents.hits(path) == 1  # cached since: the token endpoint read the row
    [row] = rows(trusting.db, f"SELECT kind, name FROM oauth_clients WHERE id = '{client_id}'")
    assert row == {"kind": "document", "name": "Doc app"}


def test_a_document_on_a_private_address_is_400_invalid_client_by_default(
    module_db: Database, owner: User, documents: DocumentServer, tls: TlsFiles, tmp_path: Path
) -> None:
    client_id = serve_document(documents, "/default-refused.json")
    with served_app(module_db, owner, tmp_path, oauth_documents_ca_file=tls.ca_file) as app:
        response = authorize(app.url, client_id, pkce().challenge)
    assert response.status_code == 400
    assert "location" not in response.headers
    assert error_of(response) == "invalid_client"
    assert "127.0.0.1" in response.json()["error_description"]
    assert documents.hits("/default-refused.json") == 0


def test_with_documents_turned_off_a_document_client_is_refused_and_not_advertised(
    module_db: Database, owner: User, documents: DocumentServer, tls: TlsFiles, tmp_path: Path
) -> None:
    client_id = serve_document(documents, "/off.json")
    with served_app(
        module_db,
        owner,
        tmp_path,
        oauth_client_documents=False,
        oauth_documents_private=True,
        oauth_documents_ca_file=tls.ca_file,
    ) as app:
        metadata = httpx2.get(f"{app.url}/.well-known/oauth-authorization-server").json()
        response = authorize(app.url, client_id, pkce().challenge)
    assert metadata["client_id_metadata_document_supported"] is False
    assert response.status_code == 400
    assert error_of(response) == "invalid_client"
    assert documents.hits("/off.json") == 0
