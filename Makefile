# memdir: `make run` serves ./memory to agents (MCP and HTTP), `make demo` is the guided tour, `make test` the whole suite.
# `make run ROOT=/path/to/memory PORT=8765` serves another folder or port.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
ROOT ?= memory
PORT ?= 8765
PIP := $(BIN)/python -m pip install -q --disable-pip-version-check

.PHONY: install dev run hooks demo test soak lint bench clean services browser clients

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

# The Claude Code hooks for the memory `make run` serves, with full paths, in ~/.claude/settings.json
# (`make hooks SETTINGS=path/.claude/settings.json` for one project's; the file as it was is kept as .bak).
hooks: install
	$(BIN)/memdir --root $(abspath $(ROOT)) hook install $(if $(SETTINGS),--settings $(SETTINGS),--user)

demo: install
	$(BIN)/memdir demo

# The tests start their own PostgreSQL and S3 (moto) servers on loopback; here they must not skip.
test: dev lint services browser clients
	MEMDIR_TEST_SERVICES=require $(BIN)/python -m pytest -q

# The long forms of the reliability suites (tests/reliability): 500 kills per backend, 60 s of 16 writers,
# fuzzing, isolation, hostile agents, load; and of the guard's differential fuzz (three times its inputs). Tens of minutes.
soak: dev services
	MEMDIR_SOAK=1 MEMDIR_TEST_SERVICES=require $(BIN)/python -m pytest -q tests/reliability tests/core/test_guard.py
	$(BIN)/python bench/saas.py  # 10,000 tenants, 4 servers on one PostgreSQL, 200 clients, 60 s
	$(BIN)/python bench/saas.py --backend s3 --tenants 1000 --processes 2 --clients 40 --seconds 30  # the same on S3 (moto), smaller

# System packages the tests need: the Debian PostgreSQL server (initdb, pg_ctl).
services:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null || \
		{ apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql; }

# The browser the web page's tests drive: Debian's Chromium (Playwright runs it; it never downloads a browser).
browser:
	@test -x /usr/bin/chromium || \
		{ apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium; }

# The real agent CLIs tests/clients drives (Claude Code, Codex, Gemini CLI), at pinned versions from npm, installed
# once into ~/.cache/memdir-clients (MEMDIR_CLIENTS); Node from Debian where the machine has none.
# `pytest tests/clients` runs them.
clients: dev
	@command -v npm >/dev/null || \
		{ apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q nodejs npm; }
	$(BIN)/python tests/clients/clients.py

lint: dev
	$(BIN)/ruff check src tests bench
	$(BIN)/mypy

bench: dev services
	$(BIN)/python bench/targets.py  # every speed target beside its measurement
	$(BIN)/python bench/floor.py  # what one durable write cannot go below on this disk
	$(BIN)/python bench/precision.py  # false hits of search, context and recall
	$(BIN)/python bench/backends.py
	$(BIN)/python bench/mcp.py
	$(BIN)/python bench/clients.py  # the MCP Inspector (npx) over stdio and HTTP
	$(BIN)/python bench/peers.py  # installs the peers into ~/.cache/memdir-bench (npm, a Python 3.12+ venv) on first use

clean:
	rm -rf $(VENV) .pytest_cache build dist src/*.egg-info
