"""Claude Code's `Stop` hook: a reminder when the person asked to remember something and nothing was saved.

Claude Code's Stop hook may answer `{"decision": "block", "reason": …}`: Claude
then carries on with the reason as its next instruction, and the next Stop of
the same turn says `stop_hook_active`. That is the one way a Stop hook adds
context, and it costs a turn, so memdir uses it only where it helps: the last
request asks to remember something ("remember that…", "from now on…", "don't
forget…") and no tool call after it wrote a memory that landed (a write whose
result was an error, a write memdir refused, is not a save). It blocks once per
turn (never when `stop_hook_active`), and most turns get nothing.

Only the end of the transcript is read (the last request and what followed it),
so a long session costs no more than a short one, and nothing is written.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from ..remember import transcripts
from ..remember.summarize import clip, sentences

TAIL = 256 * 1024  # bytes read from the end of a transcript
_ASKS = re.compile(r"\b(?:remember|don't forget|do not forget|from now on|keep in mind|make a note|note that"
                   r"|for future reference|next time)\b", re.IGNORECASE)
_RECALLS = re.compile(r"\b(?:do|did|can't|don't|do not) you remember\b|\bremember when\b", re.IGNORECASE)  # asks to recall
_WRITES = r"(?:write_memory_file|edit_memory_file|append_memory|remember_feedback|rename_memory_file)\b"
_FILES = r"(?:(?:CLAUDE|MEMORY|AGENTS|GEMINI)\.md|/memory/|/team-memory/)"  # the last: the project's team memory
_SAVES = re.compile(  # a memdir write tool, or an edit of a memory file the agent keeps itself
    rf"\[tool [^\]:]*{_WRITES}|\[tool (?:Write|Edit|MultiEdit): [^\]]*{_FILES}", re.IGNORECASE)
_REFUSED = re.compile(  # ... whose result was an error (the line transcripts keep for a failed call names it)
    rf"\[tool error: [^\]:]*{_WRITES}|\[tool error: [^\]]*{_FILES}[^\]:]*:", re.IGNORECASE)


def stop(payload: dict[str, Any]) -> dict[str, Any] | None:
    """Stop: block once with a reminder when the last request asked to remember something that was not saved."""
    if payload.get("stop_hook_active"):
        return None  # already reminded in this turn: let it stop
    where = payload.get("transcript_path")
    if not isinstance(where, str) or not where:
        return None
    asked = unsaved(tail(Path(where)))
    if asked is None:
        return None
    return {"decision": "block", "reason": (
        f"The user asked you to remember this: \"{asked}\". Nothing was saved to memory in this turn. Save it now "
        "with memdir's remember_feedback tool (a rule, why, how to apply) or write_memory_file, then stop; if it "
        "should not be kept, say why in one line.")}


def tail(path: Path, size: int = TAIL) -> transcripts.Transcript | None:
    """The last `size` bytes of a transcript as turns (the first, cut line dropped); None if it cannot be read."""
    try:
        with path.open("rb") as f:
            f.seek(0, os.SEEK_END)
            end = f.tell()
            f.seek(max(0, end - size))
            data = f.read(size)
    except OSError:
        return None
    if end > size:
        data = data.split(b"\n", 1)[1] if b"\n" in data else b""
    try:
        return transcripts.parse_bytes(data, str(path))
    except transcripts.TranscriptError:
        return None


def unsaved(t: transcripts.Transcript | None) -> str | None:
    """What the last request asked to remember, when no write after it landed (every memory write it made was
    refused, or there was none)."""
    if t is None:
        return None
    turns = list(t.turns)
    last = max((i for i, x in enumerate(turns) if x.role == "user"), default=None)
    if last is None:
        return None
    asked = next((s for s in sentences(turns[last].text) if _ASKS.search(s) and not _RECALLS.search(s)), None)
    if asked is None:
        return None
    after = turns[last + 1:]
    saves = sum(len(_SAVES.findall(x.text)) for x in after if x.role == "assistant")
    refused = sum(len(_REFUSED.findall(x.text)) for x in after if x.role != "assistant")
    if saves > refused:
        return None  # a write landed
    return clip(asked, 300)
