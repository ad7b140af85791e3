"""moto's S3 server over HTTP on loopback, one request at a time.

    python tests/s3_server.py PORT

moto checks If-None-Match / If-Match and then writes in two steps; real S3
does both atomically. Serving one request at a time gives the tests S3's
atomic conditional writes, which memdir's S3 store relies on for its lease
and its journal.
"""

import sys
import threading
from collections.abc import Iterable
from typing import Any

from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
from werkzeug.serving import run_simple

app = DomainDispatcherApplication(create_backend_app)
one_at_a_time = threading.Lock()


def serial(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
    with one_at_a_time:
        return list(app(environ, start_response))


if __name__ == "__main__":
    run_simple("127.0.0.1", int(sys.argv[1]), serial, threaded=True, request_handler=MotoRequestHandler)
