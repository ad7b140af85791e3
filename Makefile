# memdir: `make run` for the guided tour, `make test` for the whole suite.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
ROOT ?= memory

.PHONY: install run test lint bench clean

$(BIN)/memdir: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check -e '.[dev]'
	touch $@

install: $(BIN)/memdir

run: install
	$(BIN)/memdir --root $(ROOT) demo

test: install lint
	$(BIN)/python -m pytest -q

lint: install
	$(BIN)/ruff check src tests bench
	$(BIN)/mypy

bench: install
	$(BIN)/python bench/core.py

clean:
	rm -rf $(VENV) .pytest_cache build dist src/*.egg-info
