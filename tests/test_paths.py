import pytest

from memdir import InvalidPath
from memdir.paths import ancestors, folder, lines, topic_path


@pytest.mark.parametrize(
    "raw, normal",
    [
        ("notes.md", "notes.md"),
        ("project/flock.md", "project/flock.md"),
        ("./project//flock.md", "project/flock.md"),
        ("people/alice/health.md", "people/alice/health.md"),
        ("café/résumé.md", "café/résumé.md"),
        ("cafe\u0301.md", "cafe\u0301.md"),  # a name keeps its bytes: macOS writes NFD
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


@pytest.mark.parametrize(
    "char",
    ["\u0085", "\u2028", "\u2029", "\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068",
     "\u2069", "\u200e", "\u200f", "\u061c", "\x80", "\x9b", "\x9f", "\x1b", "\x7f"],
)
def test_characters_that_forge_lines_or_reorder_text_are_refused(char: str) -> None:
    with pytest.raises(InvalidPath, match=f"control character \\(U\\+{ord(char):04X}\\)") as err:
        topic_path(f"notes/a{char}b.md")
    assert "\n" not in str(err.value)
    with pytest.raises(InvalidPath):
        folder(f"notes{char}")


@pytest.mark.parametrize("raw", ["MEMORY.md/x.md", "notes/MEMORY.md/x.md", "memory.md/x.md", "a/Memory.Md/b.md",
                                 "memory.md", "notes/mEmOrY.md", "tenants/acme/x.md", "TENANTS/x.md"])
def test_index_names_in_any_case_and_the_tenants_folder_are_reserved(raw: str) -> None:
    with pytest.raises(InvalidPath):
        topic_path(raw)


def test_lines_split_on_newlines_only() -> None:
    assert lines("a\u2028b\x0cc\x85d\re\nf\r\ng\n") == ["a\u2028b\x0cc\x85d\re", "f", "g"]
    assert lines("") == [] and lines("x") == ["x"] and lines("\n") == [""]
