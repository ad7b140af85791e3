"""LangGraph's `BaseStore` over a `Memdir`: long-term memory for graphs, agents and LangMem, as markdown files.

    import memdir
    from memdir.adapters.langgraph import MemdirStore

    store = MemdirStore(memdir.open("memory"))
    graph = builder.compile(store=store)          # or create_agent(..., store=store), LangMem's tools, StoreBackend
    store.put(("users", "u1"), "prefs", {"content": "Likes short answers.", "lang": "en"})

An item is one topic file: namespace labels are folders, the key is the file
name, and the file keeps the key and the value in its frontmatter with
`value["content"]` (when it is text) as the body, so a person reads and edits
it like any memory, and every put and delete is journaled (history, undo).

    ---
    name: prefs
    langgraph:
      key: prefs
      body: content
      value:
        lang: en
      created_at: '2026-12-03T10:00:00.123456+00:00'
      updated_at: '2026-12-03T10:00:00.123456+00:00'
    created: 2026-12-03T10:00:00Z
    updated: 2026-12-03T10:00:00Z
    ---
    Likes short answers.

Names: keys and labels are case-sensitive strings, and memdir paths must not
differ only by case, so a name keeps `a-z`, `0-9`, `-`, `_` (and, in a key, a
`.` after the first character), writes an upper-case letter as `^` and the
letter (`Prefs` -> `^prefs`) and any other character as `+` and its UTF-8
bytes in hex (`/notes.md` -> `+2fnotes.md`); the empty key is `+`. The
mapping is reversible and has no collisions; a key whose name would pass 200
bytes is cut and ends with `~` and a hash of it (the key is in the file).
Files in the store's folder that memdir or a person wrote without the
`langgraph:` block are items too, when their names decode: their value is
`{"content": body}`.

Semantics (BaseStore's, as LangGraph's own `InMemoryStore` and `PostgresStore`
keep them; `tests/adapters/test_langgraph.py` runs both on generated
sequences): results come in op order; the reads of a batch see the state
before it, and its writes land together in one commit (`Memdir.apply`), the
last put of a key winning; `value=None` deletes, and deleting a missing key is
a no-op; `created_at` survives updates; a search without a query is newest
first with `score=None`, with a query best first by memdir's search (name and
body) with its score; filters match exactly or with `$eq`, `$ne`, `$gt`,
`$gte`, `$lt`, `$lte` (a comparison with a missing or non-numeric field does
not match); `list_namespaces` takes a prefix, a suffix, `*` and `max_depth`.

Extension: `put(..., expect=version)` and `delete(..., expect=version)` are
compare-and-swap (`expect=None`: the item must not exist yet); items this
store returns are `MemdirItem`/`MemdirSearchItem`, which carry `.version`. A
failed check raises `memdir.Conflict`, and nothing of the batch is written.

Left out: TTLs (`supports_ttl` is False: memdir never expires a memory; the
base class refuses a `ttl`), and the `index=` argument and vector index
configuration (memdir's search is lexical, or its own semantic layer when
installed). memdir's limits apply to values: a file of at most 200 lines and
25 KB, a frontmatter of at most 8 KB nesting at most 8 levels, JSON values
only, and no credentials (the secret guard); a refused put raises the
`memdir.MemdirError` that says why.
"""

from __future__ import annotations

import asyncio
import builtins
import datetime as dt
import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Literal

import yaml
from langgraph.store.base import (
    NOT_PROVIDED,
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    NotProvided,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    validate_op_namespace,
)

from .. import paths
from ..core.memdir import Memdir
from ..core.ops import ANY
from ..core.ops import Op as MemdirOp  # langgraph has its own Op
from ..errors import Conflict, InvalidArgument, InvalidPath, NotFound
from ..model import Entry, Memory

__all__ = ["MemdirItem", "MemdirSearchItem", "MemdirStore"]

BLOCK = "langgraph"  # the frontmatter key holding an item's key, value and timestamps
NAME_BYTES = 200  # a key's file name past this is cut and ends with ~ and a hash
_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_")
_HEX = frozenset("0123456789abcdef")
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class MemdirItem(Item):
    """A LangGraph `Item` with the memdir version it was read at, for `put(..., expect=item.version)`."""

    __slots__ = ("version",)

    def __init__(self, *, version: str, **fields: Any) -> None:
        super().__init__(**fields)
        self.version = version


class MemdirSearchItem(SearchItem):
    """A LangGraph `SearchItem` with the memdir version it was read at."""

    __slots__ = ("version",)

    def __init__(self, *, version: str, **fields: Any) -> None:
        super().__init__(**fields)
        self.version = version


# ---------------------------------------------------------------- names


def _pieces(name: str, key: bool) -> Iterator[str]:
    for i, ch in enumerate(name):
        if ch in _PLAIN or (key and ch == "." and i):
            yield ch
        elif "A" <= ch <= "Z":
            yield "^" + ch.lower()
        else:
            yield "".join(f"+{b:02x}" for b in ch.encode("utf-8", "surrogatepass"))


def encode(name: str, *, key: bool = False) -> str:
    """A label or key as a path component: reversible, without upper case, never a reserved name."""
    text = "".join(_pieces(name, key))
    if not text:
        return "+"  # the empty key
    if text in ("memory", "tenants"):  # MEMORY.md is the generated index, tenants/ another tenant's memory
        return "+" + f"{ord(text[0]):02x}" + text[1:]
    return text


def decode(text: str, *, key: bool = False) -> str | None:
    """The label or key a path component encodes, or None if `encode` would not have written it."""
    if text == "+":
        return "" if key else None
    raw = bytearray()
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "^" and i + 1 < len(text) and "a" <= text[i + 1] <= "z":
            raw.append(ord(text[i + 1].upper()))
            i += 2
        elif ch == "+" and i + 3 <= len(text) and text[i + 1] in _HEX and text[i + 2] in _HEX:
            raw.append(int(text[i + 1 : i + 3], 16))
            i += 3
        elif ch in _PLAIN or ch == ".":
            raw.append(ord(ch))
            i += 1
        else:
            return None
    try:
        name = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return name if encode(name, key=key) == text else None


def file_name(key: str) -> str:
    """The file name (without .md) of a key; a long one is cut after a whole character and hashed."""
    text = encode(key, key=True)
    if len(text) <= NAME_BYTES:
        return text
    head: builtins.list[str] = []
    size = 0
    for piece in _pieces(key, True):
        if size + len(piece) > NAME_BYTES - 40:
            break
        head.append(piece)
        size += len(piece)
    return "".join(head) + "~" + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _hashed(stem: str) -> bool:
    head, tilde, digest = stem.rpartition("~")
    return bool(tilde) and len(digest) == 32 and set(digest) <= _HEX and decode(head, key=True) is not None


# ---------------------------------------------------------------- values


def _stamp(value: Any) -> dt.datetime | None:
    if isinstance(value, dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=dt.UTC)
    if not isinstance(value, str):
        return None
    try:
        when = dt.datetime.fromisoformat(value)
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=dt.UTC)


def _plain(value: Any) -> Any:
    """Parsed frontmatter as JSON types (memdir hands back a date it parsed as a str subclass)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, str) and type(value) is not str:
        return str(value)
    return value


def _json(value: Mapping[str, Any], where: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise InvalidArgument(f"{where}: a value must be a dict, got {type(value).__name__}")
    try:
        text = json.dumps(dict(value), allow_nan=False)
        text.encode("utf-8")
    except (TypeError, ValueError) as e:
        raise InvalidArgument(f"{where}: a value must be JSON (dicts, lists, text, numbers, booleans, null): {e}") from None
    out: dict[str, Any] = json.loads(text)
    return out


def render(key: str, value: dict[str, Any], created: dt.datetime, updated: dt.datetime) -> str:
    """The topic file of an item: its key, value and times in frontmatter, value["content"] (text) as the body."""
    rest = dict(value)
    block: dict[str, Any] = {"key": key}
    body = ""
    if isinstance(rest.get("content"), str):
        body = rest.pop("content")
        block["body"] = "content"
    block |= {"value": rest, "created_at": created.isoformat(), "updated_at": updated.isoformat()}
    meta: dict[str, Any] = {}
    if key and len(key) <= 100 and key.isprintable() and key == key.strip():
        meta["name"] = key  # the index line shows the key
    meta[BLOCK] = block
    head = yaml.dump(meta, Dumper=_DUMPER, sort_keys=False, allow_unicode=True, default_flow_style=False, width=1 << 16)
    return f"---\n{head}---\n{body}"


def _conditions(found: Iterable[tuple[str, ...]], conditions: tuple[MatchCondition, ...] | None) -> builtins.list[tuple[str, ...]]:
    return [ns for ns in found if all(_matches(c, ns) for c in conditions or ())]


def _matches(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    if condition.match_type == "prefix":
        pairs = zip(namespace, path, strict=False)
    elif condition.match_type == "suffix":
        pairs = zip(reversed(namespace), reversed(path), strict=False)
    else:
        raise ValueError(f"Unsupported match type: {condition.match_type}")
    return all(want == "*" or have == want for have, want in pairs)


def _passes(value: Mapping[str, Any], where: Mapping[str, Any] | None) -> bool:
    return all(_compare(value.get(k), want) for k, want in (where or {}).items())


def _compare(have: Any, want: Any) -> bool:
    """A filter's match, as LangGraph's stores compare JSON values (nested dicts, lists, operators)."""
    if isinstance(want, dict):
        if any(isinstance(k, str) and k.startswith("$") for k in want):
            return all(_operator(have, op, arg) for op, arg in want.items())
        return isinstance(have, dict) and all(_compare(have.get(k), v) for k, v in want.items())
    if isinstance(want, (list, tuple)):
        return isinstance(have, (list, tuple)) and len(have) == len(want) and all(map(_compare, have, want))
    return bool(have == want)


def _operator(have: Any, op: str, arg: Any) -> bool:
    if op == "$eq":
        return bool(have == arg)
    if op == "$ne":
        return bool(have != arg)
    if op not in ("$gt", "$gte", "$lt", "$lte"):
        raise ValueError(f"Unsupported operator: {op}")
    try:
        a, b = float(have), float(arg)
    except (TypeError, ValueError):
        return False  # a missing or non-numeric field never compares (PostgreSQL's JSONB answers no, not an error)
    return {"$gt": a > b, "$gte": a >= b, "$lt": a < b, "$lte": a <= b}[op]


# ---------------------------------------------------------------- the store


class MemdirStore(BaseStore):
    """LangGraph's `BaseStore` on a `Memdir`: each item a topic file under `folder` (the whole memory by default).

    `md` may be any view: `md.scope(...)` confines the store to a principal's
    folders, `md.for_agent()` adds the agent rate limit. Thread-safe; the async
    methods run the same calls in a worker thread.
    """

    supports_ttl: bool = False

    def __init__(self, md: Memdir, *, folder: str = "", retries: int = 3) -> None:
        self.md = md
        self.folder = paths.folder(folder)
        self.retries = retries  # a batch that met a concurrent write is read and planned again this often

    # ------------------------------------------------------------ BaseStore

    def batch(self, ops: Iterable[Op]) -> builtins.list[Result]:
        return self._batch(builtins.list(ops), {})

    async def abatch(self, ops: Iterable[Op]) -> builtins.list[Result]:
        return await asyncio.to_thread(self._batch, builtins.list(ops), {})

    def put(self, namespace: tuple[str, ...], key: str, value: Mapping[str, Any],
            index: Literal[False] | builtins.list[str] | None = None, *,
            ttl: float | None | NotProvided = NOT_PROVIDED, expect: Any = ANY) -> None:
        """`BaseStore.put`; `expect=` a version (`item.version`) or None makes it a compare-and-swap."""
        if expect is ANY:
            return super().put(namespace, key, value, index, ttl=ttl)
        self._checked_put(namespace, key, value, ttl)
        self._batch([PutOp(namespace, str(key), value, index)], {0: expect})

    async def aput(self, namespace: tuple[str, ...], key: str, value: Mapping[str, Any],
                   index: Literal[False] | builtins.list[str] | None = None, *,
                   ttl: float | None | NotProvided = NOT_PROVIDED, expect: Any = ANY) -> None:
        if expect is ANY:
            return await super().aput(namespace, key, value, index, ttl=ttl)
        self._checked_put(namespace, key, value, ttl)
        await asyncio.to_thread(self._batch, [PutOp(namespace, str(key), value, index)], {0: expect})

    def delete(self, namespace: tuple[str, ...], key: str, *, expect: Any = ANY) -> None:
        """`BaseStore.delete`; with `expect=` the item must still be at that version (None: must not exist)."""
        if expect is ANY:
            return super().delete(namespace, key)
        self._batch([PutOp(namespace, str(key), None)], {0: expect})

    async def adelete(self, namespace: tuple[str, ...], key: str, *, expect: Any = ANY) -> None:
        if expect is ANY:
            return await super().adelete(namespace, key)
        await asyncio.to_thread(self._batch, [PutOp(namespace, str(key), None)], {0: expect})

    def _checked_put(self, namespace: tuple[str, ...], key: str, value: Mapping[str, Any], ttl: Any) -> None:
        """What `BaseStore.put` checks before its batch, for the compare-and-swap put that skips it."""
        if ttl not in (NOT_PROVIDED, None):
            raise NotImplementedError(f"TTL is not supported by {type(self).__name__}. "
                                      "Use a store implementation that supports TTL or set ttl=None.")
        if not namespace:
            raise InvalidNamespaceError("Namespace cannot be empty.")
        if namespace[0] == "langgraph":
            raise InvalidNamespaceError(f'Root label for namespace cannot be "langgraph". Got: {namespace}')

    # ------------------------------------------------------------ one batch

    def _batch(self, ops: builtins.list[Op], expects: dict[int, Any]) -> builtins.list[Result]:
        for op in ops:
            validate_op_namespace(op)
        results: builtins.list[Result] = [None] * len(ops)
        puts: dict[tuple[tuple[str, ...], str], tuple[int, PutOp]] = {}
        for i, op in enumerate(ops):  # every read first: they see the store as it was before the batch
            if isinstance(op, GetOp):
                results[i] = self._get(tuple(op.namespace), op.key)
            elif isinstance(op, SearchOp):
                results[i] = self._search(op)
            elif isinstance(op, ListNamespacesOp):
                results[i] = self._namespaces(op)
            elif isinstance(op, PutOp):
                puts[(tuple(op.namespace), op.key)] = (i, op)  # the last put of a key wins
            else:
                raise ValueError(f"Unknown operation type: {type(op)}")
        if puts:
            self._write(builtins.list(puts.values()), expects)
        return results

    def _write(self, puts: builtins.list[tuple[int, PutOp]], expects: dict[int, Any]) -> None:
        """Every put and delete of a batch in one commit, planned on what each file holds now."""
        checked = any(i in expects for i, _ in puts)
        for attempt in range(self.retries + 1):
            now = dt.datetime.now(dt.UTC)
            changes: builtins.list[MemdirOp] = []
            for i, op in puts:
                namespace = tuple(op.namespace)
                path = self._path(namespace, op.key)
                cur = self._read(path)
                held = None if cur is None else self._item(cur, namespace, op.key)
                want = expects.get(i, ANY)
                if held is None and cur is not None:  # a file holding another key (a copied block): never overwritten
                    raise Conflict(f"{path} holds another key than {op.key!r}; move or delete that file first", path=path)
                if cur is None and want not in (ANY, None):
                    raise Conflict(f"{path} does not exist (expected version {want}); it was deleted", path=path)
                if op.value is None:
                    if cur is None:
                        continue  # deleting what is not there changes nothing
                    changes.append(MemdirOp.delete(path, expect=cur.version if want is ANY and cur else want))
                    continue
                value = _json(op.value, path)
                created = held.created_at if held is not None else now
                text = render(op.key, value, created, now)
                changes.append(MemdirOp.write(path, text, expect=memdir_version(cur) if want is ANY else want))
            if not changes:
                return
            try:
                self.md.apply(changes)
                return
            except (Conflict, NotFound):
                if checked or attempt == self.retries:
                    raise
                # another writer changed one of these files since it was read: read them again

    # ------------------------------------------------------------ reads

    def _path(self, namespace: tuple[str, ...], key: str) -> str:
        if not isinstance(key, str):
            raise InvalidArgument(f"a key must be text, got {type(key).__name__}")
        return self.folder + "".join(encode(label) + "/" for label in namespace) + file_name(key) + ".md"

    def _read(self, path: str) -> Memory | None:
        try:
            return self.md.read(path)
        except (NotFound, InvalidPath):
            return None

    def _get(self, namespace: tuple[str, ...], key: str) -> MemdirItem | None:
        try:
            path = self._path(namespace, key)
        except InvalidArgument:
            return None
        mem = self._read(path)
        return None if mem is None else self._item(mem, namespace, key)

    def _item(self, mem: Memory, namespace: tuple[str, ...], key: str | None = None) -> MemdirItem | None:
        """The item a topic file holds (None if it holds another key, or no readable item)."""
        block = mem.meta.get(BLOCK)
        stem = mem.path.rsplit("/", 1)[-1][:-3]
        if isinstance(block, dict) and isinstance(block.get("key"), str) and isinstance(block.get("value", {}), dict):
            found: str = block["key"]
            if file_name(found) != stem:
                return None  # a block copied into another file: the name decides
            value = _plain(block.get("value") or {})
            if block.get("body") == "content":
                value["content"] = mem.body
            created, updated = _stamp(block.get("created_at")), _stamp(block.get("updated_at"))
        else:  # a file memdir or a person wrote: its body is the content
            decoded = decode(stem, key=True)
            if decoded is None:
                return None
            found, value = decoded, {"content": mem.body}
            created, updated = _stamp(mem.created), _stamp(mem.updated)
        if key is not None and found != key:
            return None
        edited = _stamp(mem.updated)  # memdir's own stamp, to the second: later when a person edited the file
        if edited is not None and (updated is None or edited - updated > dt.timedelta(seconds=1)):
            updated = edited
        updated = updated or created or dt.datetime.now(dt.UTC)
        return MemdirItem(value=value, key=found, namespace=namespace, created_at=created or updated, updated_at=updated,
                          version=mem.version)

    def _place(self, path: str) -> tuple[tuple[str, ...], str] | None:
        """(namespace, file stem) of a topic file under the store's folder, or None if it names no item."""
        parts = path[len(self.folder) :].split("/")
        if len(parts) < 2:
            return None  # beside the namespaces, not in one
        labels = [decode(p) for p in parts[:-1]]
        stem = parts[-1][:-3]
        if any(label is None for label in labels) or (decode(stem, key=True) is None and not _hashed(stem)):
            return None
        return tuple(label for label in labels if label is not None), stem

    def _candidates(self, prefix: tuple[str, ...]) -> builtins.list[tuple[Entry, tuple[str, ...]]]:
        if any(not isinstance(label, str) or not label for label in prefix):
            return []
        folder = self.folder + "".join(encode(label) + "/" for label in prefix)
        out = []
        for entry in self.md.list(folder):
            place = self._place(entry.path)
            if place is not None:
                out.append((entry, place[0]))
        return out

    def _search(self, op: SearchOp) -> builtins.list[SearchItem]:
        if op.query:
            return self._ranked(op)
        stop = op.offset + op.limit if op.offset >= 0 and op.limit >= 0 else None
        found: builtins.list[MemdirItem] = []
        groups: dict[str, builtins.list[tuple[Entry, tuple[str, ...]]]] = {}
        for entry, namespace in self._candidates(tuple(op.namespace_prefix)):
            groups.setdefault(entry.updated or "", []).append((entry, namespace))
        for second in sorted(groups, reverse=True):  # newest first: memdir's stamp, then the item's own time
            batch = [item for entry, namespace in groups[second]
                     if (mem := self._read(entry.path)) is not None and (item := self._item(mem, namespace)) is not None
                     and _passes(item.value, op.filter)]
            batch.sort(key=lambda item: (item.namespace, item.key))
            batch.sort(key=lambda item: item.updated_at, reverse=True)
            found += batch
            if stop is not None and len(found) >= stop:
                break
        return [_search_item(item, None) for item in found[op.offset : op.offset + op.limit]]

    def _ranked(self, op: SearchOp) -> builtins.list[SearchItem]:
        """Best first by memdir's search; a filter is applied to the hits, asking for more until enough pass."""
        assert op.query is not None
        prefix = tuple(op.namespace_prefix)
        if any(not isinstance(label, str) or not label for label in prefix):
            return []
        folder = self.folder + "".join(encode(label) + "/" for label in prefix)
        want = max(op.offset, 0) + max(op.limit, 0)
        k = max(want, 10)
        while True:
            hits = self.md.search(op.query, k=k, prefix=folder)
            found: builtins.list[SearchItem] = []
            for hit in hits:
                place = self._place(hit.path)
                mem = None if place is None else self._read(hit.path)
                item = None if mem is None or place is None else self._item(mem, place[0])
                if item is not None and _passes(item.value, op.filter):
                    found.append(_search_item(item, float(hit.score)))
            if len(found) >= want or len(hits) < k:
                return found[op.offset : op.offset + op.limit]
            k *= 4

    def _namespaces(self, op: ListNamespacesOp) -> builtins.list[tuple[str, ...]]:
        seen = {namespace for _, namespace in self._candidates(())}
        found = _conditions(seen, op.match_conditions)
        if op.max_depth is not None:
            found = builtins.list({ns[: op.max_depth] for ns in found})
        return sorted(found)[op.offset : op.offset + op.limit]


def memdir_version(mem: Memory | None) -> str | None:
    """What `expect=` names for a file as read (None: it does not exist)."""
    return None if mem is None else mem.version


def _search_item(item: MemdirItem, score: float | None) -> MemdirSearchItem:
    return MemdirSearchItem(namespace=item.namespace, key=item.key, value=item.value, created_at=item.created_at,
                            updated_at=item.updated_at, score=score, version=item.version)
