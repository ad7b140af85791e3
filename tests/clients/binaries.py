"""The real Claude Code, Codex and Gemini CLIs, headless, against the scripted APIs of standin.py on loopback.

Not a conftest.py: the suite's other modules import the root one as `conftest`, and a second
file of that name would take its place. Test modules import the fixtures they use from here.
Run alone with `pytest tests/clients` (what anyone who touched faces/ or recall/ runs before landing).
Without npm the tests skip with the reason; `make test` (MEMDIR_TEST_SERVICES=require) fails instead.
"""

from __future__ import annotations

import os
from pathlib import Path

import clients
import pytest

REQUIRE = os.environ.get("MEMDIR_TEST_SERVICES") == "require"


@pytest.fixture(scope="session")
def claude_bin() -> Path:
    return _installed("claude")


@pytest.fixture(scope="session")
def codex_bin() -> Path:
    return _installed("codex")


@pytest.fixture(scope="session")
def gemini_bin() -> Path:
    return _installed("gemini")


def _installed(name: str) -> Path:
    try:
        return clients.install(name)
    except RuntimeError as e:
        if REQUIRE:
            pytest.fail(str(e))
        pytest.skip(str(e))
