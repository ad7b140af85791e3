from pathlib import Path

import pytest

import memdir
from memdir import InvalidArgument, LimitExceeded
from memdir.core.limits import Limits, load
from memdir.stores.base import take_token


def test_defaults() -> None:
    limits = load(None, {}, {})
    assert limits == Limits()
    assert (limits.max_lines, limits.max_bytes, limits.index_max_lines, limits.writes_per_minute) == (200, 25600, 200, 0)


def test_precedence_keyword_then_environment_then_file(tmp_path: Path) -> None:
    (tmp_path / "memdir.toml").write_text("max_lines = 50\nmax_bytes = 1000\nwrites_per_minute = 5\n")
    limits = load(tmp_path, {"max_lines": 10}, {"MEMDIR_MAX_LINES": "20", "MEMDIR_MAX_BYTES": "2000"})
    assert (limits.max_lines, limits.max_bytes, limits.writes_per_minute) == (10, 2000, 5)


def test_types_and_flags_from_environment() -> None:
    limits = load(None, {}, {"MEMDIR_TYPES": "note, task", "MEMDIR_SECRET_GUARD": "off"})
    assert limits.types == ("note", "task")
    assert limits.secret_guard is False


@pytest.mark.parametrize(
    "toml, says",
    [
        ("max_line = 3\n", "unknown setting 'max_line'"),
        ("max_lines = 'many'\n", "max_lines = 'many' is not valid"),
        ("max_lines = -1\n", "not valid"),
        ("max_lines = [\n", "not valid TOML"),
    ],
)
def test_bad_settings_file_says_what_to_fix(tmp_path: Path, toml: str, says: str) -> None:
    (tmp_path / "memdir.toml").write_text(toml)
    with pytest.raises(InvalidArgument, match=says.replace("[", r"\[")):
        load(tmp_path, {}, {})


def test_bad_environment_and_keyword_values() -> None:
    with pytest.raises(InvalidArgument, match="MEMDIR_WRITES_PER_MINUTE"):
        load(None, {}, {"MEMDIR_WRITES_PER_MINUTE": "lots"})
    with pytest.raises(InvalidArgument, match="unknown option 'max_linez'"):
        load(None, {"max_linez": 3}, {})


def test_open_reads_memdir_toml(root: Path) -> None:
    root.mkdir()
    (root / "memdir.toml").write_text("max_lines = 8\n")
    with memdir.open(root, agent=True) as md:
        md.write("a.md", "1\n2\n3\n4\n5\n6\n7\n8\n")  # memdir's 4 lines of stamps do not count
        with pytest.raises(LimitExceeded, match="has 9 lines; the limit is 8"):
            md.write("a.md", "1\n2\n3\n4\n5\n6\n7\n8\n9\n")


def test_token_bucket_refills_over_time() -> None:
    state, wait = take_token(None, 2, 0.0)
    state, wait = take_token(state, 2, 0.0)
    assert wait == 0.0
    state, wait = take_token(state, 2, 0.0)
    assert wait == pytest.approx(30.0)  # one token a 30 s at 2 a minute
    state, wait = take_token(state, 2, 30.0)
    assert wait == 0.0
    _, wait = take_token(state, 2, 10.0)  # a host whose clock lags mints nothing
    assert wait == pytest.approx(30.0)
