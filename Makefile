# Crewboard: the two commands of the quick start are `make serve` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

# The PostgreSQL suites use this server; where it is not reachable they skip and say why.
CREWBOARD_TEST_DATABASE_URL ?= postgresql+psycopg://postgres@127.0.0.1:5432/test
export CREWBOARD_TEST_DATABASE_URL

.PHONY: serve test test-slow check lint typecheck architecture fmt lock bench bench-peers clean help

help:
	@echo "make serve   create .venv, install, initialise the data folder and serve"
	@echo "make test    install what the tests need and run every suite but the slow runs"
	@echo "make test-slow  the slow runs (crash, concurrency, long fuzz, whole token matrix); CI runs both"
	@echo "make check   ruff, the type checker, the architecture (floors, areas, doors, cycles, sizes) and the docs' tables"
	@echo "make bench   run the benchmarks under bench/ (see bench/README.md)"
	@echo "make bench-peers  install Backlog.md and task-master-ai, then compare (bench/peers/)"
	@echo "make lock    re-pin requirements.lock from pyproject.toml"

$(STAMP): requirements.lock pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Crewboard needs Python 3.11 or newer")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --require-hashes -r requirements.lock
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
	@touch $@

serve: $(STAMP)
	$(BIN)/crewboard serve

# Two pytest-xdist workers, one per core: each has its own template databases, temp folders
# and ports. loadgroup keeps a module whose tests share a module-scoped fixture (Chromium, the
# conformance server) on one worker (tests/conftest.py marks them). PYTEST_WORKERS=0 runs in
# one process.
PYTEST_WORKERS ?= 2

test: $(STAMP)
	bash scripts/test-services
	bash scripts/conformance-setup
	bash scripts/browser-setup
	$(BIN)/python -m pytest -m "not slow" -n $(PYTEST_WORKERS) --dist loadgroup $(PYTEST_ARGS)

# The long runs (about 7 minutes on 2 cores): kill -9 cycles, 20-client concurrency, the long
# fuzz runs and the whole token matrix. .ci/run runs them after `make test`.
test-slow: $(STAMP)
	bash scripts/test-services
	$(BIN)/python -m pytest -m slow $(PYTEST_ARGS)

check: lint typecheck architecture

lint: $(STAMP)
	$(BIN)/ruff check src tests bench scripts
	$(BIN)/ruff format --check src tests bench scripts

typecheck: $(STAMP)
	$(BIN)/mypy

# The architecture written once in pyproject.toml ([tool.crewboard.architecture]): floors,
# areas, doors, import circles, module sizes, reasons for imports inside functions; then the
# README's and CONTRIBUTING's generated tables, which must match the code.
architecture: $(STAMP)
	$(BIN)/python scripts/check_architecture.py
	$(BIN)/python scripts/docs_tables.py --check

fmt: $(STAMP)
	$(BIN)/ruff format src tests bench scripts
	$(BIN)/ruff check --fix src tests bench scripts

bench: $(STAMP)
	$(BIN)/python -m bench $(BENCH_ARGS)

# Crewboard beside Backlog.md and task-master-ai (bench/README.md, "The peers workload"); the
# full run takes about 10 minutes, BENCH_ARGS=--quick about a minute and a half.
bench-peers: $(STAMP)
	bash scripts/peers-setup
	$(BIN)/python -m bench peers $(BENCH_ARGS)

# Needs uv (pip install uv); the lock is universal so any Python 3.11+ platform installs from it.
lock:
	uv pip compile pyproject.toml --extra dev --universal --python-version 3.11 --generate-hashes -o requirements.lock

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
