"""Coverage-guided fuzzing (atheris, libFuzzer) of what takes outside input: the half of suite 3 that learns.

    python tests/reliability/fuzz.py paths -runs=100000
    python tests/reliability/fuzz.py frontmatter -max_total_time=60
    python tests/reliability/fuzz.py tools -runs=5000

Targets: `paths` (the path checker), `frontmatter` (the parser, strict and
lenient, then rendering what parsed), `tools` (one tool call with fuzzed
arguments against a scratch memory), and `all` (the three in one process). Any exception other than the expected
refusal, or a result that is not one line, is a crash that libFuzzer reports
with the input that caused it. `make soak` runs these long; tests/reliability
runs them short.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import atheris

with atheris.instrument_imports():
    import memdir
    from memdir import InvalidMemory, InvalidPath, model, paths
    from memdir.faces import tools


def fuzz_paths(data: bytes) -> None:
    raw = atheris.FuzzedDataProvider(data).ConsumeUnicodeNoSurrogates(4096)
    try:
        p = paths.topic_path(raw)
    except InvalidPath as e:
        if "\n" in e.message:
            raise AssertionError(f"two-line error for {raw!r}") from None
        return
    parts = p.split("/")
    if not p.endswith(".md") or p.startswith("/") or any(part in ("", ".", "..") or part.startswith(".") for part in parts):
        raise AssertionError(f"unsafe path accepted: {raw!r} -> {p!r}")
    if paths.topic_path(p) != p:
        raise AssertionError(f"not idempotent: {raw!r}")


def fuzz_frontmatter(data: bytes) -> None:
    text = atheris.FuzzedDataProvider(data).ConsumeUnicodeNoSurrogates(8192)
    for candidate in (text, "---\n" + text + "\n---\nbody\n"):
        try:
            meta, body = model.parse(candidate, path="a.md", strict=True)
        except InvalidMemory as e:
            if "\n" in e.message:
                raise AssertionError(f"two-line error for {candidate!r}") from None
            model.parse(candidate, path="a.md", strict=False)
            continue
        model.render(meta, body)


_scratch = Path(tempfile.mkdtemp(prefix="memdir-fuzz-"))
_md = memdir.open(_scratch / "memory", max_bytes=20_000)
_md.write("notes/a.md", "alpha\n")


def fuzz_tools(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    tool = tools.TOOLS[fdp.ConsumeIntInRange(0, len(tools.TOOLS) - 1)]
    if fdp.ConsumeBool():
        arguments: object = fdp.ConsumeUnicode(2048)  # raw text: JSON or not
    else:
        arguments = {}
        for name in tool.parameters["properties"]:
            if fdp.ConsumeBool():
                kind = fdp.ConsumeIntInRange(0, 3)
                value: object = [fdp.ConsumeUnicode(512), fdp.ConsumeInt(4), None, json.loads("[" * 3 + "]" * 3)][kind]
                arguments[name] = value  # type: ignore[index]
    result = tools.handle(_md, tool.name, arguments)  # type: ignore[arg-type]
    if result.is_error and ("\n" in result.text or "failed unexpectedly" in result.text):
        raise AssertionError(f"{tool.name} {arguments!r}: {result.text}")
    if sorted(p.name for p in _scratch.iterdir()) != ["memory"]:
        raise AssertionError(f"{tool.name} {arguments!r} wrote outside the memory")


def fuzz_all(data: bytes) -> None:
    """The three targets in one process (one start-up): the first byte picks one."""
    if data:
        (fuzz_paths, fuzz_frontmatter, fuzz_tools)[data[0] % 3](data[1:])


TARGETS = {"paths": fuzz_paths, "frontmatter": fuzz_frontmatter, "tools": fuzz_tools, "all": fuzz_all}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in TARGETS:
        sys.exit(f"usage: fuzz.py {{{','.join(TARGETS)}}} [libFuzzer options]")
    target = TARGETS[sys.argv[1]]
    atheris.Setup([sys.argv[0], *sys.argv[2:]], target)
    atheris.Fuzz()
