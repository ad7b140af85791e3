"""Whole agent turns through the real Anthropic and OpenAI SDKs against a scripted API on loopback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fakeapi import ScriptedAPI
from services import need

import memdir

anthropic = need("anthropic")
openai = need("openai")


# ---------------------------------------------------------------- Anthropic memory tool


def claude(n: int, *blocks: dict[str, Any], stop: str = "tool_use") -> dict[str, Any]:
    """One Messages API reply, as the wire format has it."""
    return {
        "id": f"msg_{n:02d}", "type": "message", "role": "assistant", "model": "claude-test",
        "content": list(blocks), "stop_reason": stop, "stop_sequence": None,
        "usage": {"input_tokens": 100, "output_tokens": 20},
    }


def memory_call(call_id: str, **command: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": "memory", "input": command}


NOTE = "---\ndescription: what the user drinks\ntype: user\n---\n- likes tea\n"


def test_anthropic_tool_runner_view_create_str_replace_view(root: Path) -> None:
    from memdir.faces.anthropic import MemdirMemoryTool

    script = [
        claude(1, {"type": "text", "text": "Checking memory first."}, memory_call("toolu_01", command="view", path="/memories")),
        claude(2, memory_call("toolu_02", command="create", path="/memories/user/drinks.md", file_text=NOTE),
               memory_call("toolu_03", command="create", path="/memories/drinks.txt", file_text="tea")),
        claude(3, memory_call("toolu_04", command="str_replace", path="/memories/user/drinks.md",
                              old_str="likes tea", new_str="likes green tea, no sugar")),
        claude(4, memory_call("toolu_05", command="view", path="/memories/user/drinks.md")),
        claude(5, {"type": "text", "text": "Noted: green tea, no sugar."}, stop="end_turn"),
    ]
    with memdir.open(root) as md, ScriptedAPI(script) as api:
        client = anthropic.Anthropic(api_key="sk-test", base_url=api.url, max_retries=0)
        runner = client.beta.messages.tool_runner(
            model="claude-test", max_tokens=1024, tools=[MemdirMemoryTool(md)],
            messages=[{"role": "user", "content": "I drink green tea, no sugar. Remember that."}],
        )
        replies = list(runner)
        assert [m.id for m in replies] == ["msg_01", "msg_02", "msg_03", "msg_04", "msg_05"]
        assert replies[-1].content[0].text == "Noted: green tea, no sugar."  # type: ignore[union-attr]

        # What the SDK sent: the tool declaration, then each turn's tool results.
        assert len(api.requests) == 5 and all(r["path"].startswith("/v1/messages") for r in api.requests)
        assert api.requests[0]["headers"]["authorization"] == "Bearer sk-test"
        assert "anthropic-version" in api.requests[0]["headers"]
        assert api.requests[0]["body"]["tools"] == [{"type": "memory_20250818", "name": "memory"}]
        results = [r["body"]["messages"][-1]["content"] for r in api.requests[1:]]
        assert all(r["body"]["messages"][-1]["role"] == "user" for r in api.requests[1:])

        [view_root] = results[0]
        assert view_root["tool_use_id"] == "toolu_01" and not view_root.get("is_error")
        assert "/memories/MEMORY.md is the index of this memory" in view_root["content"]
        assert view_root["content"].endswith(
            "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:\n"
            "0B\t/memories\n" + view_root["content"].splitlines()[-1]
        )

        created, refused = results[1]
        assert (created["tool_use_id"], created["content"]) == ("toolu_02", "File created successfully at: /memories/user/drinks.md")
        assert not created.get("is_error")
        assert refused["tool_use_id"] == "toolu_03" and refused["is_error"] is True
        assert refused["content"] == (
            "/memories/drinks.txt is not a markdown file; memories are .md files, so use /memories/drinks.md instead"
        )

        # Claude sees its own text with its own line numbers; memdir's date lines stay on disk.
        lines = NOTE.replace("likes tea", "likes green tea, no sugar").split("\n")
        [edited] = results[2]
        assert edited["content"] == (
            "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n"
            + "\n".join(f"{n:>6}\t{lines[n - 1]}" for n in range(3, 7))
        )
        [viewed] = results[3]
        assert viewed["content"] == "Here's the content of /memories/user/drinks.md with line numbers:\n" + "\n".join(
            f"{n:>6}\t{line}" for n, line in enumerate(lines, 1)
        )
        assert "\ncreated: " in (root / "user" / "drinks.md").read_text()

        # What landed: one topic file, in the index, with its journal.
        got = md.read("user/drinks.md")
        assert (got.description, got.type, got.body) == ("what the user drinks", "user", "- likes green tea, no sugar\n")
        assert "- [drinks](user/drinks.md) — what the user drinks" in (root / "MEMORY.md").read_text()
        assert [r.op for r in md.history("user/drinks.md")] == ["write", "write"]
        assert not (root / "drinks.txt").exists() and not (root / "drinks.md").exists()


def test_anthropic_runner_gets_memdir_refusals_as_tool_errors(root: Path) -> None:
    from memdir.faces.anthropic import MemdirMemoryTool

    script = [
        claude(1, memory_call("toolu_01", command="create", path="/memories/keys.md",
                              file_text="deploy key: AKIAABCDEFGHIJKLMNOP\n")),
        claude(2, memory_call("toolu_02", command="view", path="/memories/../../etc/passwd")),
        claude(3, {"type": "text", "text": "I will not store that."}, stop="end_turn"),
    ]
    with memdir.open(root) as md, ScriptedAPI(script) as api:
        client = anthropic.Anthropic(api_key="sk-test", base_url=api.url, max_retries=0)
        final = client.beta.messages.tool_runner(
            model="claude-test", max_tokens=256, tools=[MemdirMemoryTool(md)],
            messages=[{"role": "user", "content": "Save my deploy key."}],
        ).until_done()
        assert final.id == "msg_03"
        secret = api.requests[1]["body"]["messages"][-1]["content"][0]
        escape = api.requests[2]["body"]["messages"][-1]["content"][0]
        assert secret["is_error"] is True and secret["content"] == (
            "keys.md: line 1 contains what looks like an AWS access key id; memories must not hold credentials: "
            "remove it and note where the secret is kept instead"
        )
        assert escape["is_error"] is True and escape["content"] == "Path /memories/../../etc/passwd would escape /memories directory"
        assert md.list() == [] and md.history() == []


# ---------------------------------------------------------------- OpenAI Chat Completions


def gpt(n: int, *calls: tuple[str, str, dict[str, Any]], text: str | None = None) -> dict[str, Any]:
    """One Chat Completions reply, as the wire format has it."""
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = [
            {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
            for cid, name, args in calls
        ]
    return {
        "id": f"chatcmpl-{n}", "object": "chat.completion", "created": 1_700_000_000, "model": "gpt-test",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
    }


def test_openai_chat_loop_with_the_tool_set(root: Path) -> None:
    from memdir.faces import tools

    content = "---\nname: flock\ndescription: Flock launch plan\ntype: project\n---\nLaunch: 2026-12-15.\n"
    script = [
        gpt(1, ("call_1", "read_memory_index", {})),
        gpt(2, ("call_2", "write_memory_file", {"path": "project/flock.md", "content": content, "expected_version": None})),
        gpt(3, ("call_3", "edit_memory_file", {"path": "project/flock.md", "old": "2026-12-15", "new": "2027-01-10"}),
               ("call_4", "edit_memory_file", {"path": "project/flock.md", "old": "2030", "new": "2031"})),
        gpt(4, ("call_5", "search_memory", {"query": "when is the flock launch?", "k": None})),
        gpt(5, text="Flock now launches on 2027-01-10."),
    ]
    with memdir.open(root) as md, ScriptedAPI(script) as api:
        client = openai.OpenAI(api_key="sk-test", base_url=api.url + "/v1", max_retries=0)
        messages: list[Any] = [{"role": "system", "content": memdir.prompt()},
                               {"role": "user", "content": "The Flock launch moved to 2027-01-10."}]
        for _ in range(10):  # the loop any agent writes: call, run the tools, send the results back
            reply = client.chat.completions.create(model="gpt-test", messages=messages, tools=tools.openai_tools())
            message = reply.choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            if not message.tool_calls:
                break
            for call in message.tool_calls:
                result = tools.handle(md, call.function.name, call.function.arguments)  # type: ignore[union-attr]
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result.text})
        assert message.content == "Flock now launches on 2027-01-10."

        assert [r["path"] for r in api.requests] == ["/v1/chat/completions"] * 5
        assert api.requests[0]["body"]["tools"] == tools.openai_tools()
        assert api.requests[0]["headers"]["authorization"] == "Bearer sk-test"
        sent = api.requests[-1]["body"]["messages"]
        answers = {m["tool_call_id"]: m["content"] for m in sent if m["role"] == "tool"}
        assert list(answers) == ["call_1", "call_2", "call_3", "call_4", "call_5"]
        assert answers["call_1"].startswith("# Memory Index")
        version = md.history("project/flock.md")[1].new_version
        assert answers["call_2"].startswith(f"created project/flock.md: 8 lines (version {version}).")
        assert answers["call_3"].startswith("edited project/flock.md: 8 lines → 8 lines (version ")
        assert "does not contain '2030'" in answers["call_4"]
        assert answers["call_5"].startswith("- project/flock.md — Flock launch plan (line 8: Launch: 2027-01-10.)")

        got = md.read("project/flock.md")
        assert (got.name, got.type, got.body) == ("flock", "project", "Launch: 2027-01-10.\n")
        assert [r.op for r in md.history()] == ["write", "write"]
