"""S3 for a server: `memdir.connect(url).tenant(t)` per request asks S3 nothing until an operation needs it.

The requests are counted with botocore's own event hooks on the process's shared client (an
observer: every request still goes to the S3 server).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator

import boto3
import pytest
from conftest import BUCKET
from services import S3

import memdir
from memdir.stores import s3 as s3_store
from memdir.stores import s3shared


@pytest.fixture
def url(s3_server: S3) -> str:
    return f"s3://{BUCKET}/open{time.monotonic_ns()}"


@pytest.fixture
def requests(s3_server: S3) -> Iterator[list[str]]:
    """Every request the shared client sends from now on, as 'Operation key'."""
    sent: list[str] = []

    def note(model: object, params: dict[str, object], **_: object) -> None:
        sent.append(f"{getattr(model, 'name', '?')} {str(params.get('url_path', '')).split('/tenants/')[-1]}")

    client = s3shared.shared_client()
    client.meta.events.register("before-call.s3", note)
    yield sent
    client.meta.events.unregister("before-call.s3", note)


def test_a_tenant_opened_per_request_asks_s3_nothing_and_a_read_one_get(url: str, requests: list[str]) -> None:
    db = memdir.connect(url)
    with db.tenant("acme") as md:
        md.write("user/profile.md", "Prefers short answers.\n", description="how acme likes answers")
    db.tenant("acme").close()  # the first open after a write may look at the lease once
    requests.clear()
    for _ in range(3):
        db.tenant("acme").close()
    assert requests == []
    with db.tenant("acme") as md:
        assert md.read("user/profile.md").body == "Prefers short answers.\n"
    assert requests == ["GetObject acme/files/user/profile.md"]
    requests.clear()
    with db.tenant("acme") as md:  # what needs the journal still loads it, and a write still takes the lease
        assert "how acme likes answers" in md.index()
        md.write("user/profile.md", "Prefers short answers, in French.\n", description="how acme likes answers")
    assert "PutObject acme/lock" in requests and "PutObject acme/journal/000000000002.json" in requests
    with db.tenant("globex") as other:  # what the process knows of acme is acme's alone
        assert other.list() == [] and other.history() == []


def test_the_first_use_of_a_tenant_reads_its_journal_once(url: str, requests: list[str]) -> None:
    db = memdir.connect(url)
    db.tenant("fresh").close()
    requests.clear()
    db.tenant("fresh").close()  # never written: is there a journal, and files another tool put there?
    assert requests.count("GetObject fresh/catalog.json") == 1
    assert sum(r.startswith("ListObjectsV2") for r in requests) == 3  # the journal (twice: no head to ask) and files/


def test_objects_another_tool_put_in_a_new_tenant_are_adopted_on_the_shared_client(url: str, requests: list[str]) -> None:
    bucket_prefix = url.split("/", 3)[3]
    boto3.client("s3").put_object(Bucket=BUCKET, Key=f"{bucket_prefix}/tenants/t/files/notes/dropped.md",
                                  Body=b"# Dropped in by aws s3 cp\n")
    db = memdir.connect(url)
    with db.tenant("t") as md:
        assert [(r.op, r.path) for r in md.history()] == [("external", "notes/dropped.md")]
    requests.clear()
    db.tenant("t").close()
    assert not any(r.startswith("ListObjectsV2") for r in requests)  # journaled now: not asked again


CRASH = {  # what the writer dies in, and what the next open must report
    "applying its files": ("S._put_file = crash", "completed interrupted change #2 to p.md"),
    "rendering MEMORY.md": ("S.derive = crash", "change #2 to p.md was committed, its MEMORY.md files were not"),
}


@pytest.mark.parametrize("where", list(CRASH))
def test_a_writer_that_died_is_still_completed_by_a_tenant_opened_on_the_shared_client(
    url: str, where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(s3_store.S3Store, "lease_seconds", 1.0)  # every writer of the tenant uses the same lease
    db = memdir.connect(url)
    with db.tenant("t") as md:
        md.write("p.md", "old\n", description="old one")
    db.tenant("t").close()  # the process now knows no lease of t expires for a while
    patch, note = CRASH[where]
    code = textwrap.dedent(f"""
        import os, sys, memdir
        from memdir.stores.s3 import S3Store as S
        def crash(*a, **k):
            os._exit(9)
        S.lease_seconds = 1
        {patch}
        memdir.connect(sys.argv[1]).tenant("t").write("p.md", "new\\n", description="new one")
    """)
    proc = subprocess.run([sys.executable, "-c", code, url], capture_output=True, text=True)
    assert proc.returncode == 9, proc.stderr
    time.sleep(1.2)  # the dead writer's lease expires
    with db.tenant("t") as md:
        assert any(note in line for line in md.recovered), md.recovered
        assert md.read("p.md").body == "new\n"
        stored = md.store.get("MEMORY.md")
        assert stored is not None and b"new one" in stored.data  # the index files came along on open
        assert md.reconcile().clean


def test_tenants_opened_per_request_keep_compare_and_swap_and_one_journal(url: str) -> None:
    """Each request's memory knows nothing of the others' until it loads: versions still decide, and the
    journal's seqs still run one after another, whoever wrote."""
    db = memdir.connect(url)
    with db.tenant("acme") as md:
        first = md.write("project/plan.md", "Ship in December.\n", description="the plan")
    with db.tenant("acme") as md:
        seen = md.read("project/plan.md").version
        assert seen == first.version
    with db.tenant("acme") as other:  # another request writes meanwhile
        other.write("project/plan.md", "Ship in January.\n", expect=seen)
    with db.tenant("acme") as md, pytest.raises(memdir.Conflict):
        md.write("project/plan.md", "Ship in December after all.\n", expect=seen)
    with db.tenant("acme") as md:
        md.append("project/plan.md", "Then a beta.")
        assert md.read("project/plan.md").body.startswith("Ship in January.\n- [")  # the appended line, stamped
        assert [r.seq for r in md.history()] == [3, 2, 1]
    with db.tenant("globex") as md:
        assert md.history() == [] and md.list() == []


COUNTER = textwrap.dedent("""
    import sys, memdir
    db = memdir.connect(sys.argv[1])
    done = 0
    while done < int(sys.argv[2]):
        with db.tenant("t") as md:  # a new request each attempt, as a server handles them
            m = md.read("counter.md")
            try:
                md.write("counter.md", f"{int(m.body) + 1}\\n", expect=m.version)
                done += 1
            except memdir.Conflict:
                pass
""")


def test_writers_in_several_processes_opening_per_request_lose_no_increment(url: str) -> None:
    with memdir.connect(url).tenant("t") as md:
        md.write("counter.md", "0\n")
    procs = [subprocess.Popen([sys.executable, "-c", COUNTER, url, "8"], stderr=subprocess.PIPE, text=True)
             for _ in range(3)]
    for p in procs:
        assert p.wait(300) == 0, p.stderr.read() if p.stderr else ""
    with memdir.connect(url).tenant("t") as md:
        assert md.read("counter.md").body == "24\n"
        assert [r.seq for r in md.history("counter.md")] == list(range(25, 0, -1))
