# Crewboard: the two commands of the quick start are `make serve` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# Two stamps, two locks: serving installs only what the server runs on (requirements.lock);
# the tests, linters, type checker, docs and benchmarks add their tools (requirements-dev.lock,
# the same runtime pins plus the `dev` extra) the first time one of them runs.
# scripts/venv-install says in a line what it installs; INSTALLER=pip skips uv (see there).
STAMP := $(VENV)/.installed
DEV_STAMP := $(VENV)/.installed-dev
INSTALLER ?= uv
UV_VERSION ?= 0.13.9
export PYTHON VENV INSTALLER UV_VERSION

# The PostgreSQL suites use this server; where it is not reachable they skip and say why.
CREWBOARD_TEST_DATABASE_URL ?= postgresql+psycopg://postgres@127.0.0.1:5432/test
export CREWBOARD_TEST_DATABASE_URL

.PHONY: serve test test-slow check lint typecheck architecture locks fmt lock wheel-smoke bench bench-peers docs clean help

help:
	@echo "make serve   create .venv, install, initialise the data folder and serve"
	@echo "make test    install what the tests need and run every suite but the slow runs"
	@echo "make test-slow  the slow runs (crash, concurrency, long fuzz, whole token matrix, the other browser variants); CI runs both"
	@echo "make check   ruff, the type checker, the architecture (floors, areas, doors, cycles, sizes) and the docs' tables"
	@echo "make docs    check the generated reference tables, then build the docs site into site/ (--strict)"
	@echo "make bench   run the benchmarks under bench/ (see bench/README.md)"
	@echo "make bench-peers  install Backlog.md and task-master-ai, then compare (bench/peers/)"
	@echo "make wheel-smoke  build the wheel, install it in a clean venv and start it (HTTP and stdio)"
	@echo "make lock    re-pin requirements.lock and requirements-dev.lock from pyproject.toml"

$(STAMP): requirements.lock pyproject.toml
	@bash scripts/venv-install runtime
	@touch $@

# The dev lock pins every runtime package at the version the runtime lock does
# (scripts/check_locks.py holds that), so this only adds packages to a served venv.
$(DEV_STAMP): $(STAMP) requirements-dev.lock
	@bash scripts/venv-install dev
	@touch $@

serve: $(STAMP)
	$(BIN)/crewboard serve

# Two pytest-xdist workers, one per core: each has its own template databases, temp folders
# and ports. loadgroup keeps a module whose tests share a module-scoped fixture (Chromium, the
# conformance server) on one worker (tests/conftest.py marks them). PYTEST_WORKERS=0 runs in
# one process.
PYTEST_WORKERS ?= 2

test: $(DEV_STAMP)
	bash scripts/test-services
	bash scripts/conformance-setup
	bash scripts/browser-setup
	$(BIN)/python -m pytest -m "not slow" -n $(PYTEST_WORKERS) --dist loadgroup --durations=25 $(PYTEST_ARGS)

# The long runs: kill -9 cycles, 20-client concurrency, the long fuzz runs, the whole token
# matrix (one process: they measure time and load), and the browser variants the quick run
# leaves out (PostgreSQL, 1280 px dark, 390 px light; tests/conftest.py), on two workers as in
# `make test`. .ci/run runs them after `make test`.
test-slow: $(DEV_STAMP)
	bash scripts/test-services
	bash scripts/browser-setup
	$(BIN)/python -m pytest -m "slow and browser" -n $(PYTEST_WORKERS) --dist loadgroup $(PYTEST_ARGS)
	$(BIN)/python -m pytest -m "slow and not browser" $(PYTEST_ARGS)

check: lint typecheck architecture locks

lint: $(DEV_STAMP)
	$(BIN)/ruff check src tests bench scripts
	$(BIN)/ruff format --check src tests bench scripts

typecheck: $(DEV_STAMP)
	$(BIN)/mypy

# The architecture written once in pyproject.toml ([tool.crewboard.architecture]): floors,
# areas, doors, import circles, module sizes, reasons for imports inside functions; then the
# generated tables of docs/reference/ and CONTRIBUTING.md, which must match the code.
architecture: $(DEV_STAMP)
	$(BIN)/python scripts/check_architecture.py
	$(BIN)/python scripts/docs_tables.py --check

# The two locks agree on every runtime pin and pin everything pyproject.toml names.
locks:
	$(PYTHON) scripts/check_locks.py

# Builds the wheel, installs it with the runtime lock into a clean venv outside the repository,
# then starts it from an empty data folder: HTTP (health, a page, a static file, an MCP call)
# and stdio (the tool list). About a minute and a half, most of it pip filling the clean venv.
wheel-smoke: $(DEV_STAMP)
	bash scripts/wheel-smoke

fmt: $(DEV_STAMP)
	$(BIN)/ruff format src tests bench scripts
	$(BIN)/ruff check --fix src tests bench scripts

bench: $(DEV_STAMP)
	$(BIN)/python -m bench $(BENCH_ARGS)

# Crewboard beside Backlog.md and task-master-ai (bench/README.md, "The peers workload"); the
# full run takes about 10 minutes, BENCH_ARGS=--quick about a minute and a half.
bench-peers: $(DEV_STAMP)
	bash scripts/peers-setup
	$(BIN)/python -m bench peers $(BENCH_ARGS)

# uv compiles the locks (universal: any Python 3.11+ platform installs from them); the same
# pinned uv the installs use, or `make lock UV=uv` for one on PATH. Pins already in a lock are
# kept; LOCK_ARGS="--upgrade-package NAME" moves one package.
UV ?= .tools/uv-$(UV_VERSION)/bin/uv
LOCK_FLAGS := --universal --python-version 3.11 --generate-hashes --quiet $(LOCK_ARGS)

.tools/uv-$(UV_VERSION)/bin/uv:
	@bash scripts/venv-install uv

lock: $(if $(filter .tools/%,$(UV)),$(UV))
	$(UV) pip compile pyproject.toml $(LOCK_FLAGS) -o requirements.lock
	$(UV) pip compile pyproject.toml --extra dev -c requirements.lock $(LOCK_FLAGS) -o requirements-dev.lock
	$(PYTHON) scripts/check_locks.py

# The docs site (mkdocs.yml): the generated tables must match the code, then a strict build
# fails on a broken link or anchor, a page outside the nav, a link out of docs/.
docs: $(DEV_STAMP)
	$(BIN)/python scripts/docs_tables.py --check
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

clean:
	rm -rf site $(VENV) .tools/uv-* .pytest_cache .mypy_cache .ruff_cache
