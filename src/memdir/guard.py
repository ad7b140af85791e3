"""The secret guard: refuse writes that carry a high-confidence credential.

Only formats with a distinctive shape are checked (a fixed prefix and length),
so ordinary prose, hashes and ids do not trip it.
"""

from __future__ import annotations

import re

from .errors import InvalidMemory

_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(rx))
    for kind, rx in (
        ("a private key block", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"),
        ("an AWS access key id", r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b"),
        ("a GitHub token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{60,255})\b"),
        ("a GitLab token", r"\bglpat-[A-Za-z0-9_-]{20,}\b"),
        ("a Slack token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b"),
        ("a Stripe live key", r"\b(?:sk|rk)_live_[A-Za-z0-9]{20,}\b"),
        ("a Google API key", r"\bAIza[0-9A-Za-z_-]{35}\b"),
        ("an Anthropic API key", r"\bsk-ant-[a-z0-9]+-[A-Za-z0-9_-]{40,}"),
        ("an OpenAI API key", r"\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}|\bsk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}\b"),
        ("an npm token", r"\bnpm_[A-Za-z0-9]{36}\b"),
        ("a SendGrid API key", r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}\b"),
        ("a Hugging Face token", r"\bhf_[A-Za-z]{34}\b"),
    )
)


def find_secret(text: str) -> tuple[str, int] | None:
    """(kind, line number) of the first credential in `text`, or None."""
    for kind, rx in _PATTERNS:
        m = rx.search(text)
        if m:
            return kind, text.count("\n", 0, m.start()) + 1
    return None


def check(text: str, path: str, *, head_lines: int = 0) -> None:
    """Refuse `text` if it holds a credential; `head_lines` is the frontmatter's length.

    Lines are counted as the writer sees them: within the frontmatter, or within
    the body (whose numbering does not depend on the frontmatter memdir renders).
    """
    found = find_secret(text)
    if found:
        kind, line = found
        where = f"frontmatter line {line}" if line <= head_lines else f"line {line - head_lines}"
        raise InvalidMemory(
            f"{path}: {where} contains what looks like {kind}; memories must not hold credentials: "
            "remove it and note where the secret is kept instead",
            path=path,
        )
