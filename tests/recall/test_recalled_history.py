"""History is not knowledge: what a prompt recalls when earlier sessions asked the same question.

The hook runs as Claude Code runs it (`memdir hook claude-code`, a fresh process, the event's JSON on
stdin), in a memory whose session records were written by capture itself.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import memdir
from memdir.recall import context
from memdir.search import asks_about_past

EARLIER = ("0d6c51b2-7e0f-4a8e-9c1d-5b2a3f4e6d71", "4e9a2c13-8b5f-4d6e-a7c2-1f3b5d7e9a02")
CURRENT = "9b7e3d15-2c4a-4f6b-8d1e-7a9c0b2d4e63"
QUESTION = "When is the flock launch date?"
ANSWER = "project/flock.md says the launch is on 2026-12-15, after the beta weeks."


def prompt(root: Path, text: str, session: str = CURRENT) -> list[str]:
    """The paths the UserPromptSubmit hook recalls for `text`, in the order it gives them."""
    event = {"session_id": session, "transcript_path": f"/home/ana/.claude/projects/-home-ana-flock/{session}.jsonl",
             "cwd": "/home/ana/flock", "permission_mode": "default", "hook_event_name": "UserPromptSubmit",
             "prompt": text}
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MEMDIR_")}
    done = subprocess.run([sys.executable, "-m", "memdir", "--root", str(root), "hook", "claude-code"],
                          input=json.dumps(event), capture_output=True, text=True, env=clean, timeout=60, check=True)
    if not done.stdout.strip():
        return []
    added = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    return re.findall(r'<memory-\d+ path="([^"]+)"', added)


def test_a_prompt_earlier_sessions_asked_recalls_the_topic_file_first_and_never_its_own_record(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    talk = [{"role": "user", "content": QUESTION}, {"role": "assistant", "content": ANSWER}]
    with memdir.open(root) as md:
        md.write("project/flock.md", "# Flock\nRoute planner for pigeon racing.\nLaunch date: 2026-12-15, after two "
                 "beta weeks.\n", type="project", description="Flock: route planner and its launch")
        md.write("reference/stripe.md", "Stripe retries a failed webhook for 3 days.\n", type="reference")
        for day, sid in zip((20, 25), EARLIER, strict=True):
            memdir.capture(md, sid, talk, at=f"2026-11-{day}T10:00:00Z", event="SessionEnd")
        # This session asked it before compaction: its own record is in the memory too.
        mine = memdir.capture(md, CURRENT, talk, at="2026-11-30T09:00:00Z", event="PreCompact:auto").path
        records = {e.path for e in md.list("sessions/")}
        assert mine in records and len(records) == 3
        # Asked for, every record ranks, below the topic file that answers.
        assert md.search(QUESTION)[0].path == "project/flock.md"
        assert {h.path for h in md.search(QUESTION)} == records | {"project/flock.md"}

    recalled = prompt(root, QUESTION)
    assert recalled[0] == "project/flock.md"  # the file that answers, first
    assert not [p for p in recalled if p.startswith("sessions/")]  # records of asking are not knowledge

    past = prompt(root, "What did we say about the flock launch date last time?")
    assert past and mine not in past  # asked about past work: the earlier records come, this session's own never
    assert {p for p in past if p.startswith("sessions/")} == records - {mine}

    # Another session asks: this session's record is one of the earlier ones to it.
    assert mine in prompt(root, "What did we say about the flock launch date last time?", EARLIER[0])


def test_a_record_is_recalled_when_no_topic_file_answers(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    with memdir.open(root) as md:
        md.write("reference/stripe.md", "Stripe retries a failed webhook for 3 days.\n", type="reference")
        memdir.capture(md, EARLIER[0], [{"role": "user", "content": "Move the kayak trip to the Vltava in June."},
                                        {"role": "assistant", "content": "Noted: the kayak trip on the Vltava is in June."}],
                       at="2026-11-20T10:00:00Z")
    assert [p for p in prompt(root, "where does the kayak trip go?") if p.startswith("sessions/")]
    assert prompt(root, "where does the kayak trip go?", EARLIER[0]) == []  # its own record: never


def test_what_asks_about_past_work() -> None:
    for question in ("what did we do about the flaky test?", "what did we decide last time on pricing",
                     "yesterday we changed the deploy script, which one?", "remind me what we tried two weeks ago",
                     "did we ever fix the webhook retries?", "last session's plan for flock"):
        assert asks_about_past(question), question
    for question in ("when is the flock launch date?", "how do we deploy to production?", "what does Ana prefer?",
                     "last name of the landlord", "before deploying, run what?"):
        assert not asks_about_past(question), question


def test_a_sessions_own_records_are_known_by_its_id() -> None:
    assert context.own_record(f"sessions/2026-11-30-090000-{CURRENT}.md", CURRENT)
    assert context.own_record(f"sessions/raw/2026-11-30-090000-{CURRENT}/part-001.md", CURRENT)
    assert context.own_record(f"archive/sessions/2026-11-30-090000-{CURRENT}.md", CURRENT)
    assert context.own_record("sessions/2026-11-30-090000-team-a-b.1c0e5d8a.md", "team a/b") is \
        ("1c0e5d8a" == __import__("hashlib").sha256(b"team a/b").hexdigest()[:8])
    assert not context.own_record(f"sessions/2026-11-30-090000-{EARLIER[0]}.md", CURRENT)
    assert not context.own_record(f"project/{CURRENT}.md", CURRENT)  # only records
    assert not context.own_record(f"sessions/2026-11-30-090000-{CURRENT}.md", None)
