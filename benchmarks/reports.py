"""Size and render time of the HTML report of every artefact kind, at the demo's settings.

Writes each artefact with the real command into a temporary folder (the E046
record, a curve, compare at small settings, history, advice, the full credit
demo), then renders its page (and renders it again to check the bytes are the
same) and prints a table: kind, figures, page size in KB, render seconds,
byte-identical.

    .venv/bin/python benchmarks/reports.py [--out DIR]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from foreseen.cli.app import main

LITE = Path(__file__).resolve().parents[1] / "src" / "foreseen" / "data" / "swebench" / "lite.csv"

COMMANDS = {
    "teams-record": (["teams", "analyze", "--out", "{d}/teams-record.json"], "teams-record.json"),
    "teams-curve": (["teams", "curve", str(LITE), "--out", "{d}/curve.json"], "curve.json"),
    "teams-compare": (["teams", "compare", "--k", "5", "--k", "10", "--pilots", "20",
                       "--out", "{d}/compare.json"], "compare.json"),
    "teams-history": (["teams", "history", "--out", "{d}/history.json"], "history.json"),
    "teams-advice": (["teams", "advise", "lite", "--out", "{d}/advice.json"], "advice.json"),
    "credit-report": (["credit", "demo", "--out", "{d}/credit"], "credit"),
}


def run(argv: list[str]) -> None:
    try:
        main(["-q", *argv, "--no-html"])
    except SystemExit as stop:
        if stop.code:
            raise


def main_benchmark() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    from foreseen.report.build import write_html

    folder = args.out or Path(tempfile.mkdtemp(prefix="foreseen-reports-"))
    rows = []
    for kind, (argv, written) in COMMANDS.items():
        source = folder / written
        run([a.format(d=folder) for a in argv])
        started = time.perf_counter()
        page = write_html(source, out=folder / f"{kind}.html")
        seconds = time.perf_counter() - started
        again = write_html(source, out=folder / f"{kind}-again.html")
        text = page.read_text(encoding="utf-8")
        rows.append((kind, text.count("<figure "), page.stat().st_size / 1024, seconds,
                     page.read_bytes() == again.read_bytes()))
    print(f"pages in {folder}")
    print(f"| {'artefact':<14} | figures | page KB | render s | byte-identical |")
    print(f"|{'-' * 16}|---------|---------|----------|----------------|")
    for kind, figures, size, seconds, same in rows:
        print(f"| {kind:<14} | {figures:>7} | {size:>7.0f} | {seconds:>8.2f} | "
              f"{'yes' if same else 'NO':>14} |")


if __name__ == "__main__":
    main_benchmark()
