"""Derived work after the write: a long-lived process lets MEMORY.md and the search rows trail its writes.

A write is durable when the store commits it; MEMORY.md files and the search
index are derived from the journal and catch up from it after a crash. So a
server (MCP, HTTP) can answer a write as soon as it is committed and bring the
derived files along a few milliseconds later, once for a burst of writes. The
`Flusher` is the clock for that: a daemon thread that calls `flush` when the
writes pause for `quiet` seconds, or `most` seconds after the first write it
has not flushed, whichever comes first. Reads that need the derived state in
the same process (the index as stored, search) flush first; `close` flushes.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

log = logging.getLogger(__name__)

QUIET = 0.02  # seconds without a write before the derived files are brought along
MOST = 0.25  # seconds a derived file may trail the first write it misses, in a steady stream of writes


class Flusher:
    """Calls `flush` on its own thread once writes pause (see the module docstring)."""

    def __init__(self, flush: Callable[[], None], *, quiet: float = QUIET, most: float = MOST) -> None:
        self._flush = flush
        self.quiet, self.most = quiet, most
        self._cond = threading.Condition(threading.Lock())
        self._first = 0.0  # monotonic time of the first write not flushed; 0: nothing waits
        self._last = 0.0
        self._closed = False
        self._thread: threading.Thread | None = None

    def poke(self) -> None:
        """A write left derived work behind."""
        now = time.monotonic()
        with self._cond:
            self._last = now
            if not self._first:
                self._first = now
                if self._thread is None and not self._closed:
                    self._thread = threading.Thread(target=self._run, name="memdir-derive", daemon=True)
                    self._thread.start()
                self._cond.notify()

    def done(self) -> None:
        """Everything poked so far was flushed (by a caller that could not wait)."""
        with self._cond:
            self._first = self._last = 0.0

    def close(self) -> None:
        """Stop the thread; the caller flushes what is left itself."""
        with self._cond:
            self._closed = True
            self._cond.notify()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    def _run(self) -> None:
        with self._cond:
            while not self._closed:
                if not self._first:
                    self._cond.wait()
                    continue
                wait = min(self._last + self.quiet, self._first + self.most) - time.monotonic()
                if wait > 0:
                    self._cond.wait(wait)
                    continue
                self._first = self._last = 0.0
                self._cond.release()
                try:
                    self._flush()
                except Exception as e:  # the next write, flush or process catches the derived files up
                    log.warning("memdir: bringing MEMORY.md and search along after a write failed (%s)", e)
                finally:
                    self._cond.acquire()
