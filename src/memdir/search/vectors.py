"""The semantic index: a derived, content-addressed vector index over chunks of the files.

A file is cut into chunks, one per paragraph or list item, each with its line
range (1-based, frontmatter included, like grep), so a hit points at the lines
to read first. Each chunk is embedded once: vectors are stored by the SHA-256
of the model name and the chunk text, so a rebuild, a rename or an edit
elsewhere in the file never embeds unchanged text again. The index records the
model and its dimension; opening it with another model drops the vectors and
rebuilds, never fails. It also records the model's similarity bars
(`calibration`), measured with the model, so a new model gets new bars.

Storage is a small SQLite database (`:memory:` when the memory has no local
folder) holding the chunk table and the vectors; queries run on a numpy matrix
of all chunks kept sorted by path, so a prefix (a scope, a folder) is a
contiguous slice found by bisection and the top-k is computed only over what
the caller may read, never filtered afterwards. Exact search over 10,000 files
(about 20,000 chunks) is a few milliseconds; no approximate index is needed at
this size.

Paths under a private prefix (`[semantic] private = [...]` in memdir.toml) are
never chunked, embedded or sent to an embedding endpoint.
"""

from __future__ import annotations

import bisect
import hashlib
import os
import re
import sqlite3
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..model import Memory
from . import calibration
from .embed import Embedder, numpy_module

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS vector(hash BLOB PRIMARY KEY, data BLOB NOT NULL);  -- a rowid table: 1.5 KB rows fit its pages
CREATE TABLE IF NOT EXISTS chunk(path TEXT NOT NULL, version TEXT NOT NULL, start INTEGER NOT NULL,
                                 stop INTEGER NOT NULL, text TEXT NOT NULL, hash BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS chunk_path ON chunk(path);
"""

_ITEM = re.compile(r"^\s{0,3}(?:[-*+]|\d{1,9}[.)])\s+")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
MAX_CHUNK_CHARS = 2000


@dataclass(frozen=True)
class Chunk:
    """A paragraph or list item of one file: lines `start`..`stop` (1-based, inclusive)."""

    path: str
    start: int
    stop: int
    text: str


@dataclass
class Counters:
    """What the index did since it was opened: enough to tell a cache hit from work."""

    embedded: int = 0  # chunks sent to the embedder
    reused: int = 0  # chunks whose vector was already stored
    rebuilds: int = 0  # model or dimension changed: vectors dropped

    def to_dict(self) -> dict[str, int]:
        return {"embedded": self.embedded, "reused": self.reused, "rebuilds": self.rebuilds}


def chunks(memory: Memory) -> list[Chunk]:
    """The paragraphs and list items of a file's body, with their lines in the whole file.

    A heading goes with the paragraph under it; a fenced code block stays one
    chunk; a chunk longer than MAX_CHUNK_CHARS is cut (the model reads only
    its first few hundred words anyway).
    """
    head = memory.text.count("\n", 0, len(memory.text) - len(memory.body))
    out: list[Chunk] = []
    lines: list[str] = []
    start = 0
    fenced = False

    def close(stop: int) -> None:
        nonlocal lines
        text = "\n".join(lines).strip()
        if text:
            out.append(Chunk(memory.path, start, stop, text[:MAX_CHUNK_CHARS]))
        lines = []

    heading = False
    for number, line in enumerate(memory.body.split("\n"), head + 1):
        if _FENCE.match(line):
            if not fenced and lines and not heading:
                close(number - 1)
            if not lines:
                start = number
            lines.append(line)
            fenced = not fenced
            heading = False
            if not fenced:  # the fence closed: the block is one chunk
                close(number)
            continue
        if fenced:
            lines.append(line)
            continue
        if not line.strip():
            if lines and not heading:
                close(number - 1)
            continue
        if (_ITEM.match(line) or line.lstrip().startswith("#")) and lines and not heading:
            close(number - 1)
        if not lines:
            start = number
        lines.append(line)
        heading = line.lstrip().startswith("#")
    close(head + memory.body.count("\n") + (0 if memory.body.endswith("\n") else 1))
    return out


def embedding_text(memory: Memory, chunk: Chunk) -> str:
    """What the model reads for a chunk: the chunk alone.

    Prefixing the file's title helped the semantic side alone on LoCoMo
    (R@10 0.48 -> 0.52) but hurt the fused result (0.759 -> 0.747): the
    lexical side already weighs the title, and the fusion gains most from a
    semantic side that reads what BM25 cannot, the meaning of the text.
    Likewise scoring a turn with the turns beside it (the mean of its cosine
    and that of its run's window, summed and normalised): the semantic side
    alone went 0.482 -> 0.530, the fused result not at all (0.762 without the
    bar on LoCoMo, 0.579 -> 0.578 on REALTALK) and under the bar down
    (0.750 -> 0.732), as the fusion lends to neighbours already.
    """
    return chunk.text


def content_hash(model: str, text: str) -> bytes:
    return hashlib.sha256(f"{model}\0{text}".encode()).digest()


_MEASURED: dict[tuple[str, int, str, str], calibration.Bars] = {}  # (model, dim, script, version) -> its bars


@dataclass
class _Matrix:
    """All chunks as arrays sorted by path: a prefix is a slice."""

    paths: list[str] = field(default_factory=list)
    starts: list[int] = field(default_factory=list)
    stops: list[int] = field(default_factory=list)
    vectors: Any = None


class VectorIndex:
    """The chunk vectors of one memory (one tenant); safe to share between threads."""

    def __init__(self, embedder: Embedder, path: Path | str | None = None, *,
                 private: Sequence[str] = ()) -> None:
        self.embedder = embedder
        self.private = tuple(private)
        self.counters = Counters()
        self._np = numpy_module()
        self._lock = threading.RLock()
        target = ":memory:"
        if path is not None:
            _private(Path(path))
            target = str(path)
        self._db = sqlite3.connect(target, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.executescript(SCHEMA)
        self._matrix: _Matrix | None = None
        self._check_model()

    # ------------------------------------------------------------ bookkeeping

    def _meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def _set(self, key: str, value: object) -> None:
        self._db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, str(value)))

    def _check_model(self) -> None:
        """A different model (or dimension) makes every stored vector meaningless: drop them."""
        model, dim = self._meta("model"), self._meta("dim")
        if model is None:
            self._set("model", self.embedder.model)
            return
        other_dim = bool(dim and self.embedder.dim and dim != str(self.embedder.dim))
        if model != self.embedder.model or other_dim:
            self._reset()

    def _reset(self) -> None:
        """Drop every vector and chunk; the next sync rebuilds from the files."""
        with self._db:
            self._db.execute("BEGIN")
            self._db.execute("DELETE FROM vector")
            self._db.execute("DELETE FROM chunk")
            self._db.execute("DELETE FROM meta")
            self._set("model", self.embedder.model)
        self._matrix = None
        self.counters.rebuilds += 1

    @property
    def model(self) -> str:
        return self._meta("model") or ""

    @property
    def dim(self) -> int:
        return int(self._meta("dim") or 0)

    @property
    def floor(self) -> float:
        """The cosine a conversation's turn must reach with this model on its meaning alone (`bars`)."""
        return self.bars().floor

    def bars(self, script: str = "latin") -> calibration.Bars:
        """The bars a semantic-only hit must reach for a query written in `script` (`calibration.script`),
        measured with this model the first time a query in it comes (Latin letters: with the first vectors) and
        stored with the vectors: a change of model drops them with them, a new `calibration.VERSION` measures again."""
        if script != "latin" and script not in calibration.SCRIPT_PAIRS:
            script = "latin"
        stored, version = self._meta(f"bars_{script}"), self._meta(f"bars_{script}_version")
        if stored is not None and version == calibration.VERSION:
            floor, topic = (float(v) for v in stored.split())
            return calibration.Bars(floor, topic)
        key = (self.embedder.model, self.embedder.dim, script, calibration.VERSION)
        value = _MEASURED.get(key)
        if value is None:  # a model's bars are the same in every memory: a server's tenants measure them once
            value = _MEASURED[key] = calibration.measure(self.embedder.embed, script)
        with self._lock, self._db:
            self._db.execute("BEGIN")
            self._set(f"bars_{script}", f"{value.floor} {value.topic}")
            self._set(f"bars_{script}_version", calibration.VERSION)
        return value

    @property
    def seq(self) -> int:
        """The catalog seq the index reflects (see `sync`)."""
        return int(self._meta("seq") or 0)

    def is_private(self, path: str) -> bool:
        return any(path.startswith(p) for p in self.private)

    def __len__(self) -> int:
        return int(self._db.execute("SELECT count(*) FROM chunk").fetchone()[0])

    def versions(self) -> dict[str, str]:
        return dict(self._db.execute("SELECT path, version FROM chunk GROUP BY path"))

    # ------------------------------------------------------------ writing

    def update(self, changed: Iterable[tuple[str, Memory | None]], seq: int | None = None) -> None:
        """Re-chunk the changed files (None: removed) and embed only chunk texts not seen before."""
        np = self._np
        model = self.embedder.model
        rows: list[tuple[str, str, int, int, str, bytes]] = []
        removed: list[str] = []
        wanted: dict[bytes, str] = {}
        for path, memory in changed:
            removed.append(path)
            if memory is None or self.is_private(path):
                continue
            for c in chunks(memory):
                text = embedding_text(memory, c)
                h = content_hash(model, text)
                rows.append((path, memory.version, c.start, c.stop, c.text, h))
                wanted[h] = text
        with self._lock:
            have = self._stored(list(wanted))
            todo = [h for h in wanted if h not in have]
            self.counters.reused += len(wanted) - len(todo)
            vectors = self.embedder.embed([wanted[h] for h in todo]) if todo else np.zeros((0, 0), np.float32)
            self.counters.embedded += len(todo)
            if todo and self.dim and int(vectors.shape[1]) != self.dim:
                # The endpoint now answers with another dimension: every stored vector is stale.
                self._reset()
                seq = None  # the next sync starts over and re-reads every file
            with self._db:
                self._db.execute("BEGIN")
                if todo:
                    self._set("dim", int(vectors.shape[1]))
                    self._db.executemany(
                        "INSERT OR REPLACE INTO vector(hash, data) VALUES (?, ?)",
                        [(h, np.asarray(v, dtype=np.float32).tobytes()) for h, v in zip(todo, vectors, strict=True)],
                    )
                self._db.executemany("DELETE FROM chunk WHERE path = ?", [(p,) for p in removed])
                self._db.executemany("INSERT INTO chunk VALUES (?, ?, ?, ?, ?, ?)", rows)
                if seq is not None:
                    self._set("seq", seq)
            self._matrix = None
            if todo and self._meta("bars_latin_version") != calibration.VERSION:
                _ = self.bars()  # measured with the first vectors, so that they are stored with them

    def _stored(self, hashes: list[bytes]) -> set[bytes]:
        found: set[bytes] = set()
        for start in range(0, len(hashes), 500):
            part = hashes[start : start + 500]
            marks = ",".join("?" * len(part))
            found.update(h for (h,) in self._db.execute(f"SELECT hash FROM vector WHERE hash IN ({marks})", part))
        return found

    def prune(self) -> int:
        """Forget vectors no chunk uses any more (after many edits); returns how many."""
        with self._lock, self._db:
            cur = self._db.execute("DELETE FROM vector WHERE hash NOT IN (SELECT hash FROM chunk)")
            return int(cur.rowcount)

    # ------------------------------------------------------------ reading

    def _load(self) -> _Matrix:
        m = self._matrix
        if m is not None:
            return m
        np = self._np
        rows = self._db.execute(
            "SELECT chunk.path, chunk.start, chunk.stop, vector.data FROM chunk JOIN vector ON vector.hash = chunk.hash"
            " ORDER BY chunk.path, chunk.start"
        ).fetchall()
        m = _Matrix([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows])
        dim = self.dim or self.embedder.dim
        m.vectors = (np.frombuffer(b"".join(r[3] for r in rows), dtype=np.float32).reshape(len(rows), dim)
                     if rows else np.zeros((0, dim), dtype=np.float32))
        self._matrix = m
        return m

    def scores(self, vector: Any, prefixes: Sequence[str], *, limit: int = 0,
               keep: Callable[[str], bool] | None = None) -> dict[str, tuple[float, int, int]]:
        """The best chunk of each readable file: path -> (cosine, start line, stop line).

        Only rows under `prefixes` are scored ("" is everything), and of those
        only files `keep` accepts (a type or date filter): the filter is part
        of the query, not applied to its top-k. With `limit`, only the `limit`
        best files (by their best chunk) are returned.
        """
        np = self._np
        with self._lock:
            m = self._load()
        out: dict[str, tuple[float, int, int]] = {}
        if not m.paths:
            return out
        q = np.asarray(vector, dtype=np.float32)
        spans = _slices(m.paths, prefixes)
        if not spans:
            return out
        rows = np.concatenate([np.arange(lo, hi) for lo, hi in spans]) if len(spans) > 1 else None
        if keep is not None:
            every = rows if rows is not None else np.arange(spans[0][0], spans[0][1])
            rows = every[np.fromiter((keep(m.paths[int(r)]) for r in every), dtype=bool, count=len(every))]
            if not len(rows):
                return out
        part = m.vectors[rows] if rows is not None else m.vectors[spans[0][0] : spans[0][1]]
        # einsum rather than `@`: a BLAS matrix-vector product starts OpenBLAS's threads, which on a
        # busy machine took 23 ms instead of 0.03 for 2,000 rows; einsum's own loop is steady.
        sims = np.einsum("ij,j->i", part, q)
        base = spans[0][0]
        take = len(sims) if not limit else min(len(sims), limit * 4)
        while True:
            top = np.argpartition(-sims, take - 1)[:take] if take < len(sims) else np.arange(len(sims))
            for i in top[np.argsort(-sims[top], kind="stable")]:
                row = int(rows[i]) if rows is not None else base + int(i)
                path = m.paths[row]
                if path not in out:
                    out[path] = (float(sims[i]), m.starts[row], m.stops[row])
                    if limit and len(out) == limit:
                        return out
            if take >= len(sims):
                return out
            out.clear()
            take = min(len(sims), take * 4)

    def sample(self, n: int = 200) -> list[str]:
        """A chunk's text of each of up to `n` files (what tells which scripts a memory is written in)."""
        with self._lock:
            return [t for (t,) in self._db.execute("SELECT text FROM chunk GROUP BY path LIMIT ?", (n,))]

    def files(self) -> list[str]:
        """Every path that has chunks, sorted."""
        with self._lock:
            return list(dict.fromkeys(self._load().paths))

    def text(self, path: str, start: int) -> str:
        """The chunk of `path` that starts at line `start` (for a snippet)."""
        row = self._db.execute("SELECT text FROM chunk WHERE path = ? AND start = ?", (path, start)).fetchone()
        return "" if row is None else str(row[0])

    def search(self, query: str, k: int, prefixes: Sequence[str]) -> list[tuple[str, float, int, int]]:
        """The `k` files whose best chunk is closest to `query`: (path, cosine, start, stop)."""
        if k < 1 or not query.strip():
            return []
        found = self.scores(self.embedder.embed([query])[0], prefixes)
        best = sorted(found.items(), key=lambda kv: -kv[1][0])[:k]
        return [(p, s, a, b) for p, (s, a, b) in best]

    def close(self) -> None:
        self._db.close()
        stop = getattr(self.embedder, "close", None)  # the local model's bulk threads
        if callable(stop):
            stop()


def _private(path: Path) -> None:
    """Create the database file readable by its owner only: it holds every chunk's text (-wal and -shm
    follow its mode), beside a SQLite store or in a cache folder that other users may list."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        if os.fstat(fd).st_mode & 0o777 != 0o600:  # a file of an older memdir; a chmod only when needed
            os.fchmod(fd, 0o600)
    finally:
        os.close(fd)


def _slices(paths: list[str], prefixes: Sequence[str]) -> list[tuple[int, int]]:
    """Row ranges of the sorted `paths` starting with each prefix (outermost prefixes only)."""
    if "" in prefixes:
        return [(0, len(paths))]
    out = []
    for p in sorted(set(prefixes)):
        if any(p != q and p.startswith(q) for q in prefixes):
            continue
        lo = bisect.bisect_left(paths, p)
        hi = bisect.bisect_left(paths, p + "\U0010ffff")
        if lo < hi:
            out.append((lo, hi))
    return out


def sync(index: VectorIndex, changes: Callable[[int], tuple[int, list[tuple[str, Any]]]],
         read: Callable[[str], Memory | None], progress: Callable[[int, int], None] | None = None) -> int:
    """Bring `index` up to the catalog: `changes(seq)` names what changed since, `read` loads it.

    Returns how many files were looked at; `progress(done, total)` hears of
    each batch. A catalog behind the index (a new store at the same place)
    makes it start over from seq 0.
    """
    seq = index.seq
    now, changed = changes(seq)
    if now < seq:
        now, changed = changes(0)
        index.update([(p, None) for p in index.versions()], None)
    if not changed and now == seq:
        return 0
    have = index.versions() if changed else {}
    todo: list[tuple[str, Memory | None]] = []
    latest = dict(changed)
    for done, (path, entry) in enumerate(latest.items(), 1):
        if entry is not None and have.get(path) == entry.version:
            continue
        todo.append((path, None if entry is None else read(path)))
        if len(todo) >= 256:
            index.update(todo)
            todo = []
            if progress is not None:
                progress(done, len(latest))
    index.update(todo, now)
    if progress is not None:
        progress(len(latest), len(latest))
    return len(changed)
