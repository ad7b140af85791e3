"""The rules a session record and the diary keep, checked over everything the corpus produces (issue 31).

Every transcript of tests/data/real (Claude Code, Codex CLI, Gemini CLI, in all their shapes) is captured over two
weeks and rolled up into days, weeks and a month; then each record and diary file is read back and held to the
rules a person would: titles are the user's requests, "What broke" holds only real failures, no assistant
markdown in What broke or Open threads, no acknowledgements anywhere, learnings are what the user stated, in the
third person, naming their session and line (never a request restated), the diary's shapes, and no credential
under the memory or in `.memdir/`. The checks here are written apart from the code that makes the records.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest

import memdir
from memdir.remember import diary
from memdir.remember.transcripts import Transcript, load, with_subagents

REAL = Path(__file__).parent.parent / "data" / "real"
MONDAY = dt.datetime(2026, 3, 2, 9, tzinfo=dt.UTC)
# Acknowledgements, as people type them: none is work done, a request, a diary line or a learning.
ACKS = {"this looks great", "yes, please continue", "fair enough", "thanks", "thank you", "perfect", "ok", "okay",
        "sounds good", "great", "perfect, thanks", "thanks, that's all", "good", "yes", "lgtm", "looks good"}
PLACEHOLDERS = ("[image", "[tool ", "[file]", "[Image #")
NARRATION = re.compile(r"^(?:I'll|I will|I've|I'm going to|Let me|Sure|Now I|Here's|Perfect!|Great!)\b")
MARKDOWN = re.compile(r"^\s*(?:#{1,6}\s|\||\*\*|[-*]\s)|\|\s*$")
LEARNING = re.compile(r"^The user (?!asked\b)\S.*\(session [^()]+, (?:line|message) \d+\)$")
# Credentials planted in the corpus: none may reach a record, the diary or .memdir/. A Bearer JWT in a curl header
# (the command longer than 100 characters), a password in an https URL, an Azure AccountKey.
SECRETS = ("eyJzdWIiOiJ0ZXJuLWJvdCIsInNjb3BlIjoiZXNjYWxhdGUiLCJpYXQiOjE3NzM3NDA4MDB9",
           "Qm9ndXMtc2lnbmF0dXJlLWZvci10aGUtdGVybi1ib3Q", "Wint3rGarden-2026",
           "q8Xv2LmN4pR7sT1uW3yZ5bC6dE9fG0hJ2kL4mN6pQ8rS0tU2vW4xY6zA8bC0dE2fG4hJ6kL8mN0pQ2rS4tU6v==")
WORD = re.compile(r"[a-z0-9][a-z0-9'_-]{2,}")
DATES = re.compile(r" \((?:\d{4}(?:-\d{2}(?:-\d{2})?)?|week of \d{4}-\d{2}-\d{2})\)")  # relative dates resolved


def transcripts() -> list[Path]:
    """Every session transcript of the corpus (subagents' own files too: they must leave nothing of their own)."""
    found = [p for p in sorted((REAL / "claude-code" / "transcripts").rglob("*.jsonl"))]
    found += sorted((REAL / "codex").rglob("rollout-*.json*"))
    gemini = REAL / "gemini" / "dot-gemini" / "tmp"
    found += sorted(p for p in gemini.rglob("*.json*") if "chats" in p.parts or p.name.startswith("checkpoint-"))
    return found


def words(text: str) -> set[str]:
    return set(WORD.findall(text.lower()))


def said_by_user(t: Transcript) -> list[str]:
    return [" ".join(x.text.split()) for x in t.turns if x.role == "user" and not x.text.startswith("[tool ")]


class Corpus:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.read: dict[str, Transcript] = {}
        self.records: dict[str, memdir.Memory] = {}
        self.diary: dict[str, memdir.Memory] = {}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    c = Corpus(tmp_path_factory.mktemp("rules") / "memory")
    with memdir.open(c.root) as md:
        for i, path in enumerate(transcripts()):
            sid = path.stem[-36:]
            done = memdir.capture(md, sid, path, at=MONDAY + dt.timedelta(days=i % 12, hours=i // 12))
            if done.path is not None:
                c.read[done.path] = with_subagents(load(path), path)
                c.records[done.path] = md.read(done.path)
        diary.rollup(md, due=True, now=dt.datetime(2026, 4, 6, tzinfo=dt.UTC), yes=True)
        for folder in ("diary/", "archive/diary/"):
            for e in md.list(folder):
                c.diary[e.path] = md.read(e.path)
    return c


def test_the_corpus_is_captured_whole(corpus: Corpus) -> None:
    assert len(corpus.records) >= 20
    assert all(m.meta["status"] == "captured" for m in corpus.records.values())  # nothing called empty
    assert not [p for p in corpus.records if "agent-" in p or "codebase_investigator" in p]  # subagents fold in


def test_every_title_is_the_users_first_real_request(corpus: Corpus) -> None:
    for path, m in corpus.records.items():
        title, t = m.description, corpus.read[path]
        assert title and not title.startswith(PLACEHOLDERS) and not NARRATION.match(title), (path, title)
        assert title.lower().rstrip(".!") not in ACKS, (path, title)
        plain = DATES.sub("", title).rstrip("…")
        assert any(plain in said for said in said_by_user(t)) or plain.startswith("/"), (path, title)


def test_what_broke_holds_only_real_failures_with_their_line(corpus: Corpus) -> None:
    for path, m in corpus.records.items():
        t = corpus.read[path]
        for item in m.meta.get("broke", []):
            assert not MARKDOWN.search(item), (path, item)
            assert any(item.startswith(f[:60]) for f in t.activity.failures), (path, item)  # a tool's failure
            assert not any(item in said or said in item for said in said_by_user(t)), (path, item)
        if t.activity.failures:
            assert m.meta.get("broke"), path


def test_open_threads_are_what_the_user_left_open(corpus: Corpus) -> None:
    for path, m in corpus.records.items():
        users = [words(s) for s in said_by_user(corpus.read[path])]
        for item in m.meta.get("open", []):
            assert not MARKDOWN.search(item), (path, item)
            mine = words(DATES.sub("", item)) - {"the", "user", "they", "their", "them", "agent"}
            assert any(len(mine & u) >= 0.6 * len(mine) for u in users), (path, item)


def test_no_acknowledgement_is_work_a_request_or_a_line_of_the_diary(corpus: Corpus) -> None:
    for path, m in [*corpus.records.items(), *corpus.diary.items()]:
        for key in ("asked", "open", "decisions", "worked_on", "decided", "learned", "corrections", "preferences"):
            for item in m.meta.get(key, []):
                plain = re.sub(r" \(sessions? [^()]+\)| — \d+ days", "", item).lower().rstrip(".!")
                assert plain not in ACKS, (path, key, item)


def test_learnings_are_what_the_user_stated_in_the_third_person_naming_their_source(corpus: Corpus) -> None:
    seen = 0
    for path, m in corpus.records.items():
        t = corpus.read[path]
        users = [words(s) for s in said_by_user(t)]
        asked = [words(x) for x in [m.description, *m.meta.get("asked", [])]]
        for item in [*m.meta.get("corrections", []), *m.meta.get("preferences", [])]:
            seen += 1
            assert LEARNING.match(item), (path, item)
            assert f"(session {m.meta['session']}, " in item, (path, item)
            body = words(re.sub(r"\(session .*\)$", "", item)) - {"the", "user", "agent", "wants", "noted", "that",
                                                                  "does", "not", "want", "corrected", "said", "they"}
            assert any(len(body & u) >= 0.5 * len(body) for u in users), (path, item)  # from the user's words
            assert not any(a and len(body & a) >= 0.8 * len(body) for a in asked), (path, item)  # no request restated
    assert seen >= 8


def test_the_diary_has_the_seeds_shapes_and_no_bare_word_placeholder_or_repeat(corpus: Corpus) -> None:
    kinds = {"day": 0, "week": 0, "month": 0}
    for path, m in corpus.diary.items():
        kind = m.meta["period"]
        kinds[kind] += 1
        text = m.body.split("\n\n", 1)[1].strip()
        assert not any(p in text for p in PLACEHOLDERS), (path, text)
        if kind == "day":
            assert "\n" not in text, (path, text)  # one paragraph
        elif kind == "week":
            leads = re.findall(r"(?:^|\. )(?:Learned|Decided|Worked on|Still open|Broke|Nothing was left open)\b", text)
            assert 2 <= len(leads) <= 3, (path, text)
        else:
            bullets = text.splitlines()
            assert len(bullets) == 3 and all(b.startswith("- ") for b in bullets), (path, text)
            for b in bullets:
                name = b[2:].split(":", 1)[0]
                assert len(name) > 3 and name.lower() not in ("start", "fix", "test"), (path, b)
        for key in ("worked_on", "decided", "learned", "broke", "open"):
            items = m.meta.get(key, [])
            plain = [re.sub(r" \(sessions? [^()]+\)| — \d+ days| \(in [^()]+\)", "", x).lower() for x in items]
            assert len(plain) == len(set(plain)), (path, key, items)  # no item twice
            for x in plain:
                assert len(words(x)) >= 2 or re.search(r"[/.]|[\u3040-\u9fff]", x), (path, key, x)  # no bare word
    assert kinds["day"] >= 7 and kinds["week"] >= 1 and kinds["month"] == 1


def test_no_credential_reaches_the_memory_or_its_database(corpus: Corpus) -> None:
    planted = [s for s in SECRETS if any(s in p.read_text(errors="replace") for p in transcripts())]
    assert planted == list(SECRETS)  # the corpus does hold them
    leaked = [(str(p.relative_to(corpus.root)), s) for p in corpus.root.rglob("*") if p.is_file()
              for s in SECRETS if s.encode() in p.read_bytes()]
    assert leaked == []
