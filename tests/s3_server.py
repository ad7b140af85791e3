"""moto's S3 server over HTTP on loopback, serving requests concurrently as S3 does.

    python tests/s3_server.py PORT

Requests run in parallel (werkzeug's threaded server), so the S3 store's tests
see reads and writes interleave. One thing moto does not do like S3: it checks
If-None-Match / If-Match and then writes, in two steps, so two conditional
writes of one key could both pass their check. Real S3 makes each write of a
key atomic with its condition; here every write or delete of one key holds
that key's lock, and only that key's. Reads never wait.

It serves moto's S3 app alone: moto's own dispatcher finds the service of every
request anew (listing and stat-ing its ~180 service folders, under one lock),
a third of its time per request here.
"""

import sys
import threading
from collections.abc import Iterable
from typing import Any

from moto.moto_server.werkzeug_app import MotoRequestHandler, create_backend_app
from werkzeug.serving import run_simple

app = create_backend_app("s3")
_locks: dict[str, threading.Lock] = {}
_locks_lock = threading.Lock()


def _key_lock(environ: dict[str, Any]) -> threading.Lock:
    key = f"{environ.get('HTTP_HOST', '')}{environ.get('PATH_INFO', '')}"
    with _locks_lock:
        lock = _locks.get(key)
        if lock is None:
            lock = _locks[key] = threading.Lock()
        return lock


def per_key(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
    if environ.get("REQUEST_METHOD") in ("PUT", "DELETE", "POST"):
        with _key_lock(environ):
            return list(app(environ, start_response))
    return list(app(environ, start_response))


if __name__ == "__main__":
    run_simple("127.0.0.1", int(sys.argv[1]), per_key, threaded=True, request_handler=MotoRequestHandler)
