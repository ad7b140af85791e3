"""`memdir import DIR`: bring in an existing memory folder.

Topic files are copied with their relative paths. The folder's MEMORY.md (if
any) fills in what the files lack: link lines `- [title](file.md) — desc` and
pipe lines `- path | description #category`; a `## Section` heading or a
`#category` that names a configured type becomes the type.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import index, model, paths
from .errors import MemdirError
from .memdir import ANY, Memdir
from .paths import INDEX_NAME


@dataclass
class ImportResult:
    imported: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, why)
    unmapped: list[tuple[int, str]] = field(default_factory=list)  # index lines not understood
    dangling: list[str] = field(default_factory=list)  # index lines naming files that are not there

    def to_dict(self) -> dict[str, Any]:
        return {
            "imported": self.imported,
            "unchanged": self.unchanged,
            "skipped": [{"path": p, "why": w} for p, w in self.skipped],
            "unmapped_index_lines": [{"line": n, "text": t} for n, t in self.unmapped],
            "index_lines_without_file": self.dangling,
        }

    def summary(self) -> str:
        out = [f"imported {len(self.imported)} files" + (f", {len(self.unchanged)} unchanged" if self.unchanged else "")]
        for path, why in self.skipped:
            out.append(f"skipped {path}: {why}")
        for number, text in self.unmapped:
            out.append(f"could not map MEMORY.md line {number}: {text.strip()}")
        for path in self.dangling:
            out.append(f"MEMORY.md names {path}, which is not in the folder")
        return "\n".join(out)


def _source_files(source: Path) -> list[str]:
    found = []
    for folder, dirs, files in os.walk(source):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        rel = Path(folder).relative_to(source).as_posix()
        for name in sorted(files):
            if name.endswith(".md") and name != INDEX_NAME and not name.startswith("."):
                found.append(name if rel == "." else f"{rel}/{name}")
    return found


def import_dir(md: Memdir, source: str | os.PathLike[str], *, overwrite: bool = False) -> ImportResult:
    """Import every topic file under `source`; report what could not be imported and why."""
    root = Path(source)
    result = ImportResult()
    hints: dict[str, index.IndexLine] = {}
    index_file = root / INDEX_NAME
    if index_file.is_file():
        lines, result.unmapped = index.parse(index_file.read_text(encoding="utf-8", errors="replace"))
        for item in lines:
            hints[item.path.lstrip("./")] = item
    files = _source_files(root)
    result.dangling = sorted(p for p in hints if p not in set(files))
    for rel in files:
        try:
            path = paths.topic_path(rel)
            text = (root / rel).read_text(encoding="utf-8")
        except UnicodeDecodeError:
            result.skipped.append((rel, "not UTF-8 text"))
            continue
        except MemdirError as e:
            result.skipped.append((rel, e.message))
            continue
        try:
            meta, _ = model.parse(text, path=path, strict=True)
        except MemdirError as e:
            result.skipped.append((rel, e.message))
            continue
        extra: dict[str, Any] = {}
        hint = hints.get(rel)
        if hint is not None:
            if not meta.get("description") and hint.description:
                extra["description"] = model.clip(hint.description, md.limits.max_description)
            if not meta.get("name") and hint.title and hint.title != rel and hint.title != rel.rsplit("/", 1)[-1]:
                extra["name"] = model.clip(hint.title, md.limits.max_name)
            if not meta.get("type"):
                for candidate in (hint.category, (hint.section or "").strip().lower()):
                    if candidate and candidate.lower() in md.limits.types:
                        extra["type"] = candidate.lower()
                        break
                else:
                    if hint.category:
                        extra["tags"] = list(model.tags_of(meta.get("tags"))) + [hint.category]
        try:
            m = md.write(path, text, expect=ANY if overwrite else None, **extra)
        except MemdirError as e:
            why = e.message
            if why.startswith(path + " already exists"):
                why = "already in the memory (use --overwrite to replace it)"
            result.skipped.append((rel, why))
            continue
        (result.unchanged if m.change == "unchanged" else result.imported).append(path)
    return result
