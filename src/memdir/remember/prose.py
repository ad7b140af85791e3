"""How the extractive roll-ups read: a day in one paragraph, a week in two or three sentences, a month in three
bullets of themes (the seeds' shapes), each made of notes a person would keep.

The lists a roll-up folds (`summarize.Digest`) keep every item with the sessions its learnings came from; the
prose shows each item once (an item that is still open is not also "worked on"), without those sources, without
the notes of what redaction removed, and never a bare word: an item says what was worked on in at least two
content words, or names a file or folder (`substantial`). A month's themes are clusters of what was done, named
by the folder its sessions changed when they share one, else by the words they share (`notes.themes`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from . import notes

# Words that say an action but not its subject: "fix these", "start", "do it" name no work on their own.
GENERIC = frozenset("""fix start continue go do make try run check look see help add update change use write create
implement test work finish redo retry review improve handle clean show tell explain let keep stop begin build""".split())
_PATH = re.compile(r"[\w.-]+/[\w./-]*|\b[\w-]+\.(?:py|ts|js|md|sql|yml|yaml|toml|json|go|rs|rb|java|css|html|sh|csv)\b")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_REDACTED = re.compile(r"\[(?:line )?removed: it held what looks like ([^\]]+)\]")
_INNER_STOP = re.compile(r"(?<=[^\s.])[.!?]+\s+")
_AREA = notes.AREA


def substantial(text: str) -> bool:
    """Whether an item says what was worked on: two content words of which one is more than a generic verb, a
    file or folder, or a sentence in a script written without spaces. Not a bare word, not a placeholder."""
    plain = notes.sources_of(notes.count_of(text)[0])[0].strip()
    if not plain or plain.startswith("[") or notes.pleasantry(plain):
        return False
    if _PATH.search(plain) or len(_CJK.findall(plain)) >= 4:
        return True
    words = notes.content(plain)
    return len(words) >= 2 and bool(words - GENERIC)


def area(files: Sequence[str]) -> str:
    """Where a session worked, from the files it changed: the one or two folders most of them are in (a file at
    the top of the project is named itself)."""
    places = Counter(f.rsplit("/", 1)[0] if "/" in f else f for f in files if f and not f.startswith("["))
    return ", ".join(p for p, _ in places.most_common(2))


def worked_on(title: str, files: Sequence[str]) -> str | None:
    """A session as a line of "worked on": its title and where it worked, or None when neither says anything."""
    where = area(files)
    title = notes.reported(notes.request(title))  # "can you split the bills between me and X" -> "split the bills between the user and X"
    if where and not set(notes.content(where)) <= set(notes.content(title)):
        title = f"{title} (in {where})"
    return title if substantial(title) else None


def readable(text: str) -> str:
    """An item as prose shows it: without the sessions it names, a redaction note as what it stood for, inner
    full stops as commas, no closing punctuation (the prose adds its own)."""
    text, n = notes.count_of(text)
    text = notes.sources_of(text)[0]
    text = _REDACTED.sub(lambda m: f"(a line holding {m.group(1)}, removed)", text)
    text = _INNER_STOP.sub(", ", text.strip()).rstrip(" .;,!?")
    return f"{text} ({n} days)" if n > 1 else text


def distinct(parts: dict[str, Sequence[str]], order: Sequence[str]) -> dict[str, list[str]]:
    """Each item once across the parts (the first part in `order` that holds it keeps it), substantial items only
    in "worked on"."""
    seen: list[set[str]] = []
    out: dict[str, list[str]] = {}
    for k in order:
        out[k] = []
        for x in parts.get(k, ()):
            words = notes.content(x)
            if (k == "worked_on" and not substantial(x)) or any(
                    words and w and len(words & w) / min(len(words), len(w)) >= notes.SAME for w in seen):
                continue
            seen.append(words)
            out[k].append(x)
    return out


LEADS = (("learned", "Learned"), ("decided", "Decided"), ("worked_on", "Worked on"), ("broke", "Broke"),
         ("open", "Still open"))
_ORDER = ("learned", "decided", "open", "broke", "worked_on")  # what is open is not also "worked on"


def paragraph(lists: dict[str, Sequence[str]], limit: int) -> str:
    """A day: one paragraph, durable learnings first, cut item by item from the end of the longest part to fit."""
    parts = distinct(lists, _ORDER)
    while True:
        text = " ".join(f"{lead}: {'; '.join(readable(x) for x in parts[k])}." for k, lead in LEADS if parts[k])
        if len(text) <= limit:
            return text or "Nothing of note."
        longest = max(parts, key=lambda k: (len(parts[k]), k))
        parts[longest].pop()


def sentences(lists: dict[str, Sequence[str]], limit: int) -> str:
    """A week: two or three sentences, the main learnings (or decisions), the main work, what stays open (or what
    broke)."""
    parts = distinct(lists, _ORDER)
    picks = [("Learned", parts["learned"] or parts["decided"]), ("Worked on", parts["worked_on"]),
             ("Still open", parts["open"][-2:] or []), ("Broke", parts["broke"])]
    n = 3
    while True:
        chosen = [(lead, items[:n]) for lead, items in picks if items][:3]
        said = [f"{lead}: {'; '.join(readable(x) for x in items)}." for lead, items in chosen]
        if len(said) == 1:
            said.append("Nothing was left open.")
        text = " ".join(said)
        if len(text) <= limit or n == 1:
            return _fit(text, limit) if chosen else "A quiet week."
        n -= 1


def themes(lists: dict[str, Sequence[str]], limit: int) -> str:
    """A month: three bullets. The largest clusters of what was done (`notes.themes` over what was worked on and
    decided), each named by the folder its items share or the words they share, with its most repeated item and
    the days it came up on; then, if fewer than three, the month's main learning, what stays open, what broke."""
    parts = distinct(lists, _ORDER)
    done = [x for k in ("worked_on", "decided") for x in parts[k]]
    placed: dict[str, list[str]] = {}  # items that name where they worked, by that place
    for x in done:
        if m := _AREA.search(notes.count_of(x)[0]):
            placed.setdefault(m.group(1).split(", ")[0], []).append(x)
    clusters = [(place, notes.fold(items)) for place, items in placed.items()]
    clusters += [(name, [best]) for name, best, _ in notes.themes([x for x in done if not _AREA.search(notes.count_of(x)[0])])]
    ranked = sorted(clusters, key=lambda c: -sum(i.count for i in c[1]))  # stable: first seen first among equals
    bullets = []
    for label, items in ranked[:3]:
        best = max(items, key=lambda i: i.count)
        total = sum(i.count for i in items)
        days = f" ({total} days)" if total > 1 else ""
        bullets.append(f"- {label}: {readable(_AREA.sub('', best.text))}{days}")
    for lead, k in (("Learned", "learned"), ("Still open", "open"), ("Broke", "broke")):
        if len(bullets) < 3 and parts[k]:
            bullets.append(f"- {lead}: {readable(parts[k][0] if k != 'open' else parts[k][-1])}")
    per = max(40, limit // 3 - 1)
    return "\n".join(_fit(b, per) for b in bullets[:3]) or "- Nothing recurring."


def _fit(text: str, limit: int) -> str:
    """`text` cut at a word to `limit` characters."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    return cut.rsplit(" ", 1)[0].rstrip(" ,;:") + "…" if " " in cut else cut + "…"
