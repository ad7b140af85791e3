"""grep over the topic files: a linear-time regular expression engine, literal prefilters, one pass per file.

Patterns run on RE2 (the `google-re2` package), whose matching time is
linear in the text whatever the pattern, so `(a+)+$` cannot stall a server.
RE2 has no backreferences or lookaround; such patterns are refused with a
one-line error. Without RE2 (a platform with no wheel), Python's `re` runs
the pattern after refusing nested repetition, the shape that backtracks
exponentially.

The files come from the search index (`docs.text`), which holds every topic
file's text, so grep reads no file from the store; the literal strings a
match must contain (`launch` in `launch.*date`) filter the rows inside the
index's query first, so only candidate texts reach the regex.
"""

from __future__ import annotations

import bisect
import builtins
import importlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidArgument, LimitExceeded

try:
    import re2 as _re2
except ImportError:  # pragma: no cover - google-re2 ships wheels for the platforms memdir runs on
    _re2 = None

MAX_PATTERN_BYTES = 4096
_parser: Any = importlib.import_module("re._parser")
_REPEATS = {"MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"}
# Letters whose case folds to a non-ASCII letter too (K is also the Kelvin sign, s also the long s,
# i also the dotless i): a case-blind filter by ASCII lower() would miss those, so they end a literal.
_UNSAFE_FOLD = set("iksIKS")


@dataclass(frozen=True)
class Pattern:
    """A compiled grep pattern and the literal strings a matching text must contain."""

    source: str
    ignore_case: bool
    needles: tuple[tuple[str, ...], ...]  # every group: one of its strings must occur
    rx: Any
    binary: bool  # RE2 runs on UTF-8 bytes (no per-call encoding), `re` on str

    def scan(self, texts: Sequence[tuple[str, str]]) -> builtins.list[tuple[str, int, str]]:
        """(path, 1-based number, line) of every matching line of every text, in one pass.

        The texts are joined into one buffer (a line break between two), so
        the engine runs once, not once per file; a match is then checked
        against its line alone, since a match across lines is no line match.
        """
        if not texts:
            return []
        parts: builtins.list[Any] = [t.encode("utf-8", "surrogatepass") if self.binary else t for _, t in texts]
        nl: Any = b"\n" if self.binary else "\n"
        starts, at = [], 0
        for part in parts:
            starts.append(at)
            at += len(part) + 1
        data = nl.join(parts)
        out: builtins.list[tuple[str, int, str]] = []
        pos, end, doc, number, counted = 0, len(data), -1, 0, 0
        while pos < end:
            m = self.rx.search(data, pos)
            if m is None:
                break
            start = data.rfind(nl, pos, m.start()) + 1 or pos
            stop = data.find(nl, m.start())
            stop = end if stop < 0 else stop
            pos = stop + 1
            i = bisect.bisect_right(starts, start) - 1
            if start >= starts[i] + len(parts[i]):
                continue  # the empty line between two texts
            if i != doc:
                doc, number, counted = i, 0, starts[i]
            number += data.count(nl, counted, start)
            counted = start
            line = data[start:stop]
            if self.rx.search(line) is not None:
                shown = line.decode("utf-8", "replace") if self.binary else line
                out.append((texts[i][0], number + 1, shown[:-1] if shown.endswith("\r") else shown))
        return out


def compile(pattern: str, *, ignore_case: bool = True, fixed: bool = False) -> Pattern:
    """Compile a grep pattern, or raise a one-line `InvalidArgument` / `LimitExceeded`."""
    if not isinstance(pattern, str):
        raise InvalidArgument(f"pattern must be text, got {type(pattern).__name__}")
    size = len(pattern.encode("utf-8", "surrogatepass"))
    if size > MAX_PATTERN_BYTES:
        raise LimitExceeded(f"pattern is {size} bytes, over the {MAX_PATTERN_BYTES}-byte limit; use a shorter pattern",
                            limit=MAX_PATTERN_BYTES, actual=size)
    source = re.escape(pattern) if fixed else pattern
    try:
        parsed = _parser.parse(source, re.IGNORECASE if ignore_case else 0)
    except re.error as e:
        raise InvalidArgument(
            f"pattern {pattern!r} is not a valid regular expression ({e}); escape special characters or search "
            "for a fixed string"
        ) from None
    folded = ignore_case or bool(parsed.state.flags & re.IGNORECASE)
    needles = tuple(tuple(g) for g in _required(parsed, folded))
    flags = "(?mi)" if ignore_case else "(?m)"
    if _re2 is not None:
        options = _re2.Options()
        options.log_errors = False
        try:
            rx = _re2.compile(flags + source, options)
        except Exception as e:
            reason = e.args[0].decode() if e.args and isinstance(e.args[0], bytes) else str(e)
            raise InvalidArgument(
                f"pattern {pattern!r} is not supported ({reason}); grep runs in linear time, so backreferences and "
                "lookaround are not available: search for a fixed string or a simpler pattern"
            ) from None
        return Pattern(pattern, folded, needles, rx, True)
    if _nested(parsed):
        raise InvalidArgument(
            f"pattern {pattern!r} repeats a repetition, which can take exponential time; simplify it, or install "
            "google-re2 (pip install google-re2) so grep runs in linear time"
        )
    return Pattern(pattern, folded, needles, re.compile(flags + source), False)


def _required(items: Any, folded: bool) -> builtins.list[builtins.list[str]]:
    """Groups of literal strings a match must contain (one string of each group)."""
    groups: builtins.list[builtins.list[str]] = []
    run: builtins.list[str] = []

    def flush() -> None:
        if len(run) >= 2:
            groups.append(["".join(run).lower() if folded else "".join(run)])
        run.clear()

    for op, av in items:
        name = op.name
        if name == "LITERAL":
            ch = chr(av)
            if folded and (not ch.isascii() or ch in _UNSAFE_FOLD):
                flush()
            else:
                run.append(ch)
            continue
        flush()
        if name == "SUBPATTERN":
            _, add, _, inner = av
            if not add & re.IGNORECASE or folded:
                groups += _required(inner, folded)
        elif name in _REPEATS and av[0] >= 1:
            groups += _required(av[2], folded)
        elif name == "ATOMIC_GROUP":
            groups += _required(av, folded)
        elif name == "BRANCH":
            best = [_longest(_required(branch, folded)) for branch in av[1]]
            if all(best):
                groups.append([b for b in best if b])
    flush()
    return groups


def _longest(groups: Sequence[Sequence[str]]) -> str:
    singles = [g[0] for g in groups if len(g) == 1]
    return max(singles, key=len) if singles else ""


def _nested(items: Any, inside: bool = False) -> bool:
    """Whether a repetition contains another (the shape that backtracks exponentially in `re`)."""
    for op, av in items:
        name = op.name
        if name in _REPEATS:
            if inside or _nested(av[2], True):
                return True
        elif name == "SUBPATTERN" and _nested(av[3], inside):
            return True
        elif name == "BRANCH" and any(_nested(b, inside) for b in av[1]):
            return True
        elif name == "GROUPREF":
            return True
    return False
