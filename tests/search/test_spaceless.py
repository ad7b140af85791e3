"""Words of scripts written without spaces (Japanese, Chinese, Thai, Korean) are found, on every backend."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Iterable
from pathlib import Path

import psycopg
import pytest
from conftest import Backend
from services import Postgres

import memdir
from memdir.search import match_expression, terms
from memdir.search.lexical import Doc
from memdir.search.pg import PgIndex
from memdir.search.text import grams
from memdir.stores import postgres as pg_store
from memdir.stores.locations import migrate

VAULT = Path(__file__).parents[1] / "data" / "real" / "obsidian" / "ja" / "はるとのノート"

ROUTES = """# ルート最適化

配送センターから各店舗までの走行距離を毎週記録する。
先月の走行距離は合計1,240km。
"""
MENU = """# 今週の献立

月曜は鮭の塩焼き、火曜は昆布だしの味噌汁。由美さんは魚が好き。
"""
CHINESE = """# 学习计划

每天学中文三十分钟。下个月去台北，要学会点菜。
"""
WEATHER = """# 天気のメモ

今日は雨だった。明日は晴れるらしい。
"""


def _write_notes(md: memdir.Memdir) -> None:
    md.write("work/routes.md", ROUTES)
    md.write("cooking/menu.md", MENU, tags=["料理"])
    md.write("chinese/plan.md", CHINESE)
    md.write("diary/weather.md", WEATHER)
    md.write("english.md", "Routes are planned every Monday.\n")


def test_a_spaceless_run_is_indexed_as_its_pairs_and_asked_for_as_a_phrase() -> None:
    assert grams("走行距離は12km") == " 走行 行距 距離 離は は 12km"
    assert grams("Routes and 鮭") == "Routes and  鮭 "  # one character stays itself
    assert terms("走行距離") == ["走行距離"]
    assert terms("由美さんの献立") == ["由美さんの献立", "由美", "献立"]  # a sentence: its kanji, kana dropped
    assert terms("配送センター routes") == ["配送センター", "配送", "センター", "routes"]
    assert match_expression(["走行距離", "鮭", "routes"]) == '"走行 行距 距離" OR "鮭" * OR "routes"'


def test_japanese_and_chinese_words_are_found_on_every_backend(backend: Backend) -> None:
    with backend.open() as md:
        _write_notes(md)
        for query, path in [("走行距離", "work/routes.md"), ("配送センター", "work/routes.md"),
                            ("鮭", "cooking/menu.md"), ("昆布", "cooking/menu.md"), ("由美さん", "cooking/menu.md"),
                            ("料理", "cooking/menu.md"), ("点菜", "chinese/plan.md"), ("学中文", "chinese/plan.md"),
                            ("台北", "chinese/plan.md")]:
            found = md.search(query)
            assert [h.path for h in found][:1] == [path], query
        assert [h.path for h in md.search("planned routes")][:1] == ["english.md"]  # English is stemmed as before


def test_a_spaceless_query_matches_only_notes_that_hold_it(backend: Backend) -> None:
    with backend.open() as md:
        _write_notes(md)
        assert [h.path for h in md.search("走行距離") if h.sure] == ["work/routes.md"]
        assert [h.path for h in md.search("距離走行")] == []  # the same characters in another order
        assert [h.path for h in md.search("鮭")] == ["cooking/menu.md"]
        assert md.search("地震") == []  # no note holds it, though every Japanese note holds kanji
        hit = md.search("走行距離")[0]  # line 3 of the body, under the 4 lines of the stamps
        assert (hit.line, hit.snippet) == (7, "配送センターから各店舗までの走行距離を毎週記録する。")


def test_the_japanese_vault_finds_every_word_that_is_in_it(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(VAULT, vault)
    with memdir.open(vault) as md:
        for word in ("走行距離", "鮭", "昆布", "由美さん", "配送センター", "点菜", "学中文", "献立", "出汁", "台北"):
            holding = {str(p.relative_to(vault)) for p in vault.rglob("*.md") if word in p.read_text(encoding="utf-8")}
            found = [h.path for h in md.search(word, k=50)]
            assert set(found[: len(holding)]) == holding, word  # first; after them, notes that hold a part of it


def test_an_index_of_the_older_form_is_rebuilt_on_open(root: Path) -> None:
    with memdir.open(root) as md:
        _write_notes(md)
        assert md.search("走行距離")
    db = sqlite3.connect(root / ".memdir" / "memdir.db")
    (new,) = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE name LIKE 'search_docs_fts2_%' "
                                        "AND sql LIKE 'CREATE VIRTUAL TABLE%'")]
    old = new.replace("_fts2_", "_fts_")
    db.execute(f"DROP TABLE {new}")  # what an older memdir left: its own table, the rows and the seq they reflect
    db.execute(f"CREATE VIRTUAL TABLE {old} USING fts5(name, description, tags, body, content='', "
               "tokenize='porter unicode61')")
    db.execute(f"INSERT INTO {old}(rowid, name, description, tags, body) SELECT id, name, description, tags, "
               "substr(text, body_at + 1) FROM search_docs")
    db.commit()
    db.close()
    with memdir.open(root) as md:
        assert [h.path for h in md.search("走行距離") if h.sure] == ["work/routes.md"]
        assert [h.path for h in md.search("Monday") if h.sure] == ["english.md"]
    db = sqlite3.connect(root / ".memdir" / "memdir.db")
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    db.close()
    assert old not in tables and new in tables


def _apply_before_0007(self: PgIndex, since: int, seq: int, removed: Iterable[str], docs: Iterable[Doc]) -> bool:
    """`PgIndex.apply` as it was before the character pairs (new and changed files only)."""
    with self._writing():
        if self.seq() != since:
            return False
        for d in docs:
            self._rows("DELETE FROM memdir_search WHERE tenant_id = ? AND path = ?", self.tenant, d.path)
            self._rows("INSERT INTO memdir_search(tenant_id, path, version, name, description, tags, type, updated, "
                       "head, body_at, text) VALUES (?,?,?,?,?,?,?,?,?,?,?)", self.tenant, d.path, d.version, d.name,
                       d.description, d.tags, d.type, d.updated, d.head, d.body_at, d.text)
        self._rows("INSERT INTO memdir_state(tenant_id, key, value) VALUES (?, 'search_seq', ?) "
                   "ON CONFLICT (tenant_id, key) DO UPDATE SET value = excluded.value", self.tenant, str(seq))
    return True


def test_a_postgres_index_of_the_older_form_is_rebuilt_after_migrate(postgres: Postgres,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    with psycopg.connect(postgres.admin_url, autocommit=True) as conn:
        conn.execute("DROP DATABASE IF EXISTS spaceless")
        conn.execute("CREATE DATABASE spaceless")
    admin, app = postgres.url("memdir_admin", "spaceless"), postgres.url("memdir_app", "spaceless")
    with monkeypatch.context() as m:
        m.setattr(pg_store, "MIGRATIONS", pg_store.MIGRATIONS[:6])  # the schema before 0007
        m.setattr(PgIndex, "apply", _apply_before_0007)  # and the rows memdir wrote into it then
        migrate(admin, grant="memdir_app")
        with memdir.open(app, tenant="t") as md:
            _write_notes(md)
            assert md.search("走行距離") == []  # one English lexeme for the whole run
            assert [h.path for h in md.search("Monday") if h.sure] == ["english.md"]
    assert migrate(admin).applied == ("0007_search_spaceless",)
    with memdir.open(app, tenant="t") as md:
        assert [h.path for h in md.search("走行距離") if h.sure] == ["work/routes.md"]
        assert [h.path for h in md.search("Monday") if h.sure] == ["english.md"]
