"""The fence around data handed to a model: a tag whose name carries a nonce drawn at random per render.

    tag = "transcript-" + fence.nonce(text)      # e.g. transcript-402817395561
    prompt = f"<{tag}>\\n{text}\\n</{tag}>"

The nonce is twelve decimal digits from `secrets`, so nobody who writes the
data, or reads an earlier render, can know it, and no text can hold its own
closing tag. It is also drawn again until it does not occur in the data folded
(`fold`: NFKC, case folded, invisible characters dropped, every script's digits
and the letters that pass for digits made ASCII digits), so not even an upper-case,
full-width or look-alike copy of it is in the data. Decimal digits count as the
same number of tokens whatever they are (tokenizers split digits in runs of up
to three), so a context counted with `PLACEHOLDER` counts the same with its nonce.

Used by the context builder (`recall/context.py`) and the model summarisers'
prompts (`prompts.py`, `summarize.py`).
"""

from __future__ import annotations

import secrets
import unicodedata
from collections.abc import Callable

DIGITS = 12
PLACEHOLDER = "0" * DIGITS  # stands in for the nonce while a render is measured
_LOOKALIKES = str.maketrans({"o": "0", "\u03bf": "0", "\u043e": "0", "l": "1", "i": "1", "\u0131": "1", "|": "1"})
_TRIES = 1000


def fold(text: str) -> str:
    """`text` as a reader might take it: NFKC, case folded, no invisible characters, digits of any script as 0-9."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
        text = "".join(_fold_char(ch) for ch in text)
    return text.casefold().translate(_LOOKALIKES)


def _fold_char(ch: str) -> str:
    if ch.isascii():
        return ch
    if unicodedata.category(ch) == "Cf":  # zero-width and direction marks render as nothing
        return ""
    value = unicodedata.decimal(ch, None)
    return ch if value is None else str(value)


def _draw() -> str:
    return f"{secrets.randbelow(10 ** DIGITS):0{DIGITS}d}"


def nonce(*texts: str, draw: Callable[[], str] | None = None) -> str:
    """A fresh nonce that none of `texts`, folded, contains; `draw` gives candidates (a test may script them)."""
    folded = [fold(t) for t in texts]
    for _ in range(_TRIES):
        candidate = (draw or _draw)()
        if candidate != PLACEHOLDER and not any(candidate in f for f in folded):
            return candidate
    raise RuntimeError(f"no nonce found in {_TRIES} draws")  # the data would have to hold nearly every number
