"""The words of a file's name are searchable, weighted like its name (issue 30, item 5), on every backend."""

from __future__ import annotations

from conftest import Backend

from memdir.search.text import name_words


def test_the_words_of_a_file_name_that_its_name_lacks() -> None:
    assert name_words("feedback_vercel-env-newline.md", "Vercel env values get a trailing newline") == ""
    assert name_words("feedback_vercel-env-newline.md", "Vercel 환경변수 줄바꿈") == "vercel env newline"
    assert name_words("notes/eventLoopLag.md", "") == "event Loop Lag"  # camelCase split
    assert name_words("HTTPServer_config.md", "") == "HTTP Server config"  # an acronym before a word, snake_case
    assert name_words("Homelab/Pi-hole.md", "Pi-hole") == ""  # a name derived from the file's says it all
    assert name_words("project_factor-state-machine.md", "因子状态机") == "factor state machine"  # the type is no topic
    assert name_words("暮らし/引っ越し手続き.md", "引越し") == "引っ越し手続き"  # a CJK file name, paired as any text
    assert name_words("reference_.md", "x") == "reference"  # nothing after the prefix: the word stays
    assert name_words("conv-26/session-01/D1-3.md", "Caroline, 8 May 2023") == ""  # numbering is no word
    assert name_words("project_pii_audit_2026_04.md", "PII audit") == ""


def test_a_file_is_found_by_the_words_of_its_name(backend: Backend) -> None:
    with backend.open() as md:
        md.write("feedback_vercel-env-newline.md", "---\nname: Vercel 환경변수 줄바꿈\ndescription: echo로 넣으면 "
                 "값 끝에 줄바꿈이 붙는다\nmetadata:\n  type: feedback\n---\n`vercel env add`에 echo로 넣지 말 것.\n")
        md.write("project_factor-state-machine.md", "---\nname: 因子状态机\ndescription: 四个状态之间的转移规则\n---\n"
                 "候选、观察、上线、下线。\n")
        md.write("notes/eventLoopLag.md", "---\nname: Slow ticks\ndescription: what we saw in March\n---\nP99 at 80 ms.\n")
        md.write("暮らし/引っ越し手続き.md", "---\nname: 転居のメモ\ndescription: 役所で\n---\n転出届は14日前から。\n")
        md.write("reference/newline-ending.md", "---\nname: Line endings\ndescription: CRLF or LF\n---\n"
                 "Git converts line endings; a newline at the end of a file is kept.\n")
        assert [h.path for h in md.search("vercel env newline")][:1] == ["feedback_vercel-env-newline.md"]
        assert [h.path for h in md.search("factor state machine")] == ["project_factor-state-machine.md"]
        assert [h.path for h in md.search("event loop lag")] == ["notes/eventLoopLag.md"]
        assert [h.path for h in md.search("引っ越し")] == ["暮らし/引っ越し手続き.md"]
        assert md.search("feedback", mode="lexical") == []  # Claude Code's type prefix names no topic
        hit = md.search("event loop lag")[0]
        assert (hit.line, hit.snippet) == (1, "Slow ticks")  # only the file's name matched: line 1 and the name
        md.rename("notes/eventLoopLag.md", "notes/gcPauses.md")  # the old name's words go with it
        assert md.search("event loop lag", mode="lexical") == []
        assert [h.path for h in md.search("gc pauses")] == ["notes/gcPauses.md"]
