"""What the S3 stores of one process share: a client per endpoint, and what they know of each tenant.

`memdir.connect("s3://…").tenant(t)` opens a tenant per request, so an open
must cost no request. Two facts let it skip what `memdir.open` asks S3 each
time, and both only ever become true, never false again, or come with the
time they hold until:

- **No lease can have expired before a time.** A lease lasts `lease_seconds`
  from its last renewal; a writer that died leaves one, which is taken over
  (and its commit completed) once it expired. Having read the `lock` object at
  time t and found none, no lease can expire before t + lease_seconds; found a
  live one, none before its `expires`. Until then `recover()` has nothing to
  do, and asking S3 would only say so. (Every writer is assumed to use the same
  lease length; a host whose clock runs behind ours delays a takeover by its lag.)
- **The tenant has a journal.** Journal objects are never deleted, so once a
  process saw one it need not ask again whether the tenant is one memdir has
  never journaled (objects another tool put there, which `open` adopts).

Keys include the endpoint, bucket and the tenant's whole prefix, so nothing
known of one tenant is taken for another's.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any

from ..errors import StoreError

_CLIENTS: dict[tuple[int, str], Any] = {}  # (pid, endpoint setting) -> the process's client (boto3 clients are thread-safe)
_BUCKETS: set[tuple[int, str, str]] = set()  # buckets a shared client has found
_CLEAR: dict[str, float] = {}  # tenant key -> time.time() before which no lease of it can have expired
_JOURNALED: set[str] = set()  # tenant keys seen with a journal
_LOCK = threading.Lock()
_MAX_KNOWN = 100_000  # tenants remembered; past it the memo starts again (each forgotten tenant costs one GET)


def parse_url(url: str) -> tuple[str, str]:
    """(bucket, prefix without slashes) of `s3://bucket/prefix`."""
    rest = url.split("://", 1)[1]
    bucket, _, prefix = rest.partition("/")
    if not bucket:
        raise StoreError(f"{url!r} names no bucket; use s3://bucket/prefix")
    return bucket, prefix.strip("/")


def new_client(where: str) -> Any:
    import boto3
    import botocore.config
    import botocore.exceptions

    config = botocore.config.Config(retries={"max_attempts": 4, "mode": "standard"}, max_pool_connections=32)
    try:
        return boto3.client("s3", config=config)
    except botocore.exceptions.BotoCoreError as e:
        raise StoreError(f"{where}: cannot make an S3 client: {e}; check the AWS settings") from None


def shared_client(where: str = "s3") -> Any:
    """One S3 client per endpoint for the whole process (making one costs ~20 ms; a tenant opened on it, none)."""
    key = (os.getpid(), os.environ.get("AWS_ENDPOINT_URL", ""))
    with _LOCK:
        client = _CLIENTS.get(key)
        if client is None:
            client = _CLIENTS[key] = new_client(where)
        return client


def bucket_known(endpoint: str, bucket: str) -> bool:
    return (os.getpid(), endpoint, bucket) in _BUCKETS


def bucket_found(endpoint: str, bucket: str) -> None:
    _BUCKETS.add((os.getpid(), endpoint, bucket))


def clear(key: str) -> bool:
    """Whether no lease of tenant `key` can have expired yet (so `recover()` has nothing to do)."""
    return _CLEAR.get(key, 0.0) > time.time()


def clear_until(key: str, until: float) -> None:
    """No lease of tenant `key` can expire before `until` (what the lock object just said)."""
    with _LOCK:
        if len(_CLEAR) >= _MAX_KNOWN and key not in _CLEAR:
            _CLEAR.clear()
        _CLEAR[key] = until


def journaled(key: str) -> bool:
    return key in _JOURNALED


def saw_journal(key: str) -> None:
    with _LOCK:
        if len(_JOURNALED) >= _MAX_KNOWN:
            _JOURNALED.clear()
        _JOURNALED.add(key)


def forget_tenant(where: str) -> None:
    """Forget what the process knew of a tenant that was dropped (a new one of that name starts afresh)."""
    with _LOCK:
        for key in [k for k in _CLEAR if k.endswith(" " + where)]:
            del _CLEAR[key]
        _JOURNALED.difference_update({k for k in _JOURNALED if k.endswith(" " + where)})


def ping(url: str) -> None:
    """HEAD the bucket of `url` with the shared client; StoreError (or NotFound) if S3 does not answer."""
    import botocore.exceptions

    bucket, _ = parse_url(url)
    client = shared_client(url)
    try:
        client.head_bucket(Bucket=bucket)
    except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as e:
        raise StoreError(f"s3://{bucket}: {e}") from None
