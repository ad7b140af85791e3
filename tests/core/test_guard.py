import pytest

from memdir.core.guard import find_secret

FAKE = {
    "a private key block": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaA==\n-----END OPENSSH PRIVATE KEY-----",
    "an AWS access key id": "aws key AKIA" + "IOSFODNN7EXAMPLE",
    "a GitHub token": "token ghp_" + "a" * 36,
    "a Slack token": "xoxb-" + "1234567890-abcdefghij",
    "a Stripe live key": "sk_live_" + "a1b2c3d4e5f6g7h8i9j0k1",
    "a Google API key": "AIza" + "Sy" + "A" * 33,
    "an Anthropic API key": "sk-ant-api03-" + "x" * 50,
    "an OpenAI API key": "sk-proj-" + "y" * 48,
}


@pytest.mark.parametrize("kind, text", sorted(FAKE.items()))
def test_credentials_are_found_with_their_line(kind: str, text: str) -> None:
    assert find_secret("first line\n" + text) == (kind, 2)


@pytest.mark.parametrize(
    "text",
    [
        "the deploy key lives in 1Password under 'prod deploy'",
        "commit 3f786850e387550fdab836ed7e6dc881de23001b",
        "AKIA is the prefix of AWS access keys",
        "sk_test_" + "a" * 24,
        "uuid 123e4567-e89b-12d3-a456-426614174000",
    ],
)
def test_ordinary_text_passes(text: str) -> None:
    assert find_secret(text) is None


# ---------------------------------------------------------------- what the review found missing


import guard_corpus  # noqa: E402

from memdir import InvalidMemory  # noqa: E402
from memdir.core.guard import check  # noqa: E402

AWS_ID = "AKIA" + "IOSFODNN7EXAMPLE"
SECRETS = {
    "aws secret access key": "aws_secret_access_key = " + "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "aws secret in yaml": "AWS_SECRET_ACCESS_KEY: \"" + "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY" + "\"",
    "jwt": "Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." + "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvZSJ9."
           + "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    "slack webhook": "https://hooks.slack.com/services/" + "T0AB12CDE/B0FG34HIJ/abcdEFGHijklMNOPqrstUVWX",
    "postgres url": "DATABASE_URL=postgres://app:" + "Sup3r-s3cret@db.internal:5432/app",
    "mongodb url": "mongodb+srv://admin:" + "hunter2hunter2@cluster0.example.net/prod",
    "zero-width inside a key": "key AKIA\u200b" + "IOSFODNN7\u200dEXAMPLE",
    "fullwidth key": "key " + "".join(chr(ord(c) + 0xFEE0) for c in AWS_ID),
    "line break inside a key": "key " + AWS_ID[:9] + "\n" + AWS_ID[9:] + " rest",
    "line break inside a token": "ghp_" + "a" * 20 + "\n  " + "b" * 16,
    "soft hyphen inside a key": "key " + AWS_ID[:6] + "\u00ad" + AWS_ID[6:],
    "password assignment": "db password: Tr0ub4dor&3x",
    "env token": "GITHUB_TOKEN=ab12cd34ef56gh78",
}


@pytest.mark.parametrize("text", SECRETS.values(), ids=SECRETS.keys())
def test_the_review_s_secrets_are_caught(text: str) -> None:
    assert find_secret(f"An ordinary first line.\n{text}\n") is not None


def test_a_secret_in_the_path_is_refused_before_it_reaches_the_index(md) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InvalidMemory, match="the path contains what looks like an AWS access key id") as e:
        md.write(f"keys/{AWS_ID}.md", "where the key is used\n")
    assert AWS_ID not in e.value.message and e.value.path is None
    md.write("keys/aws.md", "where the key is used\n")
    with pytest.raises(InvalidMemory, match="the path contains"):
        md.rename("keys/aws.md", f"keys/{AWS_ID}.md")
    assert AWS_ID not in md.index() and [e.path for e in md.list()] == ["keys/aws.md"]


def test_a_secret_in_frontmatter_is_refused_even_when_yaml_hides_it(md) -> None:  # type: ignore[no-untyped-def]
    hidden = "AKIA\ufeff" + "IOSFODNN7EXAMPLE"  # YAML writes the BOM as an escape, "\uFEFF": only the value shows it
    with pytest.raises(InvalidMemory, match="frontmatter field 'description' contains what looks like an AWS access key id"):
        md.write("a.md", "body\n", description=f"uses {hidden}")
    with pytest.raises(InvalidMemory, match=r"line 3 \(in the frontmatter\) contains what looks like a GitHub token"):
        md.write("b.md", "---\ndeploy:\n  token: ghp_" + "c" * 36 + "\n---\nbody\n")
    with pytest.raises(InvalidMemory, match="frontmatter field 'deploy.token' contains what looks like a GitHub token"):
        md.write("b.md", '---\ndeploy:\n  token: "ghp_\\uFEFF' + "c" * 36 + '"\n---\nbody\n')
    folded = "---\nnotes: |\n  key AKIAIOSFOD\n  NN7EXAMPLE\n---\nbody\n"
    with pytest.raises(InvalidMemory, match="looks like an AWS access key id"):
        md.write("c.md", folded)
    assert md.list() == []


def test_check_names_the_line_as_the_writer_sees_it() -> None:
    text = "---\ndescription: x\n---\nfirst\n" + SECRETS["jwt"] + "\n"
    with pytest.raises(InvalidMemory, match=r"a\.md: line 2 of the body \(file line 5\) contains what looks like a JSON Web Token"):
        check(text, "a.md", head_lines=3)


def test_false_positives_are_rare_on_ordinary_technical_notes() -> None:
    notes = guard_corpus.technical(2000)
    flagged = [(n, find_secret(n)) for n in notes if find_secret(n) is not None]
    assert flagged == [], flagged[:3]
    # the same notes with one real secret each are all caught
    secrets = list(SECRETS.values())
    assert all(find_secret(n + secrets[i % len(secrets)] + "\n") for i, n in enumerate(notes[:400]))


def test_false_positives_are_rare_on_conversations() -> None:
    path = guard_corpus.locomo_file()
    if path is None:
        pytest.skip("the LoCoMo file is not on this machine (set MEMDIR_LOCOMO); the technical corpus still runs")
    notes = guard_corpus.conversations(path)
    flagged = [n[:80] for n in notes if find_secret(n) is not None]
    assert len(notes) > 100 and flagged == []


# ---------------------------------------------------------------- the literal prefilter changes no answer

import os  # noqa: E402
import re  # noqa: E402
import unicodedata  # noqa: E402
from typing import Any  # noqa: E402

from services import need  # noqa: E402

from memdir.core import guard  # noqa: E402

need("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

SOAK = os.environ.get("MEMDIR_SOAK") == "1"


def examples(n: int) -> int:
    """Inputs a differential fuzz below tries: a third of `n` in `make test`, all `n` in `make soak`."""
    return n if SOAK else max(n // 3, 20)


# The guard's folding and gluing as they were before the prefilter: the reference the guard must agree with.
def _fold(text: str) -> tuple[str, list[int] | None]:
    if text.isascii():
        return text, None
    out: list[str] = []
    where: list[int] = []
    for i, ch in enumerate(text):
        code = ord(ch)
        if code in guard._INVISIBLE:
            continue
        folded = "\ufffd" if 0xD800 <= code < 0xE000 else unicodedata.normalize("NFKC", ch) if code > 127 else ch
        out.append(folded)
        where.extend([i] * len(folded))
    return "".join(out), where


def _joined(text: str, where: list[int] | None) -> tuple[str, list[int]]:
    base = where if where is not None else range(len(text))
    out: list[str] = []
    mapped: list[int] = []
    at = 0
    for m in guard._BREAK.finditer(text):
        out.append(text[at : m.start()])
        mapped.extend(base[at : m.start()])
        at = m.end()
    out.append(text[at:])
    mapped.extend(base[at:])
    return "".join(out), mapped


def reference_find_secret(text: str) -> tuple[str, int] | None:
    """The guard as it was before the prefilter: every pattern on the folded text and on its lines glued.

    Its folding and gluing (`_fold`, `_joined`) are the old ones too, mapping every character back at once.
    """
    folded, where = _fold(text)
    variants: list[tuple[str, Any]] = [(folded, where)]
    if "\n" in folded:
        variants.append(_joined(folded, where))
    for kind, rx, glued, _ in guard._compiled():
        for (candidate, mapping), pattern in zip(variants, (rx, glued), strict=False):
            if pattern is None:
                continue
            for m in pattern.finditer(candidate):
                if guard._real(kind, m):
                    start = m.start() if mapping is None else mapping[m.start()]
                    return kind, text.count("\n", 0, start) + 1
    return None


def test_a_pattern_letter_matches_outside_ascii_only_what_the_prefilter_maps_to_it() -> None:
    everything = "".join(map(chr, range(0x80, 0x110000)))
    for letter in sorted({c for _, _, literals in guard._SHAPES for literal in literals for c in literal}):
        for pattern in (re.compile("(?i)" + re.escape(letter)), re.compile("(?i)" + re.escape(letter.upper()))):
            others = set(pattern.findall(everything))
            assert all(guard._literal_form(c) == letter for c in others), (letter, others)


@pytest.mark.parametrize("kind, rx, literals", guard._SHAPES, ids=[s[0] for s in guard._SHAPES])
@settings(max_examples=examples(60), deadline=None)
@given(data=st.data())
def test_every_match_of_a_shape_holds_one_of_its_literals(kind: str, rx: str, literals: tuple[str, ...], data: st.DataObject) -> None:
    match = data.draw(st.from_regex(re.compile(rx), fullmatch=True))
    assert any(literal in guard._literal_form(match) for literal in literals)


SPECIAL = {"i": "\u0130\u0131", "I": "\u0130\u0131", "s": "\u017f", "S": "\u017f", "k": "\u212a", "K": "\u212a"}
INVISIBLE = ["\u200b", "\ufeff", "\u00ad", "\u2060", "\u202e"]
EXPANDING = ["\u2026", "\ufb01", "\u338f", "\u00bd", "\u2474", "\u00e9", "e\u0301", "\u2014"]  # NFKC: ..., fi, kg, 1/2...
BREAKS = ["\n", "\r\n", " \n ", "\t\n\t", "\n    ", "  \r\n", "\n\n"]
WORDS = ["password", "passwd: ", "token=", "api_key", "Secret", "AKIA", "asia", "aws_secret_access_key = ", "ghp_",
         "github_pat_", "glpat-", "xoxb-", "sk-", "sk-ant-", "sk_live_", "AIza", "npm_", "SG.", "hf_", "eyJ", "://",
         "postgres://u:", "@db", "-----BEGIN ", "PRIVATE KEY-----", "discord.com/api/webhooks/", "hooks.slack.com/services/T",
         "<your-token>", "xxxxxxxx", "changeme", "example", "EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
         "Tr0ub4dor&3x", "1234567890", "abcdefghij", "T3BlbkFJ", "credentials", "client-secret", "PWD"]
PIECE = st.one_of(
    st.sampled_from(WORDS),
    st.sampled_from(BREAKS + [" ", "\t", "", ": ", "=", '"', "'"]),
    st.text(st.sampled_from("aAkKsSiIxX09_-./:=@ \n\t") , max_size=12),
    st.text(max_size=8),
    st.sampled_from([re.compile(rx) for _, rx, _ in guard._SHAPES]).flatmap(lambda rx: st.from_regex(rx, fullmatch=True)),
)


@st.composite
def notes(draw: st.DrawFn) -> str:
    """Text near a secret: pieces of real shapes, literals and placeholders, then split, widened or hidden."""
    chars = list("".join(draw(st.lists(PIECE, max_size=8))))
    for _ in range(draw(st.integers(0, 4))):
        at = draw(st.integers(0, len(chars)))
        how = draw(st.sampled_from(["break", "invisible", "expanding", "wide", "special", "case", "drop", "any"]))
        here = chars[at] if at < len(chars) else ""
        if how == "break":
            chars[at:at] = draw(st.sampled_from(BREAKS))
        elif how == "invisible":
            chars[at:at] = draw(st.sampled_from(INVISIBLE))
        elif how == "expanding":
            chars[at:at] = draw(st.sampled_from(EXPANDING))
        elif how == "wide" and "!" <= here <= "~":
            chars[at] = chr(ord(here) + 0xFEE0)
        elif how == "special" and here in SPECIAL:
            chars[at:at + 1] = draw(st.sampled_from(SPECIAL[here]))  # spliced: a replacement may be two characters
        elif how == "case" and here:
            chars[at:at + 1] = here.swapcase()  # "ß" swaps to "SS": spliced, one character each
        elif how == "drop" and here:
            del chars[at]
        elif how == "any":
            chars.insert(at, draw(st.characters()))
    return "".join(chars)


@settings(max_examples=examples(1000), deadline=None)
@given(notes())
def test_the_prefilter_gives_the_answer_every_pattern_gives(text: str) -> None:
    assert find_secret(text) == reference_find_secret(text)


@settings(max_examples=examples(300), deadline=None)
@given(st.text())
def test_the_prefilter_gives_the_same_answer_on_any_text(text: str) -> None:
    assert find_secret(text) == reference_find_secret(text)


def test_the_prefilter_gives_the_same_answer_on_the_corpus() -> None:
    secrets = list(SECRETS.values()) + list(FAKE.values())
    for i, note in enumerate(guard_corpus.technical(300)):
        for text in (note, note + secrets[i % len(secrets)] + "\n", note.replace(" ", "\n", 3)):
            assert find_secret(text) == reference_find_secret(text)


@st.composite
def split_secrets(draw: st.DrawFn) -> str:
    """A match of one shape broken across lines near its start, where the literals are, in a line of prose."""
    rx = draw(st.sampled_from([re.compile(rx) for _, rx, _ in guard._SHAPES]))
    match = draw(st.from_regex(rx, fullmatch=True))
    at = draw(st.integers(0, min(len(match), 12)))
    return "see " + match[:at] + draw(st.sampled_from(BREAKS)) + match[at:] + " here"


@settings(max_examples=examples(600), deadline=None)
@given(split_secrets())
def test_the_prefilter_finds_a_literal_split_across_lines(text: str) -> None:
    assert find_secret(text) == reference_find_secret(text)


def reference_check(text: str, path: str, head_lines: int, meta: dict[str, Any]) -> str | None:
    """What `check` refused before the prefilter (its message), or None: the path, the text, then each field."""
    found = reference_find_secret(path)
    if found:
        return f"the path contains what looks like {found[0]}"
    found = reference_find_secret(text)
    if found:
        kind, line = found
        where = guard.where(line, head_lines)
        return f"{path}: {where} contains what looks like {kind}"
    for field, value in guard._strings(meta, ""):
        found = reference_find_secret(value)
        if found:
            return f"{path}: frontmatter field {field!r} contains what looks like {found[0]}"
    return None


FIELDS = st.dictionaries(
    st.sampled_from(["name", "description", "token", "api_key", "tags", "deploy"]),
    st.one_of(notes(), st.lists(notes(), max_size=3), st.dictionaries(st.sampled_from(["password", "url", "x"]), notes(), max_size=2)),
    max_size=4,
)


@settings(max_examples=examples(400), deadline=None)
@given(st.sampled_from(["notes/a.md", "keys/AKIA" + "IOSFODNN7EXAMPLE.md"]), notes(), FIELDS)
def test_check_refuses_what_it_refused_before_the_prefilter(path: str, text: str, meta: dict[str, Any]) -> None:
    try:
        check(text, path, head_lines=2, meta=meta)
        refused = None
    except InvalidMemory as e:
        refused = e.message.split(";")[0]
    assert refused == reference_check(text, path, 2, meta)


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.sampled_from([*INVISIBLE, *EXPANDING, "a", " ", "\n"]), max_size=12),
       st.sampled_from([re.compile(rx) for _, rx, _ in guard._SHAPES]).flatmap(lambda rx: st.from_regex(rx, fullmatch=True)))
def test_a_secret_after_characters_folding_drops_or_widens_is_on_its_own_line(before: list[str], secret: str) -> None:
    text = "".join(before) + "\n" + secret + "\n"
    assert find_secret(text) == reference_find_secret(text)


def test_the_line_counts_the_characters_folding_dropped() -> None:
    key = "AKIA" + "IOSFODNN7EXAMPLE"
    assert find_secret("\u200b\u200b\u200b\n" + key) == ("an AWS access key id", 2)
    assert find_secret("\u2026\ufb01\n\u200b" + key[:8] + "\u00ad" + key[8:]) == ("an AWS access key id", 2)
    assert find_secret("x\u200b\n" + key[:8] + "\n  " + key[8:]) == ("an AWS access key id", 2)


# ---------------------------------------------------------------- the third round: redaction in one pass, new shapes

from memdir.remember import transcripts  # noqa: E402

GITHUB = "ghp_" + "a1B2c3D4e5" * 3 + "abcdef"


@pytest.mark.parametrize("n", [10, 1000])
def test_redaction_reads_the_text_once_however_many_secrets_it_holds(monkeypatch: pytest.MonkeyPatch, n: int) -> None:
    folded: list[int] = []
    fold = guard._fold
    monkeypatch.setattr(guard, "_fold", lambda text: folded.append(len(text)) or fold(text))
    text = "".join(f"line {i}: export GITHUB_TOKEN={GITHUB}\nan ordinary line {i}\n" for i in range(n))
    out = transcripts.redact(text)
    assert len(folded) == 2  # one pass finds them all, one more checks the result (the loop scanned n + 1 times)
    assert sum(folded) <= 2 * len(text)
    assert out.count("[line removed: it held what looks like a GitHub token]") == n
    assert out.count("an ordinary line") == n and guard.find_secret(out) is None


NEW = {
    "a URL with a password": ["git clone https://deploy:" + "Zq8vN2kLp4rT@git.example.com/acme/app.git",
                              "remote = ssh://ci:" + "w9Xr2Lm7Qp@host.example.org:2222/repo"],
    "an Authorization header": ["curl -H 'Authorization: Bearer " + "Ab3dEf6hIj9kLm2nOp5qRs8t'",
                                '{"authorization": "Basic ' + "YWxpY2U6c2VjcmV0cGFzcw==" + '"}',
                                "Authorization: Basic " + "dXNlcjpwYXNz", "proxy-authorization: token " + "9f8e7d6c5b4a3f2e1d0c"],
    "a bearer token": ["the header was: bearer " + "q1W2e3R4t5Y6u7I8o9P0a1S2d3"],
    "an Azure account key": ["DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=" + "Xk2pQ9vL" * 11 + "==;",
                             "account_key: " + "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA=="],
    "a signed URL's signature": ["https://acme.blob.core.windows.net/c/f.txt?sv=2022-11-02&sig=" + "a1B2c3D4e5F6g7H8i9J0" * 2 + "%3D",
                                 "?X-Amz-Credential=x&X-Amz-Signature=" + "0123456789abcdef" * 4],
    "a Google OAuth token or secret": ["ya29." + "a0AfB_byC" * 5, "GOCSPX-" + "abcDEF123_-" * 2 + "abcdef"],
    "a Stripe live key": ["whsec_" + "a1B2c3D4" * 5],
    "an AI provider's API key": ["sk-or-v1-" + "0123456789abcdef" * 4, "gsk_" + "a1B2c3D4" * 7],
    "a PyPI token": ["pypi-AgEIcHlwaS5vcmc" + "CJDk3ZjE2YzE0LTk0" * 4],
    "a Docker Hub token": ["dckr_pat_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N"],
    "a service's access token": ["shpat_" + "0123456789abcdef" * 2, "dop_v1_" + "0123456789abcdef" * 4,
                                 "hvs." + "CAESIJ1x2y3z4A5B6C7D8E9F0"],
    "a Telegram bot token": ["123456789:AA" + "Fx2y3z4A5B6C7D8E9F0g1h2i3j4k5l6m7"],
    "an age secret key": ["AGE-SECRET-KEY-1" + "QYPZ3ST7J4XHD0W9F6" * 3 + "QYPZ"],
    "an Azure client secret": ["abc8Q~" + "Xy1_z2.w3-v4~u5" * 2 + "abc"],
}


@pytest.mark.parametrize("kind, text", [(k, t) for k, ts in NEW.items() for t in ts])
def test_the_credentials_capture_kept_are_found(kind: str, text: str) -> None:
    assert find_secret("an ordinary first line\n" + text) == (kind, 2)
    assert guard.redact(f"keep me\n{text}\nkeep me too\n") == f"keep me\n[line removed: it held what looks like {kind}]\nkeep me too\n"


@pytest.mark.parametrize("text", [
    "Authorization: required for every endpoint", "Bearer authentication is what the API uses",
    "Authorization: Basic <base64 of user:password>", "Authorization: Bearer $TOKEN", "Authorization: Bearer YOUR_TOKEN",
    "the account key rotation is monthly", "AccountKey=<your key>", "https://user:password@example.com is the form",
    "https://docs.example.com/a:b@c is not a login", "token_type: bearer", "see https://example.com/?sig=short",
])
def test_the_new_shapes_leave_ordinary_text_alone(text: str) -> None:
    assert find_secret(text) is None


def test_a_private_key_is_redacted_whole_and_the_text_after_it_kept() -> None:
    key = "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\n\n" + "MIIEowIBAAKCAQEAx1y2z3\n" * 5 + "-----END RSA PRIVATE KEY-----"
    out = guard.redact(f"before\n{key}\nafter: the deploy works\n")
    assert out == "before\n" + "[line removed: it held what looks like a private key block]\n" * 9 + "after: the deploy works\n"


def test_a_key_split_over_lines_is_redacted_on_every_line_it_spans() -> None:
    out = guard.redact("key " + AWS_ID[:9] + "\n" + AWS_ID[9:] + " rest\nok\n")
    assert out == "[line removed: it held what looks like an AWS access key id]\n" * 2 + "ok\n"
