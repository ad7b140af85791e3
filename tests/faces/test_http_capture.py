"""`POST /v1/sessions` under load: the rate token before the work, the transcript bounded before it is parsed,
and credentials of every shape the guard knows kept out of the record."""

from __future__ import annotations

from pathlib import Path

import pytest
from serving import Running, call

from memdir.faces import http
from memdir.remember import transcripts

TALK = "User: plan the launch of flock\nAssistant: the launch is on 2026-12-15\n"


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many transcripts capture parsed (the work a rate token should pay for)."""
    seen: list[int] = []
    real = transcripts.load

    def counted(source: object, **kw: object) -> transcripts.Transcript:
        seen.append(1)
        return real(source, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(transcripts, "load", counted)
    return seen


def test_a_capture_takes_its_rate_token_before_it_parses_the_transcript(root: Path, loads: list[int]) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / "memdir.toml").write_text("writes_per_minute = 1\n")
    with Running(root) as s:
        first = call("POST", f"{s.url}/v1/sessions", {"session_id": "s1", "transcript": TALK})
        assert first.status == 201, first.body
        second = call("POST", f"{s.url}/v1/sessions", {"session_id": "s2", "transcript": TALK * 500})
        assert second.status == 429 and second.error[0] == "RateLimited" and int(second.headers["retry-after"]) >= 1
        assert "sessions/: more than 1 writes per minute" in second.error[1]
    assert len(loads) == 1  # the refused one parsed nothing


@pytest.mark.parametrize("transcript, what", [
    ("User: hi\n" * (http.CAPTURE_LINES + 1), f"{http.CAPTURE_LINES + 1:,} lines"),
    ([{"role": "user", "content": "hi"}] * (http.CAPTURE_TURNS + 1), f"{http.CAPTURE_TURNS + 1:,} messages"),
])
def test_a_transcript_is_bounded_in_lines_and_messages_before_it_is_parsed(root: Path, loads: list[int],
                                                                           transcript: object, what: str) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / "memdir.toml").write_text("writes_per_minute = 1\n")
    with Running(root) as s:
        refused = call("POST", f"{s.url}/v1/sessions", {"session_id": "big", "transcript": transcript})
        assert refused.status == 413 and refused.error[0] == "LimitExceeded"
        assert refused.error[1].startswith(f"the transcript has {what}; a capture over HTTP takes at most")
        assert not loads
        done = call("POST", f"{s.url}/v1/sessions", {"session_id": "s1", "transcript": TALK})  # its token was not spent
        assert done.status == 201, done.body


def test_a_session_full_of_credentials_is_captured_without_one(root: Path) -> None:
    secrets = [
        "git clone https://deploy:" + "Zq8vN2kLp4rT@git.example.com/acme/app.git",
        "curl -H 'Authorization: Bearer " + "Ab3dEf6hIj9kLm2nOp5qRs8t' https://api.example.com",
        "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=" + "Xk2pQ9vL" * 11 + ";EndpointSuffix=core.windows.net",
        "export GITHUB_TOKEN=ghp_" + "a1B2c3D4e5" * 3 + "abcdef",
    ]
    lines = [f"User: step {i}: {secrets[i % len(secrets)]}\nAssistant: done with step {i}" for i in range(400)]
    with Running(root) as s:
        done = call("POST", f"{s.url}/v1/sessions", {"session_id": "keys", "transcript": "\n".join(lines)})
        assert done.status == 201, done.body
    kept = "".join(p.read_text() for p in (root / "sessions").rglob("*.md"))
    assert "[line removed: it held what looks like" in kept
    for secret in ("Zq8vN2kLp4rT", "Ab3dEf6hIj9kLm2nOp5qRs8t", "Xk2pQ9vL", "a1B2c3D4e5"):
        assert secret not in kept
