# memdir: `make run` serves ./memory to agents (MCP and HTTP), `make demo` is the guided tour, `make test` the whole suite.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
ROOT ?= memory
PORT ?= 8765

.PHONY: install run demo test soak lint bench clean services

$(BIN)/memdir: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check -e '.[dev]'
	touch $@

install: $(BIN)/memdir

run: install
	$(BIN)/memdir --root $(ROOT) serve --http $(PORT)

demo: install
	$(BIN)/memdir --root $(ROOT) demo

# The tests start their own PostgreSQL and S3 (moto) servers on loopback; here they must not skip.
test: install lint services
	MEMDIR_TEST_SERVICES=require $(BIN)/python -m pytest -q

# The reliability suites at full length (500 kills per backend, 60 s of 16 writers...): tens of minutes.
soak: install services
	MEMDIR_SOAK=1 MEMDIR_TEST_SERVICES=require $(BIN)/python -m pytest tests/reliability -q

# System packages the tests need: the Debian PostgreSQL server (initdb, pg_ctl).
services:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null || \
		{ apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql; }

lint: install
	$(BIN)/ruff check src tests bench
	$(BIN)/mypy

bench: install services
	$(BIN)/python bench/core.py
	$(BIN)/python bench/backends.py
	$(BIN)/python bench/mcp.py

clean:
	rm -rf $(VENV) .pytest_cache build dist src/*.egg-info
