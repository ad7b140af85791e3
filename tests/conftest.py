from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import memdir


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "memory"


@pytest.fixture
def md(root: Path) -> Iterator[memdir.Memdir]:
    with memdir.open(root) as m:
        yield m


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in list(__import__("os").environ):
        if key.startswith("MEMDIR_"):
            monkeypatch.delenv(key)
