import pytest

from memdir import InvalidPath
from memdir.paths import ancestors, folder, topic_path


@pytest.mark.parametrize(
    "raw, normal",
    [
        ("notes.md", "notes.md"),
        ("project/flock.md", "project/flock.md"),
        ("./project//flock.md", "project/flock.md"),
        ("people/alice/health.md", "people/alice/health.md"),
        ("café/résumé.md", "café/résumé.md"),
        ("cafe\u0301.md", "café.md"),  # NFC: one spelling per name
    ],
)
def test_accepted_paths_are_normalised(raw: str, normal: str) -> None:
    assert topic_path(raw) == normal


@pytest.mark.parametrize(
    "raw, says",
    [
        ("../etc/passwd.md", "'..'"),
        ("project/../../x.md", "'..'"),
        ("/etc/x.md", "absolute"),
        ("C:/x.md", "absolute"),
        ("~/x.md", "'~'"),
        ("project\\x.md", "backslash"),
        ("bad\x00name.md", "control character"),
        ("bad\nname.md", "control character"),
        ("notes.txt", "markdown"),
        ("notes", "markdown"),
        ("MEMORY.md", "generated index"),
        ("project/MEMORY.md", "generated index"),
        (".memdir/memdir.md", "hidden"),
        ("project/.hidden.md", "hidden"),
        ("", "empty"),
        ("./", "empty"),
        (" lead.md", "spaces"),
        ("a/" * 600 + "x.md", "bytes"),
        ("x" * 300 + ".md", "255 bytes"),
    ],
)
def test_refused_paths_say_why(raw: str, says: str) -> None:
    with pytest.raises(InvalidPath) as err:
        topic_path(raw)
    assert says in str(err.value)
    assert "\n" not in str(err.value)


def test_non_string_path_is_refused() -> None:
    with pytest.raises(InvalidPath, match="must be a string"):
        topic_path(3)


def test_folders_and_ancestors() -> None:
    assert folder("") == ""
    assert folder("project") == "project/"
    assert folder("./a//b/") == "a/b/"
    with pytest.raises(InvalidPath):
        folder("../a")
    assert ancestors("a/b/c.md") == ["", "a/", "a/b/"]
    assert ancestors("c.md") == [""]
