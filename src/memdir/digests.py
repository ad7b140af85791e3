"""blake2b and sha256 without the OpenSSL load (~2 ms) that `import hashlib` costs every new process.

CPython builds both itself (the same digests as hashlib's); a Python built without
them falls back to hashlib.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

try:
    from _blake2 import blake2b as blake2b
except ImportError:
    from hashlib import blake2b as blake2b

if TYPE_CHECKING:  # the builtin modules have no stubs; their sha256 is hashlib's
    from hashlib import sha256 as sha256
else:
    try:
        from _sha2 import sha256 as sha256  # Python 3.12+
    except ImportError:
        try:
            from _sha256 import sha256 as sha256  # 3.11
        except ImportError:
            from hashlib import sha256 as sha256
