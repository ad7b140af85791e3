"""What redacting credentials costs: the secret guard's one pass, and a capture over HTTP full of them.

    python bench/redact.py                       # 1,000 and 4,000 credential lines, and a 1 MB POST /v1/sessions
    python bench/redact.py --lines 1000 --session-mb 0.25 --timeout 60

Prints one table: for each text, its size, the credentials in it, and the seconds
`transcripts.redact` takes (the capture's redaction of one turn), and the seconds
one `POST /v1/sessions` of a session whose one long turn pastes such lines takes
end to end (a server in this process on loopback). A case that runs past `--timeout` is shown as
"> timeout" (the redaction that looped once per secret took about an hour for the
1 MB session). Not a test: run it, read it, paste it.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))


def credential_lines(n: int) -> str:
    """n lines of about 28 bytes, each an AWS access key id (the review's shape)."""
    return "".join(f"k{i % 1000:03d} AKIA{i:016d}\n" for i in range(n))


def session(megabytes: float) -> str:
    """A plain-text session of about `megabytes`: one user turn pasting an environment's keys (every other line a
    credential), the assistant's answer, within the HTTP capture's bounds."""
    lines, size, i = ["User: deploy with these settings:"], 0, 0
    while size < megabytes * 2**20 - 4096:  # the body's JSON around it stays within the server's 1 MB
        line = f"AWS_ACCESS_KEY_ID=AKIA{i:016d} GITHUB_TOKEN=ghp_{i:036d}" if i % 2 else f"STEP_{i}=deploy-stage-{i}"
        lines.append(line)
        size += len(line) + 2  # its line break is two bytes in the JSON body
        i += 1
    return "\n".join([*lines, "Assistant: deployed; the pipeline is green"]) + "\n"


def within(seconds: float, fn: Callable[[], object]) -> float | None:
    """Seconds `fn` took, or None when it ran past `seconds` (it is left running in a daemon thread)."""
    done: list[float] = []

    def run() -> None:
        start = time.perf_counter()
        fn()
        done.append(time.perf_counter() - start)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    return done[0] if done else None


def post_session(text: str, timeout: float) -> float | None:
    """One POST /v1/sessions of `text` to a server on loopback in this process."""
    import uvicorn

    from memdir.faces import http
    from memdir.faces.auth import Memories, Principal, Principals

    root = tempfile.mkdtemp(prefix="memdir-bench-redact-")
    memories = Memories(root, transport="http", watch=False)
    app = http.build(Principals(Principal("default")), memories, host="127.0.0.1")
    sock = http.listen("127.0.0.1", 0)
    server = uvicorn.Server(http.config(app, log_level="warning"))
    threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True).start()
    while not server.started:
        time.sleep(0.01)
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/v1/sessions"
    body = json.dumps({"session_id": "bench", "transcript": text}).encode()

    def send() -> None:
        request = urllib.request.Request(url, data=body, method="POST", headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=timeout + 60) as r:
            answer = json.loads(r.read())
            assert answer["status"] in ("captured", "skipped"), answer

    return within(timeout, send)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--lines", type=int, nargs="+", default=[1000, 4000], help="credential lines per text")
    parser.add_argument("--session-mb", type=float, default=1.0, help="the size of the session POSTed (0: none)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds a case may take before it is cut off")
    args = parser.parse_args()

    from memdir.remember import transcripts

    print(f"{'case':<38} {'bytes':>10} {'secret lines':>12} {'seconds':>10}")
    for n in args.lines:
        text = credential_lines(n)
        took = within(args.timeout, lambda text=text: transcripts.redact(text))
        shown = f"{took:.3f}" if took is not None else f"> {args.timeout:.0f}"
        print(f"{f'redact: {n:,} credential lines':<38} {len(text):>10,} {n:>12,} {shown:>10}")
    if args.session_mb:
        text = session(args.session_mb)
        secrets = text.count("AKIA")
        took = post_session(text, args.timeout)
        shown = f"{took:.3f}" if took is not None else f"> {args.timeout:.0f}"
        print(f"{f'POST /v1/sessions: {args.session_mb:g} MB session':<38} {len(text.encode()):>10,} {secrets:>12,} {shown:>10}")


if __name__ == "__main__":
    main()
