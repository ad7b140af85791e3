import pytest

from memdir.guard import find_secret

FAKE = {
    "a private key block": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaA==\n-----END OPENSSH PRIVATE KEY-----",
    "an AWS access key id": "aws key AKIA" + "IOSFODNN7EXAMPLE",
    "a GitHub token": "token ghp_" + "a" * 36,
    "a Slack token": "xoxb-" + "1234567890-abcdefghij",
    "a Stripe live key": "sk_live_" + "a1b2c3d4e5f6g7h8i9j0k1",
    "a Google API key": "AIza" + "Sy" + "A" * 33,
    "an Anthropic API key": "sk-ant-api03-" + "x" * 50,
    "an OpenAI API key": "sk-proj-" + "y" * 48,
}


@pytest.mark.parametrize("kind, text", sorted(FAKE.items()))
def test_credentials_are_found_with_their_line(kind: str, text: str) -> None:
    assert find_secret("first line\n" + text) == (kind, 2)


@pytest.mark.parametrize(
    "text",
    [
        "the deploy key lives in 1Password under 'prod deploy'",
        "commit 3f786850e387550fdab836ed7e6dc881de23001b",
        "AKIA is the prefix of AWS access keys",
        "sk_test_" + "a" * 24,
        "uuid 123e4567-e89b-12d3-a456-426614174000",
    ],
)
def test_ordinary_text_passes(text: str) -> None:
    assert find_secret(text) is None
