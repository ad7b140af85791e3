"""Every bench script answers --help with its help and does nothing else (screens.py once took `--help` for its
output folder and filled one with 3 MB of screenshots)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import benchscript

SCRIPTS = sorted(benchscript.BENCH.glob("*.py"))


def test_every_bench_script_prints_its_help_and_nothing_else(tmp_path: Path) -> None:
    runs = {p.name: subprocess.Popen([sys.executable, str(p), "--help"], cwd=tmp_path, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True) for p in SCRIPTS}
    answers = {name: (proc.communicate(timeout=600), proc.returncode) for name, proc in runs.items()}
    for name, ((out, err), code) in answers.items():
        assert code == 0 and out.startswith("usage: "), f"{name}: exit {code}\n{out[:300]}\n{err[-600:]}"
    assert list(tmp_path.iterdir()) == []  # nothing made where it ran
    assert not (benchscript.BENCH.parent / "--help").exists()
