"""`memdir export`: the memory as files another tool reads, the way back from an import.

`export_dir` writes every topic file as it is stored (frontmatter and all)
at its path under a folder, and a MEMORY.md holding the notes kept beside
memdir's index (what a Claude Code folder's MEMORY.md was when imported),
so an import followed by an export gives the source's files back. The MCP
memory server's `memory.jsonl` is `mcp_memory.export_mcp_memory`. Export is
a read: nothing in the memory changes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import model
from ..core import index
from ..core.memdir import Memdir
from ..errors import InvalidArgument, MemdirError
from ..paths import INDEX_NAME


@dataclass
class FolderExport:
    files: int = 0
    lines: int = 0
    notes: list[str] = field(default_factory=list)  # the MEMORY.md files written with kept notes
    left_out: list[tuple[str, str]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"files": self.files, "lines": self.lines, "kept_notes": self.notes,
                "left_out": [{"path": p, "why": w} for p, w in self.left_out]}

    def summary(self) -> str:
        out = [f"exported {self.files} files ({self.lines:,} lines)"]
        out += [f"wrote {p} with the notes kept beside memdir's index" for p in self.notes]
        out += [f"left out {p}: {w}" for p, w in self.left_out]
        return "\n".join(out)


def _write(root: Path, rel: str, text: str) -> None:
    target = root / rel
    if target.exists() and not target.is_file():
        raise InvalidArgument(f"{target} is in the way (not a file); export into an empty folder")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")


def export_dir(md: Memdir, destination: str | os.PathLike[str]) -> FolderExport:
    """Write every topic file as stored, and each kept MEMORY.md part, under `destination`."""
    root = Path(destination)
    if root.exists() and any(root.iterdir()):
        raise InvalidArgument(f"{root} is not empty; export into a new or empty folder so nothing there is overwritten")
    result = FolderExport()
    folders = {""}
    try:
        for entry in md.list():
            try:
                _, text, _ = md.read_text(entry.path)
            except MemdirError as e:
                result.left_out.append((entry.path, e.message))
                continue
            _write(root, entry.path, text)
            result.files += 1
            result.lines += model.count_lines(text)
            parts = entry.path.split("/")[:-1]
            folders |= {"/".join(parts[: i + 1]) + "/" for i in range(len(parts))}
        for folder in sorted(folders):
            kept = index.kept(md.index(folder)) if md.principal is None else index.Kept()
            if not kept.empty:
                _write(root, folder + INDEX_NAME, kept.before + kept.after)
                result.notes.append(folder + INDEX_NAME)
                result.files += 1
                result.lines += model.count_lines(kept.before + kept.after)
    except OSError as e:
        raise InvalidArgument(f"cannot write under {root} ({e.strerror or e}); give a folder you may write") from None
    return result
