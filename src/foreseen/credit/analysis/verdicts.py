"""A verdict for each of the five checks: its rule, its numbers, pass / fail / inconclusive, why.

The checks (:mod:`foreseen.credit.analysis.checks`) compute numbers; this
module says what they show, with rules a reader can act on. Each check has a
verdict per *subject* (an explainer; for alignment an explainer × donor
context; for the known signal a signal arm) and a headline verdict for the
**primary explainer** — the analysis configuration's ``primary_explainer``,
else the explainer the first gate names, else the first explainer. The
**primary loss** is the loss of the first gate condition on a contrast, else
point MAE. The rules are ours (the paper names the checks, not their
thresholds):

1. **commitment** — the elicited − ordinary complete-card rate: *pass* when
   its one-sided 95 % lower bound is above 0 (the elicited interface commits to
   more), *fail* when its 95 % interval lies at or below 0, else
   *inconclusive*; *inconclusive* when the design has one elicitation
   condition (no contrast exists).
2. **delivery** — *pass* when every explanation arm of the explainer delivered
   evidence-backed content in at least ``integrity_minimum`` (0.9 by default)
   of its slots, else *fail*; *inconclusive* when delivery was not recorded.
3. **predictive gain** — Δ_desc of the primary loss for the explainer's
   matched arm (the gate's context, else ``matched_card``, else
   ``matched_note``): *pass* when the one-sided 95 % lower bound is above 0;
   *fail* when the 95 % interval lies at or below 0 (no gain, or harm) or the
   90 % interval lies inside ±δ (equivalent to no gain, δ the plan's margin);
   else *inconclusive* (the interval is too wide: more tasks are needed).
4. **alignment** — the same rule on Δ_donor (matched − donor) per donor
   context; the headline uses the gate's donor context, else the first.
5. **known signal** — from the post-outcome child plan (its five signals are
   ours, :data:`foreseen.credit.plan.child_plans.SIGNAL_NAMES`): *pass* when the
   slope of ŷ on the exact signal has a one-sided 95 % lower bound above 0 and
   the slope on the placebo signal (another task's outcome, told to be
   unrelated) has a 95 % interval inside ±0.1 (the uptake is specific to the
   state); *fail* when the placebo slope's lower bound is above 0.1 (the
   forecaster takes up numbers unrelated to the state), or the exact slope's 95 %
   interval lies inside ±0.1 (it ignores a known signal); else *inconclusive*
   (e.g. a placebo interval too wide to show the uptake is specific). Per
   subject, the placebo passes when it is ignored (interval inside ±0.1) and
   fails when taken up (lower bound above 0.1); every other signal passes when
   taken up (lower bound above 0) and fails when ignored.

An estimate that is null, or zero by construction (the arms give identical
losses on every state), is *inconclusive* with its reason: the data cannot
show a difference either way. An estimate over fewer task clusters than the
plan's ``minimum_clusters`` has no interval (docs/intervals.md): checks 1, 3,
4 and 5 are then *inconclusive: too few clusters (K = n, minimum m)*; the
delivery check, a share, keeps its verdict.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from foreseen.core.bootstrap import TOO_FEW_CLUSTERS
from foreseen.credit.analysis.checks import FiveChecks, SignalUptake
from foreseen.credit.analysis.config import AnalysisConfig
from foreseen.credit.analysis.contrasts import ZERO_BY_CONSTRUCTION
from foreseen.credit.analysis.estimate_names import EXPLAINER_KINDS, EstimateName
from foreseen.credit.analysis.gates import Estimate
from foreseen.credit.analysis.record import Interval, Record

Outcome = Literal["pass", "fail", "inconclusive"]
CONTRAST_KINDS: tuple[str, ...] = EXPLAINER_KINDS
MATCHED_ORDER: tuple[str, ...] = ("matched_card", "matched_note")
NO_UPTAKE_MARGIN = 0.1
DEFAULT_LOSS = "point_mae"


@dataclass(frozen=True, kw_only=True)
class SubjectVerdict(Record):
    """A check's verdict for one subject: what was observed and why it decides so."""

    subject: str
    verdict: Outcome
    observed: str
    why: str


@dataclass(frozen=True, kw_only=True)
class CheckVerdict(Record):
    """A check's rule, its headline verdict (the primary subject) and every subject's verdict."""

    check: str
    rule: str
    subject: str | None
    verdict: Outcome
    observed: str
    why: str
    subjects: tuple[SubjectVerdict, ...]


@dataclass(frozen=True, kw_only=True)
class CheckVerdicts(Record):
    """The five checks' verdicts, with the primary explainer and loss they were read for."""

    primary_explainer: str | None
    primary_loss: str
    commitment: CheckVerdict
    delivery: CheckVerdict
    predictive_gain: CheckVerdict
    alignment: CheckVerdict
    known_signal: CheckVerdict

    def in_order(self) -> tuple[CheckVerdict, ...]:
        """The five verdicts in the checks' order."""
        return (self.commitment, self.delivery, self.predictive_gain, self.alignment,
                self.known_signal)


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:.4g}"


def _interval(value: Interval | Sequence[float] | None) -> str:
    return "—" if value is None else f"[{_num(value[0])}, {_num(value[1])}]"


def gate_estimates(config: AnalysisConfig) -> list[str]:
    """Every estimate name the declared gates refer to, in declaration order."""
    return [str(c.get("estimate", "")) for gate in config.gates
            for c in gate.get("conditions", ())]


def primary_loss(config: AnalysisConfig) -> str:
    """The loss of the first gate condition on a contrast (point MAE without one)."""
    for text in gate_estimates(config):
        name = EstimateName.parse(text)
        if name.loss is not None and name.kind in ("delta_desc", "delta_donor"):
            return name.loss
    return DEFAULT_LOSS


def primary_explainer(config: AnalysisConfig, explainers: Sequence[str]) -> str | None:
    """The configured primary explainer, else the first gate's, else the first explainer."""
    if config.primary_explainer is not None:
        return config.primary_explainer
    for text in gate_estimates(config):
        explainer = EstimateName.parse(text).explainer
        if explainer is not None and explainer in explainers:
            return explainer
    return sorted(explainers)[0] if explainers else None


def _gate_context(config: AnalysisConfig, kind: str, explainer: str) -> str | None:
    for text in gate_estimates(config):
        name = EstimateName.parse(text)
        if name.is_contrast and name.kind == kind and name.explainer == explainer:
            return name.context
    return None


def too_few_clusters_text(n_clusters: int | None, minimum: int) -> str:
    """``too few clusters (K = n, minimum m)``: why an interval-based verdict is withheld."""
    return f"too few clusters (K = {'—' if n_clusters is None else n_clusters}, minimum {minimum})"


def interval_verdict(estimate: Estimate | None, margin: float | None,
                     missing: str = "not estimated", *,
                     minimum_clusters: int = 1) -> tuple[Outcome, str, str]:
    """(verdict, observed, why) of a gain-type estimate (rule of checks 1, 3 and 4).

    Below the plan's minimum number of clusters (the estimate's reason
    ``too_few_clusters``) the interval is not estimable and the verdict is
    inconclusive: too few clusters (K = n, minimum m).
    """
    if estimate is None or estimate.estimate is None:
        reason = missing if estimate is None else (estimate.reason or missing)
        return "inconclusive", "—", f"no estimate ({reason})"
    clusters = estimate.n_clusters if estimate.n_clusters is not None else "—"
    if estimate.reason == TOO_FEW_CLUSTERS:
        return ("inconclusive",
                f"estimate {_num(estimate.estimate)}, 95 % CI not estimable, {clusters} clusters",
                f"inconclusive: {too_few_clusters_text(estimate.n_clusters, minimum_clusters)}")
    observed = (f"estimate {_num(estimate.estimate)}, 95 % CI {_interval(estimate.ci95)}, "
                f"one-sided LB {_num(estimate.lower_bound_one_sided)}, {clusters} clusters")
    if estimate.reason == ZERO_BY_CONSTRUCTION:
        return ("inconclusive", f"estimate 0 ({ZERO_BY_CONSTRUCTION})",
                "zero by construction: the arms give identical losses on every state, so the "
                "data cannot show a difference")
    bound, ci95, ci90 = estimate.lower_bound_one_sided, estimate.ci95, estimate.ci90
    if bound is None or ci95 is None:
        return "inconclusive", observed, f"no interval ({estimate.reason or 'not computed'})"
    if bound > 0:
        return "pass", observed, f"one-sided 95 % lower bound {_num(bound)} > 0"
    if ci95[1] <= 0:
        return "fail", observed, f"95 % interval {_interval(ci95)} lies at or below 0"
    if margin is not None and ci90 is not None and -margin <= ci90[0] and ci90[1] <= margin:
        return ("fail", observed, f"90 % interval {_interval(ci90)} inside ±{margin:g}: "
                                  "equivalent to no difference")
    return ("inconclusive", observed, f"95 % interval {_interval(ci95)} spans 0"
            + ("" if margin is None else f" and its 90 % interval is not inside ±{margin:g}")
            + ": more tasks are needed to decide")


def _headline(check: str, rule: str, subjects: Sequence[SubjectVerdict],
              primary: str | None, missing: str) -> CheckVerdict:
    chosen = next((s for s in subjects if s.subject == primary), None)
    if chosen is None and subjects:
        chosen = subjects[0]
    if chosen is None:
        return CheckVerdict(check=check, rule=rule, subject=None, verdict="inconclusive",
                            observed="—", why=missing, subjects=())
    return CheckVerdict(check=check, rule=rule, subject=chosen.subject, verdict=chosen.verdict,
                        observed=chosen.observed, why=chosen.why, subjects=tuple(subjects))


COMMITMENT_RULE = ("elicited − ordinary complete-card rate: pass when its one-sided 95 % lower "
                   "bound > 0, fail when its 95 % interval lies at or below 0, else "
                   "inconclusive")


def _commitment(checks: FiveChecks, primary: str | None, minimum: int) -> CheckVerdict:
    subjects = []
    value = checks.commitment.value or {}
    for explainer, entry in sorted(value.items()):
        itt = entry.value.itt if entry.value is not None else None
        difference = itt.value.complete_rate_difference if itt is not None and \
            itt.value is not None else None
        if difference is None:
            reason = entry.reason or (itt.reason if itt is not None else None) or "not computed"
            subjects.append(SubjectVerdict(
                subject=explainer, verdict="inconclusive", observed="—",
                why=f"{reason}: no elicited − ordinary contrast" if reason ==
                "single_elicitation_condition" else str(reason)))
            continue
        verdict, observed, why = interval_verdict(Estimate.of(difference, None), None,
                                                  minimum_clusters=minimum)
        subjects.append(SubjectVerdict(subject=explainer, verdict=verdict, observed=observed,
                                       why=why))
    return _headline("commitment", COMMITMENT_RULE, subjects, primary,
                     str(checks.commitment.reason or "no explanations"))


def _delivery(checks: FiveChecks, primary: str | None, minimum: float) -> CheckVerdict:
    rule = (f"share of assigned explanation slots whose prompt carried evidence-backed "
            f"content: pass when every arm of the explainer delivers ≥ {minimum:g}, else fail")
    by_explainer: dict[str, list[tuple[str, float]]] = {}
    unrecorded: dict[str, int] = {}
    arms = (checks.delivery.value.itt.value or {}) if checks.delivery.value is not None else {}
    for label, arm in sorted(arms.items()):
        explainer, _, context = label.partition("|")
        if arm.value is None:
            unrecorded[explainer] = unrecorded.get(explainer, 0) + 1
            continue
        by_explainer.setdefault(explainer, []).append((context, arm.value.share))
    subjects = []
    for explainer in sorted(set(by_explainer) | set(unrecorded)):
        shares = by_explainer.get(explainer, [])
        if not shares:
            subjects.append(SubjectVerdict(subject=explainer, verdict="inconclusive",
                                           observed="—", why="delivery not recorded"))
            continue
        context, low = min(shares, key=lambda item: item[1])
        observed = "; ".join(f"{c} {share:.3g}" for c, share in shares)
        verdict: Outcome = "pass" if low >= minimum else "fail"
        why = (f"lowest share {low:.3g} ({context}) ≥ {minimum:g}" if verdict == "pass"
               else f"{context} delivered only {low:.3g} < {minimum:g}")
        subjects.append(SubjectVerdict(subject=explainer, verdict=verdict, observed=observed,
                                       why=why))
    return _headline("delivery", rule, subjects, primary,
                     str(checks.delivery.reason or "no explanation arms"))


GAIN_RULE = ("Δ_{kind} of {loss} ({what}): pass when its one-sided 95 % lower bound > 0; fail "
             "when its 95 % interval lies at or below 0 or its 90 % interval lies inside "
             "±δ; else inconclusive")


def _contexts(estimates: Mapping[str, Estimate], kind: str, explainer: str,
              loss: str) -> list[str]:
    prefix = f"{kind}/{explainer}/"
    suffix = f"/{loss}/itt"
    return sorted(name[len(prefix):-len(suffix)] for name in estimates
                  if name.startswith(prefix) and name.endswith(suffix))


def _predictive_gain(estimates: Mapping[str, Estimate], config: AnalysisConfig,
                     explainers: Sequence[str], primary: str | None,
                     loss: str) -> CheckVerdict:
    margin = config.equivalence_margins.get(loss)
    subjects = []
    for explainer in explainers:
        available = _contexts(estimates, "delta_desc", explainer, loss)
        preferred = [_gate_context(config, "delta_desc", explainer), *MATCHED_ORDER]
        context = next((c for c in preferred if c in available), None)
        if context is None:
            continue
        verdict, observed, why = interval_verdict(
            estimates[f"delta_desc/{explainer}/{context}/{loss}/itt"], margin,
            minimum_clusters=config.minimum_clusters)
        subjects.append(SubjectVerdict(subject=f"{explainer} · {context}", verdict=verdict,
                                       observed=observed, why=why))
    rule = GAIN_RULE.format(kind="desc", loss=loss,
                            what="description − matched, positive favours the explanation")
    return _headline("predictive_gain", rule, subjects, _subject(subjects, primary),
                     "no matched arm with a description arm")


def _alignment(estimates: Mapping[str, Estimate], config: AnalysisConfig,
               explainers: Sequence[str], primary: str | None, loss: str) -> CheckVerdict:
    margin = config.equivalence_margins.get(loss)
    subjects = []
    headline = None
    for explainer in explainers:
        contexts = _contexts(estimates, "delta_donor", explainer, loss)
        gate_context = _gate_context(config, "delta_donor", explainer)
        for context in sorted(contexts, key=lambda c: (c != gate_context, c)):
            verdict, observed, why = interval_verdict(
                estimates[f"delta_donor/{explainer}/{context}/{loss}/itt"], margin,
                minimum_clusters=config.minimum_clusters)
            subject = f"{explainer} · {context}"
            if explainer == primary and headline is None:
                headline = subject
            subjects.append(SubjectVerdict(subject=subject, verdict=verdict, observed=observed,
                                           why=why))
    rule = GAIN_RULE.format(kind="donor", loss=loss,
                            what="donor − matched, positive favours the matched explanation")
    return _headline("alignment", rule, subjects, headline, "no donor arm")


def _subject(subjects: Sequence[SubjectVerdict], primary: str | None) -> str | None:
    if primary is None:
        return None
    return next((s.subject for s in subjects if s.subject.split(" · ")[0] == primary), None)


KNOWN_SIGNAL_RULE = ("slope of ŷ on the signal (post-outcome child plan): pass when the exact "
                     "signal's slope has a one-sided 95 % lower bound > 0 and the placebo "
                     "signal's (another task's outcome) 95 % interval lies inside "
                     f"±{NO_UPTAKE_MARGIN:g}; fail when the placebo slope's lower bound > "
                     f"{NO_UPTAKE_MARGIN:g} or the exact slope's 95 % interval lies inside "
                     f"±{NO_UPTAKE_MARGIN:g}; else inconclusive")


def _slope_of(uptake: Any) -> tuple[float | None, Interval | None, float | None, str]:
    slope = uptake.slope if isinstance(uptake, SignalUptake) else None
    value = slope.value if slope is not None else None
    if value is None:
        reason = (slope.reason if slope is not None else getattr(uptake, "reason", None))
        return None, None, None, str(reason or "no slope")
    if value.reason == TOO_FEW_CLUSTERS:
        return (value.estimate, None, None, f"slope {_num(value.estimate)}, 95 % CI not "
                f"estimable, {value.n_clusters} clusters")
    observed = (f"slope {_num(value.estimate)}, 95 % CI {_interval(value.ci95)}, "
                f"one-sided LB {_num(value.lower_bound_one_sided)}")
    return value.estimate, value.ci95, value.lower_bound_one_sided, observed


def _too_few(uptake: Any, minimum: int) -> str | None:
    """The too-few-clusters text of a slope whose interval was withheld, else None."""
    slope = uptake.slope if isinstance(uptake, SignalUptake) else None
    value = slope.value if slope is not None else None
    if value is None or value.reason != TOO_FEW_CLUSTERS:
        return None
    return f"inconclusive: {too_few_clusters_text(value.n_clusters, minimum)}"


def _inside(ci95: Interval) -> bool:
    return ci95[0] >= -NO_UPTAKE_MARGIN and ci95[1] <= NO_UPTAKE_MARGIN


def _placebo_verdict(ci95: Interval, bound: float) -> tuple[Outcome, str]:
    """The placebo passes when ignored and fails when taken up (module docstring)."""
    if _inside(ci95):
        return "pass", f"ignores the unrelated number: 95 % interval inside ±{NO_UPTAKE_MARGIN:g}"
    if bound > NO_UPTAKE_MARGIN:
        return "fail", f"takes up an unrelated number: lower bound > {NO_UPTAKE_MARGIN:g}"
    return "inconclusive", f"95 % interval not inside ±{NO_UPTAKE_MARGIN:g}"


def _known_signal(checks: FiveChecks, minimum: int) -> CheckVerdict:
    known = checks.known_signal
    if known.value is None:
        return CheckVerdict(check="known_signal", rule=KNOWN_SIGNAL_RULE, subject=None,
                            verdict="inconclusive", observed="—",
                            why=str(known.reason or "no calibration plan"), subjects=())
    subjects = []
    slopes: dict[str, tuple[float | None, Interval | None, float | None, str]] = {}
    exact_too_few: str | None = None
    for context, uptake in sorted(known.value.by_signal.items()):
        estimate, ci95, bound, observed = _slope_of(uptake)
        slopes[context] = (estimate, ci95, bound, observed)
        too_few = _too_few(uptake, minimum)
        if context == "signal@exact":
            exact_too_few = too_few
        if ci95 is None or bound is None:
            verdict: Outcome = "inconclusive"
            why = too_few or "no slope interval"
        elif context == "signal@placebo":
            verdict, why = _placebo_verdict(ci95, bound)
        elif bound > 0:
            verdict, why = "pass", "takes the signal up: lower bound > 0"
        elif ci95[0] >= -NO_UPTAKE_MARGIN and ci95[1] <= NO_UPTAKE_MARGIN:
            verdict, why = "fail", f"ignores the signal: 95 % interval inside ±{NO_UPTAKE_MARGIN:g}"
        else:
            verdict, why = "inconclusive", "95 % interval spans 0"
        subjects.append(SubjectVerdict(subject=context, verdict=verdict, observed=observed,
                                       why=why))
    exact = slopes.get("signal@exact")
    placebo = slopes.get("signal@placebo")
    observed = "; ".join(f"{c}: {v[3]}" for c, v in slopes.items()
                         if c in ("signal@exact", "signal@placebo")) or "—"
    head: tuple[Outcome, str]
    if exact is None or exact[1] is None or exact[2] is None:
        head = ("inconclusive", exact_too_few or "no slope on the exact signal")
    elif placebo is not None and placebo[2] is not None and placebo[2] > NO_UPTAKE_MARGIN:
        head = ("fail", "the slope on the placebo signal (another task's outcome) has a lower "
                        f"bound > {NO_UPTAKE_MARGIN:g}: the forecaster takes up numbers "
                        "unrelated to the state, so its uptake of the exact signal is not "
                        "specific")
    elif exact[1][0] >= -NO_UPTAKE_MARGIN and exact[1][1] <= NO_UPTAKE_MARGIN:
        head = ("fail", f"the exact signal's slope lies inside ±{NO_UPTAKE_MARGIN:g}: the "
                        "forecaster ignores a known signal")
    elif exact[2] > 0 and placebo is not None and placebo[1] is not None and \
            _inside(placebo[1]):
        head = ("pass", "the exact signal is taken up (lower bound > 0) and the placebo is not"
                        f" (its 95 % interval lies inside ±{NO_UPTAKE_MARGIN:g})")
    elif exact[2] > 0 and placebo is not None and placebo[1] is not None:
        head = ("inconclusive", "the exact signal is taken up, but the placebo's 95 % interval"
                                f" is not inside ±{NO_UPTAKE_MARGIN:g}: the uptake cannot be"
                                " shown to be specific (more tasks are needed)")
    elif exact[2] > 0:
        head = ("inconclusive", "the exact signal is taken up, but without a placebo slope the"
                                " uptake cannot be shown to be specific")
    else:
        head = ("inconclusive", "the exact signal's slope interval spans 0 but is not inside "
                                f"±{NO_UPTAKE_MARGIN:g}")
    return CheckVerdict(check="known_signal", rule=KNOWN_SIGNAL_RULE, subject="signal@exact",
                        verdict=head[0], observed=observed, why=head[1],
                        subjects=tuple(subjects))


def check_verdicts(checks: FiveChecks, estimates: Mapping[str, Estimate],
                   config: AnalysisConfig, explainers: Sequence[str]) -> CheckVerdicts:
    """The five verdicts (rules in the module docstring)."""
    ordered = sorted(explainers)
    primary = primary_explainer(config, ordered)
    loss = primary_loss(config)
    return CheckVerdicts(
        primary_explainer=primary, primary_loss=loss,
        commitment=_commitment(checks, primary, config.minimum_clusters),
        delivery=_delivery(checks, primary, config.integrity_minimum),
        predictive_gain=_predictive_gain(estimates, config, ordered, primary, loss),
        alignment=_alignment(estimates, config, ordered, primary, loss),
        known_signal=_known_signal(checks, config.minimum_clusters),
    )
