"""The rules a session record and the diary keep, counted over transcripts you choose (issue 31).

    python bench/records.py ~/.claude/projects ~/.codex/sessions ~/.gemini/tmp   # your own sessions
    python bench/records.py PATH... --keep /tmp/scratch    # keep the scratch memory to read the records
    python bench/records.py PATH... --show 5               # print the first 5 failures of each rule
    python bench/records.py PATH... --json

Each transcript under the PATHs (Claude Code session files and their subagents' files, Codex CLI rollouts,
Gemini CLI chats, `logs.json` and `/chat save` checkpoints, or any file given by name) is captured into a
scratch memory at its own time, the days, weeks and months are rolled up, and every record and diary file
is held to the rules a person would hold them to:

- captured: a transcript that holds a message gets a record (never "empty"), a subagent's own file none;
- title: the user's first real request (or a slash command), never the assistant's words, markup, a
  placeholder, a bare word or an acknowledgement;
- done: each command as a person reads it (not a comment, not a heredoc's body);
- broke: only what a tool call failed with (each with the line saying what failed), never markdown or the
  user's words, and present when a tool failed;
- open: what the user said and left open, never the assistant's headings;
- acks: no acknowledgement ("Thanks", "Yes, please continue") as a request, a decision or a diary line;
- learnings: what the user stated (not a question or an announcement), in the third person, naming its
  session and line, never a request restated;
- diary: a daily is one paragraph, a weekly two or three sentences, a monthly up to three themes (fewer in a
  quiet month) not named by a bare word; no placeholder, no item twice, no bare word;
- credentials: no token shape (JWT, API keys, passwords in URLs, Authorization headers, account keys) in any
  file under the memory, `.memdir/memdir.db` included.

The checks are written apart from the code that makes the records, from what the transcript says as memdir
reads it (who said what, which tool call failed). Prints per rule the items checked and those that fail.
Not a test: `tests/remember/test_record_rules.py` holds the project's corpus to no failure with these
functions.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

import memdir  # noqa: E402
from memdir.remember import diary  # noqa: E402
from memdir.remember.transcripts import Transcript, TranscriptError, load, with_subagents  # noqa: E402

# Acknowledgements, as people type them: none is work done, a request, a diary line or a learning.
ACKS = {"this looks great", "yes, please continue", "fair enough", "thanks", "thank you", "perfect", "ok", "okay",
        "sounds good", "great", "perfect, thanks", "thanks, that's all", "good", "yes", "lgtm", "looks good",
        "continue", "go ahead", "yes please", "yep", "sure", "nice", "cool", "done", "proceed", "ok, continue",
        "好的", "谢谢", "好的，谢谢", "很好，继续", "没问题", "네", "네 좋아요", "좋아요", "감사합니다", "네, 감사합니다",
        "ありがとう", "ありがとうございます", "はい、お願いします", "了解です"}
PLACEHOLDERS = ("[image", "[tool ", "[file]", "[Image #", "[Request interrupted", "<command-", "<local-command",
                "<system-reminder", "<ide_")
MARKUP = re.compile(r"^\s*(?:<[A-Za-z_][\w:-]*>|#{1,6}\s|```)")  # a tag, a heading or a fence: a harness's or a template's
NARRATION = re.compile(r"^(?:I'll|I will|I've|I'm going to|Let me|Sure|Now I|Here's|Perfect!|Great!)\b")
MARKDOWN = re.compile(r"^\s*(?:#{1,6}\s|\||\*\*|[-*]\s)|\|\s*$")
LEARNING = re.compile(r"^The user (?!asked\b)\S.*\(session [^()]+, (?:line|message) \d+\)$")
WORD = re.compile(r"[a-z0-9][a-z0-9'_-]{2,}|[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]{2,}")
SPACELESS = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]{4,}")  # Chinese or Japanese: a sentence is one run, no fragment
TERM = re.compile(r"[a-z0-9][a-z0-9'_-]+|[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]+")  # any word, "ci" too
DATES = re.compile(r" \((?:\d{4}(?:-\d{2}(?:-\d{2})?)?|week of \d{4}-\d{2}-\d{2})\)")  # relative dates resolved
# Credentials as they look, whoever wrote them: none may reach a record, the diary or .memdir/.
TOKENS = {
    "JSON Web Token": re.compile(rb"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}"),
    "password in a URL": re.compile(rb"[a-z][a-z0-9+.-]*://[^/\s:@\"'<>]{1,64}:[^/\s@\"'<>]{3,}@[\w.-]+"),
    "Authorization header": re.compile(rb"(?i)authorization:\s*(?:bearer|basic|token)\s+[A-Za-z0-9._~+/=-]{16,}"),
    "account key": re.compile(rb"(?i)accountkey=[A-Za-z0-9+/]{20,}={0,2}"),
    "OpenAI or Anthropic key": re.compile(rb"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}"),
    "GitHub token": re.compile(rb"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})"),
    "AWS key id": re.compile(rb"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    "Google API key": re.compile(rb"\bAIza[0-9A-Za-z_-]{35}\b"),
    "Slack token": re.compile(rb"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    "private key": re.compile(rb"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----"),
}
# A transcript that holds a message, as the three agents write one (read apart from memdir's readers).
MESSAGE = re.compile(r'"(?:role|type)"\s*:\s*"(?:user|assistant|gemini|model|user_message|agent_message)"')
NAMES = re.compile(r"^(?:rollout-.*\.jsonl?|session-.*\.jsonl?|checkpoint-.*\.json|logs\.json|.*\.jsonl)$")


@dataclass
class Source:
    """What a record is checked against: the transcript's file, what the user said in it, which tool calls failed."""

    path: Path
    said: list[str]
    failures: tuple[str, ...]


@dataclass
class Corpus:
    """A scratch memory made from transcripts: the records, the diary, and every capture's outcome."""

    root: Path
    sources: dict[str, Source] = field(default_factory=dict)  # record path -> its transcript
    records: dict[str, memdir.Memory] = field(default_factory=dict)
    diary: dict[str, memdir.Memory] = field(default_factory=dict)
    outcomes: list[tuple[Path, str, str, str | None]] = field(default_factory=list)  # file, status, reason, record


@dataclass
class Failure:
    rule: str
    path: str
    detail: str


def transcripts(paths: Iterable[Path]) -> list[Path]:
    """The session files under `paths` (a file given by name is taken as it is), in a stable order."""
    found: list[Path] = []
    for p in paths:
        if p.is_file():
            found.append(p)
        elif p.is_dir():
            found += sorted(f for f in p.rglob("*") if f.is_file() and NAMES.match(f.name)
                            and not any(part.startswith(".") and part not in (".claude", ".codex", ".gemini")
                                        for part in f.relative_to(p).parts[:-1]))
    return list(dict.fromkeys(found))


def session_ids(files: Sequence[Path]) -> list[str]:
    """An id for each file: its name's last 36 characters (a UUID where the agent put one), made unique."""
    seen: Counter[str] = Counter()
    out = []
    for f in files:
        sid = re.sub(r"[^A-Za-z0-9._-]", "-", f.stem[-36:]).strip(".-") or "session"
        seen[sid] += 1
        out.append(sid if seen[sid] == 1 else f"{sid}-{seen[sid]}")
    return out


def said_by_user(t: Transcript) -> list[str]:
    return [" ".join(x.text.split()) for x in t.turns if x.role == "user" and not x.text.startswith("[tool ")]


def words(text: str) -> set[str]:
    return set(WORD.findall(text.lower()))


def holds_a_message(path: Path) -> bool:
    """Whether a transcript file holds a message of a person or an agent, read as bytes (not by memdir)."""
    try:
        with path.open("rb") as f:
            return bool(MESSAGE.search(f.read(64 << 20).decode("utf-8", "replace")))
    except OSError:
        return False


def build(root: Path, files: Sequence[Path], *, at: Callable[[int], dt.datetime | None] | None = None,
          now: dt.datetime | None = None, progress: Callable[[int, Path, str], None] | None = None) -> Corpus:
    """Capture `files` into a memory at `root` (file i at `at(i)`, else at its own time), roll the closed days,
    weeks and months up (as of `now`, else 40 days after the last record), and read it all back."""
    c = Corpus(root)
    with memdir.open(root) as md:
        for i, (path, sid) in enumerate(zip(files, session_ids(files), strict=True)):
            done = memdir.capture(md, sid, path, at=at(i) if at else None)
            c.outcomes.append((path, done.status, done.reason, done.path))
            if progress:
                progress(i, path, done.status)
            if done.path is None:
                continue
            try:
                t = with_subagents(load(path), path)
            except TranscriptError:
                continue
            c.sources[done.path] = Source(path, said_by_user(t), t.activity.failures)
            c.records[done.path] = md.read(done.path)
        days = [dt.date.fromisoformat(m.path.split("/")[-1][:10]) for m in c.records.values()
                if re.match(r"\d{4}-\d{2}-\d{2}", m.path.split("/")[-1])]
        if now is None:
            last = max(days, default=dt.date.today())
            now = dt.datetime.combine(last + dt.timedelta(days=40), dt.time(), dt.UTC)
        diary.rollup(md, due=True, now=now, yes=True)
        for folder in ("diary/", "archive/diary/"):
            for e in md.list(folder):
                c.diary[e.path] = md.read(e.path)
    return c


# ---------------------------------------------------------------- the rules: each returns its failures


def captured(c: Corpus) -> tuple[int, list[Failure]]:
    """A transcript that holds a message has a record; a subagent's own file leaves none."""
    out = []
    for path, status, reason, record in c.outcomes:
        # Claude Code's agent-*.jsonl and subagents/, the Gemini CLI's chats/<session>/<session>-<agent>-*.jsonl
        subagent = path.name.startswith("agent-") or "subagents" in path.parts or path.parent.parent.name == "chats"
        if status != "captured" and reason == "prompt log":
            continue  # the Gemini CLI's logs.json: its sessions are the files under chats/
        if subagent and record is not None:
            out.append(Failure("captured", record, f"a subagent's own file made a record: {path}"))
        elif not subagent and status != "captured" and holds_a_message(path):
            out.append(Failure("captured", str(path), f"{status} ({reason}) though it holds a message"))
    return len(c.outcomes), out


def title(c: Corpus) -> tuple[int, list[Failure]]:
    """The title is the user's first real request (or a slash command): never the assistant's words, a
    placeholder or an acknowledgement."""
    out = []
    for path, m in c.records.items():
        t, said = m.description, c.sources[path].said
        plain = DATES.sub("", t).rstrip("…").strip()
        mine = any(plain in s for s in said)
        if not t or t.startswith(PLACEHOLDERS) or (NARRATION.match(t) and not mine):
            out.append(Failure("title", path, f"placeholder or narration: {t!r}"))
        elif MARKUP.match(t):
            out.append(Failure("title", path, f"markup, not a request: {t!r}"))
        elif len(TERM.findall(plain.lower())) < 2 and not plain.startswith("/") and not re.search(r"[\u3040-\u9fff\uac00-\ud7af]", plain):
            out.append(Failure("title", path, f"a bare word: {t!r}"))
        elif t.lower().rstrip(".!") in ACKS:
            out.append(Failure("title", path, f"an acknowledgement: {t!r}"))
        elif said and not plain.startswith("/") and not mine:
            out.append(Failure("title", path, f"not the user's words: {t!r}"))
    return len(c.records), out


def broke(c: Corpus) -> tuple[int, list[Failure]]:
    """What broke holds only tool calls' failures (each starting as the failure does), no markdown, none of the
    user's words; and it is there when a tool call failed."""
    out, n = [], 0
    for path, m in c.records.items():
        s = c.sources[path]
        items = m.meta.get("broke", [])
        n += max(len(items), 1)
        for item in items:
            said_what = item.split(": ", 1)[1] if ": " in item else item
            if MARKDOWN.search(item):
                out.append(Failure("broke", path, f"markdown: {item!r}"))
            elif not said_what.strip() or re.fullmatch(r"(?i)\s*(?:exit code:?\s*-?\d+|error)\s*", said_what):
                out.append(Failure("broke", path, f"says nothing of what failed: {item!r}"))
            elif not any(item.startswith(f[:60]) for f in s.failures):
                out.append(Failure("broke", path, f"not a tool's failure: {item!r}"))
            elif any(item in said or (said in item and len(TERM.findall(said.lower())) >= 3) for said in s.said):
                out.append(Failure("broke", path, f"the user's words: {item!r}"))
        if s.failures and not items:
            out.append(Failure("broke", path, f"{len(s.failures)} failed tool calls, none listed"))
    return n, out


def open_threads(c: Corpus) -> tuple[int, list[Failure]]:
    """Open threads are what the user said and left open (most of an item's words are the user's)."""
    out, n = [], 0
    for path, m in c.records.items():
        users = [words(s) for s in c.sources[path].said]
        for item in m.meta.get("open", []):
            n += 1
            mine = words(DATES.sub("", item)) - {"the", "user", "they", "their", "them", "agent"}
            if MARKDOWN.search(item):
                out.append(Failure("open", path, f"markdown: {item!r}"))
            elif not any(len(mine & u) >= 0.6 * len(mine) for u in users):
                out.append(Failure("open", path, f"not the user's words: {item!r}"))
    return n, out


def done(c: Corpus) -> tuple[int, list[Failure]]:
    """What was done shows each command as a person reads it: not a comment, not the body of a heredoc."""
    out, n = [], 0
    for path, m in c.records.items():
        for cmd in m.meta.get("commands", []):
            n += 1
            if cmd.lstrip().startswith("#"):
                out.append(Failure("done", path, f"a comment for a command: {cmd[:120]!r}"))
            elif re.search(r"<<-?\s*['\"]?\w+['\"]?\s+\S", cmd):
                out.append(Failure("done", path, f"a heredoc's body: {cmd[:120]!r}"))
    return n, out


def _plain(item: str) -> str:
    return re.sub(r" \(sessions? [^()]+\)| — \d+ days| \(in [^()]+\)", "", item).lower().strip().rstrip(".!。！")


def acks(c: Corpus) -> tuple[int, list[Failure]]:
    """No acknowledgement is a request, an open thread, a decision, a learning or a line of the diary."""
    out, n = [], 0
    for path, m in [*c.records.items(), *c.diary.items()]:
        for key in ("asked", "open", "decisions", "worked_on", "decided", "learned", "corrections", "preferences"):
            for item in m.meta.get(key, []):
                n += 1
                if _plain(item) in ACKS:
                    out.append(Failure("acks", path, f"{key}: {item!r}"))
    return n, out


STATED = {"the", "user", "agent", "wants", "noted", "that", "does", "not", "want", "corrected", "said", "they",
          "prefers", "their", "them"}


def learnings(c: Corpus) -> tuple[int, list[Failure]]:
    """A learning is what the user stated, in the third person, naming its session and line; not a request."""
    out, n = [], 0
    for path, m in c.records.items():
        users = [words(s) for s in c.sources[path].said]
        asked = [words(x) for x in [m.description, *m.meta.get("asked", [])]]
        for item in [*m.meta.get("corrections", []), *m.meta.get("preferences", [])]:
            n += 1
            body = words(re.sub(r"\(session .*\)$", "", item)) - STATED
            stated = re.sub(r"\s*\(session [^()]*\)$", "", item).rstrip("…").rstrip()
            if not LEARNING.match(item) or f"(session {m.meta.get('session')}, " not in item:
                out.append(Failure("learnings", path, f"not in the third person naming session and line: {item!r}"))
            elif stated.endswith(("?", ":")) or (len(body) < 2 and not SPACELESS.search(stated)):
                out.append(Failure("learnings", path, f"a question, an announcement or a fragment: {item!r}"))
            elif not any(len(body & u) >= 0.5 * len(body) for u in users):
                out.append(Failure("learnings", path, f"not the user's words: {item!r}"))
            elif any(a and len(body & a) >= 0.8 * len(body) for a in asked):
                out.append(Failure("learnings", path, f"a request restated: {item!r}"))
    return n, out


LEADS = re.compile(r"(?:^|\. )(?:Learned|Decided|Worked on|Still open|Broke|Nothing was left open)\b")


def diary_shapes(c: Corpus) -> tuple[int, list[Failure]]:
    """The seeds' shapes: a daily one paragraph, a weekly two or three sentences, a monthly three themes; no
    placeholder, no item twice, no bare word."""
    out = []
    for path, m in c.diary.items():
        kind = m.meta.get("period")
        text = m.body.split("\n\n", 1)[1].strip() if "\n\n" in m.body else m.body.strip()
        if any(p in text for p in PLACEHOLDERS):
            out.append(Failure("diary", path, f"a placeholder: {text[:160]!r}"))
        if kind == "day" and "\n" in text:
            out.append(Failure("diary", path, "a daily of more than one paragraph"))
        elif kind == "week" and not 2 <= len(LEADS.findall(text)) <= 3:
            out.append(Failure("diary", path, f"a weekly of {len(LEADS.findall(text))} sentences: {text[:160]!r}"))
        elif kind == "month":
            bullets = text.splitlines()
            if not 1 <= len(bullets) <= 3 or not all(b.startswith("- ") for b in bullets):
                out.append(Failure("diary", path, f"a monthly of {len(bullets)} lines: {text[:160]!r}"))
            for b in bullets:
                name = b[2:].split(": ", 1)[0]
                if len(name) <= 3 or name.lower() in ("start", "fix", "test", "update", "check", "misc"):
                    out.append(Failure("diary", path, f"a theme named by a bare word: {b!r}"))
        for key in ("worked_on", "decided", "learned", "broke", "open"):
            plain = [_plain(x) for x in m.meta.get(key, [])]
            for x in sorted({x for x in plain if plain.count(x) > 1}):
                out.append(Failure("diary", path, f"{key} holds twice: {x!r}"))
            for x in plain:
                if len(TERM.findall(x)) < 2 and not re.search(r"[/.]|[\u3040-\u9fff\uac00-\ud7af]", x):
                    out.append(Failure("diary", path, f"{key} holds a bare word: {x!r}"))
    return len(c.diary), out


def credentials(c: Corpus, planted: Sequence[str] = ()) -> tuple[int, list[Failure]]:
    """No credential under the memory (records, diary, raw sessions, `.memdir/` and its database)."""
    out, n = [], 0
    for p in sorted(c.root.rglob("*")):
        if not p.is_file():
            continue
        n += 1
        data = p.read_bytes()
        rel = str(p.relative_to(c.root))
        for name, rx in TOKENS.items():
            for hit in rx.findall(data)[:3]:
                out.append(Failure("credentials", rel, f"{name}: {hit[:24].decode(errors='replace')}…"))
        out += [Failure("credentials", rel, f"planted secret {s[:12]}…") for s in planted if s.encode() in data]
    return n, out


RULES: dict[str, Callable[[Corpus], tuple[int, list[Failure]]]] = {
    "captured": captured, "title": title, "done": done, "broke": broke, "open": open_threads, "acks": acks,
    "learnings": learnings, "diary": diary_shapes, "credentials": credentials,
}


def check(c: Corpus) -> dict[str, tuple[int, list[Failure]]]:
    """Every rule's (items checked, failures)."""
    return {name: rule(c) for name, rule in RULES.items()}


def table(results: dict[str, tuple[int, list[Failure]]]) -> str:
    rows = [f"| {'rule':<12} | {'checked':>7} | {'failing':>7} |", f"|{'-' * 14}|{'-' * 9}|{'-' * 9}|"]
    rows += [f"| {name:<12} | {n:>7} | {len(f):>7} |" for name, (n, f) in results.items()]
    return "\n".join(rows)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="+", type=Path, help="transcript files or folders holding them")
    ap.add_argument("--keep", type=Path, help="make the scratch memory here (an empty or new folder) and keep it")
    ap.add_argument("--show", type=int, default=3, help="failures printed per rule (default 3)")
    ap.add_argument("--json", action="store_true", help="the counts and every failure as one JSON document")
    args = ap.parse_args(argv)
    files = transcripts(args.paths)
    if not files:
        print(f"no transcript found under {', '.join(map(str, args.paths))}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="memdir-records-") as tmp:
        root = args.keep or Path(tmp) / "memory"
        if root.exists() and any(root.iterdir()):
            print(f"{root} is not empty; give a new or empty folder to --keep", file=sys.stderr)
            return 2
        corpus = build(root, files)
        results = check(corpus)
        statuses = Counter(status for _, status, _, _ in corpus.outcomes)
        kinds = Counter(m.meta.get("period") for m in corpus.diary.values())
    if args.json:
        print(json.dumps({"transcripts": len(files), "captures": dict(statuses), "diary": dict(kinds),
                          "rules": {k: {"checked": n, "failing": len(f), "failures": [x.__dict__ for x in f]}
                                    for k, (n, f) in results.items()}}, indent=2, ensure_ascii=False))
    else:
        print(f"{len(files)} transcripts: " + ", ".join(f"{v} {k}" for k, v in statuses.most_common())
              + f"; diary: {kinds.get('day', 0)} days, {kinds.get('week', 0)} weeks, {kinds.get('month', 0)} months")
        print(table(results))
        for name, (_, failures) in results.items():
            for f in failures[: args.show]:
                print(f"{name}\t{f.path}\t{f.detail}")
        if args.keep:
            print(f"kept: {root}")
    return 1 if any(f for _, f in results.values()) else 0


if __name__ == "__main__":
    raise SystemExit(main())
