"""bench/corpora.py runs LoCoMo and REALTALK side by side: each shape read as written, scored by the protocol."""

import json
import subprocess
import sys
from pathlib import Path

import benchscript
import pytest

BENCH = benchscript.BENCH
corpora = benchscript.load("corpora")

needs_protocol = pytest.mark.skipif(not corpora.PROTOCOL.is_file(), reason="the LoCoMo protocol script is not here")


def turn(dia: str, speaker: str, text: str, when: str, **more: object) -> dict[str, object]:
    """A turn as REALTALK writes one (clean_text, the message's own time, image lists)."""
    return {"clean_text": text, "speaker": speaker, "date_time": when, "img_file": [], "img_url": [], "dia_id": dia,
            **more}


# Two short chats in REALTALK's shape, written for this test (lower case and typing as people text).
CHATS = {
    "Chat_1_Ann_bob.json": {
        "name": {"speaker_1": "Ann", "speaker_2": "bob"},
        "session_1_date_time": "29.12.2023, 22:42:04",
        "session_1": [
            turn("D1:1", "Ann", "heyy how was ur weekend", "29.12.2023, 22:42:04"),
            turn("D1:2", "bob", "went climbing at the gorge w my cousin lol", "29.12.2023, 22:43:10"),
            turn("D1:3", "Ann", "omg jealous, i only baked sourdough", "29.12.2023, 22:44:00",
                 blip_caption="a loaf of bread on a wooden board"),
        ],
        "events_session_1": {},
        "session_2_date_time": "03.01.2024, 09:05:00",
        "session_2": [
            turn("D2:1", "bob", "my cousin moved to lisbon yesterday", "03.01.2024, 09:05:00"),
            turn("D2:2", "Ann", "no way, portugal is lovely", "03.01.2024, 09:06:30"),
        ],
        "qa": [
            {"question": "Where did Bob go climbing?", "answer": "the gorge", "evidence": ["D1:2"], "category": 1},
            {"question": "When did Bob's cousin move to Lisbon?", "answer": "2 January 2024",
             "evidence": ["D2:1."], "category": 2},
            {"question": "What did Ann bake?", "answer": "sourdough", "evidence": ["D1:3"], "category": 3},
        ],
    },
    "Chat_2_Cy_Dee.json": {
        "name": {"speaker_1": "Cy", "speaker_2": "Dee"},
        "session_1_date_time": "28.12.2023, 20:01:56",
        "session_1": [
            turn("D1:1", "Cy", "started learning the cello this week", "28.12.2023, 20:01:56"),
            turn("D1:2", "Dee", "nice!! which teacher", "28.12.2023, 20:02:40"),
            turn("D1:3", "Cy", "a retired violinist from the conservatory", "28.12.2023, 20:03:12"),
        ],
        "qa": [{"question": "What instrument is Cy learning?", "answer": "cello", "evidence": ["D1:1"], "category": 1}],
    },
}

# One conversation in LoCoMo's own shape, written for this test.
LOCOMO = [{
    "sample_id": "conv-1",
    "conversation": {
        "speaker_a": "Caroline", "speaker_b": "Melanie",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [{"speaker": "Caroline", "dia_id": "D1:1", "text": "I went to a support group yesterday."},
                      {"speaker": "Melanie", "dia_id": "D1:2", "text": "How was it?"}],
        "session_2_date_time": "7:00 pm on 20 May, 2023",
        "session_2": [{"speaker": "Melanie", "dia_id": "D2:1", "text": "We painted a sunrise.",
                       "blip_caption": "a painting of a lake at sunrise"}],
    },
    "qa": [{"question": "What did Melanie paint?", "answer": "a sunrise", "evidence": ["D2:1"], "category": 4},
           {"question": "Did Caroline paint the lake?", "adversarial_answer": "no", "evidence": ["D2:1"],
            "category": 5}],
}]


def write_chats(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, chat in CHATS.items():
        (folder / name).write_text(json.dumps(chat))
    (folder / "locomo").mkdir(exist_ok=True)  # REALTALK ships LoCoMo beside its chats: never read as a chat
    (folder / "locomo" / "Chat_1_Caroline_Melanie.json").write_text("{}")
    return folder


def test_a_realtalk_chat_becomes_a_locomo_sample() -> None:
    sample = corpora.to_locomo("Chat_1_Ann_bob", CHATS["Chat_1_Ann_bob.json"])
    assert sample["sample_id"] == "chat-1"
    conv = sample["conversation"]
    assert (conv["speaker_a"], conv["speaker_b"]) == ("Ann", "bob")
    assert conv["session_1"][2] == {"speaker": "Ann", "dia_id": "D1:3", "text": "omg jealous, i only baked sourdough",
                                    "blip_caption": "a loaf of bread on a wooden board"}
    assert conv["session_2_date_time"] == "03.01.2024, 09:05:00"
    assert "events_session_1" not in conv and sample["qa"][1]["evidence"] == ["D2:1."]
    assert corpora.locomo_bench.session_stamp(conv["session_2_date_time"]) == "2024-01-03T09:05:00Z"
    assert corpora.locomo_bench.title("bob", conv["session_1_date_time"]) == "bob, 29 December 2023"


def test_chats_are_read_from_a_checkout_its_data_folder_or_a_bare_mirror(tmp_path: Path) -> None:
    checkout = tmp_path / "REALTALK"
    write_chats(checkout / "data")
    want = ["Chat_1_Ann_bob", "Chat_2_Cy_Dee"]
    assert [s for s, _ in corpora.realtalk_chats(checkout)] == want
    assert [s for s, _ in corpora.realtalk_chats(checkout / "data")] == want
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-C", str(checkout)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "chats"], check=True)
    subprocess.run(["git", "clone", "-q", "--bare", str(checkout), str(tmp_path / "mirror")], check=True)
    chats = corpora.realtalk_chats(tmp_path / "mirror")
    assert [s for s, _ in chats] == want and chats[1][1]["qa"] == CHATS["Chat_2_Cy_Dee.json"]["qa"]
    with pytest.raises(SystemExit, match="git clone https://github.com/danny911kr/REALTALK"):
        corpora.realtalk_chats(tmp_path)


@needs_protocol
def test_both_corpora_side_by_side_with_bm25_in_one_run(tmp_path: Path) -> None:
    chats = write_chats(tmp_path / "chats")
    (tmp_path / "locomo.json").write_text(json.dumps(LOCOMO))
    work = tmp_path / "work"
    out = subprocess.run([sys.executable, str(BENCH / "corpora.py"), "--realtalk", str(chats),
                          "--locomo", str(tmp_path / "locomo.json"), "--work", str(work), "--ablate"],
                         check=True, capture_output=True, text=True).stdout
    rows: dict[tuple[str, ...], str] = {}
    for line in out.splitlines():  # the main table's rows (the first with these two cells)
        if line.startswith("| "):
            rows.setdefault(tuple(c.strip() for c in line.strip("|").split("|")[:2]), line)
    def cells(corpus: str, method: str) -> list[str]:
        return [c.strip() for c in rows[(corpus, method)].strip("|").split("|")][2:5]  # n, R@5, R@10

    # Every question finds its turn with BM25 and with memdir's ranking: R@5 = R@10 = 1, "What instrument is Cy
    # learning?" too, though no turn says "instrument" (no bar inside the ranking drops it).
    for corpus, n in (("locomo", "1"), ("realtalk", "4")):
        assert cells(corpus, "bm25") == cells(corpus, "lexical") == [n, "1.000", "1.000"]
    assert ("locomo", "lexical [cat5]") in rows and ("realtalk", "lexical [cat5]") not in rows
    assert "| realtalk | chat-1 | 3 | 1.000 | 1.000 | +0.000 |" in out
    assert "| realtalk | chat-2 | 1 | 1.000 | 1.000 | +0.000 |" in out
    assert "lexical trails bm25 on: locomo 0 of 1, realtalk 0 of 2 conversations" in out
    assert "| no neighbours (lexical) | 1.000 | +0.000 | 1.000 | +0.000 | neutral |" in out  # the ablation table
    # The memories are under --work, one tenant per conversation, one file per turn; nothing of the chats elsewhere.
    assert (work / "realtalk" / "tenants" / "chat1" / "chat-1" / "session-02" / "D2-1.md").is_file()
    assert "created: 2024-01-03T09:05:00Z" in (work / "realtalk" / "tenants" / "chat1" / "chat-1" / "session-02"
                                             / "D2-1.md").read_text()


def test_each_conversation_is_asked_the_others_questions_in_its_own_speakers_names() -> None:
    convs = [corpora.to_locomo(name[:-5], chat) for name, chat in CHATS.items()]
    loaded = [{"conv_id": c["sample_id"], "qas": [{"question": q["question"], "category": q["category"],
                                                  "gold": q["evidence"]} for q in c["qa"]],
               "turns": [t | {"conv_id": c["sample_id"]} for n in (1, 2) for t in c["conversation"].get(f"session_{n}", [])]}
              for c in convs]
    asked = corpora.strangers(loaded, per=5)  # the first to speak in one stands for the first in the other
    assert sorted(asked["chat-2"]) == ["What did Cy bake?", "When did Dee's cousin move to Lisbon?",
                                       "Where did Dee go climbing?"]  # Ann -> Cy, bob -> Dee
    assert asked["chat-1"] == ["What instrument is Ann learning?"]  # never its own questions
