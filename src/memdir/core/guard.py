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
The shapes run on RE2, whose time is linear in the text (a backtracking engine
took quadratic time on a run of "eyJ" with its lines glued), and `redact` finds
every credential of a text in one pass of each shape, so redacting N secrets
costs what redacting one does, not N scans of the text.
"""

from __future__ import annotations

import base64
import bisect
import functools
import itertools
import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import re2

from ..errors import InvalidMemory

_NAMED = (
    r"(?i)(?:passw(?:or)?d|pwd|secret|token|api[_-]?key|apikey|access[_-]?key"
    r"|private[_-]?key|client[_-]?secret|credentials?)[\"']?[ \t]*[:=][ \t]*[\"']?(?P<value>[^\s\"'`<>]{8,200})"
)

# Each shape, with literals one of which (lower-cased) every match contains: text that holds
# none of them cannot match, so most text skips the regular expressions (see _due). The patterns
# keep to what both RE2 (which runs them) and Python's re (the tests' generators) read alike.
_SHAPES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("a private key block", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----", ("-----begin",)),
    ("an AWS access key id", r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b", ("akia", "asia", "abia", "acca")),
    ("an AWS secret access key",  # exactly 40 characters: `_real` measures the run (RE2 has no lookahead)
     r"(?i)aws_?secret_?access_?key[\"']?[ \t]*[:=][ \t]*[\"']?(?P<forty>[A-Za-z0-9/+=]{40,})", ("aws",)),
    ("a GitHub token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{60,255})\b",
     ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")),
    ("a GitLab token", r"\bgl(?:pat|ptt|dt|rt|cbt|soat)-[A-Za-z0-9_-]{20,}\b",
     ("glpat-", "glptt-", "gldt-", "glrt-", "glcbt-", "glsoat-")),
    ("a Slack token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b|\bxapp-\d-[A-Za-z0-9-]{20,}", ("xox", "xapp-")),
    ("a Slack webhook URL", r"hooks\.slack\.com/(?:services|workflows|triggers)/T[A-Za-z0-9]+/[A-Za-z0-9]+/[A-Za-z0-9]{8,}",
     ("hooks.slack.com/",)),
    ("a Discord webhook URL", r"discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]{20,}", ("discord",)),
    ("a Stripe live key", r"\b(?:sk|rk)_live_[A-Za-z0-9]{20,}\b|\bwhsec_[A-Za-z0-9+/]{32,}", ("_live_", "whsec_")),
    ("a Google API key", r"\bAIza[0-9A-Za-z_-]{35}\b", ("aiza",)),
    ("a Google OAuth token or secret", r"\bya29\.[0-9A-Za-z_-]{20,}|\bGOCSPX-[A-Za-z0-9_-]{28}\b", ("ya29.", "gocspx-")),
    ("an Anthropic API key", r"\bsk-ant-[a-z0-9]+-[A-Za-z0-9_-]{40,}", ("sk-ant-",)),
    ("an OpenAI API key", r"\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}|\bsk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}\b",
     ("sk-",)),
    ("an AI provider's API key",  # OpenRouter, Groq, xAI, Replicate
     r"\bsk-or-v1-[a-f0-9]{64}\b|\bgsk_[A-Za-z0-9]{48,}|\bxai-[A-Za-z0-9]{60,}|\br8_[A-Za-z0-9]{37}\b",
     ("sk-or-", "gsk_", "xai-", "r8_")),
    ("an npm token", r"\bnpm_[A-Za-z0-9]{36}\b", ("npm_",)),
    ("a PyPI token", r"\bpypi-AgE[A-Za-z0-9_-]{50,}", ("pypi-",)),
    ("a Docker Hub token", r"\bdckr_pat_[A-Za-z0-9_-]{27,}", ("dckr_pat_",)),
    ("a SendGrid API key", r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}\b", ("sg.",)),
    ("a Hugging Face token", r"\bhf_[A-Za-z0-9]{34}\b", ("hf_",)),
    ("a service's access token",  # Shopify, DigitalOcean, Linear, Databricks, Postman, Grafana, New Relic, Vault, Supabase, Atlassian, Square
     r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b|\bdo[opr]_v1_[a-f0-9]{64}\b|\blin_api_[A-Za-z0-9]{40}\b"
     r"|\bdapi[a-f0-9]{32}\b|\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b|\bglsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}\b"
     r"|\bglc_[A-Za-z0-9+/]{32,}|\bNRAK-[A-Z0-9]{27}\b|\bhv[sb]\.[A-Za-z0-9_-]{24,}|\bsbp_[a-f0-9]{40}\b"
     r"|\bATATT3[A-Za-z0-9_=-]{100,}|\bsq0(?:atp|csp)-[A-Za-z0-9_-]{22,}",
     ("shpat_", "shpca_", "shppa_", "shpss_", "dop_v1_", "doo_v1_", "dor_v1_", "lin_api_", "dapi", "pmak-", "glsa_",
      "glc_", "nrak-", "hvs.", "hvb.", "sbp_", "atatt3", "sq0atp-", "sq0csp-")),
    ("a mail service's API key", r"\bkey-[0-9a-f]{32}\b|\b[0-9a-f]{32}-us\d{1,2}\b", ("key-", "-us")),
    ("a Telegram bot token", r"\b\d{8,10}:AA[A-Za-z0-9_-]{33}\b", (":aa",)),
    ("an age secret key", r"AGE-SECRET-KEY-1[0-9A-Z]{58}", ("age-secret-key-",)),
    ("an Azure client secret", r"\b[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34}", ("q~",)),
    ("an Azure account key", r"(?i)\b(?:account|shared_?access)_?key[\"']?[ \t]*[:=][ \t]*[\"']?(?P<value>[A-Za-z0-9+/]{20,}={0,2})",
     ("accountkey", "account_key", "sharedaccesskey", "sharedaccess_key", "shared_accesskey", "shared_access_key")),
    ("a signed URL's signature",
     r"(?i)[?&;]sig=(?P<value>[A-Za-z0-9%+/]{30,}={0,2})|x-(?:amz|goog)-signature=[a-f0-9]{64}",
     ("sig=", "x-amz-signature=", "x-goog-signature=")),
    ("a JSON Web Token", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,}", ("eyj",)),
    ("a URL with a password",  # any scheme: https://user:pass@host, git, ftp, the databases...
     r"(?i)\b[a-z][a-z0-9+.-]{0,30}://[^\s:/@]{1,256}:(?P<value>[^\s@/]{1,256})@[^\s/]", ("://",)),
    ("an Authorization header",
     r"(?i)\b(?:proxy-)?authorization[\"']?[ \t]*[:=][ \t]*[\"']?(?:(?P<scheme>bearer|basic|token|digest|negotiate|apikey|sso-key)[ \t]+)?"
     r"(?P<value>[A-Za-z0-9._~+/=:-]{8,})", ("authorization",)),
    ("a bearer token", r"(?i)\bbearer[ \t]+(?P<value>[A-Za-z0-9._~+/-]{20,}=*)", ("bearer",)),
    ("a password or key assigned to a name", _NAMED,
     ("passw", "pwd", "secret", "token", "apikey", "api_key", "api-key", "accesskey", "access_key", "access-key",
      "privatekey", "private_key", "private-key", "credential")),
)
# Values that end at the end of their line: joining lines would only glue the next line on.
_WHOLE_LINE = {"a URL with a password", "a password or key assigned to a name", "an Authorization header",
               "a bearer token", "an Azure account key", "a signed URL's signature"}
# Values that are credentials only with a digit and a letter in them (else a word: "Bearer authentication").
_MIXED = {"a password or key assigned to a name", "an Authorization header", "a bearer token"}

_Shape = tuple[str, Any, Any, tuple[str, ...]]  # kind, the RE2 pattern, its form for glued lines (or None), literals


@functools.cache
def _compiled() -> tuple[_Shape, ...]:
    """Every shape compiled (RE2: linear time), with its form for text whose line breaks were removed. Compiled
    for the first text that holds a literal, not on import: a process that writes ordinary text never pays for it.

    In the glued form a key that started or ended a line is glued to its neighbours, so word
    boundaries are dropped (the shapes are distinctive enough without them).
    """
    options = re2.Options()
    options.max_mem = 64 << 20  # the bounded repeats make large automata; the DFA keeps to linear time with room
    return tuple((kind, re2.compile(rx, options),
                  None if kind in _WHOLE_LINE else re2.compile(rx.replace(r"\b", ""), options), literals)
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
    if 0xD800 <= ord(ch) < 0xE000:  # a lone surrogate (no UTF-8 holds one, and RE2 reads UTF-8): a replacement character
        return "\ufffd"
    return "" if ord(ch) in _INVISIBLE else unicodedata.normalize("NFKC", ch)


def _origins(text: str) -> list[int]:
    """Where each character of `_fold(text)` came from in `text` (asked only when a match is found)."""
    return [i for i, ch in enumerate(text) for _ in range(1 if ch.isascii() else len(_fold_char(ch)))]


def _any_of(words: Iterable[str]) -> str:
    """A regular expression for the longest of `words` that starts where it is tried, its branches sharing
    prefixes so re tries few (a word that is another's prefix is the shorter choice of an optional tail)."""
    heads: dict[str, list[str]] = {}
    for word in sorted(set(words)):
        heads.setdefault(word[0], []).append(word[1:])
    branches = []
    for head, rest in heads.items():
        longer = [r for r in rest if r]
        tail = "" if not longer else _any_of(longer) + ("?" if "" in rest else "")
        branches.append(re.escape(head) + tail)
    return "(?:" + "|".join(branches) + ")"


_LITERALS = frozenset(literal for _, _, literals in _SHAPES for literal in literals)
# Every literal that starts at a position, in one pass: the longest found there, and the literals that are its prefixes.
_ANY_LITERAL = re.compile(f"(?=({_any_of(_LITERALS)}))")
_PREFIXES = {word: frozenset(w for w in _LITERALS if word.startswith(w)) for word in _LITERALS}


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
    found = {m.group(1) for m in _ANY_LITERAL.finditer(low)}  # one pass instead of a search per literal
    if not found:
        return []
    present = frozenset().union(*(_PREFIXES[word] for word in found))
    return [shape for shape in _compiled() if not present.isdisjoint(shape[3])]


def _real(kind: str, m: Any) -> bool:
    """Whether a match is a credential rather than a placeholder or an ordinary value."""
    groups = _groups(m.re)
    if not groups:
        return True
    if "forty" in groups:
        return len(m.group(groups["forty"]) or "") == 40
    value = m.group(groups["value"])
    if value is None:
        return True
    if _PLACEHOLDER.search(value) or len(set(value)) < 4:
        return False
    if kind in _MIXED:
        mixed = any(c.isdigit() for c in value) and any(c.isalpha() for c in value)
        return mixed or ("scheme" in groups and (m.group(groups["scheme"]) or "").lower() == "basic"
                         and _user_password(value))
    return True


@functools.cache
def _groups(rx: Any) -> dict[str, int]:
    """A pattern's named groups (asked once: RE2's binding builds the mapping anew on every call)."""
    return dict(rx.groupindex)


def _user_password(value: str) -> bool:
    """Whether a Basic credential's value is base64 of `user:password` (one without a digit is still one)."""
    try:
        plain = base64.b64decode(value, validate=True).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return False
    return ":" in plain and plain.isprintable()


def _spans(text: str) -> Iterator[tuple[str, int, int]]:
    """(kind, start, end) in `text` of every credential: shape by shape (in `_SHAPES`' order), its matches in
    the folded text, then those only its lines glued show. One pass of each due shape over the text, and
    every position mapped back through tables built once, so the cost is linear in the text, however many
    credentials it holds."""
    folded = _fold(text)
    due = _due(folded)
    if not due:  # the common case: no shape's literal is in the text
        return
    origins = None if folded == text else _origins(text)
    glued = _glued(folded) if "\n" in folded else None

    def back(at: int) -> int:
        return at if origins is None else (origins[at] if at < len(origins) else len(text))

    for kind, rx, glued_rx, _ in due:
        starts: list[int] = []
        ends: list[int] = []
        for m in rx.finditer(folded):
            if _real(kind, m):
                starts.append(m.start())
                ends.append(m.end())
                yield kind, back(m.start()), back(m.end() - 1) + 1
        if glued is not None and glued_rx is not None:
            for m in glued_rx.finditer(glued[0]):
                if _real(kind, m):
                    start = _unglued(glued, m.start())
                    k = bisect.bisect_right(starts, start)
                    if k and start < ends[k - 1]:  # a key on one line, glued to the next one's first word
                        continue
                    yield kind, back(start), back(_unglued(glued, m.end() - 1)) + 1


def _glued(folded: str) -> tuple[str, list[int], list[int]]:
    """`folded` with its line breaks removed, and where each break was in it: (glued text, the breaks' places
    in the glued text, the characters removed up to and with each)."""
    spans = [m.span() for m in _BREAK.finditer(folded)]
    removed = list(itertools.accumulate(end - start for start, end in spans))
    places = [start - before for (start, _), before in zip(spans, [0, *removed], strict=False)]
    return _BREAK.sub("", folded), places, removed


def _unglued(glued: tuple[str, list[int], list[int]], at: int) -> int:
    """Where the character at `at` of the glued text is in the folded text (a bisection, not a walk)."""
    k = bisect.bisect_right(glued[1], at)
    return at + (glued[2][k - 1] if k else 0)


def find_secret(text: str) -> tuple[str, int] | None:
    """(kind, line number) of the first credential in `text`, or None."""
    for kind, start, _ in _spans(text):
        return kind, text.count("\n", 0, start) + 1
    return None


_BLOCK_LINE = re.compile(r"|[A-Za-z0-9+/=]{4,}|(?:Proc-Type|DEK-Info|Comment):.*|-----END [A-Z0-9 ]*-----")
_BLOCK_LINES = 400  # a private key block has fewer (an 8192-bit RSA key, about 100)


def redact(text: str) -> str:
    """`text` with every line that holds what the guard would refuse replaced by a note saying what it held
    (a private key's block whole), so the text passes the guard. One pass over the text (`_spans`)."""
    lines = text.split("\n")
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    gone: dict[int, str] = {}
    for kind, start, end in _spans(text):
        first, last = bisect.bisect_right(starts, start) - 1, bisect.bisect_right(starts, max(start, end - 1)) - 1
        if kind == "a private key block":  # the key's lines follow its first one, up to its END line
            limit = min(len(lines) - 1, first + _BLOCK_LINES)
            while last < limit and last + 1 not in gone and _BLOCK_LINE.fullmatch(lines[last + 1].strip()):
                last += 1
                if lines[last].lstrip().startswith("-----END"):
                    break
        for n in range(first, last + 1):
            gone.setdefault(n, kind)
    if not gone:
        return text
    out = "\n".join(f"[line removed: it held what looks like {gone[n]}]" if n in gone else line
                     for n, line in enumerate(lines))
    return out if find_secret(out) is None else _NOTE  # never so far: the notes cannot make a credential


_NOTE = "[text removed: it held what looks like a credential]"


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


def check(text: str, path: str, *, head_lines: int = 0, meta: Mapping[str, Any] | None = None, added: int = 0) -> None:
    """Refuse a file whose path, frontmatter or text holds a credential; `head_lines` is the frontmatter's length
    (`added` of its lines memdir's stamps, which the writer did not write).

    A line is named both ways a writer counts it: in the file, and in the body
    (whose numbering does not depend on the frontmatter memdir renders).
    """
    check_path(path)
    found = find_secret(text)
    if found:
        kind, line = found
        _refuse(path, where(line, head_lines, added), kind)
    fields = _strings(dict(meta or {}), "")  # what YAML's escapes or folding hid from the text
    if not fields or not _due(_fold("\n".join(value for _, value in fields))):  # one prefilter for them all
        return
    for field, value in fields:
        found = find_secret(value)
        if found:
            _refuse(path, f"frontmatter field {field!r}", found[0])


def where(line: int, head_lines: int, added: int = 0) -> str:
    """A line of a file named both ways a writer may count it: in the file it gave (without the `added` lines
    of memdir's own stamps), and in the body it wrote."""
    if not head_lines:
        return f"line {line}"
    if line <= head_lines:
        return f"line {line} (in the frontmatter)"
    if head_lines == added:  # the writer gave a body: its lines are the only ones it knows
        return f"line {line - head_lines}"
    return f"line {line - head_lines} of the body (file line {line - added})"


def _refuse(path: str, where: str, kind: str) -> None:
    raise InvalidMemory(
        f"{path}: {where} contains what looks like {kind}; memories must not hold credentials: "
        "remove it and note where the secret is kept instead",
        path=path,
    )
