"""``credit verify --head/--report``, plans never replaced under their ledgers, and
analysis-only amendments that analyse their parent's ledger.

The hash chain is unkeyed: a rewritten line with the chain and head file
recomputed verifies on its own. A head kept elsewhere (``--head HASH@EVENTS``
or the head a report recorded) is what tells the rewrite apart; these tests
forge exactly that rewrite. Writing a new plan over a plan file whose ledger
exists would orphan the ledger, so ``plan --out``/``amend --out`` onto another
plan is refused. An amendment that changed only analysis settings analyses
the ledger of its parent (the calls are the same calls).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from foreseen.core.digest import canonical_json
from foreseen.core.ledger import GENESIS, LedgerEvent, event_hash, head_path, read_ledger

import support.spine as spine_support
from support.credit_cli import call_credit as _call


@pytest.fixture
def finished(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A study folder, its plan and a complete run: ``plan.json``, ``ledger.jsonl``."""
    spine_support.write_study_dir(tmp_path / "study")
    assert _call(capsys, "plan", str(tmp_path / "study"), "--out",
                 str(tmp_path / "plan.json"))[0] == 0
    assert _call(capsys, "run", str(tmp_path / "plan.json"), "--ledger",
                 str(tmp_path / "ledger.jsonl"))[0] == 0
    return tmp_path


def _head(path: Path) -> tuple[str, int]:
    head = json.loads(head_path(path).read_text(encoding="utf-8"))
    return str(head["head"]), int(head["events"])


def _rewrite(path: Path, index: int) -> None:
    """Change event ``index``'s payload and recompute the chain and head file (a forgery)."""
    events = read_ledger(path)
    prev = events[index - 1].hash if index else GENESIS
    lines = [e.line() for e in events[:index]]
    for event in events[index:]:
        payload = dict(event.payload)
        if event.seq == index:
            payload["forged"] = True
        forged = LedgerEvent(event.seq, event.type, payload, prev,
                             event_hash(event.seq, event.type, payload, prev))
        lines.append(forged.line())
        prev = forged.hash
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    head_path(path).write_text(canonical_json({"head": prev, "events": len(events)}),
                               encoding="utf-8")


def test_verify_says_whether_the_ledger_extends_a_kept_head(
        finished: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ledger = finished / "ledger.jsonl"
    kept, count = _head(ledger)
    code, out, err = _call(capsys, "verify", str(ledger), "--head", f"{kept}@{count}")
    assert code == 0, err
    assert out.strip().endswith(f"extends the kept head {kept[:16]}… (event {count} of {count},"
                                " 0 added since)")
    sealed = finished / "study" / "outcomes.sealed.json"
    assert _call(capsys, "reveal", str(finished / "plan.json"), str(sealed), "--ledger",
                 str(ledger))[0] == 0  # the ledger grows by one event
    code, out, _ = _call(capsys, "verify", str(ledger), "--head", kept.upper())
    assert code == 0 and f"(event {count} of {count + 1}, 1 added since)" in out
    code, _, err = _call(capsys, "verify", str(ledger), "--head", f"{kept}@{count + 1}")
    assert code == 2 and f"does not extend the kept head {kept[:16]}… at event {count + 1}" \
        in err
    genesis = _call(capsys, "verify", str(ledger), "--head", f"{GENESIS}@0")
    assert genesis[0] == 0 and "(event 0 of" in genesis[1]


@pytest.mark.parametrize("index", [0, 5, -1])
def test_a_recomputed_chain_verifies_alone_but_not_against_the_kept_head(
        finished: Path, index: int, capsys: pytest.CaptureFixture[str]) -> None:
    ledger = finished / "ledger.jsonl"
    kept, count = _head(ledger)
    _rewrite(ledger, index % count)
    code, out, _ = _call(capsys, "verify", str(ledger))
    assert code == 0 and out.startswith(f"ok: {count} events")  # the unkeyed chain is fooled
    code, out, err = _call(capsys, "verify", str(ledger), "--head", f"{kept}@{count}")
    assert (code, out) == (2, "")
    assert err == (f"foreseen: error: ledger ledger.jsonl does not extend the kept head"
                   f" {kept[:16]}… at event {count} (from --head): no event has that hash"
                   " there — the ledger was rewritten, or the head belongs to another"
                   " ledger\n")


def test_verify_reads_the_head_a_report_recorded(
        finished: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = finished / "run"
    run.mkdir()
    for name in ("plan.json", "ledger.jsonl", "ledger.jsonl.head"):
        (run / name).write_bytes((finished / name).read_bytes())
    (run / "outcomes.sealed.json").write_bytes(
        (finished / "study" / "outcomes.sealed.json").read_bytes())
    code, _, err = _call(capsys, "analyze", str(run))
    assert code == 0, err
    report = run / "report.json"
    recorded = json.loads(report.read_text(encoding="utf-8"))["ledger"]
    code, out, err = _call(capsys, "verify", str(run / "ledger.jsonl"), "--report", str(report))
    assert code == 0, err
    assert f"extends the kept head {recorded['head_hash'][:16]}… (event" \
           f" {recorded['events']} of" in out
    _rewrite(run / "ledger.jsonl", 3)
    code, _, err = _call(capsys, "verify", str(run / "ledger.jsonl"), "--report", str(report))
    assert code == 2 and "(from report.json)" in err


@pytest.mark.parametrize("args,fragment", [
    (["--head", "abc"], "give a 64-digit hex hash"),
    (["--head", "0" * 63 + "g"], "give a 64-digit hex hash"),
    (["--head", "0" * 64 + "@x"], "the part after @ must be an event count"),
    (["--head", "0" * 64, "--report", "r.json"], "give --head or --report, not both"),
])
def test_bad_kept_heads_are_one_line(finished: Path, args: list[str], fragment: str,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _call(capsys, "verify", str(finished / "ledger.jsonl"), *args)
    assert code == 2 and err.count("\n") == 1 and fragment in err


def test_a_plan_file_with_a_ledger_is_never_replaced(
        finished: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan = finished / "plan.json"
    before = plan.read_bytes()
    design = finished / "study" / "design.json"
    changed = json.loads(design.read_text(encoding="utf-8"))
    changed["seed"] = 8
    design.write_text(json.dumps(changed), encoding="utf-8")
    code, _, err = _call(capsys, "plan", str(finished / "study"), "--out", str(plan))
    assert code == 2 and "already holds plan" in err and "orphan the ledgers" in err
    code, _, err = _call(capsys, "amend", str(plan), "--out", str(plan), "--reason", "r",
                         "--set", "analysis.replicates=300")
    assert code == 2 and "it is an input of this command" in err  # amend never over its input
    assert plan.read_bytes() == before
    assert _call(capsys, "verify", str(finished / "ledger.jsonl"), "--plan", str(plan))[0] == 0
    changed["seed"] = 7  # the same plan again: same bytes, allowed
    design.write_text(json.dumps(changed), encoding="utf-8")
    code, _, err = _call(capsys, "plan", str(finished / "study"), "--out", str(plan))
    assert code == 0, err
    assert plan.read_bytes() == before


@pytest.mark.parametrize("setting,fragment", [
    ("analysis.replicates=-5", "replicates must be at least"),
    ('analysis.replicates="x"', "replicates must be an integer"),
    ("analysis.replicates=null", "replicates must be an integer"),
    ("analysis.replicates=NaN", "NaN and infinities are not allowed"),
    # the plan (frozen now) names replicates: its older name beside it is refused
    ("analysis.bootstrap_b=300", "'replicates' and its older name 'bootstrap_b' are both"
                                 " given; keep only 'replicates'"),
    ("analysis.alpha=Infinity", "NaN and infinities are not allowed"),
    ('analysis.gates=[{"name": "g", "join": "all", "conditions": [], "on_pass": "confirmed",'
     ' "on_fail": "inconclusive"}]', "'conditions' must be a non-empty list"),
])
def test_bad_analysis_settings_are_refused_at_amend(
        finished: Path, setting: str, fragment: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _call(capsys, "amend", str(finished / "plan.json"), "--out",
                         str(finished / "amended.json"), "--reason", "r", "--set", setting)
    assert code == 2 and err.count("\n") == 1 and fragment in err, err
    assert not (finished / "amended.json").exists()


def test_bad_analysis_settings_are_refused_at_freeze(
        finished: Path, capsys: pytest.CaptureFixture[str]) -> None:
    design = finished / "study" / "design.json"
    for analysis, fragment in (({"bootstrap_b": -5}, "bootstrap_b must be at least"),
                               ({"bootstrap_b": None}, "bootstrap_b must be an integer"),
                               ({"gates": [{"name": "g", "join": "all", "conditions": [],
                                            "on_pass": "confirmed",
                                            "on_fail": "inconclusive"}]},
                                "'conditions' must be a non-empty list")):
        body = json.loads(design.read_text(encoding="utf-8"))
        body["analysis"] = analysis
        design.write_text(json.dumps(body), encoding="utf-8")
        code, _, err = _call(capsys, "plan", str(finished / "study"), "--out",
                             str(finished / "new.json"))
        assert code == 2 and fragment in err, err
        assert not (finished / "new.json").exists()


def test_an_analysis_only_amendment_analyses_its_parents_ledger(
        finished: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan, ledger = finished / "plan.json", finished / "ledger.jsonl"
    sealed = finished / "study" / "outcomes.sealed.json"
    amended, again = finished / "amended.json", finished / "amended2.json"
    assert _call(capsys, "amend", str(plan), "--out", str(amended), "--reason", "more draws",
                 "--set", "analysis.replicates=300")[0] == 0
    assert _call(capsys, "amend", str(amended), "--out", str(again), "--reason", "alpha",
                 "--set", "analysis.alpha=0.1")[0] == 0
    for which in (amended, again):  # a child and a grandchild of the ledger's plan
        out = finished / f"report-{which.stem}"
        code, _, err = _call(capsys, "analyze", str(which), "--ledger", str(ledger),
                             "--outcomes", str(sealed), "--out", str(out))
        assert code == 0, err
        report = json.loads((out / "report.json").read_text(encoding="utf-8"))
        assert report["plan_id"] == hashlib.sha256(which.read_bytes()).hexdigest()
        assert report["ledger"]["events"] >= len(read_ledger(ledger)) - 2
    # a run-changing amendment may not: its calls would be other calls
    other = finished / "other.json"
    code, _, err = _call(capsys, "amend", str(plan), "--out", str(other), "--reason", "faster",
                         "--set", "execution.concurrency=2")
    assert code == 0, err
    code, _, err = _call(capsys, "analyze", str(other), "--ledger", str(ledger), "--outcomes",
                         str(sealed), "--out", str(finished / "report-other"))
    assert code == 2 and "belongs to plan" in err
    # and the ledger's own run is not opened for appending by an amendment
    code, _, err = _call(capsys, "run", str(amended), "--ledger", str(ledger))
    assert code == 2 and "belongs to plan" in err
