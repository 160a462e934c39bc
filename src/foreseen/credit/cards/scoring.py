"""Score :func:`extract_card` against hand-labelled notes: per-slot precision and recall.

Gold file (JSON): ``{"notes": [{"id", "text", "gold": {slot: "absent" | {"span":
{"start", "end", "text"}, "value"?}}}]}``; gold spans must satisfy
``text[start:end] == span.text``. Per slot and note:

* *predicted* — the extractor filled the slot;
* *correct* — predicted, gold present, and
  direction: same value and a predicted span overlaps the gold span;
  target: same point, intervals (as a sorted list) and benefit probability
  (each within 1e-12 relative tolerance) and a predicted span overlaps the gold
  span; text slots: character-level Jaccard index between the union of the
  predicted spans and the gold span ≥ 0.5;
* precision = correct / predicted, recall = correct / gold present (``None``
  with nothing to divide by);
* span validity = share of predicted spans that occur verbatim in the text
  (the extractor's contract says 1.0).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from foreseen.core.errors import UserInputError
from foreseen.credit.cards.extraction import extract_card
from foreseen.credit.model import SLOT_NAMES, Card, Span

TEXT_JACCARD_MIN = 0.5
_TOLERANCE = 1e-12


@dataclass(frozen=True)
class SlotScore:
    """Counts and rates for one slot over a set of labelled notes."""

    slot: str
    gold_present: int
    predicted: int
    correct: int
    spans: int
    spans_verbatim: int

    @property
    def precision(self) -> float | None:
        return None if self.predicted == 0 else self.correct / self.predicted

    @property
    def recall(self) -> float | None:
        return None if self.gold_present == 0 else self.correct / self.gold_present

    @property
    def span_validity(self) -> float | None:
        return None if self.spans == 0 else self.spans_verbatim / self.spans


@dataclass(frozen=True, slots=True)
class GoldNote:
    """One hand-labelled note of a gold file (module docstring)."""

    id: str
    text: str
    #: slot name → ``"absent"`` or the label's JSON object (``span``, ``value``)
    gold: Mapping[str, Any]


def load_gold(path: str | Path) -> list[GoldNote]:
    """Read and check a gold file; raises :class:`UserInputError` on a malformed label."""
    notes = [GoldNote(str(note["id"]), str(note["text"]), dict(note["gold"]))
             for note in json.loads(Path(path).read_text(encoding="utf-8"))["notes"]]
    for note in notes:
        for slot in SLOT_NAMES:
            label = note.gold[slot]
            if label == "absent":
                continue
            span = Span.from_json(label["span"])
            if not span.occurs_in(note.text):
                raise UserInputError(f"gold {note.id}/{slot}: span is not verbatim in the text")
    return notes


def _close(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(a, b, rel_tol=_TOLERANCE, abs_tol=_TOLERANCE)


def _overlaps(spans: Sequence[Span], gold: Span) -> bool:
    return any(s.start < gold.end and gold.start < s.end for s in spans)


def _jaccard(spans: Sequence[Span], gold: Span) -> float:
    predicted = {i for s in spans for i in range(s.start, s.end)}
    wanted = set(range(gold.start, gold.end))
    union = predicted | wanted
    return len(predicted & wanted) / len(union) if union else 0.0


def slot_correct(card: Card, slot: str, label: Mapping[str, Any]) -> bool:
    """Whether the filled ``slot`` of ``card`` matches the gold ``label`` (rules above)."""
    spans = card.spans.get(slot, ())
    gold = Span.from_json(label["span"])
    if slot == "direction":
        return card.direction == label["value"] and _overlaps(spans, gold)
    if slot == "target":
        target, want = card.target, label["value"]
        if target is None:
            return False
        got_intervals = sorted(target.intervals)
        want_intervals = sorted((float(lo), float(hi)) for lo, hi in want["intervals"])
        same = (
            _close(target.point, want["point"])
            and _close(target.benefit_probability, want["benefit_probability"])
            and len(got_intervals) == len(want_intervals)
            and all(_close(a, c) and _close(b, d)
                    for (a, b), (c, d) in zip(got_intervals, want_intervals, strict=True))
        )
        return same and _overlaps(spans, gold)
    return _jaccard(spans, gold) >= TEXT_JACCARD_MIN


def score_notes(notes: Sequence[GoldNote]) -> dict[str, SlotScore]:
    """Per-slot scores of :func:`extract_card` on labelled ``notes`` (see module doc)."""
    counts = {slot: [0, 0, 0, 0, 0] for slot in SLOT_NAMES}
    for note in notes:
        text = note.text
        card = extract_card(text)
        filled = set(card.filled_slots())
        for slot in SLOT_NAMES:
            row = counts[slot]
            label = note.gold[slot]
            present = label != "absent"
            row[0] += present
            if slot in filled:
                row[1] += 1
                row[2] += present and slot_correct(card, slot, label)
            for span in card.spans.get(slot, ()):
                row[3] += 1
                row[4] += span.occurs_in(text)
    return {slot: SlotScore(slot, *row) for slot, row in counts.items()}


def format_table(scores: Mapping[str, SlotScore]) -> str:
    """A plain-text table of the scores, one row per slot plus a micro-averaged total."""
    def rate(value: float | None) -> str:
        return "  n/a" if value is None else f"{value:5.3f}"

    header = f"{'slot':<15}{'gold':>6}{'pred':>6}{'correct':>9}{'precision':>11}{'recall':>8}"
    header += f"{'span valid':>12}"
    lines = [header, "-" * len(header)]
    rows = list(scores.values())
    rows.append(SlotScore("all (micro)", *(sum(getattr(r, f) for r in rows) for f in
                                          ("gold_present", "predicted", "correct", "spans",
                                           "spans_verbatim"))))
    for r in rows:
        lines.append(f"{r.slot:<15}{r.gold_present:>6}{r.predicted:>6}{r.correct:>9}"
                     f"{rate(r.precision):>11}{rate(r.recall):>8}{rate(r.span_validity):>12}")
    return "\n".join(lines)
