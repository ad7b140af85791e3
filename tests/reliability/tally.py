"""Shared by the reliability suites: the soak knob, and a tally of how many inputs each suite tried.

`MEMDIR_SOAK=1` (what `make soak` sets) runs the long forms; without it each
suite runs a short form cheap enough for `make test`. A suite module imports
`tally` (an autouse fixture) and calls `tried(...)`; its counts are printed
when the module ends, so a report can say how many inputs ran.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator

import pytest

SOAK = os.environ.get("MEMDIR_SOAK") == "1"
TALLY: Counter[str] = Counter()


def tried(what: str, n: int = 1) -> None:
    TALLY[what] += n


def scale(short: int, soak: int) -> int:
    """How many inputs (or seconds) a suite runs: the short form, or the soak one."""
    return soak if SOAK else short


@pytest.fixture(autouse=True, scope="module")
def tally(request: pytest.FixtureRequest) -> Iterator[None]:
    before = Counter(TALLY)
    yield
    grown = {k: v - before.get(k, 0) for k, v in TALLY.items() if v != before.get(k, 0)}
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    if grown and reporter is not None:
        reporter.write_line("")
        for what, n in sorted(grown.items()):
            reporter.write_line(f"[{request.module.__name__}] {what}: {n:,} inputs" + (" (soak)" if SOAK else ""))
