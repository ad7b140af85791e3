"""The similarity floor of an embedding model, measured on pairs written for it.

A cosine means something only for the model that produced it: one model's
0.3 is another's 0.6. So the floor a semantic-only hit must reach is measured
for the model in use, when its vector index is created, and stored beside
the vectors (`VectorIndex.floor`): a change of model drops both and measures
again. The measurement embeds `PAIRS`, questions each answered by one short
note in other words (written for memdir, across the kinds of memory it
keeps), and sets the floor where a semantic-only hit is as close to its
query as the closest tenth of the true answers are (their 90th percentile),
and never below the closest unrelated pair (each question against the other
notes): a hit on meaning alone, with no word of the query to support it, must
be a strong match.

For all-MiniLM-L6-v2 the answering pairs' median is 0.44, their 90th
percentile 0.55 and the closest unrelated pair 0.50, so the floor is 0.55. On
`bench/precision.py`'s labelled memories that floor left semantic and hybrid
search with a no-answer false-hit rate of 7.7% (the lexical side's 5.8% and
one more; 11.5% at the answering median, 100% with no floor) at the same R@10;
with the long questions added, 12.2% against the lexical side's 8.1%. So a topic
file needs `semantic.SURE` (1.1) times the floor to be shown on its meaning alone
(8.1%, one answerable query fewer found), and a conversation's turn the floor:
on LoCoMo holding turns to 1.1 times it too would cost about 0.04 of R@10 (measured offline on the dev split).

A floor relative to the query's background in its memory (the best cosine less
the median over every file) was measured against this absolute one on the two
conversation corpora, each asked its own questions and others' with the speakers
renamed. It told them apart less well: with 85% of LoCoMo's own questions above
it, 60% of the others' were too, against 42%; on REALTALK 77% of its own and 61% of the others' against
84% and 57%.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .embed import numpy_module

VERSION = "2"  # bump when PAIRS change, so that stored floors are measured again

PAIRS: tuple[tuple[str, str], ...] = (
    ("when does the new app go live?", "The public release is planned for 14 March, after two weeks of beta testing."),
    ("how long are generated reports kept before they expire?", "PDF exports stay in the cache for six hours, then they are rebuilt on request."),
    ("may I propose a darker colour scheme for the dashboard?", "Never suggest dark themes: the user finds light text on black unreadable."),
    ("how should I write commit messages?", "Start the subject with the ticket key, use the imperative mood, keep it under 72 characters."),
    ("is it fine to fake the database in unit tests?", "Tests run against a real PostgreSQL started in a container; no mocks of the driver."),
    ("who takes over the pager after Sam?", "On-call rotation: Sam this week, then Priya, then Tom; handover on Mondays at ten."),
    ("what is the password for the guest network?", "Visitors join the wifi called Garden-Guest; the key is written on the fridge."),
    ("what can't our daughter eat?", "Mia is allergic to tree nuts and sesame; check labels on bread and granola."),
    ("when do the bins get collected?", "Recycling goes out on Tuesday evenings; general waste every other Friday."),
    ("what time should I fetch the kids from school?", "Classes end at 15:20, except Wednesdays when they finish at 13:00."),
    ("how do I get a refund for an annual plan?", "Yearly subscriptions are refunded pro rata within 30 days of renewal; finance approves it."),
    ("why are text reminders not arriving in Ireland?", "SMS to Irish numbers fail since the carrier changed its sender ID rules in June."),
    ("what counts as an urgent incident?", "Priority one means the whole booking system is down for every customer."),
    ("how do I keep a sourdough starter healthy?", "Feed the levain daily with equal weights of flour and water and keep it somewhere warm."),
    ("what helps me sleep better?", "No screens after ten, a cool bedroom and magnesium tea help me drop off faster."),
    ("stretches after a run", "After jogging: hamstring and calf holds of thirty seconds each, then hip circles."),
    ("where can I test a change before it reaches customers?", "Every branch can be deployed to the staging cluster with one command before production."),
    ("how accurate is the delivery estimate model?", "The ETA predictor is off by nine minutes on average and is retrained every Sunday."),
    ("how long does Stripe retry a failed webhook?", "Stripe resends undelivered events with exponential backoff for up to three days."),
    ("who is my boss?", "I report to Dana Whitfield, head of platform engineering, since last spring."),
    ("which vet do we use for the cat?", "Whiskers is registered at Riverside Animal Clinic; her vaccinations are due in May."),
    ("when is the car due for its service?", "The Golf needs its annual inspection before the end of September."),
    ("what did we decide about the team offsite?", "We agreed to hold the offsite in Porto for three days in early October."),
    ("how do I restart the export worker?", "If exports hang, run systemctl restart export-worker and clear the queue."),
    ("what is the customer's preferred way to be contacted?", "Lakeside Physio wants updates by email only, never phone calls during clinic hours."),
    ("how big should the database connection pool be?", "pgbouncer runs in transaction mode with a pool of twenty connections per service."),
    ("what do I pack for a weekend trip?", "Packing list: charger, passport, rain jacket, two changes of clothes and a book."),
    ("what should I practise on guitar this month?", "Practice barre chords and the F major shape for fifteen minutes each evening."),
    ("what is the plan for the billing switch?", "Invoices move from Stripe to the new ledger on 1 April; Stripe stops billing that day."),
    ("how do I reset my two-step login?", "Lost your authenticator? An admin can clear second-factor enrolment from the user page."),
    ("what tone should replies to customers have?", "Answer support tickets warmly and briefly, with the customer's first name and no jargon."),
    ("which supermarket do we order from?", "The weekly shop is delivered by FreshCart on Thursday mornings between eight and ten."),
)


def floor(embed: Callable[[Sequence[str]], Any]) -> float:
    """The similarity floor of the model behind `embed` (texts -> unit rows), measured on PAIRS."""
    questions = [q for q, _ in PAIRS]
    notes = [n for _, n in PAIRS]
    np = numpy_module()
    rows = np.asarray(embed(questions + notes), dtype=np.float32)
    sims = np.einsum("ik,jk->ij", rows[: len(PAIRS)], rows[len(PAIRS) :]).tolist()
    answering = [sims[i][i] for i in range(len(PAIRS))]
    unrelated = sorted(sims[i][j] for i in range(len(PAIRS)) for j in range(len(PAIRS)) if i != j)
    strong = sorted(answering)[int(0.9 * (len(answering) - 1))]
    return round(float(max(strong, unrelated[-1])), 4)
