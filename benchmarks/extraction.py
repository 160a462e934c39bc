"""Extraction quality and speed on the hand-labelled fixture (prints tables; not a test).

Usage: ``.venv/bin/python benchmarks/extraction.py [--repeats N]``

Table 1: per-slot precision / recall / span validity of ``extract_card`` on
``tests/credit/fixtures/extraction_notes.json`` (scoring rules in
``foreseen.credit.cards.scoring``). Table 2: wall time per call of
``extract_card`` (fixture notes, rendered cards) and ``render_context``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "credit"))

from foreseen.credit.cards.render import extract_card, render_card  # noqa: E402
from foreseen.credit.cards.scoring import format_table, load_gold, score_notes  # noqa: E402
from foreseen.credit.model import Explanation  # noqa: E402
from foreseen.credit.plan.contexts import DONOR_MAPS, donor_map, render_context  # noqa: E402

from support.cards_study import make_study  # noqa: E402

FIXTURE = ROOT / "tests" / "credit" / "fixtures" / "extraction_notes.json"


def _time_per_call(calls: list[Callable[[], object]], repeats: int) -> tuple[float, float]:
    """Median and max over ``repeats`` runs of the mean microseconds per call."""
    runs = []
    for _ in range(repeats):
        start = time.perf_counter()
        for call in calls:
            call()
        runs.append(1e6 * (time.perf_counter() - start) / len(calls))
    return statistics.median(runs), max(runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    notes = load_gold(FIXTURE)
    print(f"Extraction on {len(notes)} hand-labelled notes ({FIXTURE.name})\n")
    print(format_table(score_notes(notes)))

    texts = [n.text for n in notes]
    cards = [extract_card(t) for t in texts]
    rendered = [render_card(c) for c in cards]
    study = make_study(n_tasks=6, seeds=2)
    donors = {name: donor_map(name, study, 1) for name in DONOR_MAPS}
    explanations = {
        s.id: Explanation(s.id, "ordinary", "bench", note=texts[i % len(texts)],
                          card=cards[i % len(cards)])
        for i, s in enumerate(study.states)
    }
    contexts = ("matched_card", "prose", "crossover@seed_swap", "donor_note@cross_task")
    rows: list[tuple[str, list[Callable[[], object]]]] = [
        ("extract_card (fixture notes)", [partial(extract_card, t) for t in texts]),
        ("extract_card (rendered cards)", [partial(extract_card, t) for t in rendered]),
        ("render_card", [partial(render_card, c) for c in cards]),
        ("render_context (4 kinds)", [
            partial(render_context, study, s, c, "bench", explanations, donors)
            for s in study.states[:12] for c in contexts]),
        ("donor_map cross_task (48 states)", [partial(donor_map, "cross_task", study, 1)]),
    ]
    print(f"\nSpeed (mean µs per call; median and max of {args.repeats} runs)\n")
    print(f"{'operation':<34}{'calls':>7}{'median µs':>12}{'max µs':>10}")
    for name, calls in rows:
        median, worst = _time_per_call(calls, args.repeats)
        print(f"{name:<34}{len(calls):>7}{median:>12.1f}{worst:>10.1f}")


if __name__ == "__main__":
    main()
