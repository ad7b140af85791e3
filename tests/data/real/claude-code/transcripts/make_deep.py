"""Writes -home-dana-src-tern/fd1e6b22-4a90-4c3e-9b17-58e2d0c6a3f1.jsonl, the transcript with one line nested
deeper than 1,000 levels.

The session: Dana asks why the flow importer crashes on a decision tree exported from the old bot builder.
The assistant calls an MCP tool that returns the tree as structured JSON, so the tool_result's
`toolUseResult` is a chain of DEPTH `{"id", "say", "next": [...]}` nodes, each the only child of the one
before (the export flattened a long questionnaire into a linked list): DEPTH objects inside DEPTH - 1
lists, about 2,400 levels of JSON nesting. The other lines are ordinary.

Run from anywhere: `python3 make_deep.py` rewrites the file byte for byte; tests/test_real_corpus.py
checks that the checked-in file is what this script writes.
"""

from __future__ import annotations

import json
from pathlib import Path

DEPTH = 1200
SESSION = "fd1e6b22-4a90-4c3e-9b17-58e2d0c6a3f1"
TARGET = Path(__file__).resolve().parent / "-home-dana-src-tern" / f"{SESSION}.jsonl"
PLACEHOLDER = "@@FLOW@@"
HEAD = {"isSidechain": False, "userType": "external", "cwd": "/home/dana/src/tern", "sessionId": SESSION,
        "version": "2.1.31", "gitBranch": "fix/flow-import"}


def flow_json() -> str:
    """The flow tree as JSON text, built as text: json.dumps itself cannot encode something this deep."""
    opening = "".join(f'{{"id":"q{i}","say":"Question {i}","next":[' for i in range(1, DEPTH))
    leaf = f'{{"id":"q{DEPTH}","say":"Thanks, a colleague will email you within one working day.","next":[]}}'
    return opening + leaf + "]}" * (DEPTH - 1)


def records() -> list[dict]:
    u = [f"6c1f0a2e-0000-4000-8000-{i:012d}" for i in range(1, 9)]
    tool_id = "toolu_01DeepFlowExportZ9qY2wL4"
    return [
        {"parentUuid": None, **HEAD, "type": "user",
         "message": {"role": "user", "content": "tern's flow importer dies with RecursionError on the returns questionnaire Sam exported from the old builder (flow id ret-2019). can you fetch it with the flowstudio tool and see what's wrong?"},
         "uuid": u[0], "timestamp": "2026-04-09T09:14:02.117Z", "permissionMode": "default"},
        {"parentUuid": u[0], **HEAD, "type": "assistant",
         "message": {"model": "claude-sonnet-4-5-20250929", "id": "msg_01DeepFlowA1", "type": "message", "role": "assistant",
                     "content": [{"type": "tool_use", "id": tool_id, "name": "mcp__flowstudio__get_flow", "input": {"flow_id": "ret-2019", "format": "tree"}}],
                     "stop_reason": None, "stop_sequence": None,
                     "usage": {"input_tokens": 4, "cache_creation_input_tokens": 911, "cache_read_input_tokens": 14020, "output_tokens": 61, "service_tier": "standard"}},
         "requestId": "req_011CDeepFlowRequest01", "uuid": u[1], "timestamp": "2026-04-09T09:14:06.530Z"},
        {"parentUuid": u[1], **HEAD, "type": "user",
         "message": {"role": "user", "content": [{"tool_use_id": tool_id, "type": "tool_result",
                                                  "content": [{"type": "text", "text": f"Flow ret-2019: {DEPTH} nodes, depth {DEPTH} (returned as structured content)"}]}]},
         "uuid": u[2], "timestamp": "2026-04-09T09:14:08.902Z", "toolUseResult": [{"type": "flow", "flow": PLACEHOLDER}]},
        {"parentUuid": u[2], **HEAD, "type": "assistant",
         "message": {"model": "claude-sonnet-4-5-20250929", "id": "msg_01DeepFlowA2", "type": "message", "role": "assistant",
                     "content": [{"type": "text", "text": f"The export is not a tree with branches: it is a chain of {DEPTH} nodes, each with exactly one `next`. The old builder wrote every answer of the questionnaire as a child of the previous one. `tern.flows.load` walks `next` recursively, so it needs one Python frame per node and passes the default recursion limit (1,000) at node ~990.\n\nTwo fixes, and I'd do both: make the loader iterative (a stack instead of recursion), and flatten chains like this one on import into a list of steps."}],
                     "stop_reason": "end_turn", "stop_sequence": None,
                     "usage": {"input_tokens": 6, "cache_creation_input_tokens": 2204, "cache_read_input_tokens": 14931, "output_tokens": 212, "service_tier": "standard"}},
         "requestId": "req_011CDeepFlowRequest02", "uuid": u[3], "timestamp": "2026-04-09T09:14:19.448Z"},
        {"parentUuid": u[3], **HEAD, "type": "user",
         "message": {"role": "user", "content": "make the loader iterative, leave the flattening for later"},
         "uuid": u[4], "timestamp": "2026-04-09T09:15:40.006Z", "permissionMode": "default"},
    ]


def render() -> bytes:
    text = "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in records())
    return text.replace(json.dumps(PLACEHOLDER), flow_json()).encode("utf-8")


if __name__ == "__main__":
    TARGET.write_bytes(render())
    print(f"wrote {TARGET} ({TARGET.stat().st_size} bytes)")
