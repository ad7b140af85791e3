"""How an English stemmer merges words: the pairs it should merge, and the pairs it must keep apart.

    python bench/stemmer.py

A stemmer lets "deploying" find "deployed"; a greedy one also lets "production"
find "product" and "university" find "universe", and recall then shows files
about something else (issue 30: "how do we deploy to production?" recalled files
about the product). The word lists below are written for this: `SAME` holds
inflections and derivations a person means as one word (deploy, deploys,
deployed, deployment), `APART` words that share a beginning and not a meaning (the first 26 written
first; the rest found among the words of LoCoMo and REALTALK that Porter2 merges).
Each stemmer is scored on both: the share of `SAME` pairs it merges, and the
`APART` pairs it wrongly merges (listed). Not a test: run it, read it, paste it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

import Stemmer

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from memdir.search import text  # noqa: E402

SAME = [tuple(line.split()) for line in """
deploy deploys deployed deploying deployment deployments
configure configured configuring configuration configurations
connect connects connected connecting connection connections
install installs installed installing installation
optimize optimized optimizing optimization
migrate migrates migrated migrating migration migrations
test tests tested testing
run runs running
city cities
study studies studied studying
retry retries retried retrying
invoice invoices invoiced invoicing
adopt adopted adopting adoption
paint painted painting paintings
photograph photographs photographed
authenticate authenticated authentication
recommend recommended recommendation recommendations
schedule scheduled scheduling
release released releases releasing
backup backups
pressure pressures
garden gardens gardening
hike hikes hiked hiking
cook cooks cooked cooking
celebrate celebrated celebrating celebration
volunteer volunteered volunteering
encourage encouraged encouraging encouragement
production productions
experiment experiments experimented experimenting experimental
accountant accountants
engineer engineers engineered engineering
evening evenings
apartment apartments
customer customers
paste pastes pasted pasting
authorize authorized authorizing authorization
account accounts accounted accounting
product products
""".strip().splitlines()]

APART = [tuple(line.split()) for line in """
production product
productive product
university universe
general generous
general generate
experiment experience
communication community
organization organ
organize organ
news new
animal animation
author authority
position positive
international intern
relative relate
operation opera
probe probation
arm army
wand wander
policy police
secure security
generic general
condition condo
pass passion
provision provide
emergency emerge
accountant account
engineer engine
evening even
paste past
apartment apart
department depart
customer custom
business busy
political polite
quite quit
majority major
topping top
anime animal
authorize author
""".strip().splitlines()]


def porter() -> Callable[[str], str]:
    s = Stemmer.Stemmer("porter")
    return lambda w: str(s.stemWord(w))


def snowball() -> Callable[[str], str]:
    s = Stemmer.Stemmer("english")
    return lambda w: str(s.stemWord(w))


STEMMERS: dict[str, Callable[[], Callable[[str], str]]] = {
    "porter (FTS5 'porter', the index before)": porter,
    "english (Snowball, Porter2)": snowball,
    "memdir (text.stem now)": lambda: text.stem,
}


def score(stem: Callable[[str], str]) -> tuple[int, int, list[str], list[str]]:
    """(pairs of SAME merged, pairs of SAME, SAME pairs kept apart, APART pairs merged)."""
    pairs = [(g[0], w) for g in SAME for w in g[1:]]
    kept = [f"{a}/{b}" for a, b in pairs if stem(a) != stem(b)]
    wrong = [f"{a}/{b} -> {stem(a)}" for a, b in APART if stem(a) == stem(b)]
    return len(pairs) - len(kept), len(pairs), kept, wrong


def main() -> None:
    print(f"{sum(len(g) - 1 for g in SAME)} pairs that should merge, {len(APART)} that must not\n")
    print("| stemmer | should merge: merged | must not merge: merged | the wrong merges | the merges missed |")
    print("|---|---|---|---|---|")
    for name, make in STEMMERS.items():
        merged, total, kept, wrong = score(make())
        print(f"| {name} | {merged}/{total} | {len(wrong)}/{len(APART)} | {', '.join(wrong) or '-'} | "
              f"{', '.join(kept) or '-'} |")


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()  # --help: the docstring
    main()
