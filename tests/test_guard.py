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


# ---------------------------------------------------------------- what the review found missing


import guard_corpus  # noqa: E402

from memdir import InvalidMemory  # noqa: E402
from memdir.guard import check  # noqa: E402

AWS_ID = "AKIA" + "IOSFODNN7EXAMPLE"
SECRETS = {
    "aws secret access key": "aws_secret_access_key = " + "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "aws secret in yaml": "AWS_SECRET_ACCESS_KEY: \"" + "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY" + "\"",
    "jwt": "Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." + "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvZSJ9."
           + "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    "slack webhook": "https://hooks.slack.com/services/" + "T0AB12CDE/B0FG34HIJ/abcdEFGHijklMNOPqrstUVWX",
    "postgres url": "DATABASE_URL=postgres://app:" + "Sup3r-s3cret@db.internal:5432/app",
    "mongodb url": "mongodb+srv://admin:" + "hunter2hunter2@cluster0.example.net/prod",
    "zero-width inside a key": "key AKIA\u200b" + "IOSFODNN7\u200dEXAMPLE",
    "fullwidth key": "key " + "".join(chr(ord(c) + 0xFEE0) for c in AWS_ID),
    "line break inside a key": "key " + AWS_ID[:9] + "\n" + AWS_ID[9:] + " rest",
    "line break inside a token": "ghp_" + "a" * 20 + "\n  " + "b" * 16,
    "soft hyphen inside a key": "key " + AWS_ID[:6] + "\u00ad" + AWS_ID[6:],
    "password assignment": "db password: Tr0ub4dor&3x",
    "env token": "GITHUB_TOKEN=ab12cd34ef56gh78",
}


@pytest.mark.parametrize("text", SECRETS.values(), ids=SECRETS.keys())
def test_the_review_s_secrets_are_caught(text: str) -> None:
    assert find_secret(f"An ordinary first line.\n{text}\n") is not None


def test_a_secret_in_the_path_is_refused_before_it_reaches_the_index(md) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InvalidMemory, match="the path contains what looks like an AWS access key id") as e:
        md.write(f"keys/{AWS_ID}.md", "where the key is used\n")
    assert AWS_ID not in e.value.message and e.value.path is None
    md.write("keys/aws.md", "where the key is used\n")
    with pytest.raises(InvalidMemory, match="the path contains"):
        md.rename("keys/aws.md", f"keys/{AWS_ID}.md")
    assert AWS_ID not in md.index() and [e.path for e in md.list()] == ["keys/aws.md"]


def test_a_secret_in_frontmatter_is_refused_even_when_yaml_hides_it(md) -> None:  # type: ignore[no-untyped-def]
    hidden = "AKIA\ufeff" + "IOSFODNN7EXAMPLE"  # YAML writes the BOM as an escape, "\uFEFF": only the value shows it
    with pytest.raises(InvalidMemory, match="frontmatter field 'description' contains what looks like an AWS access key id"):
        md.write("a.md", "body\n", description=f"uses {hidden}")
    with pytest.raises(InvalidMemory, match="frontmatter line 3 contains what looks like a GitHub token"):
        md.write("b.md", "---\ndeploy:\n  token: ghp_" + "c" * 36 + "\n---\nbody\n")
    with pytest.raises(InvalidMemory, match="frontmatter field 'deploy.token' contains what looks like a GitHub token"):
        md.write("b.md", '---\ndeploy:\n  token: "ghp_\\uFEFF' + "c" * 36 + '"\n---\nbody\n')
    folded = "---\nnotes: |\n  key AKIAIOSFOD\n  NN7EXAMPLE\n---\nbody\n"
    with pytest.raises(InvalidMemory, match="looks like an AWS access key id"):
        md.write("c.md", folded)
    assert md.list() == []


def test_check_names_the_line_as_the_writer_sees_it() -> None:
    text = "---\ndescription: x\n---\nfirst\n" + SECRETS["jwt"] + "\n"
    with pytest.raises(InvalidMemory, match=r"a\.md: line 2 contains what looks like a JSON Web Token"):
        check(text, "a.md", head_lines=3)


def test_false_positives_are_rare_on_ordinary_technical_notes() -> None:
    notes = guard_corpus.technical(2000)
    flagged = [(n, find_secret(n)) for n in notes if find_secret(n) is not None]
    assert flagged == [], flagged[:3]
    # the same notes with one real secret each are all caught
    secrets = list(SECRETS.values())
    assert all(find_secret(n + secrets[i % len(secrets)] + "\n") for i, n in enumerate(notes[:400]))


def test_false_positives_are_rare_on_conversations() -> None:
    path = guard_corpus.locomo_file()
    if path is None:
        pytest.skip("the LoCoMo file is not on this machine (set MEMDIR_LOCOMO); the technical corpus still runs")
    notes = guard_corpus.conversations(path)
    flagged = [n[:80] for n in notes if find_secret(n) is not None]
    assert len(notes) > 100 and flagged == []
