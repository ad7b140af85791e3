# memdir: `make run` serves ./memory to agents (MCP and HTTP), `make demo` is the guided tour, `make test` the whole suite.
# `make run ROOT=/path/to/memory PORT=8765` serves another folder or port.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
ROOT ?= memory
PORT ?= 8765
PIP := $(BIN)/python -m pip install -q --disable-pip-version-check

.PHONY: install dev run demo test lint bench clean services

# What running needs (the MCP SDK and its web server), and what developing adds (tests, linters, backends).
$(VENV)/.run-installed: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP) -e '.[mcp]'
	touch $@

$(VENV)/.dev-installed: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP) -e '.[dev]'
	touch $(VENV)/.run-installed $@

install: $(VENV)/.run-installed

dev: $(VENV)/.dev-installed

run: install
	$(BIN)/memdir --root $(ROOT) serve --http $(PORT)

demo: install
	$(BIN)/memdir demo

# The tests start their own PostgreSQL and S3 (moto) servers on loopback; here they must not skip.
test: dev lint services
	MEMDIR_TEST_SERVICES=require $(BIN)/python -m pytest -q

# System packages the tests need: the Debian PostgreSQL server (initdb, pg_ctl).
services:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null || \
		{ apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql; }

lint: dev
	$(BIN)/ruff check src tests bench
	$(BIN)/mypy

bench: dev services
	$(BIN)/python bench/core.py
	$(BIN)/python bench/backends.py
	$(BIN)/python bench/mcp.py

clean:
	rm -rf $(VENV) .pytest_cache build dist src/*.egg-info
