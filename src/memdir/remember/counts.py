"""What this process captured and rolled up, counted for a server's `/metrics` (`faces/asgi.py`).

Capture and roll-up report each attempt to their caller; a server that runs
them for thousands of tenants also needs the totals an operator alerts on:
captures by outcome, roll-up steps by outcome, and when the last of each
succeeded. No tenant or path is kept, so what is exposed has a bounded set of
labels whatever the number of tenants. The counts are the process's own, as
Prometheus counters are: they start at zero with the process.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from dataclasses import dataclass, field

CAPTURE_STATUSES = ("captured", "pending", "skipped", "failed")  # failed: the capture raised (a store error, a limit)
ROLLUP_STATUSES = ("done", "raced", "failed", "planned", "proposed", "held")
ROLLUP_KINDS = ("day", "week", "month", "retention", "consolidate")


@dataclass(frozen=True)
class Counts:
    """A copy of the process's counts at one moment."""

    captures: dict[str, int] = field(default_factory=dict)  # status -> attempts
    rollups: dict[tuple[str, str], int] = field(default_factory=dict)  # (kind, status) -> steps
    rollup_runs: dict[str, int] = field(default_factory=dict)  # ok or failed (raised) -> runs
    last_capture: float = 0.0  # time.time() of the last captured session, 0 if none yet
    last_rollup: float = 0.0  # of the last run that raised nothing and failed no step


_LOCK = threading.Lock()
_CAPTURES: Counter[str] = Counter()
_ROLLUPS: Counter[tuple[str, str]] = Counter()
_RUNS: Counter[str] = Counter()
_LAST = {"capture": 0.0, "rollup": 0.0}


def captured(status: str) -> None:
    """One capture attempt ended with `status` (one of CAPTURE_STATUSES)."""
    with _LOCK:
        _CAPTURES[status if status in CAPTURE_STATUSES else "failed"] += 1
        if status == "captured":
            _LAST["capture"] = time.time()


def rolled(steps: list[tuple[str, str]] | None) -> None:
    """One roll-up run: its steps as (kind, status), or None when it raised."""
    with _LOCK:
        if steps is None:
            _RUNS["failed"] += 1
            return
        _RUNS["ok"] += 1
        for kind, status in steps:
            _ROLLUPS[(kind if kind in ROLLUP_KINDS else "other", status if status in ROLLUP_STATUSES else "other")] += 1
        if all(status != "failed" for _, status in steps):
            _LAST["rollup"] = time.time()


def snapshot() -> Counts:
    with _LOCK:
        return Counts(dict(_CAPTURES), dict(_ROLLUPS), dict(_RUNS), _LAST["capture"], _LAST["rollup"])
