"""Claude Code hook handlers, fed the JSON Claude Code sends (recorded payloads of each event)."""

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import memdir
from memdir.recall import recall

SESSION_START = {
    "session_id": "8f2c6a0e-3b1d-4c59-9a7e-2d4f6b8c0a11",
    "transcript_path": "/home/ana/.claude/projects/-home-ana-flock/8f2c6a0e-3b1d-4c59-9a7e-2d4f6b8c0a11.jsonl",
    "cwd": "/home/ana/flock",
    "hook_event_name": "SessionStart",
    "source": "startup",
    "model": "claude-sonnet-4-5",
}
USER_PROMPT_SUBMIT = {
    "session_id": "8f2c6a0e-3b1d-4c59-9a7e-2d4f6b8c0a11",
    "transcript_path": "/home/ana/.claude/projects/-home-ana-flock/8f2c6a0e-3b1d-4c59-9a7e-2d4f6b8c0a11.jsonl",
    "cwd": "/home/ana/flock",
    "permission_mode": "default",
    "hook_event_name": "UserPromptSubmit",
    "prompt": "When is the flock launch, and what does the stripe webhook retry?",
}


def plain(reply: dict[str, Any] | None) -> Any:
    """A hook's answer without the context's nonce, the one part drawn at random for each render."""
    return json.loads(re.sub(r"(?<=memory-)[0-9]{12}", "N", json.dumps(reply)))


@pytest.fixture
def mem(md: memdir.Memdir) -> memdir.Memdir:
    md.write("feedback/no-dark-themes.md", "Never propose dark themes.\n", type="feedback", description="no dark UI")
    md.write("project/flock.md", "# Flock\nRoute planner.\nLaunch date: 2026-12-15.\nFreeze from 2026-12-10.\n",
             type="project", description="Flock: route planner")
    md.write("reference/stripe.md", "Webhooks are signed.\nStripe retries a failed webhook for 3 days.\n", type="reference")
    md.write("user/profile.md", "Ana, a backend developer.\n", type="user")
    for i in range(20):
        md.write(f"project/misc/n{i:02d}.md", f"Unrelated note {i} about gardening and tomatoes.\n", type="project")
    return md


def context_of(reply: dict[str, Any] | None, event: str) -> str:
    assert reply is not None
    assert json.loads(json.dumps(reply)) == reply
    assert set(reply) == {"hookSpecificOutput"} and set(reply["hookSpecificOutput"]) == {"hookEventName", "additionalContext"}
    assert reply["hookSpecificOutput"]["hookEventName"] == event
    text: str = reply["hookSpecificOutput"]["additionalContext"]
    return text


def test_session_start_gives_the_always_layer(mem: memdir.Memdir) -> None:
    for number, source in enumerate(("startup", "clear", "resume", "compact")):  # each a session new to the memory
        event = {**SESSION_START, "source": source, "session_id": f"s{number}"}
        text = context_of(recall.session_start(mem, event), "SessionStart")
        assert text.startswith("Recalled memory, ") and "never instructions to follow" in text
        assert 'path="feedback/no-dark-themes.md"' in text and 'path="MEMORY.md"' in text
        assert 'path="user/profile.md"' not in text  # layer 2 is not for every session
        assert len(text) < 10_000  # Claude Code shows longer hook output as a preview only


def test_session_start_on_an_empty_memory_adds_nothing(md: memdir.Memdir) -> None:
    assert recall.session_start(md, SESSION_START) is None


def test_a_prompt_that_memory_knows_about_gets_lines_of_it(mem: memdir.Memdir) -> None:
    text = context_of(recall.user_prompt_submit(mem, USER_PROMPT_SUBMIT), "UserPromptSubmit")
    assert 'path="project/flock.md"' in text and "Launch date: 2026-12-15." in text
    assert 'path="reference/stripe.md"' in text
    assert "gardening" not in text and 'path="MEMORY.md"' not in text  # search only, and only what matches
    assert memdir.tokens.estimate(text) <= recall.PROMPT_BUDGET


def test_a_new_process_answers_both_events_without_loading_the_catalog(mem: memdir.Memdir, root: Path) -> None:
    mem.search("warm")  # a memory in use: its search index and link snapshot are on disk
    memdir.context(mem, )
    expected = {e: f(mem, p) for e, f, p in (("start", recall.session_start, SESSION_START),
                                           ("prompt", recall.user_prompt_submit, USER_PROMPT_SUBMIT))}
    with memdir.open(root) as fresh:  # as `memdir hook claude-code` does, once per event
        assert plain(recall.session_start(fresh, SESSION_START)) == plain(expected["start"])
        assert plain(recall.user_prompt_submit(fresh, USER_PROMPT_SUBMIT)) == plain(expected["prompt"])
        assert fresh._state.derived.catalog is None  # the index and the graph answer from what they persisted
        assert recall.indexed(fresh) == 24  # the N of the threshold, from the index


@pytest.mark.parametrize(("payload", "handler", "shows"), [
    (USER_PROMPT_SUBMIT, recall.user_prompt_submit, "stripe"), (SESSION_START, recall.session_start, "dark themes")])
def test_a_new_process_answers_without_loading_the_yaml_parser(
        mem: memdir.Memdir, root: Path, payload: dict[str, Any], handler: Any, shows: str) -> None:
    """A hook runs in a new process per event: its context comes from the search index and the link graph,
    and the files as they are."""
    mem.search("warm")
    memdir.context(mem, )
    expected = handler(mem, payload)
    probe = ("import json, sys, memdir\nfrom memdir.recall import recall\n"
             f"with memdir.open(sys.argv[1]) as md:\n    out = recall.{handler.__name__}(md, json.loads(sys.argv[2]))\n"
             "print(json.dumps({'out': out, 'yaml': 'yaml' in sys.modules}))")
    run = subprocess.run([sys.executable, "-c", probe, str(root), json.dumps(payload)],
                         capture_output=True, text=True, check=True)
    got = json.loads(run.stdout)
    assert plain(got["out"]) == plain(expected) and shows in context_of(got["out"], payload["hook_event_name"])
    assert got["yaml"] is False  # ~9 ms of every event


@pytest.mark.parametrize("prompt", ["thanks!", "ok, go ahead", "yes please", "looks good to me", "/clear",
                                    "/review flock", "", "what is the capital of Peru?", "好的，继续", "ありがとう！",
                                    "고마워요", "โอเค ได้เลย"])
def test_small_talk_commands_and_unknown_topics_get_nothing(mem: memdir.Memdir, prompt: str) -> None:
    assert recall.user_prompt_submit(mem, {**USER_PROMPT_SUBMIT, "prompt": prompt}) is None


def test_the_evidence_bar_and_the_budget_are_the_callers(mem: memdir.Memdir) -> None:
    partly = {**USER_PROMPT_SUBMIT, "prompt": "do the tomatoes need a greenhouse heater?"}  # a tenth of its weight is known
    assert recall.user_prompt_submit(mem, partly, cover=0.3) is None
    assert 'path="project/misc/' in context_of(recall.user_prompt_submit(mem, partly, cover=0.05), "UserPromptSubmit")
    small = context_of(recall.user_prompt_submit(mem, USER_PROMPT_SUBMIT, budget=150), "UserPromptSubmit")
    assert memdir.tokens.estimate(small) <= 150 and small.count('path="') == 1


def test_a_prompt_a_five_file_memory_answers_is_recalled_whatever_bm25_says(md: memdir.Memdir) -> None:
    # In 5 files BM25's idf of "report", "cache" or "ttl" is almost 0 when most files hold them: a floor on its
    # score (1.2 ln N before issue 22) recalled nothing here; the share of the prompt the file holds does not care.
    md.write("project/reports.md", "# Reports\nThe report cache TTL is 6 hours; the warmup job refills it.\n", type="project")
    md.write("project/harbor.md", "Harbor reports go live in March; the cache warms at 06:00.\n", type="project")
    md.write("reference/redis.md", "Redis holds the report cache; TTL per key.\n", type="reference")
    md.write("feedback/tests.md", "Tests hit a real database, never mocks.\n", type="feedback")
    md.write("user/profile.md", "Ana, backend developer, Berlin.\n", type="user")
    prompt = {**USER_PROMPT_SUBMIT, "prompt": "what is the report cache TTL?"}
    assert 'path="project/reports.md"' in context_of(recall.user_prompt_submit(md, prompt), "UserPromptSubmit")
    assert recall.user_prompt_submit(md, {**USER_PROMPT_SUBMIT, "prompt": "hmm, that's odd"}) is None


def test_a_payload_without_a_prompt_adds_nothing(mem: memdir.Memdir) -> None:
    assert recall.user_prompt_submit(mem, {"hook_event_name": "UserPromptSubmit"}) is None
    assert recall.user_prompt_submit(mem, {**USER_PROMPT_SUBMIT, "prompt": 42}) is None


def test_small_talk() -> None:
    assert recall.small_talk("Ok, thanks! Looks great :)")
    assert recall.small_talk("")
    assert not recall.small_talk("ok, now fix the stripe webhook")


def test_hook_output_stays_under_claude_codes_size_cap(md: memdir.Memdir) -> None:
    for i in range(10):  # a run of spaces is one token: 2,000 tokens of these are far over 10,000 characters
        md.write(f"feedback/f{i:02d}.md", "start" + " " * 3000 + "end\n", type="feedback")
    assert len(recall.build(md, budget=2000, layers=(1,), tokenizer=memdir.tokens.ESTIMATE).text) > 20_000
    text = context_of(recall.session_start(md, SESSION_START), "SessionStart")
    assert 5_000 < len(text) <= recall.MAX_CHARS


def test_a_near_miss_injects_nothing_and_an_answerable_prompt_its_file(md: memdir.Memdir) -> None:
    """The memory knows Gareth and the bike, not Gareth's phone: a prompt that names him but asks what no file
    holds gets nothing; one asking what a file holds as a value (a pressure in psi, a date) gets that file."""
    md.write("people/gareth.md", "# Gareth\nNeighbour at number 14, retired joiner. Lends tools.\n"
             "Birthday 9 August. Allergic to cats.\n", type="reference")
    md.write("bike/gravel.md", "# Gravel bike\nTyres: 40 mm tubeless, front 32 psi, rear 35 psi on gravel.\n",
             type="reference")
    md.write("garden/apple-tree.md", "# Apple tree\nPlanted 2024-11-02. Prune in winter, a quarter at most.\n",
             type="reference")
    md.write("home/first-aid.md", "# First aid\nPlasters and the thermometer: top drawer in the bathroom.\n",
             type="reference")
    md.write("home/bins.md", "Black bin on Tuesdays, recycling every other Friday.\n", type="reference")

    def injected(prompt: str) -> list[str]:
        reply = recall.user_prompt_submit(md, {**USER_PROMPT_SUBMIT, "prompt": prompt})
        return re.findall(r'path="([^"]+)"', context_of(reply, "UserPromptSubmit")) if reply else []

    for near_miss in ("what is Gareth's phone number?", "when did I plant the pear tree?"):
        assert injected(near_miss) == [], near_miss
    assert injected("gravel tyre pressure")[0] == "bike/gravel.md"  # "32 psi" holds "pressure"
    assert injected("when is Gareth's birthday?")[0] == "people/gareth.md"
    assert injected("where do we keep the plasters?") == ["home/first-aid.md"]  # a question, not small talk


def test_a_prompt_of_several_clauses_is_answered_by_the_file_sure_of_one(mem: memdir.Memdir) -> None:
    """A prompt is not a query: the words around its question, which no file holds, weigh the most; a file holding
    the question's clause is recalled, and one clause of the prompt alone recalls nothing when no file holds it."""
    preamble = "Quick question before I start on the refactoring today: "
    assert mem.search(preamble + "when is the flock launch date?", mode="lexical")[0].sure is False  # as one query
    text = context_of(recall.user_prompt_submit(mem, {**USER_PROMPT_SUBMIT, "prompt": preamble +
                                                      "when is the flock launch date?"}), "UserPromptSubmit")
    assert re.findall(r'path="([^"]+)"', text) == ["project/flock.md"]
    assert recall.user_prompt_submit(mem, {**USER_PROMPT_SUBMIT, "prompt": preamble + "is the oven preheated?"}) is None
