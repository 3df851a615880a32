"""Shared fixtures: every storage-touching test runs on SQLite and on PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy.engine import URL

from crewboard.domain.clock import ManualClock
from crewboard.storage.database import Database
from tests.support.databases import (
    PostgresDatabases,
    SqliteDatabases,
    postgres_required,
    postgres_unavailable_reason,
    postgres_url,
)

BACKENDS = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgresql", id="postgresql", marks=pytest.mark.postgres),
]
# For a long (`slow`) run that only one backend needs: the quick run of the same suite still
# covers both. `@ONLY_POSTGRESQL` where concurrency or PostgreSQL's types are what it probes.
ONLY_POSTGRESQL = pytest.mark.parametrize("backend", [BACKENDS[1]])
ONLY_SQLITE = pytest.mark.parametrize("backend", [BACKENDS[0]])
# For a long suite whose subject does not hang on the database (a page's layout, access
# rules, argument checks): the quick run (`make test`) takes it on SQLite, the slow run (CI's
# `make test-slow`) on PostgreSQL, so both backends are still covered on every CI run.
POSTGRESQL_IN_THE_SLOW_RUN = pytest.mark.parametrize(
    "backend",
    [
        BACKENDS[0],
        pytest.param("postgresql", id="postgresql", marks=[pytest.mark.postgres, pytest.mark.slow]),
    ],
)
CLOCK_START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)  # a Monday morning


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Keep a module on one xdist worker when its tests share a module-scoped fixture.

    Such a fixture (a launched Chromium, a served app behind the conformance proxy) is worth
    sharing only when its tests run in one process; spread over workers (`--dist loadgroup`)
    each would start its own. Only fixtures a test asks for count, directly or through other
    fixtures: autouse module fixtures are cheap bookkeeping, and grouping their modules would
    only put long fuzz runs behind one another.
    """
    for item in items:
        if _asks_for_a_shared_fixture(item):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::", 1)[0]))
        if _a_later_browser_variant(item):
            item.add_marker(pytest.mark.slow)


@pytest.hookimpl(tryfirst=True)  # before xdist's worker sends the collected ids to the controller
def pytest_collection_finish(session: pytest.Session) -> None:
    """Tag each grouped test where this pytest reads a node id (pytest-xdist#1386).

    pytest-xdist 3.8 tags a test of an `xdist_group` by appending `@group` to `item._nodeid`,
    which pytest 9.2 no longer reads (an item's id is now a structured `_id`): `--dist
    loadgroup` then spreads a group over the workers as plain `load` does, silently, and
    each worker starts the module's shared fixture for itself. This puts the same tag on the
    id pytest 9.2 reports; where xdist's own tag took (an older pytest, a fixed xdist), or off
    a loadgroup worker, it does nothing.
    """
    if not getattr(session.config.option, "loadgroup", False):
        return
    for item in session.items:
        names = {
            str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
            for mark in item.iter_markers("xdist_group")
        }
        tag = "@" + "_".join(sorted(names))
        if names and not item.nodeid.endswith(tag):
            from _pytest.nodeid import NodeId  # noqa: PLC0415 - pytest 9.2 on, where needed

            item._id = NodeId.parse(item.nodeid + tag)


# The browser suite's quick run (`make test`) takes each browser test on SQLite, and where it
# runs at both widths and in both colour schemes, at 1280 px light and 390 px dark: every page,
# flow and assertion, each width and each scheme. The other variants (PostgreSQL; 1280 px dark,
# 390 px light) run in the slow run, which CI runs too (`make test-slow`, its browser part on
# two workers), so every CI run still takes the whole product of them.
_LATER_VARIANTS = ({"postgresql"}, {"1280", "dark"}, {"390", "light"})


def _a_later_browser_variant(item: pytest.Item) -> bool:
    callspec = getattr(item, "callspec", None)
    if callspec is None or item.get_closest_marker("browser") is None:
        return False
    ids = set(str(callspec.id).split("-"))
    return any(variant <= ids for variant in _LATER_VARIANTS)


def _asks_for_a_shared_fixture(item: pytest.Item) -> bool:
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    wanted = list(info.argnames)
    seen: set[str] = set()
    while wanted:
        name = wanted.pop()
        if name in seen:
            continue
        seen.add(name)
        for definition in info.name2fixturedefs.get(name, ()):
            if definition.scope in ("package", "module", "class"):
                return True
            wanted.extend(definition.argnames)
    return False


@pytest.fixture(scope="session")
def sqlite_databases(tmp_path_factory: pytest.TempPathFactory) -> SqliteDatabases:
    databases = SqliteDatabases(tmp_path_factory.mktemp("sqlite"))
    databases.prepare_template()
    return databases


@pytest.fixture(scope="session")
def postgres_databases() -> Iterator[PostgresDatabases]:
    reason = postgres_unavailable_reason()
    if reason is not None:
        if postgres_required():
            pytest.fail(f"CREWBOARD_REQUIRE_POSTGRES=1 but {reason}")
        pytest.skip(reason)
    url = postgres_url()
    assert url is not None
    databases = PostgresDatabases(url)
    databases.prepare_template()
    yield databases
    databases.drop_all()


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _database(backend: str, request: pytest.FixtureRequest, *, migrated: bool) -> Iterator[URL]:
    if backend == "sqlite":
        databases: SqliteDatabases = request.getfixturevalue("sqlite_databases")
        yield databases.new_migrated() if migrated else databases.new_empty()
        return
    pg: PostgresDatabases = request.getfixturevalue("postgres_databases")
    url = pg.new_migrated() if migrated else pg.new_empty()
    yield url
    pg.drop(url)


@pytest.fixture
def database_url(backend: str, request: pytest.FixtureRequest) -> Iterator[URL]:
    """A migrated, empty database of the test's backend, its own for this test."""
    yield from _database(backend, request, migrated=True)


@pytest.fixture
def empty_database_url(backend: str, request: pytest.FixtureRequest) -> Iterator[URL]:
    """A database with no tables at all, for migration tests."""
    yield from _database(backend, request, migrated=False)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(CLOCK_START)


@pytest.fixture
def db(database_url: URL, clock: ManualClock) -> Iterator[Database]:
    database = Database(database_url, clock=clock)
    yield database
    database.dispose()


@pytest.fixture
def tmp_data_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    folder.mkdir()
    return folder


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
