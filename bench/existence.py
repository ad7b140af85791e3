"""Does the time of a refusal tell a scoped agent whether a hidden file exists?

    python bench/existence.py            # 3,000 tries per face and case

A folder memory of 2,000 files holds `secret/plan.md` (written, rewritten,
so it has history) and a view scoped to `notes/`. Each face asks, through
that view, about `secret/plan.md` (exists, out of scope) and about
`secret/none.md` (never existed), interleaved so drift hits both alike. The
answer text must be the same (checked; the script fails otherwise) and the
table shows the times: median and p95 of each case, and the difference of
medians against the spread (the median absolute deviation) of the two. A gap
within the noise is what an agent measuring the faces would see: nothing.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

import memdir  # noqa: E402
from memdir import errors  # noqa: E402
from memdir.core.memdir import Memdir  # noqa: E402
from memdir.faces import tools  # noqa: E402

TRIES = 3000
HIDDEN, NEVER = "secret/plan.md", "secret/none.md"


def faces(view: Memdir) -> dict[str, Callable[[str], str]]:
    session = tools.Session(view)

    def call(f: Callable[[], object]) -> str:
        try:
            f()
            return "answered"
        except errors.MemdirError as e:
            return f"{type(e).__name__}: {e.message}"

    return {
        "Memdir.read": lambda p: call(lambda: view.read(p)),
        "Memdir.undo": lambda p: call(lambda: view.undo(p)),
        "Memdir.history(path)": lambda p: repr(view.history(p)),
        "Memdir.write (out of scope)": lambda p: call(lambda: view.write(p, "x\n")),
        "tool read_memory_file": lambda p: session.handle("read_memory_file", {"path": p}).text,
        "tool undo_memory_change": lambda p: session.handle("undo_memory_change", {"path": p}).text,
    }


def main() -> int:
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        md = memdir.open(Path(tmp) / "memory")
        for i in range(2000):
            md.write(f"notes/n{i:04d}.md", f"note {i}\n", description=f"note {i}")
        md.write(HIDDEN, "the plan\n", description="the plan")
        md.write(HIDDEN, "the plan, revised\n", description="the plan")
        view = md.scope(read=["notes/"], write=["notes/"])
        print(f"{'face':30} {'hidden µs':>18} {'never µs':>18} {'gap/noise':>10}  same answer")
        for name, face in faces(view).items():
            answers = {face(HIDDEN).replace(HIDDEN, "P"), face(NEVER).replace(NEVER, "P")}
            times: dict[str, list[float]] = {HIDDEN: [], NEVER: []}
            for _ in range(TRIES):
                for path in (HIDDEN, NEVER):
                    start = time.perf_counter_ns()
                    face(path)
                    times[path].append((time.perf_counter_ns() - start) / 1e3)
            med = {p: statistics.median(t) for p, t in times.items()}
            p95 = {p: statistics.quantiles(t, n=20)[18] for p, t in times.items()}
            mad = statistics.median(abs(x - med[p]) for p, t in times.items() for x in t) or 1e-9
            same = len(answers) == 1
            failed |= not same
            print(f"{name:30} {med[HIDDEN]:7.1f} p95 {p95[HIDDEN]:6.1f} {med[NEVER]:7.1f} p95 {p95[NEVER]:6.1f} "
                  f"{abs(med[HIDDEN] - med[NEVER]) / mad:10.2f}  {'yes' if same else 'NO: ' + ' | '.join(answers)}")
        md.close()
    print("gap/noise: |median(hidden) - median(never)| / median absolute deviation; under ~1 is within the noise")
    return 1 if failed else 0


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()  # --help: the docstring
    sys.exit(main())
