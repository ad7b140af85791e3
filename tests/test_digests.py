"""The hash functions a new process uses without loading OpenSSL give hashlib's digests."""

import hashlib
import subprocess
import sys

from memdir.digests import blake2b, sha256


def test_the_digests_are_hashlibs() -> None:
    for data in (b"", b"memdir", "ünïcode — text".encode(), bytes(range(256)) * 40):
        assert sha256(data).hexdigest() == hashlib.sha256(data).hexdigest()
        assert blake2b(data, digest_size=8).hexdigest() == hashlib.blake2b(data, digest_size=8).hexdigest()
        h = sha256()
        h.update(data)
        h.update(b"more")
        assert h.digest() == hashlib.sha256(data + b"more").digest()


def test_importing_them_does_not_load_openssl() -> None:
    probe = "import sys, memdir.digests; print('_hashlib' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.strip() == "False"
