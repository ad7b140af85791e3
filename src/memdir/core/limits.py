"""Limits, schema and rate checks: what a write must pass before it lands.

Every limit has a default, can be set in `memdir.toml` at the root, by an
environment variable `MEMDIR_<NAME>` or as an `open()` keyword; the keyword
wins, then the environment, then the file.

The size of a file is checked by who writes it. What a model writes through
memdir (`agent=True`, `Memdir.for_agent()`: the tools, MCP, HTTP, the memory
tool) keeps to `max_lines` and `max_bytes`, so every read and index stays
small; a person's file (the library and the command line, the web page, an
import, a file dropped in or edited by hand) is kept whole up to
`max_file_bytes`, a ceiling against runaway files, and what is over the agent
limits is flagged (`reconcile`, `doctor`, `stats`, the page). memdir's own
`created`/`updated` lines never count against the lines the writer wrote.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from .. import model
from ..errors import InvalidArgument, InvalidMemory, LimitExceeded
from ..model import count_lines
from ..paths import UNPRINTABLE
from ..stores.locations import CONFIG_FILE

DEFAULT_TYPES = ("user", "feedback", "project", "reference", "session", "diary")
AGENT_DEFAULTS: dict[str, Any] = {"writes_per_minute": 60}
SECTIONS = ("diary", "summarizer", "semantic", "capture", "sync", "history")  # memdir.toml tables other modules read (remember/diary, remember/summarize, search/semantic, remember/capture, remember/gitsync, core/history)
CONTEXT_BUDGET = 2000  # tokens `memdir.context` fills by default (recall.context.DEFAULT_BUDGET)


@dataclass(frozen=True)
class Limits:
    """The checks a write must pass, and how much one tool read returns.

    Zero for `writes_per_minute` means no rate limit (the default for the
    library and CLI; agent-facing interfaces default to `AGENT_DEFAULTS`).
    """

    max_lines: int = 200
    max_bytes: int = 25 * 1024
    max_file_bytes: int = 1024 * 1024  # the ceiling for a file a person writes, drops in or imports
    index_max_lines: int = 200
    index_max_bytes: int = 25 * 1024
    max_name: int = 100
    max_description: int = 300
    writes_per_minute: int = 0
    read_max_lines: int = 200
    read_max_bytes: int = 25 * 1024
    types: tuple[str, ...] = DEFAULT_TYPES
    secret_guard: bool = True

    @classmethod
    def names(cls) -> list[str]:
        return [f.name for f in fields(cls)]


def _coerce(name: str, value: Any, source: str) -> Any:
    kind = {f.name: f.type for f in fields(Limits)}[name]
    try:
        if kind == "tuple[str, ...]":
            items = value.split(",") if isinstance(value, str) else list(value)
            out = tuple(str(v).strip() for v in items if str(v).strip())
            if not out:
                raise ValueError("empty")
            return out
        if kind == "bool":
            if isinstance(value, bool):
                return value
            text = str(value).strip().lower()
            if text in ("1", "true", "yes", "on"):
                return True
            if text in ("0", "false", "no", "off"):
                return False
            raise ValueError(text)
        if isinstance(value, bool):
            raise ValueError(value)
        number = int(value)
        if number < 0:
            raise ValueError(number)
        if number == 0 and name != "writes_per_minute":
            raise ValueError(number)
        return number
    except (TypeError, ValueError):
        want = {"bool": "true or false", "tuple[str, ...]": "a list of names"}.get(str(kind), "a positive integer")
        raise InvalidArgument(f"{source}: {name} = {value!r} is not valid; use {want}") from None


def load(
    root: Path | None,
    options: Mapping[str, Any],
    environ: Mapping[str, str] | None = None,
    *,
    agent: bool = False,
) -> Limits:
    """Resolve limits from `open()` keywords, the environment, `memdir.toml`, then the defaults.

    `agent` selects the defaults for interfaces a model drives (tools, MCP, HTTP).
    """
    environ = os.environ if environ is None else environ
    known = Limits.names()
    values: dict[str, Any] = dict(AGENT_DEFAULTS) if agent else {}
    if root is not None and (root / CONFIG_FILE).is_file():
        cfg = root / CONFIG_FILE
        import tomllib  # only where a config file exists

        try:
            data = tomllib.loads(cfg.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
            raise InvalidArgument(f"{cfg}: not valid TOML ({e}); fix or remove the file") from None
        data = data.get("limits", data) if isinstance(data.get("limits"), dict) else data
        for key, value in data.items():
            if key in SECTIONS and isinstance(value, dict):
                continue  # read by the modules they configure
            if key not in known:
                raise InvalidArgument(f"{cfg}: unknown setting {key!r}; known settings: {', '.join(known)}")
            values[key] = _coerce(key, value, str(cfg))
    for key in known:
        env = f"MEMDIR_{key.upper()}"
        if env in environ:
            values[key] = _coerce(key, environ[env], env)
    for key, value in options.items():
        if key not in known:
            raise InvalidArgument(f"open(): unknown option {key!r}; known options: {', '.join(known)}")
        values[key] = _coerce(key, value, "open()")
    return replace(Limits(), **values)


# ---------------------------------------------------------------- schema and size


def _single_line(key: str, value: Any, limit: int, path: str) -> None:
    if not isinstance(value, str):
        raise InvalidMemory(f"{path}: {key} must be text, got {type(value).__name__} {value!r}", path=path)
    if "\n" in value or "\r" in value:
        raise InvalidMemory(f"{path}: {key} must be one line; move the detail into the body", path=path)
    bad = UNPRINTABLE.search(value)
    if bad is not None:
        raise InvalidMemory(
            f"{path}: {key} contains the control character U+{ord(bad.group()):04X}; "
            "remove it (MEMORY.md shows this line to every reader)",
            path=path,
        )
    if len(value) > limit:
        raise InvalidMemory(
            f"{path}: {key} is {len(value)} characters; the limit is {limit}: shorten it and put detail in the body",
            path=path,
            limit=limit,
            actual=len(value),
        )


def check_meta(meta: Mapping[str, Any], path: str, limits: Limits) -> None:
    """Schema checks on frontmatter memdir is about to write."""
    if "name" in meta:
        _single_line("name", meta["name"], limits.max_name, path)
    if "description" in meta:
        _single_line("description", meta["description"], limits.max_description, path)
    if "type" in meta:
        t = meta["type"]
        if not isinstance(t, str) or t not in limits.types:
            raise InvalidMemory(
                f"{path}: type {t!r} is not one of {', '.join(limits.types)}; pick one of those or add it to 'types' in memdir.toml",
                path=path,
            )
    if "tags" in meta:
        tags = meta["tags"]
        if not isinstance(tags, list) or not all(isinstance(t, str) and t and "\n" not in t for t in tags):
            raise InvalidMemory(f"{path}: tags must be a list of one-line words, got {tags!r}", path=path)
    for key in ("created", "updated"):
        if key in meta and not isinstance(meta[key], str):
            raise InvalidMemory(f"{path}: {key} must be an absolute date such as 2026-03-05, got {meta[key]!r}", path=path)


def ceiling(limits: Limits) -> int:
    """The most any file may hold: `max_file_bytes`, and never less than an agent may write."""
    return max(limits.max_file_bytes, limits.max_bytes)


def check_size(text: str, path: str, limits: Limits, *, agent: bool = True) -> None:
    """Line and byte limits over the file with its frontmatter, memdir's own stamps left out: for a model's
    write, `max_lines` and `max_bytes`; for anyone's, the `max_file_bytes` ceiling."""
    size = len(text.encode())
    if agent and (count_lines(text) > limits.max_lines or size > limits.max_bytes):
        written = model.unstamped(text) if size <= ceiling(limits) else text  # past the ceiling: not looked into
        lines = count_lines(written)
        if lines > limits.max_lines:
            raise LimitExceeded(
                f"{path} has {lines} lines; the limit is {limits.max_lines}: split it into smaller topic files or summarise it",
                path=path,
                limit=limits.max_lines,
                actual=lines,
            )
        written_size = len(written.encode())
        if written_size > limits.max_bytes:
            raise LimitExceeded(
                f"{path} is {written_size:,} bytes; the limit is {limits.max_bytes:,}: split it into smaller topic files "
                "or summarise it",
                path=path,
                limit=limits.max_bytes,
                actual=written_size,
            )
    if size > ceiling(limits):
        raise LimitExceeded(
            f"{path} is {size:,} bytes; memdir keeps files up to {ceiling(limits):,}: split it into smaller "
            "topic files, or raise max_file_bytes in memdir.toml",
            path=path,
            limit=ceiling(limits),
            actual=size,
        )


def over(text: str, limits: Limits) -> str | None:
    """What of a file kept whole is over what an agent may write (None: nothing), for `reconcile` and the page."""
    if count_lines(text) <= limits.max_lines and len(text.encode()) <= limits.max_bytes:
        return None
    written = model.unstamped(text)
    lines, size = count_lines(written), len(written.encode())
    if lines > limits.max_lines:
        return f"{lines:,} lines, over the {limits.max_lines:,} an agent may write"
    if size > limits.max_bytes:
        return f"{size:,} bytes, over the {limits.max_bytes:,} an agent may write"
    return None
