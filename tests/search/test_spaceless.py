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
from memdir.search.fts import FORM
from memdir.search.lexical import Doc
from memdir.search.pg import PgIndex
from memdir.search.text import grams, parse, spaceless_weights
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


def test_a_spaceless_run_is_indexed_as_its_pairs_and_asked_for_pair_by_pair() -> None:
    assert grams("走行距離は12km") == " 走行 行距 距離 離は は 12km"
    assert grams("Routes and 鮭") == "Routes and  鮭 "  # one character stays itself
    assert terms("走行距離") == ["走行", "行距", "距離"]
    assert terms("由美さんの献立") == ["由美", "美さ", "の献", "献立"]  # pairs of kana alone (さん, んの) are grammar
    assert terms("配送センター routes") == ["配送", "送セ", "セン", "ンタ", "ター", "routes"]
    assert terms("ひらがな") == ["ひら", "らが", "がな"]  # a query of kana alone keeps them
    assert match_expression(["走行距離", "鮭", "routes"]) == '"走行 行距 距離" OR "鮭" * OR "rout"'  # stems


def test_a_query_typed_as_a_sentence_is_cut_at_its_function_words() -> None:
    assert parse("因子状态机的转移规则").pieces == ("因子状态机", "转移规则")
    assert parse("港股通的手续费是多少").pieces == ("港股通", "手续费是")  # 的 and 多少 name no topic
    assert parse("줄바꿈은 어떻게 처리해?").pieces == ("줄바꿈", "처리")  # particle and ending off; 어떻게 is no topic
    assert parse("환경변수에 줄바꿈이").pieces == ("환경변수", "줄바꿈")
    assert parse("사이").pieces == ("사이",)  # a word of two syllables keeps its last
    assert parse("Glacier로 옮겨").words[:1] == ("glacier",) and "로" not in parse("Glacier로 옮겨").words
    assert parse("ค่าเช่าคอนโดเดือนละเท่าไหร่").pieces == ("ค่าเช่าคอนโดเดือนละ",)  # Thai: the question word goes
    assert terms("ขูดหินปูน") == ["ขูด", "ูดห", "ดหิ", "หิน", "ินป", "นปู", "ปูน"]  # Thai letters in threes


def test_a_pair_no_file_holds_is_a_seam_unless_a_whole_stretch_is_missing() -> None:
    def weights(query: str, held: set[str]) -> dict[str, float]:
        return spaceless_weights(parse(query), {w: 1 for w in held}, lambda n: 1.0 if n else 2.0)

    # 机的 went with 的; 态机 and 转移 are held, so nothing is missing: the seams weigh nothing
    assert weights("因子状态机的转移规则", {"因子", "子状", "状态", "态机", "转移", "移规", "规则"}) == dict.fromkeys(
        ["因子", "子状", "状态", "态机", "转移", "移规", "规则"], 1.0)
    got = weights("回测手续费和滑点", {"回测", "手续", "续费", "滑点"})
    assert got["测手"] == got["费和"] == got["和滑"] == 0.0 and got["回测"] == 1.0  # seams between held words
    got = weights("港股通的手续费", {"手续", "续费"})
    assert got["港股"] == got["股通"] == 2.0 and got["手续"] == 1.0  # a word the memory lacks weighs most
    assert weights("転入届はいつ", {"転入", "入届"}).get("届は") == 0.0  # a particle's seam


def test_a_sentence_finds_the_file_holding_its_words_and_nothing_when_its_topic_is_missing(backend: Backend) -> None:
    with backend.open() as md:
        md.write("project_factor-state-machine.md", "---\nname: 因子状态机\ndescription: 状态之间的转移规则\n---\n"
                 "候选因子在样本外IC连续20个交易日大于0.03才能进入观察。状态由状态机管理。\n")
        md.write("reference_backtest.md", "---\nname: 回测设置\ndescription: 手续费和滑点\n---\n手续费万分之二点五，滑点千分之一。\n")
        md.write("feedback_newline.md", "---\nname: 환경변수 줄바꿈\ndescription: echo로 넣으면 줄바꿈이 붙는다\n---\n"
                 "값 뒤에 줄바꿈 문자까지 같이 저장된다.\n")
        md.write("rent.md", "# ค่าเช่าคอนโด\n\nค่าเช่าเดือนละ 12,500 บาท จ่ายทุกวันที่ 5\n")
        md.write("english.md", "Routes are planned every Monday.\n")
        assert [h.path for h in md.search("因子状态机的转移规则")][:1] == ["project_factor-state-machine.md"]
        assert [h.path for h in md.search("回测手续费和滑点怎么设置")][:1] == ["reference_backtest.md"]
        assert [h.path for h in md.search("줄바꿈은 왜 생겨?")][:1] == ["feedback_newline.md"]
        assert [h.path for h in md.search("환경변수에 줄바꿈이 들어가는 이유")][:1] == ["feedback_newline.md"]
        assert [h.path for h in md.search("ค่าเช่าคอนโดเดือนละเท่าไหร่")][:1] == ["rent.md"]
        for missing in ("港股通的手续费是多少",  # holds 手续费, not 港股通
                        "期货策略的保证金比例", "ค่าส่วนกลางคอนโดเท่าไหร่"):  # the condo, not its common fee
            assert not [h for h in md.search(missing, mode="lexical") if h.sure], missing


def test_how_many_of_something_is_held_by_a_count_of_it_not_by_its_name(tmp_path: Path) -> None:
    with memdir.open(tmp_path / "m") as md:
        md.write("fsm.md", "---\nname: 因子状态机\ndescription: 因子库的状态\n---\n因子库里的每个因子都处在四个状态之一，连续20个交易日观察，一个因子下线后不再进入候选。\n")
        md.write("team.md", "---\nname: 团队\ndescription: 谁负责什么\n---\n老周负责数据库和服务器。\n")
        assert parse("因子库一共有多少个因子").counts == ("因子",) and "个因" not in parse("因子库一共有多少个因子").words
        assert not [h for h in md.search("因子库一共有多少个因子", mode="lexical") if h.sure]  # 每个因子 counts none
        md.write("fsm.md", "---\nname: 因子状态机\ndescription: 因子库的状态\n---\n因子库现在有 120 个因子。\n")
        assert [h.path for h in md.search("因子库一共有多少个因子", mode="lexical") if h.sure] == ["fsm.md"]


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
        assert [h.path for h in md.search("距離走行") if h.sure] == ["work/routes.md"]  # both words, in another order
        assert not [h for h in md.search("行走離距") if h.sure]  # the same characters, no word of them
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
    (new,) = [r[0] for r in db.execute(f"SELECT name FROM sqlite_master WHERE name LIKE 'search_docs_{FORM}_%' "
                                        "AND sql LIKE 'CREATE VIRTUAL TABLE%'")]
    old = new.replace(f"_{FORM}_", "_fts2_")
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
        # the search schema before 0007 (the journal's own migrations after it stay: today's writes need them)
        m.setattr(pg_store, "MIGRATIONS", [x for x in pg_store.MIGRATIONS
                                           if x[0] not in ("0007_search_spaceless", "0008_search_names",
                                                           "0010_search_stems")])
        m.setattr(PgIndex, "apply", _apply_before_0007)  # and the rows memdir wrote into it then
        migrate(admin, grant="memdir_app")
        with memdir.open(app, tenant="t") as md:
            _write_notes(md)
            assert md.search("走行距離") == []  # one English lexeme for the whole run
            assert [h.path for h in md.search("Monday") if h.sure] == ["english.md"]
    assert migrate(admin).applied == ("0007_search_spaceless", "0008_search_names", "0010_search_stems")
    with memdir.open(app, tenant="t") as md:
        assert [h.path for h in md.search("走行距離") if h.sure] == ["work/routes.md"]
        assert [h.path for h in md.search("Monday") if h.sure] == ["english.md"]
