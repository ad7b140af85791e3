"""A corpus of ordinary notes for the secret guard's false-positive check (tests/test_guard.py).

`technical(n)` writes notes of the kind an agent keeps about software work,
full of things that look random but are not credentials: SHA-256 and SHA-1
hashes, git SHAs, UUIDs, base64 blobs (wrapped or not), ARNs, image digests,
URLs with query strings, database URLs without a password, config lines that
name passwords and tokens without holding one. `conversations()` turns the
LoCoMo dialogues (when the file is on this machine) into one note per session.
Both are deterministic.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import random
import uuid
from pathlib import Path

LOCOMO_PLACES = [
    Path(os.environ.get("MEMDIR_LOCOMO", "/nonexistent")),
    Path(__file__).resolve().parents[2] / "shared" / "bench" / "locomo-dev.json",
    Path(__file__).resolve().parents[3] / "shared" / "bench" / "locomo-dev.json",
    Path("/work/shared/bench/locomo-dev.json"),
]


SSH_HEAD = b"\x00\x00\x00\x0bssh-ed25519"


def _lines(rng: random.Random) -> list[str]:
    blob = rng.randbytes(rng.randint(24, 700))
    wrapped = base64.b64encode(blob).decode()
    sha = hashlib.sha256(blob).hexdigest()
    git = hashlib.sha1(blob).hexdigest()
    uid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    day = f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
    word = rng.choice(["flock", "atlas", "billing", "search", "ingest", "auth", "gateway", "reports"])
    return [
        f"Deployed {word} {git[:7]} ({git}) to staging on {day}.",
        f"Release artifact checksum (sha256): {sha}",
        f"SHA256 fingerprint of the host key: SHA256:{base64.b64encode(hashlib.sha256(blob[:9]).digest()).decode().rstrip('=')}",
        f"Request id {uid} failed with 502; retried fine.",
        f"Image digest: registry.example.com/{word}@sha256:{sha}",
        f"Attachment (base64, {len(blob)} bytes):",
        *[wrapped[i : i + 76] for i in range(0, len(wrapped), 76)],
        f"Inline blob: data:application/octet-stream;base64,{base64.urlsafe_b64encode(blob[:90]).decode()}",
        f"Role arn:aws:iam::{rng.randint(10**11, 10**12 - 1)}:role/{word}-deploy in us-east-1.",
        f"s3://{word}-artifacts/{day}/{uid}.tar.gz",
        f"Docs: https://docs.example.com/{word}/api?page={rng.randint(1, 9)}&limit=50#{git[:8]}",
        f"Connect with `psql postgres://app@db-{word}.internal:5432/{word}` (the password is in the team vault).",
        "DATABASE_URL=postgres://app:${DB_PASSWORD}@db.internal/app",
        "Example from the docs: mysql://user:password@localhost/db (replace user and password).",
        f"max_tokens: {rng.choice([1024, 4096, 8192])} and a token budget of {rng.randint(10, 200)}k tokens.",
        "The password policy requires 12 characters; rotate the API key every 90 days.",
        "api_key: os.environ['SERVICE_API_KEY']",
        "password = getpass.getpass()",
        f"Secret santa draw on {day}; budget 30 EUR.",
        f"ETag \"{hashlib.md5(blob).hexdigest()}\", version id {uid.replace('-', '')}.",
        f"ULID {base64.b32encode(blob[:16]).decode().rstrip('=')[:26]}, nanoid {base64.urlsafe_b64encode(blob[:16]).decode()[:21]}",
        f"Slack thread: https://acme.slack.com/archives/C0{rng.randint(10**6, 10**7)}/p{rng.randint(10**15, 10**16)}",
        f"`def digest(x): return hashlib.sha256(x).hexdigest()`  # e.g. {sha[:16]}",
        f"Public key: ssh-ed25519 {base64.b64encode(SSH_HEAD + blob[:32]).decode()} me@laptop",
        f"Commit {git} fixes #{rng.randint(1, 999)}; merged in {git[:12]}.",
        f"credential.helper=store; token_type: bearer; tokens_per_minute = {rng.randint(1000, 90000)}",
        f"AWS_REGION=us-east-1 AWS_PROFILE={word}",
        f"{{\"id\": \"{uid}\", \"hash\": \"{sha}\", \"b64\": \"{wrapped[:60]}\"}}",
    ]


def technical(n: int, seed: int = 7) -> list[str]:
    """n notes of software work, each a random selection of the lines above."""
    rng = random.Random(seed)
    notes = []
    for i in range(n):
        lines = _lines(rng)
        rng.shuffle(lines)
        notes.append(f"# Work log {i}\n\n" + "\n".join(lines[: rng.randint(6, len(lines))]) + "\n")
    return notes


def locomo_file() -> Path | None:
    return next((p for p in LOCOMO_PLACES if p.is_file()), None)


def conversations(path: Path) -> list[str]:
    """One note per LoCoMo session: the date, then each turn as '- speaker: text'; plus the summaries."""
    notes = []
    for sample in json.loads(path.read_text(encoding="utf-8")):
        conv = sample["conversation"]
        for key, turns in conv.items():
            if not key.startswith("session_") or not isinstance(turns, list):
                continue
            lines = [f"# {key} ({conv.get(key + '_date_time', '')})"]
            lines += [f"- {t['speaker']}: {t['text']}" + (f" [{t['blip_caption']}]" if t.get("blip_caption") else "")
                      for t in turns]
            notes.append("\n".join(lines) + "\n")
        for part in ("event_summary", "observation", "session_summary"):
            notes.append(json.dumps(sample.get(part, {}), ensure_ascii=False, indent=1))
    return notes
