"""Timing helpers the benchmarks share: run a call many times, report the median and p95 in milliseconds."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def timed(fn: Callable[[], object], runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


def summary(samples: list[float]) -> tuple[float, float]:
    samples = sorted(samples)
    return statistics.median(samples), samples[max(0, int(len(samples) * 0.95) - 1)]


if __name__ == "__main__":  # a module the benchmarks import, not a benchmark: --help says so
    import argparse

    argparse.ArgumentParser(description=__doc__ + " Imported by the bench scripts; it runs nothing itself.").parse_args()
