"""A person the question names: a file whose title or tags name them ranks above another's file on the same words."""

from __future__ import annotations

from pathlib import Path

import memdir
from memdir.search import lexical

CHAT = {  # one file per message, titled by who wrote it, as a conversation memory keeps them
    "chat/m1.md": ("Ana, 3 May", "Went to the shop with my sister, we looked at a lot of things and in the end I bought "
                                 "a second-hand guitar, a small one, for the flat."),
    "chat/m2.md": ("Ben, 3 May", "Guitar strings! I need guitar strings."),
    "chat/m3.md": ("Ben, 4 May", "My guitar teacher says guitar practice daily."),
    "chat/m4.md": ("Ana, 4 May", "Work was long today."),
    "chat/m5.md": ("Ben, 5 May", "The guitar shop closes early."),
    "chat/m6.md": ("Ana, 5 May", "Sleeping in tomorrow."),
} | {f"chat/m{n}.md": (("Ana" if n % 2 else "Ben") + f", {n} June", f"Lunch at {n}, then the bus home.")
     for n in range(7, 40)}


def test_a_file_titled_by_the_person_asked_about_ranks_first(tmp_path: Path) -> None:
    with memdir.open(tmp_path / "memory") as md:
        for path, (name, body) in CHAT.items():
            md.write(path, body, name=name)
        question = "What guitar did Ana buy?"
        hits = md.search(question, mode="lexical")
        assert hits[0].path == "chat/m1.md"
        explained = md.explain(question, mode="lexical")
        assert explained.hits[0].signals is not None and explained.hits[0].signals.people == 1.0 + lexical.PEOPLE
        assert all(h.signals is None or not h.signals.people for h in explained.hits if h.name.startswith("Ben"))
        # Without a name in the question, the words alone decide.
        assert md.search("what guitar", mode="lexical")[0].path != "chat/m1.md"
