"""The agent CLI the person already runs as the summariser (issue 31, item 6), driven through scripted stand-ins.

Each stand-in is an executable named like the real CLI (`claude`, `codex`, `gemini`) on a PATH of its own: it keeps
what it was given (its arguments, standard input, folder and environment) and answers what the test scripted, so
the tests see what a real CLI would be sent and what memdir makes of its answer, without a network or a model.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

import memdir
from memdir import InvalidArgument
from memdir.remember import capture as cap
from memdir.remember import diary
from memdir.remember.summarize import AgentCLI, Digest, Extractive, load
from memdir.remember.transcripts import load as read

REAL = Path(__file__).parent.parent / "data" / "real"
ERRORS = REAL / "claude-code" / "transcripts" / "-home-dana-src-tern" / "6f1d0b83-2c5e-47a9-b3d0-9a8e7c6f5b12.jsonl"
AT = "2026-03-17T11:00:00Z"
STANDIN = """#!{python}
import json, os, sys, time
state = {state!r}
n = len(os.listdir(state))
stdin = sys.stdin.read()
with open(os.path.join(state, f"call-{{n}}.json"), "w") as f:
    json.dump({{"argv": sys.argv[1:], "stdin": stdin, "cwd": os.getcwd(), "files": os.listdir("."),
               "summarizing": os.environ.get("MEMDIR_SUMMARIZING")}}, f)
mode = open({mode!r}).read()
if mode == "hang":
    time.sleep(3600)
if mode.startswith("fail"):
    sys.stderr.write("401 for key sk-ant-api03-" + "Zx81Qw27Er56Ty90Ui34Op12" * 3 + "\\n")
    sys.exit(3)
print(mode)
"""
GOOD = {"title": "Can you help me with error handling in tern/escalate/slack.py?",
        "asked": ["workspace is boolean instead of string"],
        "corrections": ["we use ruff, not flake8, so drop the noqa comment"],
        "preferences": ["The user wants ruff run before every commit"],
        "decisions": [], "broke": ["curl: (22) The requested URL returned error: 401"],
        "open": ["leave the retry metrics for later"]}


class Standin:
    """A fake agent CLI on PATH: `answer` sets what it prints next; `calls` is what it was given."""

    def __init__(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str = "claude") -> None:
        self.bin, self.state, self.mode = tmp_path / "bin", tmp_path / "calls", tmp_path / "mode"
        self.bin.mkdir(exist_ok=True)
        self.state.mkdir(exist_ok=True)
        exe = self.bin / name
        exe.write_text(STANDIN.format(python=sys.executable, state=str(self.state), mode=str(self.mode)))
        exe.chmod(0o755)
        monkeypatch.setenv("PATH", f"{self.bin}{os.pathsep}{os.environ['PATH']}")
        self.answer("{}")

    def answer(self, text: str | dict[str, Any]) -> None:
        self.mode.write_text(text if isinstance(text, str) else "Here is the record:\n" + json.dumps(text))

    @property
    def calls(self) -> list[dict[str, Any]]:
        return [json.loads(p.read_text()) for p in sorted(self.state.glob("call-*.json"), key=lambda p: int(p.stem[5:]))]


@pytest.mark.parametrize(("provider", "argv"), [("claude", ["-p"]), ("codex", ["exec", "--skip-git-repo-check", "-"]),
                                                ("gemini", ["-p"])])
def test_the_cli_the_user_runs_summarises_a_session(md: memdir.Memdir, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch, provider: str, argv: list[str]) -> None:
    cli = Standin(tmp_path, monkeypatch, provider)
    cli.answer(GOOD)
    done = memdir.capture(md, "s-1", ERRORS, at=AT, summarizer=load({"provider": provider}, {}))
    m = md.read(done.path or "")
    assert m.description == GOOD["title"] and "summariser_refused" not in m.meta
    assert m.meta["corrections"] == ["The user corrected the agent: they use ruff, not flake8, so drop the noqa "
                                     "comment (session s-1, line 19)"]  # in the third person, naming its line
    assert m.meta["preferences"] == ["The user wants ruff run before every commit (session s-1, line 23)"]
    assert m.meta["broke"] == list(read(ERRORS).activity.failures)  # the tool calls' own lines, not the model's
    (call,) = cli.calls
    assert call["argv"][: len(argv)] == argv and call["summarizing"] == "1"
    assert call["files"] == [] and Path(call["cwd"]).name.startswith("memdir-summary-")  # an empty folder of its own
    sent = call["stdin"]
    assert "the user's first real request" in sent and "User: Can you help me with error handling" in sent
    assert "eyJzdWIiOiJ0ZXJuLWJvdCIs" not in sent and "[line removed: it held what looks like a JSON Web Token]" in sent
    assert "Wint3rGarden-2026" not in sent and "AccountKey=q8Xv2" not in sent  # redacted before it leaves


@pytest.mark.parametrize(("answer", "why"), [
    ({**GOOD, "broke": ["## Fix #1: Proper Error Handling"]}, "what broke names no failed tool call"),
    ({**GOOD, "title": "I'll analyze the codebase and create a CLAUDE.md file"}, "the title is not a request"),
    ({**GOOD, "title": "[image]"}, "the title is not a request"),
    ({**GOOD, "open": ["| Resource Tracking is Broken | open |"]}, "open holds markup"),
    ({**GOOD, "asked": ["Yes, please continue"]}, "asked holds an acknowledgement"),
    ({**GOOD, "preferences": ["The user asked: can you help me with error handling"]}, "a learning restates a request"),
    ({**GOOD, "decisions": ["Switch the whole service to aiohttp"]}, "decisions holds what the user did not say"),
])
def test_an_answer_that_breaks_the_rules_is_refused_and_the_extractive_record_kept(
        md: memdir.Memdir, root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, answer: dict[str, Any],
        why: str) -> None:
    cli = Standin(tmp_path, monkeypatch)
    cli.answer(answer)
    done = memdir.capture(md, "s-1", ERRORS, at=AT, summarizer=load({"provider": "claude"}, {}))
    m = md.read(done.path or "")
    assert m.meta["summariser_refused"].startswith(f"claude: {why}")
    with memdir.open(tmp_path / "offline") as offline:
        plain = offline.read(memdir.capture(offline, "s-1", ERRORS, at=AT).path or "")
    assert m.body == plain.body  # the extractive record, whole


def test_a_cli_that_is_missing_fails_or_hangs_keeps_the_session_for_the_next_run(
        md: memdir.Memdir, root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    done = memdir.capture(md, "s-1", ERRORS, at=AT, summarizer=load({"provider": "claude"}, {}))
    assert (done.status, done.reason) == ("pending", "summariser error: the claude command is not installed (not "
                                          "found on PATH); install it or name another in [summarizer] command")
    cli = Standin(tmp_path, monkeypatch)
    cli.answer("fail")
    done = memdir.capture(md, "s-1", ERRORS, at=AT, summarizer=load({"provider": "claude"}, {}))
    assert done.reason == "summariser error: the claude command failed: exit status 3"  # never what it printed
    cli.answer("hang")  # it never answers: the outcome does not depend on how fast the machine is
    done = memdir.capture(md, "s-1", ERRORS, at=AT, summarizer=load({"provider": "claude", "timeout": 0.5}, {}))
    assert done.reason == "summariser error: the claude command did not answer within 0.5 s; raise [summarizer] timeout"
    cli.answer(GOOD)
    [again] = cap.retry_pending(md, load({"provider": "claude"}, {}))
    assert again.status == "captured" and md.read(again.path or "").description == GOOD["title"]
    md.close()
    assert not [p for p in root.rglob("*") if p.is_file() and b"Zx81Qw27Er56Ty90Ui34Op12" in p.read_bytes()]


def test_the_session_a_summary_runs_in_is_not_captured(md: memdir.Memdir, monkeypatch: pytest.MonkeyPatch) -> None:
    """`claude -p` ends a session of its own, and its SessionEnd hook captures: never a summary of a summary."""
    monkeypatch.setenv("MEMDIR_SUMMARIZING", "1")
    done = memdir.capture(md, "s-1", ERRORS, at=AT)
    assert (done.status, done.reason, done.path) == ("skipped", "summariser", None) and md.list() == []


def test_a_roll_up_without_its_periods_shape_is_refused(md: memdir.Memdir, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    cli = Standin(tmp_path, monkeypatch)
    cli.answer(GOOD)
    memdir.capture(md, "s-1", ERRORS, at=AT, summarizer=load({"provider": "claude"}, {}))
    cli.answer("## Tuesday\n\nWorked on [image] and more.")
    report = diary.rollup(md, day_label="2026-03-17", summarizer=load({"provider": "claude"}, {}))
    assert report.steps[0].detail == "the claude roll-up was refused: it is empty, or holds a placeholder or a heading"
    text = md.read("diary/2026-03-17.md").body
    assert "[image]" not in text and "\n\n" in text and "\n" not in text.split("\n\n", 1)[1].strip()
    cli.answer("A day of error handling in tern's Slack escalations; ruff runs before every commit.")
    week = load({"provider": "claude"}, {}).digest("day", "2026-03-18", [Digest("x")], limit=1200)
    assert week.text.startswith("A day of error handling")


def test_the_summariser_setting_names_a_cli_or_a_command() -> None:
    assert isinstance(load({}, {}), Extractive)
    claude = load({"provider": "claude", "model": "haiku"}, {})
    assert isinstance(claude, AgentCLI) and claude.command == ("claude", "-p") and claude.model == "haiku"
    own = load({}, {"MEMDIR_SUMMARIZER": "command", "MEMDIR_SUMMARIZER_COMMAND": "my-agent --quiet 'one arg'"})
    assert isinstance(own, AgentCLI) and own.command == ("my-agent", "--quiet", "one arg")
    with pytest.raises(InvalidArgument, match="needs a command"):
        load({"provider": "command"}, {})
    with pytest.raises(InvalidArgument, match="timeout = 'soon' is not valid"):
        load({"provider": "codex", "timeout": "soon"}, {})
    with pytest.raises(InvalidArgument, match="is not extractive, anthropic, openai, claude, codex, gemini or command"):
        load({"provider": "chatgpt"}, {})


def test_nothing_runs_unless_the_person_configured_it(md: memdir.Memdir, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    cli = Standin(tmp_path, monkeypatch)
    cli.answer(GOOD)
    memdir.capture(md, "s-1", ERRORS, at=AT)  # the default: extractive, offline
    diary.rollup(md, due=True, now=dt.datetime(2026, 3, 19, tzinfo=dt.UTC))
    assert cli.calls == []
