# memdir: `make run` serves ./memory to agents (MCP and HTTP), `make demo` is the guided tour, `make test` the whole suite.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
ROOT ?= memory
PORT ?= 8765

.PHONY: install run demo test lint bench clean

$(BIN)/memdir: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check -e '.[dev]'
	touch $@

install: $(BIN)/memdir

run: install
	$(BIN)/memdir --root $(ROOT) serve --http $(PORT)

demo: install
	$(BIN)/memdir --root $(ROOT) demo

test: install lint
	$(BIN)/python -m pytest -q

lint: install
	$(BIN)/ruff check src tests bench
	$(BIN)/mypy

bench: install
	$(BIN)/python bench/core.py
	$(BIN)/python bench/mcp.py

clean:
	rm -rf $(VENV) .pytest_cache build dist src/*.egg-info
