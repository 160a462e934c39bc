"""Mutation score per package from ``mutmut results --all true`` (run by ``make mutate``).

Usage: ``python tests/support/mutation_score.py core credit/run ...`` in the
repository root after ``make mutate`` (each package's results are in
``.mutate/<package with dots>/``). Prints one row per package: mutants, killed
(including timeouts and type-check catches), survived, not checked or without
tests, and the score = killed / (killed + survived); then every survivor.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
KILLED = {"killed", "timeout", "caught by type check", "segfault"}


def parse(lines: Iterable[str]) -> dict[str, str]:
    """Mutant name → status from the ``    name: status`` lines."""
    statuses = {}
    for line in lines:
        name, sep, status = line.strip().partition(": ")
        if sep and "__mutmut_" in name:
            statuses[name] = status.strip()
    return statuses


def table(statuses: dict[str, str], packages: Sequence[str]) -> list[str]:
    rows = ["| package | mutants | killed | survived | other | score |",
            "|---|---|---|---|---|---|"]
    for package in packages:
        mine = [s for n, s in statuses.items() if n.startswith(package + ".")]
        killed = sum(s in KILLED for s in mine)
        survived = sum(s == "survived" for s in mine)
        other = len(mine) - killed - survived
        score = "—" if killed + survived == 0 else f"{killed / (killed + survived):.1%}"
        rows.append(f"| {package} | {len(mine)} | {killed} | {survived} | {other} | {score} |")
    return rows


def main(packages: Sequence[str]) -> None:
    command = [sys.executable, "-m", "mutmut", "results", "--all", "true"]
    statuses: dict[str, str] = {}
    names = ["foreseen." + package.replace("/", ".") for package in packages]
    for package in packages:
        folder = REPO / ".mutate" / package.replace("/", ".")
        output = subprocess.run(command, check=True, capture_output=True, text=True,
                                cwd=folder).stdout
        statuses.update(parse(output.splitlines()))
    packages = names
    print("\n".join(table(statuses, packages)))
    survivors = sorted(n for n, s in statuses.items() if s == "survived"
                       and any(n.startswith(p + ".") for p in packages))
    print(f"\nsurvivors ({len(survivors)}):")
    print("\n".join(survivors))


if __name__ == "__main__":
    main(sys.argv[1:])
