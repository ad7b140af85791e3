"""S3 specifics: the bucket layout, objects written by other tools, the lease, snapshots and errors."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator

import boto3
import pytest
from conftest import BUCKET
from services import S3, free_port

import memdir
from memdir import Conflict, NotFound, StoreError
from memdir.stores import s3 as s3_store


@pytest.fixture
def s3(s3_server: S3) -> Iterator[tuple[str, object]]:
    client = boto3.client("s3")
    prefix = f"s3test{time.monotonic_ns()}"
    yield f"s3://{BUCKET}/{prefix}", client


def keys(client: object, prefix: str) -> list[str]:
    pages = client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix)  # type: ignore[attr-defined]
    return sorted(o["Key"] for page in pages for o in page.get("Contents", []))


def test_layout_is_plain_objects_under_the_tenant_prefix(s3: tuple[str, object]) -> None:
    url, client = s3
    prefix = url.split("/", 3)[3]
    with memdir.open(url, tenant="acme") as md:
        md.write("project/flock.md", "Launch date: 2026-12-15.\n", description="flock")
    assert keys(client, prefix) == [
        f"{prefix}/tenants/acme/files/MEMORY.md",
        f"{prefix}/tenants/acme/files/project/flock.md",
        f"{prefix}/tenants/acme/head.json",
        f"{prefix}/tenants/acme/journal/000000000001.json",
    ]
    body = client.get_object(Bucket=BUCKET, Key=f"{prefix}/tenants/acme/files/project/flock.md")  # type: ignore[attr-defined]
    assert body["Body"].read().decode().endswith("Launch date: 2026-12-15.\n")
    assert body["Metadata"] == {"memdir-version": "0000000000000001"}
    with memdir.open(url) as md:  # tenant None is the tenant named 'default'
        md.write("x.md", "x\n")
    assert f"{prefix}/tenants/default/files/x.md" in keys(client, prefix)


def test_objects_put_there_by_other_tools_are_found_and_journaled(s3: tuple[str, object]) -> None:
    url, client = s3
    prefix = url.split("/", 3)[3]
    with memdir.open(url, tenant="t") as md:
        md.write("mine.md", "mine\n")
        client.put_object(Bucket=BUCKET, Key=f"{prefix}/tenants/t/files/dropped/by-hand.md",  # type: ignore[attr-defined]
                          Body=b"# Dropped in by aws s3 cp\nwebhook notes\n")
        found = md.reconcile()
        assert [(f.kind, f.path) for f in found.findings] == [("new", "dropped/by-hand.md")]
        md.reconcile(fix=True)
        assert [h.path for h in md.grep("webhook")] == ["dropped/by-hand.md"]  # grep reads the index of the catalog
        assert "Dropped in by aws s3 cp" in md.index()
        assert md.history("dropped/by-hand.md")[0].op == "external"
        version = md.read("dropped/by-hand.md").version
        assert version.startswith("x") and len(version) == 16
        md.write("dropped/by-hand.md", "now memdir's\n", expect=version)
        assert md.reconcile().clean


def test_a_live_lease_makes_writers_wait_and_an_expired_one_is_taken_over(s3: tuple[str, object]) -> None:
    url, client = s3
    prefix = url.split("/", 3)[3]
    lock = f"{prefix}/tenants/t/lock"
    with memdir.open(url, tenant="t") as md:
        md.write("p.md", "one\n")
        store = md.store
        assert isinstance(store, s3_store.S3Store)
        client.put_object(Bucket=BUCKET, Key=lock,  # type: ignore[attr-defined]
                          Body=json.dumps({"owner": "someone", "expires": time.time() + 60}).encode())
        store.wait_seconds = 0.3
        with pytest.raises(StoreError, match="another writer has held the lock for over 0 s"):
            md.write("p.md", "two\n")
        assert md.read("p.md").body == "one\n"
        client.put_object(Bucket=BUCKET, Key=lock,  # type: ignore[attr-defined]
                          Body=json.dumps({"owner": "someone", "expires": time.time() - 1}).encode())
        md.write("p.md", "two\n")
        assert md.read("p.md").body == "two\n"
    assert lock not in keys(client, prefix)  # released


def test_a_holder_keeps_its_lease_however_long_it_works(s3: tuple[str, object]) -> None:
    url, client = s3
    prefix = url.split("/", 3)[3]
    with memdir.open(url, tenant="t") as holder, memdir.open(url, tenant="t") as other:
        holder.write("p.md", "one\n")
        mine, theirs = holder.store, other.store
        assert isinstance(mine, s3_store.S3Store) and isinstance(theirs, s3_store.S3Store)
        mine.lease_seconds = theirs.lease_seconds = 2.0  # these two stores only: the class keeps its 30 s
        theirs.wait_seconds = 0.5
        with mine.lock():
            taken = json.loads(client.get_object(Bucket=BUCKET, Key=f"{prefix}/tenants/t/lock")["Body"].read())  # type: ignore[attr-defined]
            time.sleep(5)  # two and a half leases of work without a store call
            lease = json.loads(client.get_object(Bucket=BUCKET, Key=f"{prefix}/tenants/t/lock")["Body"].read())  # type: ignore[attr-defined]
            assert lease["owner"] == taken["owner"] and lease["expires"] > taken["expires"] + 2  # renewed meanwhile
            with pytest.raises(StoreError, match="another writer has held the lock"):
                other.write("p.md", "theirs\n")  # still held: not taken over
            holder.write("p.md", "two\n")  # and the holder's commit goes through
        other.write("p.md", "three\n")  # released
        assert [r.actor == holder.actor for r in holder.history("p.md")] == [True, True, True]
        assert holder.read("p.md").body == "three\n"


def test_a_holder_whose_lease_was_taken_commits_nothing_and_gets_a_conflict(s3: tuple[str, object]) -> None:
    url, client = s3
    prefix = url.split("/", 3)[3]
    with memdir.open(url, tenant="t") as md:
        md.write("p.md", "one\n")
        with md.store.lock():  # then it froze for longer than its lease, and another writer took the lease over
            client.put_object(Bucket=BUCKET, Key=f"{prefix}/tenants/t/lock",  # type: ignore[attr-defined]
                              Body=json.dumps({"owner": "another", "expires": time.time() + 60}).encode())
            with pytest.raises(Conflict, match="another writer took the write lock .* nothing was committed"):
                md.write("p.md", "two\n")
        assert md.read("p.md").body == "one\n" and len(md.history("p.md")) == 1


def test_a_new_process_reads_the_catalog_snapshot_and_still_has_all_history(
    s3: tuple[str, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, client = s3
    prefix = url.split("/", 3)[3]
    monkeypatch.setattr(s3_store, "SNAPSHOT_EVERY", 5)
    with memdir.open(url, tenant="t") as md:
        for i in range(12):
            md.write(f"n{i}.md", f"{i}\n", description=f"note {i}")
        md.delete("n0.md")
    assert f"{prefix}/tenants/t/catalog.json" in keys(client, prefix)
    with memdir.open(url, tenant="t") as md:
        assert [e.path for e in md.list()] == sorted(f"n{i}.md" for i in range(1, 12))
        assert "note 11" in md.index() and "note 0" not in md.index()
        assert [r.seq for r in md.history()] == list(range(13, 0, -1))
        assert md.undo("n0.md").body == "0\n"


def test_s3_errors_say_what_to_check(s3_server: S3, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(NotFound, match="bucket 'no-such-bucket' does not exist at http://127.0.0.1"):
        memdir.open("s3://no-such-bucket/x")
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{free_port()}")
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    with pytest.raises(StoreError, match="cannot connect to S3 at http://127.0.0.1:.*is the server running"):
        memdir.open(f"s3://{BUCKET}/x")


_OLD_ENTRY = ('{"path": "project/deploy.md", "name": "deploy", "description": "deploys", "type": "project", "tags": [], '
              '"created": "2026-12-06T10:30:42Z", "updated": "2026-12-06T10:30:42Z", "size": %d, "lines": 8, '
              '"version": "000000000000000%d"}')
_OLD_RECORD = ('{"seq": %d, "time": "2026-12-06T10:30:42Z", "actor": "root", "op": "write", "path": "project/deploy.md", '
               '"dest": null, "old_version": %s, "new_version": "000000000000000%d", "old": null, "new": "%s", '
               '"undoes": null, "entry": %s, "record_only": false, "form": "%s", "base": %s}')
OLD_TENANT = {  # a tenant as memdir wrote it before journal objects were gzipped: plain JSON, content base64 in it
    "journal/000000000001.json": '{"records": [%s]}' % (_OLD_RECORD % (
        1, "null", 1, "eNrT1dXl5UpJLU4uyiwoyczPs1JISS3Iya8s5uVKLkpNLElNsVIwMjAy0zU00jUwCzE0sDI2sDIxiuLlKi1IwSetCzL4ZfOK"
        "53s3PZ2z4unEFU92TXnc0MTL9XrDhrf9a153TVF4taPjzawpb+bueTOv9XV3x+vuJXq8XCEZqVAnKGSnVipkFitEFZbp+vu46JqYmBsCFQAAd"
        "OhCtw==", _OLD_ENTRY % (178, 1), "-z0", "null")),
    "journal/000000000002.json": '{"records": [%s]}' % (_OLD_RECORD % (
        2, '"0000000000000001"', 2, "SzbQMefKNLJEVpmbX5aaolCSr+Cbn5eSWAlUBQA=", _OLD_ENTRY % (174, 2), "re1", "1")),
    "catalog.json": '{"seq": 2, "key": "journal/000000000002.json", "entries": {"project/deploy.md": [2, %s, '
                    '"96859c6767c006612a1fb49cea5a4da3", "0000000000000002"]}}' % (_OLD_ENTRY % (174, 2)),
    "head.json": '{"seq": 2, "key": "journal/000000000002.json"}',
    "state.json": '{"derived_seq": 2}',
    "files/MEMORY.md": "# Memory Index\n\n## Project\n- [deploy](project/deploy.md) — deploys\n",
    "files/project/deploy.md": "---\ndescription: deploys\ncreated: 2026-12-06T10:30:42Z\nupdated: 2026-12-06T10:30:42Z\n"
                               "---\n部署在周五。\n배포는 금요일입니다.\nThe deploy moved to Monday.\n",
}


def _holding(client: object, prefix: str, needle: bytes) -> list[str]:
    """The keys whose object holds `needle`: raw, gunzipped, and in each JSON string base64-decoded and unzlibbed."""
    import base64
    import binascii
    import gzip
    import zlib

    def strings(value: object) -> Iterator[str]:
        if isinstance(value, str):
            yield value
        for v in value.values() if isinstance(value, dict) else value if isinstance(value, list) else ():
            yield from strings(v)

    found = []
    for key in keys(client, prefix):
        body = client.get_object(Bucket=BUCKET, Key=key)["Body"].read()  # type: ignore[attr-defined]
        texts = [body, gzip.decompress(body) if body[:2] == b"\x1f\x8b" else b""]
        for s in [s for t in texts if t.startswith(b"{") for s in strings(json.loads(t))]:
            with contextlib.suppress(binascii.Error, ValueError, zlib.error):
                texts.append(raw := base64.b64decode(s, validate=True))
                texts.append(zlib.decompress(raw))
        if any(needle in t for t in texts):
            found.append(key[len(prefix) + 1:])
    return found


def test_a_tenant_journaled_as_plain_json_opens_undoes_compacts_and_forgets(s3: tuple[str, object]) -> None:
    """Journal objects are gzipped now; the plain JSON an older memdir wrote still reads, undoes and forgets."""
    from memdir.core import history
    from memdir.remember import forget

    url, client = s3
    prefix = url.split("/", 3)[3]
    for key, body in OLD_TENANT.items():
        meta = {"memdir-version": "0000000000000002"} if key == "files/project/deploy.md" else {}
        client.put_object(Bucket=BUCKET, Key=f"{prefix}/tenants/t/{key}", Body=body.encode(), Metadata=meta)  # type: ignore[attr-defined]
    with memdir.open(url, tenant="t") as md:
        assert md.read("project/deploy.md").body.endswith("배포는 금요일입니다.\nThe deploy moved to Monday.\n")
        assert [r.seq for r in md.history("project/deploy.md")] == [2, 1]
        assert b"Zqv-OLD-4471" in (md.history("project/deploy.md")[0].old or b"")  # a reference across old objects
        assert "Zqv-OLD-4471" in md.undo("project/deploy.md").body
    tail = f"{prefix}/tenants/t/journal/000000000003.json"
    assert client.get_object(Bucket=BUCKET, Key=tail)["Body"].read()[:2] == b"\x1f\x8b"  # type: ignore[attr-defined]
    with memdir.open(url, tenant="t") as md:  # a new process: the old snapshot, the old objects and a new one
        assert [r.seq for r in md.history("project/deploy.md")] == [3, 2, 1]
        history.compact(md.store)  # the plain objects merged into a gzipped one
        assert [b"moved to Monday" in (r.new or b"") for r in md.history("project/deploy.md")] == [False, True, False]
        assert {"files/project/deploy.md", "journal/000000000001.json"} <= set(  # the check finds what is there
            _holding(client, prefix + "/tenants/t", b"Zqv-OLD-4471"))
        forget.erase(md, "project/deploy.md")
        assert md.store.get("project/deploy.md") is None
    assert _holding(client, prefix + "/tenants/t", b"Zqv-OLD-4471") == []
    assert _holding(client, prefix + "/tenants/t", "금요일".encode()) == []
