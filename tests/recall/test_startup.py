"""SessionStart's context on a memory laid out as Claude Code keeps one (issue 35, item 4)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import memdir
from memdir.core.index import BEGIN, END
from memdir.recall import recall, startup


def cc_file(root: Path, name: str, kind: str, body: str, modified: str | None = None, *, pinned: bool = False,
            top_pinned: bool = False) -> None:
    """A memory file as Claude Code writes one: a `metadata:` block, `<type>_<topic>.md` names, CRLF in some."""
    meta = [f"  type: {kind}"] + ([f"  modified: {modified}"] if modified else []) + (["  pinned: true"] if pinned else [])
    text = "\n".join(["---", f"name: {name}", f"description: {name} in one line", "metadata:", *meta,
                      *(["pinned: true"] if top_pinned else []), "---", "", body, ""])
    (root / f"{kind}_{name.replace(' ', '_')}.md").write_text(text, encoding="utf-8")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    root.mkdir()
    cc_file(root, "always staging", "project", "Deploys go to staging first, 한국어 팀 포함.", pinned=True)
    cc_file(root, "signed commits", "feedback", "Sign every commit.", "2026-01-02T08:00:00.000Z", top_pinned=True)
    for i in range(50):
        cc_file(root, f"rule {i:02d}", "feedback", f"Rule number {i}: 规则 {i}. " + "Why: it broke once. " * 8,
                f"2026-03-{1 + i % 28:02d}T{i % 24:02d}:00:00.000Z")
    kept = ["# Project notes", "", *[f"- note {i}: kept by hand, see [rule {i:02d}](feedback_rule_{i:02d}.md)" for i in range(240)]]
    (root / "MEMORY.md").write_text("\n".join(kept) + "\n", encoding="utf-8")
    (root / "sessions").mkdir()
    for i in range(60):
        (root / "sessions" / f"2026-04-{1 + i % 28:02d}-{i:06d}.md").write_text(
            f"---\nname: session {i}\ndescription: a long session title about refactoring the {i}th module at length\n"
            "type: session\n---\nWhat happened.\n", encoding="utf-8")
    (root / "team").mkdir()
    (root / "team" / "MEMORY.md").write_text("# Team\n\n- [on-call](oncall.md) — who is on call\n", encoding="utf-8")
    (root / "team" / "oncall.md").write_text("---\nname: on-call\ndescription: who is on call\n---\nPriya this week.\n")
    return root


def blocks(text: str) -> list[str]:
    return re.findall(r'<memory-\d+ path="([^"]+)"', text)


def test_pinned_first_then_feedback_newest_first_then_the_index_within_the_budget(folder: Path) -> None:
    with memdir.open(folder) as md:
        text = startup.context(md, "s1")
    shown = blocks(text)
    assert set(shown[:2]) == {"project_always_staging.md", "feedback_signed_commits.md"}  # metadata.pinned, pinned:
    feedback = [p for p in shown if p.startswith("feedback_rule_")]
    assert feedback and feedback[0] == "feedback_rule_27.md"  # 2026-03-28, the newest
    assert shown[-1] == "MEMORY.md" and len(text) <= startup.BUDGET
    index = text.split('path="MEMORY.md" type="index">\n', 1)[1]
    assert index.startswith("# Project notes\n\n- note 0: kept by hand")
    assert len(index) >= startup.BUDGET * startup.INDEX_SHARE * 0.8  # fifty feedback memories did not push it out
    last = text.rstrip("\n").split("\n")[-1]
    assert re.fullmatch(r"Left out for room: \d+ feedback, \d+ index lines \(read_memory_index and search_memory "
                        r"reach them\)\.", last), last
    assert "refactoring the" not in text  # session titles take no room


def test_feedback_is_ordered_by_when_it_was_written(folder: Path) -> None:
    with memdir.open(folder) as md:
        shown = [p for p in blocks(startup.context(md, None, budget=40_000)) if p.startswith("feedback_rule_")]
    stamps = [f"2026-03-{1 + int(p[14:16]) % 28:02d}T{int(p[14:16]) % 24:02d}" for p in shown]
    assert stamps == sorted(stamps, reverse=True) and len(shown) == 50


def test_sessions_are_one_line_and_team_memory_is_read(folder: Path) -> None:
    (folder / "MEMORY.md").write_text("# Project notes\n\nShort ones.\n", encoding="utf-8")
    with memdir.open(folder) as md:
        md.write("project/new.md", "A new project.\n", type="project", description="new")  # memdir's region appears
        text = startup.context(md, None, budget=60_000)
    assert "- 60 session records under sessions/ (search_memory finds them)" in text
    assert "<!-- team/MEMORY.md -->\n# Team\n\n- [on-call](oncall.md)" in text and "refactoring the" not in text


def short_notes(folder: Path) -> None:
    notes = ["# Project notes", "", *[f"- note {i}: kept by hand, see [rule {i:02d}](feedback_rule_{i:02d}.md)" for i in range(20)]]
    (folder / "MEMORY.md").write_text("\n".join(notes) + "\n", encoding="utf-8")


def test_the_generated_index_does_not_repeat_what_the_kept_notes_link(folder: Path) -> None:
    short_notes(folder)
    with memdir.open(folder) as md:
        md.write("project/new.md", "A new project.\n", type="project", description="brand new")
        whole = md.index()
        text = startup.context(md, None, budget=60_000)
    assert BEGIN in whole and END in whole
    index = text.split('path="MEMORY.md" type="index">\n', 1)[1]
    assert "[new](project/new.md) — brand new" in index  # only the generated part has it
    generated = whole.split(BEGIN, 1)[1]
    assert "feedback_rule_00.md" in generated and index.count("feedback_rule_00.md") == 1


def test_a_resume_adds_only_what_is_new_and_a_compaction_all_of_it(folder: Path, tmp_path: Path) -> None:
    short_notes(folder)
    with memdir.open(folder) as md:
        first = startup.context(md, "abc", source="startup")
        assert first and startup.context(md, "abc", source="resume") == ""
        md.write("feedback/fresh.md", "Prefer tabs.\n", type="feedback", description="tabs")
        again = startup.context(md, "abc", source="resume")
        assert "Prefer tabs." in again and "feedback_signed_commits.md" not in again
        assert "[fresh](feedback/fresh.md)" in again and "note 0: kept by hand" not in again  # new index lines only
        assert startup.context(md, "abc", source="resume") == ""
        other = startup.context(md, "def", source="resume")  # a session never shown: all of it
        assert "feedback_signed_commits.md" in other
        compacted = startup.context(md, "abc", source="compact")  # the summary replaced what the starts gave
        assert "feedback_signed_commits.md" in compacted and "Prefer tabs." in compacted


def test_a_resume_reads_what_the_transcript_holds_since_its_last_compaction(folder: Path, tmp_path: Path) -> None:
    """Claude Code's transcript (JSONL) holds each start's context as an attachment: a start whose fence tag is
    before the last compact boundary, or nowhere (its context never reached the conversation), is not held."""
    short_notes(folder)
    transcript = tmp_path / "session.jsonl"

    def line(**record: object) -> str:
        return json.dumps(record, ensure_ascii=False) + "\r\n"  # as written on Windows too

    with memdir.open(folder) as md:
        first = startup.context(md, "abc", source="startup", transcript=transcript)
        transcript.write_text(line(type="attachment", attachment={"type": "hook_additional_context", "content": [first]})
                              + line(type="user", message={"role": "user", "content": "잠금 \"compact_boundary\" 순서"}))
        assert startup.context(md, "abc", source="resume", transcript=transcript) == ""  # held: nothing again
        with transcript.open("a") as f:
            f.write(line(type="system", subtype="compact_boundary", content="Conversation compacted"))
        whole = startup.context(md, "abc", source="resume", transcript=transcript)  # /compact ended the process
        assert "feedback_signed_commits.md" in whole
        with transcript.open("a") as f:
            f.write(line(type="attachment", attachment={"type": "hook_additional_context", "content": [whole]}))
        assert startup.context(md, "abc", source="resume", transcript=transcript) == ""
        assert startup.context(md, "abc", source="resume", transcript=tmp_path / "gone.jsonl") == ""  # unread: as held


def test_an_empty_memory_adds_nothing(tmp_path: Path) -> None:
    with memdir.open(tmp_path / "m", create=True) as md:
        assert startup.context(md, "s") == ""


def test_feedback_a_prompt_recalled_lately_comes_before_feedback_written_lately(tmp_path: Path) -> None:
    """"By how recently written or used": a use is a prompt's recall bringing the file in (UserPromptSubmit), kept
    in the user's cache folder; the memory's own bytes do not change."""
    root = tmp_path / "memory"
    root.mkdir()
    cc_file(root, "friday freeze", "feedback", "No deploys on Fridays: the freeze starts at noon. 금요일 배포 금지.",
            "2026-01-05T09:00:00.000Z")
    cc_file(root, "tabs", "feedback", "Indent with tabs.", "2026-03-01T09:00:00.000Z")
    with memdir.open(root) as md:
        assert blocks(startup.context(md, "s-1"))[:2] == ["feedback_tabs.md", "feedback_friday_freeze.md"]
        before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and ".memdir" not in p.parts}
        added = recall.user_prompt_submit(md, {"prompt": "can we deploy on a Friday after the freeze?",
                                               "session_id": "s-1"})
        assert added and "No deploys on Fridays" in added["hookSpecificOutput"]["additionalContext"]
        assert blocks(startup.context(md, "s-2"))[:2] == ["feedback_friday_freeze.md", "feedback_tabs.md"]
        assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and ".memdir" not in p.parts} == before
