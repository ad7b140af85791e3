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
from typing import Any

import pytest

SOAK = os.environ.get("MEMDIR_SOAK") == "1"
TALLY: Counter[str] = Counter()
NOTES: list[str] = []


def note(line: str) -> None:
    """A figure to print with the tally (a p99, what was lost)."""
    NOTES.append(line)


def tried(what: str, n: int = 1) -> None:
    TALLY[what] += n


def scale(short: int, soak: int) -> int:
    """How many inputs (or seconds) a suite runs: the short form, or the soak one."""
    return soak if SOAK else short


@pytest.fixture(autouse=True, scope="module")
def tally(request: pytest.FixtureRequest) -> Iterator[None]:
    before, noted = Counter(TALLY), len(NOTES)
    yield
    grown = {k: v - before.get(k, 0) for k, v in TALLY.items() if v != before.get(k, 0)}
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if (grown or len(NOTES) > noted) and reporter is not None and capture is not None:
        with capture.global_and_fixture_disabled():
            _report(reporter, request.module.__name__, grown, NOTES[noted:])


def _report(reporter: Any, module: str, grown: dict[str, int], notes: list[str]) -> None:
    reporter.write_line("")
    for what, n in sorted(grown.items()):
        reporter.write_line(f"[{module}] {what}: {n:,} inputs" + (" (soak)" if SOAK else ""))
    for line in notes:
        reporter.write_line(f"[{module}] {line}")
