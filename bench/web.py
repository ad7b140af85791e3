"""How fast the web page answers on a big memory: `python bench/web.py [FILES]`.

Builds a folder memory of FILES topic files (default 10,000, in 20 folders,
one journal record each, then 2,000 more changes by three actors), serves it
like `memdir serve --http`, and times each page over real HTTP: the first
request (catalog, search index and link graph loaded on first use) and the
median and p95 of the next 20.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
import urllib.request

import memdir
from memdir.core.memdir import Op
from memdir.faces import http
from memdir.faces.auth import Memories, Principal, Principals

PAGES = ["/", "/ui/list?folder=f07/", "/ui/file/f03/note-00042.md", "/ui/edit/f03/note-00042.md",
         "/ui/search?q=depot+importer", "/ui/changes", "/ui/changes?actor=agent-1&since=today",
         "/ui/history/f03/note-00042.md", "/ui/pictures"]


def build(root: str, files: int) -> None:
    md = memdir.open(root)
    ops = [Op.write(f"f{i % 20:02d}/note-{i:05d}.md",
                    f"---\ndescription: note {i} about the depot importer, part {i % 97}\ntype: project\n---\n"
                    f"Note {i}. The depot importer parses, validates and loads; see [[note-{(i + 1) % files:05d}]].\n")
           for i in range(files)]
    for start in range(0, len(ops), 500):
        md.apply(ops[start:start + 500])
    md.close()
    for a in range(3):
        agent = memdir.open(root, actor=f"agent-{a}")
        for i in range(2000 // 3):
            agent.write(f"f03/note-{(i * 7 + a) % 200:05d}.md" if i % 5 else "f03/note-00042.md", f"Edit {i} by agent {a}.\n")
        agent.close()


def main(files: int) -> None:
    import uvicorn

    root = tempfile.mkdtemp(prefix="memdir-bench-web-")
    t = time.perf_counter()
    build(root, files)
    print(f"built {files:,} files and {files + 2000:,} journal records in {time.perf_counter() - t:.0f} s")
    memories = Memories(root, transport="http", watch=False)
    principals = Principals(Principal("default"))
    sock = http.listen("127.0.0.1", 0)
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    server = uvicorn.Server(http.config(http.build(principals, memories, host="127.0.0.1")))
    threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True).start()
    while not server.started:
        time.sleep(0.01)

    def get(path: str) -> float:
        start = time.perf_counter()
        with urllib.request.urlopen(urllib.request.Request(url + path, headers={"Accept": "text/html"})) as r:
            r.read()
            assert r.status == 200, path
        return (time.perf_counter() - start) * 1000

    print(f"{'page':45} {'first ms':>9} {'median ms':>10} {'p95 ms':>8}")
    for page in PAGES:
        first = get(page)
        times = sorted(get(page) for _ in range(20))
        print(f"{page:45} {first:9.1f} {statistics.median(times):10.1f} {times[18]:8.1f}")
    server.should_exit = True
    memories.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="?", type=int, default=10_000, help="topic files in the memory (10,000)")
    main(parser.parse_args().files)
