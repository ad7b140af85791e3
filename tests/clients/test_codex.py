"""The real Codex CLI (tests/clients/clients.py's pinned version) with memdir's MCP server, headless against the
scripted OpenAI Responses API of standin.py, streaming (issue 35, items 3 and 6)."""

from __future__ import annotations

import json
from pathlib import Path

from binaries import codex_bin  # noqa: F401 (a fixture; F811 is off here for its parameters)
from drive import codex
from standin import Call, Request, StandIn, Text

import memdir


def test_codex_calls_the_tools_and_the_model_reads_their_text(codex_bin: Path, tmp_path: Path) -> None:
    root = tmp_path / "memory"
    with memdir.open(root, create=True) as md:
        md.write("feedback/tabs.md", "Indent with tabs.\n", type="feedback", description="tabs")

    def script(r: Request) -> list[Text | Call]:
        done = len(r.tool_results())
        if done == 0:
            return [Call("write_memory_file", {"path": "feedback/tabs.md", "content": "Indent with spaces.\n"})]
        if done == 1:
            return [Call("get_memory_context", {})]
        return [Text("done")]

    (tmp_path / "work").mkdir()
    with StandIn(script) as api:
        run = codex(codex_bin, tmp_path / "home", api.url, tmp_path / "work", root, "switch to spaces")
        main = api.main()
    assert run.code == 0, run.stderr[-2000:]
    assert "mcp__memdir.write_memory_file" in main[0].tools
    wrote, context = (json.loads(x.split("Output:\n", 1)[-1])["text"] for x in main[-1].tool_results())
    assert 'undo_memory_change(path="feedback/tabs.md")' in wrote and "without reading it" in wrote
    assert "Indent with spaces." in context
    with memdir.open(root) as md:
        assert md.read("feedback/tabs.md").body == "Indent with spaces.\n"
