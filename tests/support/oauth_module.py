"""One served Crewboard per backend for a whole test module, for the OAuth suites whose tests
each register clients of their own (the SDK's flow, the conformance suite's authorization
scenarios). The owner owns project CRW and signs in with PASSWORD.

A module imports the fixtures it uses by name:
`from tests.support.oauth_module import app, backend, module_db, owner`.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from crewboard.domain.identity.records import User
from crewboard.storage.database import Database
from tests.conftest import BACKENDS
from tests.support.factories import make_project, make_user
from tests.support.oauth import App, module_database, served_app


@pytest.fixture(scope="module", params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """The backend, for the module: one served app per backend."""
    return str(request.param)


@pytest.fixture(scope="module")
def module_db(backend: str, request: pytest.FixtureRequest) -> Iterator[Database]:
    with module_database(backend, request) as db:
        yield db


@pytest.fixture(scope="module")
def owner(module_db: Database) -> User:
    user = make_user(module_db, "owner@example.com", is_owner=True)
    make_project(module_db, user, "CRW")
    return user


@pytest.fixture(scope="module")
def app(
    module_db: Database, owner: User, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[App]:
    """The whole app served over real HTTP on the module's database, OAuth on by default."""
    with served_app(module_db, owner, tmp_path_factory.mktemp("app")) as served:
        yield served
