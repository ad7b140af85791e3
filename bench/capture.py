"""Capture and roll-up benchmark, extractive summariser, folder store.

    python bench/capture.py                  # 1,000 sessions, one 2 MB Claude Code transcript
    python bench/capture.py --sessions 200   # a quicker run

Prints one table: time (median, p95, total) and tokens in and out (the
extractive summariser's estimate: four characters a token) for
- capturing 1,000 synthetic sessions of about 20 turns each, one at a time;
- rolling them up (`rollup --due`) after 30 days: dailies, weeklies, a monthly;
- capturing one 2 MB Claude Code transcript, in this process and as the hook
  does it (`memdir hook claude-code` in a fresh process).
Not a test: run it, read it, paste it.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from timing import summary, timed  # noqa: E402 - bench/timing.py, beside this script

import memdir  # noqa: E402
from memdir.remember import capture, diary  # noqa: E402
from memdir.remember.summarize import Extractive  # noqa: E402

TOPICS = ["billing webhook", "upload test", "cache eviction", "search ranking", "deploy pipeline", "auth tokens",
          "data migration", "report export", "onboarding flow", "rate limits"]
SAYINGS = [
    "User: Please look at the {t} again.",
    "Assistant: I read the code for the {t} and ran the tests.",
    "Assistant: The {t} job failed with a timeout on step {n}.",
    "User: No, don't change the retry policy for the {t}.",
    "User: I prefer small pull requests for the {t}.",
    "Assistant: Let's go with a feature flag for the {t}.",
    "Assistant: [tool Bash: pytest tests/test_{n}.py]",
    "User: We still need to update the docs for the {t} later.",
    "Assistant: Done: the {t} now passes {n} checks.",
    "User: Thanks, that looks right.",
]


def session_text(rng: random.Random, turns: int = 20) -> str:
    topic = rng.choice(TOPICS)
    return "\n".join(rng.choice(SAYINGS).format(t=topic, n=rng.randint(1, 999)) for _ in range(turns)) + "\n"


def claude_code_transcript(path: Path, size: int) -> None:
    """A Claude Code session file of about `size` bytes: prompts, tool calls, tool output, answers."""
    rng = random.Random(7)
    t0 = dt.datetime(2026, 11, 30, 9, tzinfo=dt.UTC)
    with path.open("w") as f:
        i = 0
        while f.tell() < size:
            stamp = (t0 + dt.timedelta(seconds=i * 5)).isoformat().replace("+00:00", "Z")
            kind = i % 4
            if kind == 0:
                msg = {"role": "user", "content": session_text(rng, 1).split(": ", 1)[1].strip()}
                line = {"type": "user", "message": msg}
            elif kind == 1:
                msg = {"role": "assistant", "content": [{"type": "tool_use", "id": f"t{i}", "name": "Bash",
                                                         "input": {"command": f"pytest -k case{i}"}}]}
                line = {"type": "assistant", "message": msg}
            elif kind == 2:
                output = "\n".join(f"tests/test_{j}.py::case PASSED" for j in range(40))
                msg = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{i - 1}",
                                                    "content": output, "is_error": i % 40 == 2}]}
                line = {"type": "user", "message": msg}
            else:
                msg = {"role": "assistant", "content": [{"type": "text", "text": session_text(rng, 2).replace("User: ", "").replace("Assistant: ", "")}]}
                line = {"type": "assistant", "message": msg}
            line.update({"sessionId": "big", "cwd": "/home/u/proj", "timestamp": stamp, "uuid": f"u{i}"})
            f.write(json.dumps(line) + "\n")
            i += 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--transcript-mb", type=float, default=2.0)
    parser.add_argument("--runs", type=int, default=5, help="samples for the big transcript")
    args = parser.parse_args()
    rows: list[tuple[str, str, str, str, str, str]] = []

    def row(what: str, samples: list[float], tokens_in: int = 0, tokens_out: int = 0) -> None:
        med, p95 = summary(samples)
        rows.append((what, f"{med:.2f}", f"{p95:.2f}", f"{sum(samples) / 1000:.2f}",
                     f"{tokens_in:,}" if tokens_in else "-", f"{tokens_out:,}" if tokens_out else "-"))

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "memory"
        rng = random.Random(1)
        texts = [session_text(rng) for _ in range(args.sessions)]
        start = dt.datetime(2026, 11, 1, 8, tzinfo=dt.UTC)
        spacing = dt.timedelta(days=30) / args.sessions
        summarizer = Extractive()
        with memdir.open(root, writes_per_minute=0) as md:
            samples = []
            for i, text in enumerate(texts):
                t = time.perf_counter()
                capture.capture(md, f"s{i:05d}", text, at=start + i * spacing, summarizer=summarizer)
                samples.append((time.perf_counter() - t) * 1000)
            row(f"capture, {args.sessions:,} sessions (ms per session)", samples,
                summarizer.usage["input_tokens"], summarizer.usage["output_tokens"])

            rolled = Extractive()
            t = time.perf_counter()
            report = diary.rollup(md, due=True, now=dt.datetime(2026, 12, 8, 4, tzinfo=dt.UTC), summarizer=rolled)
            total = (time.perf_counter() - t) * 1000
            steps = [s for s in report.steps if s.status == "done"]
            kinds = {k: sum(1 for s in steps if s.kind == k) for k in ("day", "week", "month", "retention")}
            row(f"rollup --due of them: {kinds['day']} days, {kinds['week']} weeks, {kinds['month']} month(s), "
                f"{kinds['retention']} deleted (ms per run)", [total], rolled.usage["input_tokens"], rolled.usage["output_tokens"])
            row("rollup --due again, nothing due (ms)", timed(
                lambda: diary.rollup(md, due=True, now=dt.datetime(2026, 12, 8, 5, tzinfo=dt.UTC)), 5))

        big = Path(tmp) / "big.jsonl"
        claude_code_transcript(big, int(args.transcript_mb * 1_000_000))
        size = big.stat().st_size
        one = Extractive()
        with memdir.open(Path(tmp) / "one", writes_per_minute=0) as md:
            samples = timed(lambda: capture.capture(md, "big", big, summarizer=one), args.runs)
        runs = max(1, args.runs)
        row(f"capture one {size / 1e6:.1f} MB Claude Code transcript, in process (ms)", samples,
            one.usage["input_tokens"] // runs, one.usage["output_tokens"] // runs)
        payload = json.dumps({"session_id": "big", "transcript_path": str(big), "hook_event_name": "SessionEnd",
                              "reason": "other", "cwd": tmp})
        env = {k: v for k, v in os.environ.items() if not k.startswith("MEMDIR_")}

        def hook() -> None:
            done = subprocess.run([sys.executable, "-m", "memdir", "--root", str(Path(tmp) / "hook"), "hook", "claude-code"],
                                  input=payload, text=True, capture_output=True, env=env,
                                  cwd=str(Path(__file__).resolve().parent.parent / "src"))
            assert done.returncode == 0, done.stderr

        row(f"memdir hook claude-code, SessionEnd, {size / 1e6:.1f} MB, fresh process (ms)", timed(hook, args.runs))

    head = ("what", "median ms", "p95 ms", "total s", "tokens in", "tokens out")
    widths = [max(len(str(r[i])) for r in [head, *rows]) for i in range(len(head))]
    for r in [head, tuple("-" * w for w in widths), *rows]:
        print(" | ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))))


if __name__ == "__main__":
    main()
