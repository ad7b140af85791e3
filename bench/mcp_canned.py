"""A stand-in MCP server for bench/mcp.py: each answer is a fixed line recorded from memdir, so what is timed is the client.

    python bench/mcp_canned.py answers.json

The answers file maps a method (or, for tools/call, the tool's name) to the
`result` memdir gave; this server only swaps in the request's id. A call
through the SDK client to it costs the client, the pipe and one json.loads and
json.dumps: the floor under any stdio server.
"""

import json
import sys


def main() -> None:
    with open(sys.argv[1]) as f:
        answers = json.load(f)
    out = sys.stdout
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message:
            continue
        params = message.get("params") or {}
        result = answers.get(params.get("name") if message["method"] == "tools/call" else message["method"])
        if result is None:
            reply = {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "Method not found"}}
        else:
            reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        out.write(json.dumps(reply, ensure_ascii=False, separators=(",", ":")) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
