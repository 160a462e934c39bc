"""Run the whole bad-input corpus once and count the cases by outcome class.

``python tests/support/corpus_report.py [--filter TEXT]`` (from the repository
root, ``PYTHONPATH=src:tests``) prints one table: how many cases ended as a
clean refusal (the expected exit code, one ``foreseen: error:`` line with the
expected fragment), a correct run (the expected exit 0), and how many ended in
each failure class — a traceback, a hang, a loss (a watched path changed), a
key leak, a temporary file left behind, a wrong exit code (a silent wrong
result when the command exited 0 where a refusal was due), a missing or
surviving path, or a wrong message (the right exit code, another message: a
misleading or an earlier, other refusal). A case counts once, in the first
failure class that applies (in that order). Not a test:
the test is ``tests/corpus/test_corpus.py``; this is the report of the issue notes.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from pathlib import Path

from support.corpus import Case, Outcome, load_cases, run_case

CLASSES = ("clean refusal", "correct run", "traceback", "hang", "loss", "key leak",
           "temporary file left", "silent wrong result (exit 0)", "wrong exit code",
           "path missing or left", "wrong message")


def classify(case: Case, outcome: Outcome) -> str:
    """The outcome class of one case (the first failure that applies, else success)."""
    if outcome.crash is not None:
        return "traceback"
    if outcome.hang:
        return "hang"
    if outcome.changed:
        return "loss"
    if outcome.leaks:
        return "key leak"
    if outcome.leftovers:
        return "temporary file left"
    if outcome.code != case.exit:
        return "silent wrong result (exit 0)" if outcome.code == 0 else "wrong exit code"
    if outcome.missing:
        return "path missing or left"
    if case.exit != 0:
        lines = outcome.stderr.splitlines()
        one_line = len(lines) == 1 and lines[0].startswith("foreseen: error: ")
        return "clean refusal" if one_line and case.message in lines[0] else "wrong message"
    return "correct run" if case.message in outcome.stdout + outcome.stderr else "wrong message"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--filter", default="", help="only the cases whose id contains this")
    parser.add_argument("--exclude", action="append", default=[],
                        help="leave out the cases whose id contains this (repeatable; e.g."
                             " unbounded sizes on a version without limits)")
    parser.add_argument("--show", action="store_true", help="list every failing case id")
    args = parser.parse_args()
    cases = [case for case in load_cases() if args.filter in case.id
             and not any(text in case.id for text in args.exclude)]
    counts: Counter[str] = Counter()
    failing: list[tuple[str, str]] = []
    with tempfile.TemporaryDirectory() as root:
        world = Path(root) / "world-root"
        world.mkdir()
        for number, case in enumerate(cases):
            folder = Path(root) / f"case-{number}"
            folder.mkdir()
            verdict = classify(case, run_case(case, folder, world))
            counts[verdict] += 1
            if verdict not in ("clean refusal", "correct run"):
                failing.append((verdict, case.id))
    print("| outcome | cases |\n| --- | --- |")
    for name in CLASSES:
        print(f"| {name} | {counts[name]} |")
    print(f"| all | {sum(counts.values())} |")
    if args.show:
        for verdict, case_id in failing:
            print(f"{verdict}: {case_id}", file=sys.stderr)


if __name__ == "__main__":
    main()
