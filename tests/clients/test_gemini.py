"""The real Gemini CLI (tests/clients/clients.py's pinned version) with memdir's MCP server, headless against the
scripted Gemini API of standin.py (`streamGenerateContent` as server-sent events), offline (issue 35, item 6)."""

from __future__ import annotations

import json
from pathlib import Path

from binaries import gemini_bin  # noqa: F401 (a fixture; F811 is off here for its parameters)
from drive import gemini
from standin import Call, Request, StandIn, Text

import memdir


def test_gemini_calls_the_tools_and_the_model_reads_their_text(gemini_bin: Path, tmp_path: Path) -> None:
    root = tmp_path / "memory"
    with memdir.open(root, create=True) as md:
        md.write("feedback/tabs.md", "Indent with tabs; 탭으로 들여쓰기.\n", type="feedback", description="tabs")

    def script(r: Request) -> list[Text | Call]:
        done = len(r.tool_results())
        if done == 0:
            return [Call("write_memory_file", {"path": "feedback/tabs.md", "content": "Indent with spaces.\n"})]
        if done == 1:
            return [Call("get_memory_context", {})]
        return [Text("done")]

    (tmp_path / "work").mkdir()
    with StandIn(script) as api:
        run = gemini(gemini_bin, tmp_path / "home", api.url, tmp_path / "work", root, "switch to spaces")
        main = api.main()
    assert run.code == 0, run.stderr[-2000:]
    assert "mcp_memdir_write_memory_file" in main[0].tools
    wrote, context = (json.loads(x)["output"] for x in main[-1].tool_results())  # Gemini CLI wraps the text
    assert 'undo_memory_change(path="feedback/tabs.md")' in wrote and "without reading it" in wrote
    assert "Indent with spaces." in context and "[tabs](feedback/tabs.md)" in context
    assert [e["type"] for e in run.events()][-1] == "result"
    with memdir.open(root) as md:
        assert md.read("feedback/tabs.md").body == "Indent with spaces.\n"
