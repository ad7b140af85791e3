"""bench/locomo.py speaks the LoCoMo external-retriever protocol (a smoke test on a tiny conversation)."""

import json
import os
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "bench" / "locomo.py"

TURNS = [
    {"id": "D1:1", "session": 1, "date": "1:56 pm on 8 May, 2023", "speaker": "Caroline", "text": "I went to a support group yesterday."},
    {"id": "D1:2", "session": 1, "date": "1:56 pm on 8 May, 2023", "speaker": "Melanie", "text": "How was it?"},
    {"id": "D2:1", "session": 2, "date": "7:00 pm on 20 May, 2023", "speaker": "Melanie", "text": "We painted a sunrise.",
     "image_caption": "a painting of a lake at sunrise"},
    {"id": "D2:2", "session": 2, "date": "7:00 pm on 20 May, 2023", "speaker": "Caroline", "text": "Lovely colours!"},
]


def test_ingest_then_answer_turn_and_session_queries(tmp_path: Path) -> None:
    (tmp_path / "conv-1.jsonl").write_text("".join(json.dumps({"conv_id": "conv-1", **t}) + "\n" for t in TURNS))
    env = {**os.environ, "LOCOMO_INGEST_DIR": str(tmp_path)}
    subprocess.run([sys.executable, str(SCRIPT), "ingest"], env=env, check=True, capture_output=True)
    asks = [
        {"conv_id": "conv-1", "query": "What did Melanie paint?", "k": 2, "unit": "turn"},
        {"conv_id": "conv-1", "query": "support group", "k": 5, "unit": "session"},
    ]
    out = subprocess.run([sys.executable, str(SCRIPT), "serve"], env=env, check=True, capture_output=True, text=True,
                         input="".join(json.dumps(a) + "\n" for a in asks))
    first, second = (json.loads(line) for line in out.stdout.splitlines())
    assert first["ids"][0] == "D2:1" and len(first["ids"]) <= 2
    assert second["ids"][0] == "D1"
    assert (tmp_path / "memdir" / "tenants" / "conv1" / "conv-1" / "session-02" / "D2-1.md").exists()
    said = (tmp_path / "memdir" / "tenants" / "conv1" / "conv-1" / "session-01" / "D1-1.md").read_text()
    assert said.endswith("Caroline: I went to a support group yesterday.")  # as said, not dated by the day of the run


def test_hybrid_mode_embeds_at_ingest_and_answers_with_the_local_model(tmp_path: Path) -> None:
    (tmp_path / "conv-1.jsonl").write_text("".join(json.dumps({"conv_id": "conv-1", **t}) + "\n" for t in TURNS))
    env = {**os.environ, "LOCOMO_INGEST_DIR": str(tmp_path)}
    subprocess.run([sys.executable, str(SCRIPT), "ingest", "--mode", "hybrid"], env=env, check=True, capture_output=True)
    assert (tmp_path / "memdir" / "tenants" / "conv1" / ".memdir" / "vectors.sqlite3").is_file()
    ask = {"conv_id": "conv-1", "query": "When did Melanie paint a sunrise?", "k": 2, "unit": "turn"}
    out = subprocess.run([sys.executable, str(SCRIPT), "serve", "--mode", "hybrid"], env=env, check=True,
                         capture_output=True, text=True, input=json.dumps(ask) + "\n")
    assert json.loads(out.stdout)["ids"][0] == "D2:1"
    assert "chunks embedded while serving 0" in out.stderr  # everything was embedded at ingest
    text = (tmp_path / "memdir" / "tenants" / "conv1" / "conv-1" / "session-02" / "D2-1.md").read_text()
    assert "created: 2023-05-20T19:00:00Z" in text
