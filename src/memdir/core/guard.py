"""The secret guard: refuse writes that carry a high-confidence credential.

Only distinctive shapes are checked: a fixed prefix and length (cloud and API
keys, JWTs, webhook URLs), a URL with a password, or a secret-named key set to a
value that looks like one. So prose, hashes, UUIDs, git SHAs and base64 blobs
pass. The path and every frontmatter value are checked as well as the text.
Before matching, text is folded (NFKC turns fullwidth letters into ASCII;
zero-width and direction characters are dropped), and it is checked a second
time with its line breaks removed, so trivial obfuscation does not hide a key.
Every match of a shape holds one of a few literals ("akia", "ghp_", "://"...);
text that holds none of them skips the regular expressions, which is most text.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import InvalidMemory

_NAMED = (
    r"(?i)(?:passw(?:or)?d|pwd|secret|token|api[_-]?key|apikey|access[_-]?key"
    r"|private[_-]?key|client[_-]?secret|credentials?)[\"']?[ \t]*[:=][ \t]*[\"']?(?P<value>[^\s\"'`<>]{8,200})"
)

# Each shape, with literals one of which (lower-cased) every match contains: text that holds
# none of them cannot match, so most text skips the regular expressions (see _due).
_SHAPES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("a private key block", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----", ("-----begin",)),
    ("an AWS access key id", r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b", ("akia", "asia", "abia", "acca")),
    ("an AWS secret access key",
     r"(?i)aws_?secret_?access_?key[\"']?[ \t]*[:=][ \t]*[\"']?[A-Za-z0-9/+=]{40}(?![A-Za-z0-9/+=])", ("aws",)),
    ("a GitHub token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{60,255})\b",
     ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")),
    ("a GitLab token", r"\bglpat-[A-Za-z0-9_-]{20,}\b", ("glpat-",)),
    ("a Slack token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b", ("xox",)),
    ("a Slack webhook URL", r"hooks\.slack\.com/(?:services|workflows|triggers)/T[A-Za-z0-9]+/[A-Za-z0-9]+/[A-Za-z0-9]{8,}",
     ("hooks.slack.com/",)),
    ("a Discord webhook URL", r"discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]{20,}", ("discord",)),
    ("a Stripe live key", r"\b(?:sk|rk)_live_[A-Za-z0-9]{20,}\b", ("_live_",)),
    ("a Google API key", r"\bAIza[0-9A-Za-z_-]{35}\b", ("aiza",)),
    ("an Anthropic API key", r"\bsk-ant-[a-z0-9]+-[A-Za-z0-9_-]{40,}", ("sk-ant-",)),
    ("an OpenAI API key", r"\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}|\bsk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}\b",
     ("sk-",)),
    ("an npm token", r"\bnpm_[A-Za-z0-9]{36}\b", ("npm_",)),
    ("a SendGrid API key", r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}\b", ("sg.",)),
    ("a Hugging Face token", r"\bhf_[A-Za-z]{34}\b", ("hf_",)),
    ("a JSON Web Token", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,}", ("eyj",)),
    ("a URL with a password",
     r"(?i)\b(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?|redis|rediss|amqps?|mssql|sqlserver|oracle"
     r"|clickhouse|cockroachdb|jdbc:[a-z]+|s?ftp|smtps?|ldaps?)(?:\+[a-z0-9]+)?://[^\s:/@]{1,256}:(?P<value>[^\s@/]{1,256})@[^\s/]",
     ("://",)),
    ("a password or key assigned to a name", _NAMED,
     ("passw", "pwd", "secret", "token", "apikey", "api_key", "api-key", "accesskey", "access_key", "access-key",
      "privatekey", "private_key", "private-key", "credential")),
)
# Values that end at the end of their line: joining lines would only glue the next line on.
_WHOLE_LINE = {"a URL with a password", "a password or key assigned to a name"}

_Shape = tuple[str, re.Pattern[str], re.Pattern[str] | None, tuple[str, ...]]


@functools.cache
def _compiled() -> tuple[_Shape, ...]:
    """Every shape compiled, with its form for text whose line breaks were removed. Compiled for the first
    text that holds a literal, not on import: a new process that writes ordinary text never pays ~3 ms.

    In the glued form a key that started or ended a line is glued to its neighbours, so word
    boundaries are dropped (the shapes are distinctive enough without them).
    """
    return tuple((kind, re.compile(rx), None if kind in _WHOLE_LINE else re.compile(rx.replace(r"\b", "")), literals)
                 for kind, rx, literals in _SHAPES)


# Outside ASCII, a case-insensitive pattern's letters match only U+0130 and U+0131 (as i), U+017F (s)
# and U+212A (k), which lower() does not turn into those letters.
_ODD_CASES = (("\u0130", "i"), ("\u0131", "i"), ("\u017f", "s"), ("\u212a", "k"))

# Characters that render as nothing (or only reorder text): dropped before matching.
_INVISIBLE = frozenset(
    [0x00AD, 0x034F, 0x061C, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180E, 0x3164, 0xFEFF, 0xFFA0]
    + list(range(0x200B, 0x2010)) + list(range(0x202A, 0x202F)) + list(range(0x2060, 0x2070))
)
_BREAK = re.compile(r"[ \t]*\r?\n[ \t]*")
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
_PLACEHOLDER = re.compile(r"(?i)^(?:[<{$%*:\[(]|\.\.\.|x{3,}|(?:your|my|the)[_-]|example|changeme|placeholder|redacted|"
                          r"password|passwd|secret|token|hunter2$)|(?:x{4,}|\*{3,}|\.{3})")


def _fold(text: str) -> str:
    """NFKC-folded text without invisible characters, folded one character at a time (as `_origins` maps it)."""
    if text.isascii():
        return text
    return _NON_ASCII.sub(lambda m: "".join(map(_fold_char, m.group())), text)  # most text is mostly ASCII


@functools.lru_cache(maxsize=4096)
def _fold_char(ch: str) -> str:
    return "" if ord(ch) in _INVISIBLE else unicodedata.normalize("NFKC", ch)


def _origins(text: str) -> list[int]:
    """Where each character of `_fold(text)` came from in `text` (asked only when a match is found)."""
    return [i for i, ch in enumerate(text) for _ in range(1 if ch.isascii() else len(_fold_char(ch)))]


def _any_of(words: Iterable[str]) -> str:
    """A regular expression for where any of `words` starts, its branches sharing prefixes so re tries few."""
    heads: dict[str, list[str]] = {}
    for word in sorted(set(words)):
        heads.setdefault(word[0], []).append(word[1:])
    return "(?:" + "|".join(re.escape(head) + ("" if "" in rest else _any_of(rest)) for head, rest in heads.items()) + ")"


_ANY_LITERAL = re.compile(_any_of(literal for _, _, literals in _SHAPES for literal in literals))


def _literal_form(text: str) -> str:
    """`text` as the literals are written: without whitespace, every letter a pattern's letter matches made that letter."""
    low = "".join(text.split())
    if not low.isascii():
        for odd, letter in _ODD_CASES:
            low = low.replace(odd, letter)
    return low.lower()


def _due(folded: str) -> list[_Shape]:
    """The shapes that could match `folded` or its lines glued: those with one of their literals in it.

    Exact: no literal holds whitespace, so dropping all of it keeps every literal
    that gluing the lines keeps (and finds those gluing makes), and `_literal_form`
    turns every character a pattern's letter matches into that letter.
    """
    low = _literal_form(folded)
    if not _ANY_LITERAL.search(low):  # one pass instead of a search per literal
        return []
    return [shape for shape in _compiled() if any(literal in low for literal in shape[3])]


def _unglued(folded: str, at: int) -> int:
    """Where the character at `at` of `folded` with its line breaks removed is in `folded`."""
    for m in _BREAK.finditer(folded):
        if m.start() > at:
            break
        at += m.end() - m.start()
    return at


def _real(kind: str, m: re.Match[str]) -> bool:
    """Whether a match is a credential rather than a placeholder or an ordinary value."""
    value = m.groupdict().get("value")
    if value is None:
        return True
    if _PLACEHOLDER.search(value) or len(set(value)) < 4:
        return False
    if kind == "a password or key assigned to a name":
        return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)
    return True


def find_secret(text: str) -> tuple[str, int] | None:
    """(kind, line number) of the first credential in `text`, or None."""
    folded = _fold(text)
    due = _due(folded)
    if not due:  # the common case: no shape's literal is in the text
        return None
    glued = _BREAK.sub("", folded) if "\n" in folded else None
    for kind, rx, glued_rx, _ in due:
        at = next((m.start() for m in rx.finditer(folded) if _real(kind, m)), None)
        if at is None and glued is not None and glued_rx is not None:
            at = next((_unglued(folded, m.start()) for m in glued_rx.finditer(glued) if _real(kind, m)), None)
        if at is not None:
            start = at if text.isascii() else _origins(text)[at]
            return kind, text.count("\n", 0, start) + 1
    return None


def check_path(path: str) -> None:
    """Refuse a path that holds a credential: MEMORY.md shows every path to the model on every turn."""
    found = find_secret(path)
    if found:
        raise InvalidMemory(
            f"the path contains what looks like {found[0]}; memories must not hold credentials: "
            "name the file after what it is about",
            path=None,
        )


def _strings(value: Any, key: str) -> list[tuple[str, str]]:
    """(field, text) for every string in a frontmatter value, nested ones included."""
    if isinstance(value, str):
        return [(key, f"{key}: {value}")]
    if isinstance(value, Mapping):
        return [s for k, v in value.items() for s in [(key, str(k)), *_strings(v, f"{key}.{k}" if key else str(k))]]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v, key)]
    return []


def check(text: str, path: str, *, head_lines: int = 0, meta: Mapping[str, Any] | None = None) -> None:
    """Refuse a file whose path, frontmatter or text holds a credential; `head_lines` is the frontmatter's length.

    A line is named both ways a writer counts it: in the file, and in the body
    (whose numbering does not depend on the frontmatter memdir renders).
    """
    check_path(path)
    found = find_secret(text)
    if found:
        kind, line = found
        _refuse(path, where(line, head_lines), kind)
    fields = _strings(dict(meta or {}), "")  # what YAML's escapes or folding hid from the text
    if not fields or not _due(_fold("\n".join(value for _, value in fields))):  # one prefilter for them all
        return
    for field, value in fields:
        found = find_secret(value)
        if found:
            _refuse(path, f"frontmatter field {field!r}", found[0])


def where(line: int, head_lines: int) -> str:
    """A line of a file named both ways a writer may count it: in the file, and in the body it wrote."""
    if not head_lines:
        return f"line {line}"
    return f"line {line} (in the frontmatter)" if line <= head_lines else f"line {line - head_lines} of the body (file line {line})"


def _refuse(path: str, where: str, kind: str) -> None:
    raise InvalidMemory(
        f"{path}: {where} contains what looks like {kind}; memories must not hold credentials: "
        "remove it and note where the secret is kept instead",
        path=path,
    )
