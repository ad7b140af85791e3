"""Running memdir as a service: health and readiness, Prometheus metrics, a bounded set of open memories, workers."""

from __future__ import annotations

import os
import re
import shutil
import signal
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psycopg
import pytest
from services import Postgres
from serving import Served, Threaded, call

from memdir import MemdirError
from memdir.faces import asgi
from memdir.faces.auth import MAX_OPEN, Memories, Principal, Throttle
from memdir.faces.settings import Settings
from memdir.remember.diary import rollup
from memdir.stores import postgres as pg_store
from memdir.stores.locations import ping_location

TOKEN = "an-operator-token-long-enough"


class Ops(Threaded):
    """The app `memdir serve --http` runs (asgi.build), on a loopback socket in a thread."""

    def __init__(self, settings: Settings, memories: Memories | None = None) -> None:
        self.app, self.memories = asgi.build(settings, memories)
        self.serve(self.app)


def metric(text: str, name: str, **labels: str) -> float:
    """The value of one sample of a Prometheus text exposition (0 if absent)."""
    for line in text.splitlines():
        if line.startswith(name + "{") or line.startswith(name + " "):
            found = dict(re.findall(r'(\w+)="([^"]*)"', line.split("}")[0])) if "{" in line else {}
            if all(found.get(k) == v for k, v in labels.items()):
                return float(line.rsplit(" ", 1)[1])
    return 0.0


def workers(url: str, want: int = 2, without: int | None = None) -> set[int]:
    """The pids of the worker processes answering at `url` (they start after the banner: asked until `want`
    answer, none of them `without`, a worker that was killed and may still answer what it had accepted)."""
    pids: set[int] = set()
    deadline = time.monotonic() + 90
    while len(pids - {without}) < want and time.monotonic() < deadline:
        try:
            reply = call("GET", f"{url}/healthz")
        except OSError:
            continue
        if reply.status == 200:
            pids.add(reply.json["pid"])
    return pids - {without}


def ready(url: str, token: str | None = None) -> None:
    """Asked until it answers 200: workers start after the banner (a request sent before waits in the socket's
    backlog, and may time out while they import)."""
    deadline = time.monotonic() + 300
    while True:
        try:
            if call("GET", url, token=token).status == 200:
                return
        except OSError:
            pass
        assert time.monotonic() < deadline, f"{url} never answered"


def test_health_and_readiness_need_no_token_and_metrics_do(tmp_path: Path) -> None:
    with Ops(Settings(root=str(tmp_path / "memory"), token=TOKEN)) as s:
        health = call("GET", f"{s.url}/healthz")
        assert health.status == 200 and health.json == {"status": "ok"}  # no pid: anyone may ask
        ready = call("GET", f"{s.url}/readyz")
        assert ready.status == 200 and ready.json == {"status": "ready"}
        assert call("GET", f"{s.url}/metrics").status == 401
        assert call("PUT", f"{s.url}/v1/files/a.md", {"body": "one"}, token=TOKEN).status == 201
        assert call("PUT", f"{s.url}/v1/files/a.md", {"body": "two"}, token=TOKEN,
                    headers={"If-Match": '"stale"'}).status == 412
        assert call("GET", f"{s.url}/v1/files/missing.md", token=TOKEN).status == 404
        scraped = call("GET", f"{s.url}/metrics", token=TOKEN)
        assert scraped.status == 200 and scraped.headers["content-type"].startswith("text/plain; version=0.0.4")
        text = scraped.text
    assert metric(text, "memdir_requests_total", route="/v1/files", method="PUT", status="201") == 1
    assert metric(text, "memdir_requests_total", route="/v1/files", method="PUT", status="412") == 1
    assert metric(text, "memdir_requests_total", route="/metrics", method="GET", status="401") == 1
    assert metric(text, "memdir_requests_total", route="/healthz", method="GET", status="200") == 1
    assert metric(text, "memdir_writes_total", route="/v1/files") == 1
    assert metric(text, "memdir_refusals_total", reason="Unauthorized") == 1
    assert metric(text, "memdir_refusals_total", reason="Conflict") == 1
    assert metric(text, "memdir_refusals_total", reason="NotFound") == 1
    assert metric(text, "memdir_request_seconds_count", route="/v1/files", method="PUT") == 2
    assert metric(text, "memdir_open_memories") == 1
    assert "missing.md" not in text  # routes are labels of few values, never paths


def test_capture_health_is_in_the_metrics_without_a_tenant_label(tmp_path: Path) -> None:
    """What an operator alerts on: captures by outcome, roll-ups by outcome, when each last succeeded."""
    conversation = [{"role": "user", "content": "Remember that the flock launch moved to 2026-12-15."},
                    {"role": "assistant", "content": "Noted: the flock launch is on 2026-12-15."}]
    with Ops(Settings(root=str(tmp_path / "memory"), token=TOKEN)) as s:
        before = time.time()
        done = call("POST", f"{s.url}/v1/sessions", {"session_id": "chat-1", "transcript": conversation}, token=TOKEN)
        assert done.status == 201 and done.json["status"] == "captured", done.json
        assert done.json["path"].startswith("sessions/") and done.json["path"].endswith("-chat-1.md")
        empty = call("POST", f"{s.url}/v1/sessions", {"session_id": "chat-2", "transcript": ""}, token=TOKEN)
        assert empty.status == 201 and empty.json["status"] == "skipped", empty.json  # a trace under sessions/skipped/
        bad = call("POST", f"{s.url}/v1/sessions", {"session_id": "chat-3"}, token=TOKEN)
        assert bad.status == 400 and "the body needs transcript" in bad.error[1]
        md = s.memories.of(Principal("default"))
        assert md.read(done.json["path"]).meta["type"] == "session"
        rollup(md, due=True)  # a roll-up the server's process runs (nothing is due yet: today is still open)
        text = call("GET", f"{s.url}/metrics", token=TOKEN).text
    assert metric(text, "memdir_captures_total", status="captured") == 1
    assert metric(text, "memdir_captures_total", status="skipped") == 1
    assert metric(text, "memdir_captures_total", status="failed") == 0  # a refused request is no failed capture
    assert metric(text, "memdir_rollups_total", outcome="ok") == 1
    assert before <= metric(text, "memdir_last_capture_timestamp_seconds") <= time.time()
    assert metric(text, "memdir_last_rollup_timestamp_seconds") >= before
    assert metric(text, "memdir_requests_total", route="/v1/sessions", method="POST", status="201") == 2
    assert "chat-1" not in text and "tenant" not in text  # no session, path or tenant in a label


def test_metrics_of_any_worker_report_the_whole_server(tmp_path: Path) -> None:
    """`serve --workers 2`: every scrape, whichever worker answers it, counts the requests both served."""
    private = tmp_path / "tmp"  # the server's own temporary folder: another suite running beside this one has its own
    private.mkdir()
    with Served(tmp_path / "memory", "--workers", "2", env={"TMPDIR": str(private)}) as s:
        assert len(workers(s.url)) == 2
        for i in range(12):
            assert call("PUT", f"{s.url}/v1/files/n{i}.md", {"body": f"note {i}"}).status == 201
        deadline = time.monotonic() + 10
        while metric(call("GET", f"{s.url}/metrics").text, "memdir_writes_total", route="/v1/files") < 12:
            assert time.monotonic() < deadline, "the writes of one worker are missing from the other's metrics"
            time.sleep(0.1)
        for _ in range(6):  # whichever worker answers
            text = call("GET", f"{s.url}/metrics").text
            assert metric(text, "memdir_writes_total", route="/v1/files") == 12
            assert metric(text, "memdir_open_memories_max") == 2 * MAX_OPEN  # the two live workers' gauges, summed
            # each live worker that served a write holds the memory (one uvicorn restarted after a missed health
            # check holds none yet)
            assert 1 <= metric(text, "memdir_open_memories") <= 2
    assert list(private.iterdir()) == []  # serve removed its samples' folder and its workers' shared one


def test_a_killed_worker_leaves_the_live_sum(tmp_path: Path) -> None:
    """uvicorn kills a worker that misses its health check and starts another: the dead one's gauges go."""
    with Served(tmp_path / "memory", "--workers", "2") as s:
        first = workers(s.url)
        assert len(first) == 2
        most = metric(call("GET", f"{s.url}/metrics").text, "memdir_open_memories_max")
        assert most > 0 and most % 2 == 0  # each live worker keeps at most most/2
        os.kill(min(first), signal.SIGKILL)
        now = workers(s.url, want=2, without=min(first))
        assert len(now) == 2 and min(first) not in now
        for _ in range(4):  # whichever worker answers
            assert metric(call("GET", f"{s.url}/metrics").text, "memdir_open_memories_max") == most


def test_readiness_fails_when_the_store_is_gone(tmp_path: Path) -> None:
    with Ops(Settings(root=str(tmp_path / "memory"))) as s:
        shutil.move(tmp_path / "memory", tmp_path / "moved")
        gone = call("GET", f"{s.url}/readyz")
        assert gone.status == 503 and gone.error[0] == "StoreUnavailable"
        assert "the store does not answer: the memory folder" in gone.error[1] and "\n" not in gone.error[1]
        assert call("GET", f"{s.url}/healthz").status == 200  # the process is up all the same


def test_thousands_of_tenants_hold_a_bounded_set_of_memories_and_the_pools_connections(
        postgres: Postgres, caplog: pytest.LogCaptureFixture) -> None:
    admin, url = postgres.fresh_database("lru")
    pg_store.close_pools(url)
    pg_store.shared_pool(url, 4)
    memories = Memories(url, transport="http", max_open=50)
    try:
        for i in range(1000):
            md = memories.of(Principal(f"p{i}", f"tenant-{i}"))
            if i % 10 == 0:
                md.write("n.md", f"tenant {i}\n")
            else:
                md.list()
        stats = memories.stats()
        assert stats["open"] == 50 and stats["opened"] == 1000 and stats["evicted"] == 950
        said = [r.getMessage() for r in caplog.records if "memories open" in r.getMessage()]
        assert said == ["memdir: 50 memories open, the most this server keeps (MEMDIR_MAX_OPEN); the least recently "
                        "used are closed as new tenants come"]  # said once, when it first happens
        with psycopg.connect(admin, autocommit=True) as conn:
            held = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = 'lru' AND usename = 'memdir_app'")
            assert held.fetchone()[0] <= 4  # type: ignore[index]
        assert memories.of(Principal("p10", "tenant-10")).read("n.md").body == "tenant 10\n"  # reopened after eviction
        assert memories.of(Principal("p20", "tenant-20")).list("") != []
    finally:
        memories.close()
        pg_store.close_pools(url)


@pytest.fixture
def two_servers(postgres: Postgres) -> Iterator[tuple[str, str]]:
    """Two `memdir serve` processes over one PostgreSQL database, 6 writes a minute per tenant."""
    _, url = postgres.fresh_database("hosts")
    env = {"MEMDIR_WRITES_PER_MINUTE": "6"}
    with Served(url, "--tenant", "shared", env=env) as a, Served(url, "--tenant", "shared", env=env) as b:
        yield a.url, b.url


def test_cas_the_rate_bucket_and_the_journal_hold_across_server_processes(two_servers: tuple[str, str]) -> None:
    a, b = two_servers
    first = call("PUT", f"{a}/v1/files/plan.md", {"body": "v1"})
    assert first.status == 201
    seen = call("GET", f"{b}/v1/files/plan.md")  # the other process sees the write at once, with the same ETag
    assert seen.status == 200 and seen.headers["etag"] == first.headers["etag"]
    assert call("PUT", f"{b}/v1/files/plan.md", {"body": "v2"}, headers={"If-Match": seen.headers["etag"]}).status == 200
    stale = call("PUT", f"{a}/v1/files/plan.md", {"body": "lost?"}, headers={"If-Match": first.headers["etag"]})
    assert stale.status == 412  # A's version is stale: B wrote after it
    assert call("GET", f"{a}/v1/files/plan.md").json["body"].strip() == "v2"
    # One bucket of 6 for the tenant, whichever process takes from it: 3 taken above (a write refused for its
    # version has taken its token: the bucket is asked first).
    codes = [call("PUT", f"{(a, b)[i % 2]}/v1/files/n{i}.md", {"body": f"{i}"}).status for i in range(8)]
    assert codes.count(201) in (3, 4) and codes.count(429) == 8 - codes.count(201)  # 4: one refilled meanwhile
    history = call("GET", f"{b}/v1/history?limit=50").json["records"]
    seqs = [r["seq"] for r in history]
    assert seqs == sorted(seqs, reverse=True) and len(set(seqs)) == len(seqs)
    assert [r["path"] for r in reversed(history)][:2] == ["plan.md", "plan.md"]
    assert len(history) == 2 + codes.count(201)


def test_serve_workers_runs_several_processes_over_one_socket(postgres: Postgres) -> None:
    _, url = postgres.fresh_database("workers")
    with Served(url, "--tenant", "w", "--workers", "2") as s:
        pids = workers(s.url)
        assert call("PUT", f"{s.url}/v1/files/a.md", {"body": "from a worker"}).status == 201
        assert call("GET", f"{s.url}/readyz").json["status"] == "ready"
    assert len(pids) == 2 and s.proc.pid not in pids


def test_create_app_builds_the_server_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What a gunicorn or uvicorn worker loads: `memdir.faces.asgi:create_app` with MEMDIR_URL and MEMDIR_TOKEN."""
    monkeypatch.setenv("MEMDIR_URL", str(tmp_path / "memory"))
    monkeypatch.setenv("MEMDIR_TOKEN", TOKEN)
    settings = Settings.from_env()
    assert settings.root == str(tmp_path / "memory") and settings.token == TOKEN
    monkeypatch.setenv("MEMDIR_SERVE_CONFIG", Settings(root=str(tmp_path / "other"), tenant="acme").to_env())
    assert Settings.from_env() == Settings(root=str(tmp_path / "other"), tenant="acme")
    monkeypatch.delenv("MEMDIR_SERVE_CONFIG")
    app = asgi.create_app()
    assert isinstance(app, asgi.Operations)
    with Ops(settings) as s:
        assert call("GET", f"{s.url}/v1/index").status == 401
        assert call("GET", f"{s.url}/v1/index", token=TOKEN).status == 200


def test_metrics_label_a_method_a_client_made_up_as_other(tmp_path: Path) -> None:
    """A scrape's size does not grow with the methods clients invent (50 of them grew it from 1.7 KB to 1.9 MB)."""
    with Ops(Settings(root=str(tmp_path / "memory"), token=TOKEN)) as s:
        before = call("GET", f"{s.url}/metrics", token=TOKEN).text
        answers = {call(f"MADEUP{i}", f"{s.url}/v1/files/a.md").status for i in range(50)}
        after = call("GET", f"{s.url}/metrics", token=TOKEN).text
    assert answers == {401}
    assert "MADEUP" not in after
    assert metric(after, "memdir_requests_total", route="/v1/files", method="other", status="401") == 50
    assert len(after) - len(before) < 5000  # the new series: other/401 and its latency's buckets, once


def test_probes_tell_a_caller_without_a_token_nothing_of_the_store(tmp_path: Path) -> None:
    with Ops(Settings(root=str(tmp_path / "memory"), token=TOKEN)) as s:
        assert call("GET", f"{s.url}/healthz").json == {"status": "ok"}
        assert call("GET", f"{s.url}/readyz").json == {"status": "ready"}
        shutil.move(tmp_path / "memory", tmp_path / "moved")
        gone = call("GET", f"{s.url}/readyz")
    assert gone.status == 503 and gone.error == ("StoreUnavailable", "the store does not answer; see the server's log")
    assert str(tmp_path) not in gone.text


def test_a_password_in_the_database_url_shows_nowhere(postgres: Postgres, caplog: pytest.LogCaptureFixture) -> None:
    """`?password=` (and user:password@) are masked in the probes, the metrics' pool label and the errors."""
    _, url = postgres.fresh_database("masked")
    secret = "Sup3r-s3cret-pw"
    with_password = f"{url}?password={secret}&application_name=memdir"
    pg_store.close_pools(with_password)
    try:
        with Ops(Settings(root=with_password, tenant="acme", token=TOKEN)) as s:
            probes = call("GET", f"{s.url}/readyz").text + call("GET", f"{s.url}/healthz").text
            assert call("PUT", f"{s.url}/v1/files/a.md", {"body": "one"}, token=TOKEN).status == 201
            scraped = call("GET", f"{s.url}/metrics", token=TOKEN).text
        assert secret not in probes and secret not in scraped
        assert "password=***&application_name=memdir" in scraped  # the pool's label, masked
    finally:
        pg_store.close_pools(with_password)
    with pytest.raises(MemdirError) as refused:  # a driver's error that quotes the password back
        ping_location(f"postgresql://memdir_app:{secret}%zz@127.0.0.1:{postgres.port}/masked?sslpassword={secret}")
    assert secret not in refused.value.message and "memdir_app:***@127.0.0.1" in refused.value.message
    assert secret not in caplog.text


def test_the_workers_of_one_server_count_wrong_tokens_together(tmp_path: Path) -> None:
    """`serve --workers 2` allows ten wrong tokens a minute from one client, not ten per worker."""
    with Served(tmp_path / "memory", "--workers", "2", "--token-file", str(_token_file(tmp_path))) as s:
        ready(f"{s.url}/v1/index", TOKEN)
        deadline = time.monotonic() + 300
        while metric(call("GET", f"{s.url}/metrics", token=TOKEN).text, "memdir_open_memories") < 2:
            assert time.monotonic() < deadline, "the second worker never started"  # both take requests from here
        with ThreadPoolExecutor(8) as pool:  # at once, so both workers take some
            answers = list(pool.map(lambda i: call("GET", f"{s.url}/v1/index", token=f"wrong-token-{i:012d}").status,
                                    range(40)))
        assert call("GET", f"{s.url}/v1/index", token=TOKEN).status == 429  # the client waits, right token or not
    # Ten guesses a minute, give or take the one each other worker may be checking at the same moment (the count
    # is shared, the check and the count are not one step); before: ten for each worker, twenty here.
    assert 10 <= answers.count(401) <= 10 + 1 and answers.count(401) + answers.count(429) == 40


def test_a_throttle_shared_by_two_processes_counts_each_one_s_wrong_tokens(tmp_path: Path) -> None:
    one, other = Throttle(path=tmp_path / "throttle.db"), Throttle(path=tmp_path / "throttle.db")  # two workers
    for _ in range(5):
        one.failed("203.0.113.7")
        other.failed("203.0.113.7")
    assert one.wait("203.0.113.7") > 0 and other.wait("203.0.113.7") > 0
    assert one.wait("203.0.113.8") == 0.0  # another client's count is its own


def _token_file(tmp_path: Path) -> Path:
    (tmp_path / "token").write_text(TOKEN)
    return tmp_path / "token"
