"""What a study run will ask of its models before anything is called (``--dry-run``).

For every role — the forecaster, and each LLM explainer — and every context
(or explainer task): the number of calls, an upper bound on their tokens and
cost, and the least time the rate limits allow. Nothing is called.

* **Forecaster calls** = the slots of the plan (states × contexts × repeats of
  every explainer, plus the description arm, plus one ``followup`` call per
  preselected state when the study declares controlled follow-ups — the primary
  LLM explainer's when the run has one, bounded like its other slots plus the
  follow-up question), each priced once at its first
  attempt; retries are not counted (a run's budget stops it if they add up).
  Prompts of the description arm and of the offline explainers are rendered
  exactly from a plan frozen over them. A slot of an LLM explainer shows an
  explanation that does not exist yet: its prompt is bounded by the state's
  description prompt plus ``EXPLANATION_ALLOWANCE`` × the explainer's
  ``max_tokens`` × 4 bytes (a card and a note of at most ``max_tokens``
  tokens each, at most 4 bytes a token — an assumption printed with the bound).
  An explainer whose proposals the study executes (``propose = true`` in the
  controlled study) is forecast on its proposal states: its own contexts
  (the study's ``proposal_contexts``) and their description slots, each
  bounded the same way (a proposal state's intervention is not known yet).
* **Explainer calls** are rendered exactly from the templates
  (:meth:`~foreseen.credit.explainers.llm.LLMExplainer.planned_requests`); an
  extraction prompt holds a note of at most ``max_tokens`` × 4 bytes.
* Token bound of one call = prompt UTF-8 bytes + framing + schema + the
  answer's ``max_tokens`` (:meth:`~foreseen.credit.backends.base.Backend.cost_bound_usd`
  prices it; an unpriced model makes the cost bound unknown, said so).
* Time bound = max(calls / requests per minute, tokens / tokens per minute),
  per backend, when the configuration sets those limits.
* **With caching** (``cost with caching``): the same bound when the providers'
  prompt cache engages — the shared start of a forecast prompt (the study's
  and the state's part, ``request.cache_prefix``) priced as a cache write the
  first time it is sent and as a cache read after, if it reaches
  ``CACHE_MIN_TOKENS`` at ``BYTES_PER_TOKEN`` bytes a token (Anthropic's and
  OpenAI's minimum cacheable length); otherwise priced as plain input. An
  estimate, not a bound: it assumes calls sharing a start run one after the
  other and the tokenizer's ratio; a provider caches nothing shorter.
* **In batch** (``batch``, ``batch + caching``): the two columns before times
  ``1 − batch_discount`` (the pricing table's, or 0.5 at the official
  endpoints: :mod:`foreseen.credit.backends.http.pricing`) for the forecast
  calls, which ``--batch`` sends through the provider's batch API; explainer
  calls, and forecast calls of a backend without a batch API, run online and
  keep their online price.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from foreseen.credit.analysis.config import cluster_shortfall
from foreseen.credit.backends.base import Backend, ForecastRequest
from foreseen.credit.backends.registry import build_backend
from foreseen.credit.explainers.llm import LLMExplainer
from foreseen.credit.plan.followups import FOLLOWUP_CONTEXT, followup_outcome_id, plan_followups
from foreseen.credit.plan.freeze import FrozenPlan
from foreseen.credit.plan.study_folder import freeze_study_dir
from foreseen.credit.run.runner import build_requests
from foreseen.credit.studies.base import BuiltStudy, StudyDefinition
from foreseen.credit.studies.followup_outcomes import selected_states
from foreseen.credit.studies.pipeline import (
    BackendSpec,
    ExplainerSpec,
    StudySettings,
    default_forecaster,
    prospective_commitment,
    study_design,
    write_study_folder,
)
from foreseen.credit.studies.primary import primary_explainer_of

EXPLANATION_ALLOWANCE = 2
BYTES_PER_TOKEN = 4
DEFAULT_MAX_TOKENS = 512
#: the shortest prompt start Anthropic (Sonnet, Opus) and OpenAI cache, in tokens
CACHE_MIN_TOKENS = 1024


@dataclass(frozen=True)
class CallGroup:
    """Calls of one role in one context (or explainer task) and their bounds."""

    role: str
    context: str
    calls: int
    token_bound: int
    cost_bound_usd: float | None
    #: the cost bound when the prompt cache engages (module docstring; None: unpriced)
    cached_cost_usd: float | None = None
    #: what a batch call pays of the online price (None: these calls run online)
    batch_factor: float | None = None

    @property
    def batch_cost_usd(self) -> float | None:
        """The cost bound in batch (module docstring)."""
        return _scaled(self.cost_bound_usd, self.batch_factor)

    @property
    def batch_cached_cost_usd(self) -> float | None:
        """The cost with caching, in batch."""
        return _scaled(self.cached_cost_usd, self.batch_factor)


@dataclass(frozen=True)
class RoleLimits:
    """One backend's rate limits and the least time they allow for its calls."""

    role: str
    requests_per_minute: float | None
    tokens_per_minute: float | None
    minutes_bound: float | None


@dataclass(frozen=True)
class RunEstimate:
    """The dry run: calls, tokens and cost bound per role and context; time bounds."""

    study: str
    slots: int
    groups: tuple[CallGroup, ...]
    limits: tuple[RoleLimits, ...]
    unpriced: tuple[str, ...]
    assumptions: tuple[str, ...]
    #: the warning when the study has fewer task clusters than the plan's minimum
    cluster_warning: str | None = None

    @property
    def calls(self) -> int:
        return sum(g.calls for g in self.groups)

    @property
    def cost_bound_usd(self) -> float | None:
        """The total cost bound; None when some call has no price."""
        return _total([g.cost_bound_usd for g in self.groups])

    @property
    def cached_cost_usd(self) -> float | None:
        """The total with caching (module docstring); None when some call has no price."""
        return _total([g.cached_cost_usd for g in self.groups])

    @property
    def batch_cost_usd(self) -> float | None:
        """The total bound in batch; None when some call has no price."""
        return _total([g.batch_cost_usd for g in self.groups])

    @property
    def batch_cached_cost_usd(self) -> float | None:
        """The total with caching, in batch; None when some call has no price."""
        return _total([g.batch_cached_cost_usd for g in self.groups])


def _scaled(cost: float | None, factor: float | None) -> float | None:
    return None if cost is None else cost if factor is None else cost * factor


def _batch_factor(backend: Backend) -> float | None:
    """What a batch call of ``backend`` pays (None: it has no batch API; its calls run online)."""
    factor = getattr(backend, "batch_factor", None)
    return float(factor()) if callable(factor) else None


def _total(costs: Sequence[float | None]) -> float | None:
    return None if any(c is None for c in costs) else sum(c for c in costs if c is not None)


def _max_tokens(spec: BackendSpec) -> int:
    value = spec.options.get("max_tokens", DEFAULT_MAX_TOKENS)
    return int(value) if isinstance(value, int) else DEFAULT_MAX_TOKENS


def _token_bound(backend: Backend, request: ForecastRequest, spec: BackendSpec) -> int:
    bound = backend.token_bound(request)
    return bound if bound is not None else len(request.prompt.encode("utf-8")) + _max_tokens(spec)


def _cached_cost(backend: Backend, request: ForecastRequest, seen: set[str]) -> float | None:
    """One call's cost with caching: its shared start written the first time, then read."""
    shared = request.prompt[: request.cache_prefix]
    if len(shared.encode("utf-8")) < CACHE_MIN_TOKENS * BYTES_PER_TOKEN:
        return backend.cost_bound_usd(request)
    read = shared in seen
    seen.add(shared)
    return backend.cached_cost_bound_usd(request, read=read)


def _group(role: str, context: str, backend: Backend, spec: BackendSpec,
           requests: Sequence[ForecastRequest], seen: set[str] | None = None) -> CallGroup:
    """The calls' token and cost bounds; ``seen``: shared starts already cached (a role's)."""
    tokens = sum(_token_bound(backend, r, spec) for r in requests)
    cost = _total([backend.cost_bound_usd(r) for r in requests])
    cache = set() if seen is None else seen
    cached = _total([_cached_cost(backend, r, cache) for r in requests])
    factor = _batch_factor(backend) if role == "forecaster" else None
    return CallGroup(role, context, len(requests), tokens, cost, cached, factor)


def _limits(role: str, spec: BackendSpec, groups: Sequence[CallGroup]) -> RoleLimits:
    rpm = spec.options.get("requests_per_minute")
    tpm = spec.options.get("tokens_per_minute")
    calls = sum(g.calls for g in groups)
    tokens = sum(g.token_bound for g in groups)
    bounds = [calls / float(rpm) if isinstance(rpm, (int, float)) and rpm > 0 else None,
              tokens / float(tpm) if isinstance(tpm, (int, float)) and tpm > 0 else None]
    known = [b for b in bounds if b is not None]
    return RoleLimits(role, rpm if isinstance(rpm, (int, float)) else None,
                      tpm if isinstance(tpm, (int, float)) else None,
                      max(known) if known else None)


def _offline_plan(definition: StudyDefinition, built: BuiltStudy, settings: StudySettings,
                  folder: Path) -> tuple[FrozenPlan, BackendSpec]:
    design = study_design(definition, built, settings)
    forecaster = settings.forecaster or default_forecaster(design)
    commitment = prospective_commitment(definition, settings)
    # the scratch plan only counts calls: its follow-up outcomes are placeholders (never
    # executed, never revealed), so a dry run trains no follow-up model
    placeholders = None if commitment is not None or design.followups is None else {
        **built.build.outcome_map(),
        **{followup_outcome_id(sid): 0.0 for sid in selected_states(built, design)}}
    write_study_folder(folder, replace(built, files={}), built.build.explanations, design,
                       forecaster, placeholders, commitment=commitment)
    return freeze_study_dir(folder), forecaster


def estimate_study(definition: StudyDefinition, built: BuiltStudy, settings: StudySettings,
                   scratch: Path) -> RunEstimate:
    """Bound the calls of a run of ``definition`` with ``settings`` (module docstring)."""
    plan, forecaster = _offline_plan(definition, built, settings, scratch)
    backend = build_backend(forecaster.backend, forecaster.options)
    groups: list[CallGroup] = []
    by_context: dict[str, list[ForecastRequest]] = {}
    descriptions: dict[str, str] = {}
    for slot, request in build_requests(plan):
        label = f"{slot.explainer or '-'}|{slot.context_id}"
        by_context.setdefault(label, []).append(request)
        if slot.context_id == "description":
            descriptions[slot.state_id] = request.prompt
    seen: set[str] = set()
    for label, requests in sorted(by_context.items()):
        groups.append(_group("forecaster", label, backend, forecaster, requests, seen))
    assumptions: list[str] = []
    limits_by_role: dict[str, tuple[BackendSpec, list[CallGroup]]] = {
        "forecaster": (forecaster, list(groups))}
    design = study_design(definition, built, settings)
    judged = _judged_llm_explainer(definition, settings, plan)
    if judged is not None:  # its follow-ups replace the stand-in's (bounded below)
        groups = [g for g in groups if g.context.partition("|")[2] != FOLLOWUP_CONTEXT]
        limits_by_role["forecaster"] = (forecaster, list(groups))
    for spec in settings.explainers:
        groups_here = _explainer_groups(definition, built, spec, design.seed)
        proposing = spec.propose and definition.proposal_hook(spec.name) is not None
        forecast_groups = _llm_arm_groups(
            spec, backend, forecaster,
            definition.proposal_contexts if proposing else design.llm_contexts,
            design.repeats, descriptions, built)
        if proposing:  # the description arm of its proposal states
            forecast_groups += _llm_arm_groups(spec, backend, forecaster, ("description",),
                                               design.repeats, descriptions, built)
        if spec.name == judged:
            forecast_groups.append(_followup_group(spec, backend, forecaster, plan,
                                                   descriptions))
        groups += groups_here + forecast_groups
        limits_by_role["forecaster"][1].extend(forecast_groups)
        limits_by_role[f"explainer {spec.name}"] = (spec.backend, groups_here)
        assumptions.append(
            f"explainer {spec.name}: a note or card of at most {_max_tokens(spec.backend)}"
            f" tokens, at most {BYTES_PER_TOKEN} bytes a token")
    backend.close()
    models = {role: str(spec.options.get("model", spec.backend))
              for role, (spec, _) in limits_by_role.items()}
    unpriced = tuple(sorted({f"{g.role} (model {models[g.role]})" for g in groups
                             if g.cost_bound_usd is None}))
    limits = tuple(_limits(role, spec, role_groups)
                   for role, (spec, role_groups) in limits_by_role.items())
    slots = sum(g.calls for g in groups if g.role == "forecaster")
    return RunEstimate(definition.name, slots, tuple(groups), limits, unpriced,
                       tuple(assumptions),
                       cluster_shortfall(len(plan.study.tasks), plan.body["analysis"]))


def _explainer_groups(definition: StudyDefinition, built: BuiltStudy, spec: ExplainerSpec,
                      seed: int) -> list[CallGroup]:
    backend = build_backend(spec.backend.backend, spec.backend.options)
    explainer = LLMExplainer(backend, seed=seed, propose=spec.propose, extractor=spec.extractor,
                             brief=definition.llm_brief,
                             proposal_state=(definition.proposal_hook(spec.name)
                                             if spec.propose else None))
    note = "x" * (_max_tokens(spec.backend) * BYTES_PER_TOKEN)
    by_task: dict[str, list[ForecastRequest]] = {}
    for request in explainer.planned_requests(built.build.study, note):
        by_task.setdefault(request.context_kind, []).append(request)
    groups = [_group(f"explainer {spec.name}", task, backend, spec.backend, requests)
              for task, requests in sorted(by_task.items())]
    backend.close()
    return groups


def _llm_arm_groups(spec: ExplainerSpec, backend: Backend, forecaster: BackendSpec,
                    contexts: Sequence[str], repeats: int, descriptions: Mapping[str, str],
                    built: BuiltStudy) -> list[CallGroup]:
    allowance = "x" * (EXPLANATION_ALLOWANCE * _max_tokens(spec.backend) * BYTES_PER_TOKEN)
    groups = []
    for context in contexts:
        requests = [ForecastRequest(f"{spec.name}|{state.id}|{context}|{r}", state.id, context,
                                    r, descriptions[state.id] + allowance, 0)
                    for state in built.build.study.states for r in range(1, repeats + 1)]
        groups.append(_group("forecaster", f"{spec.name}|{context}", backend, forecaster,
                             requests))
    return groups


def _judged_llm_explainer(definition: StudyDefinition, settings: StudySettings,
                          plan: FrozenPlan) -> str | None:
    """The LLM explainer whose follow-ups the run will ask (the primary, unless it proposes
    its own states), or None: the scratch plan's own follow-up slots are the run's."""
    if "followups" not in plan.body:
        return None
    names = [spec.name for spec in settings.explainers]
    primary = primary_explainer_of(settings.primary_explainer, names,
                                   definition.offline_explainers)
    spec = next((s for s in settings.explainers if s.name == primary), None)
    if spec is None or (spec.propose and definition.proposal_hook(spec.name) is not None):
        return None
    return spec.name


def _followup_group(spec: ExplainerSpec, backend: Backend, forecaster: BackendSpec,
                    plan: FrozenPlan, descriptions: Mapping[str, str]) -> CallGroup:
    """An LLM explainer's follow-up calls: one per preselected state, each bounded by the
    state's description prompt + the explanation allowance + the follow-up question."""
    block = plan_followups(plan.body)
    selected = block.selected if block is not None else ()
    question = block.question() if block is not None else ""
    allowance = "x" * (EXPLANATION_ALLOWANCE * _max_tokens(spec.backend) * BYTES_PER_TOKEN)
    requests = [ForecastRequest(f"{spec.name}|{sid}|{FOLLOWUP_CONTEXT}|1", sid,
                                FOLLOWUP_CONTEXT, 1,
                                descriptions[sid] + allowance + question, 0)
                for sid in selected]
    return _group("forecaster", f"{spec.name}|{FOLLOWUP_CONTEXT}", backend, forecaster,
                  requests)


def estimate_lines(estimate: RunEstimate) -> list[str]:
    """The dry run as printable lines (one per role and context, then totals)."""
    lines = [*([estimate.cluster_warning] if estimate.cluster_warning else []),
             f"dry run of study {estimate.study}: {estimate.calls} calls, nothing called",
             f"{'role':<18} {'context / task':<44} {'calls':>7} {'tokens ≤':>12}"
             f" {'online ≤ (USD)':>14} {'with caching':>13} {'batch ≤':>10}"
             f" {'batch+caching':>13}"]
    for group in estimate.groups:
        lines.append(f"{group.role:<18} {group.context:<44} {group.calls:>7}"
                     f" {group.token_bound:>12} {_usd(group.cost_bound_usd, 'unpriced'):>14}"
                     f" {_usd(group.cached_cost_usd, 'unpriced'):>13}"
                     f" {_usd(group.batch_cost_usd, 'unpriced'):>10}"
                     f" {_usd(group.batch_cached_cost_usd, 'unpriced'):>13}")
    lines.append(f"{'total':<63} {estimate.calls:>7}"
                 f" {sum(g.token_bound for g in estimate.groups):>12}"
                 f" {_usd(estimate.cost_bound_usd, 'unknown'):>14}"
                 f" {_usd(estimate.cached_cost_usd, 'unknown'):>13}"
                 f" {_usd(estimate.batch_cost_usd, 'unknown'):>10}"
                 f" {_usd(estimate.batch_cached_cost_usd, 'unknown'):>13}")
    lines.append(f"with caching: a prompt start of {CACHE_MIN_TOKENS} tokens or more (at"
                 f" {BYTES_PER_TOKEN} bytes a token) shared by several calls is written to the"
                 " provider's cache once and read after (cache prices of the pricing table)")
    lines.append("batch: the forecast calls sent with --batch through the provider's batch API,"
                 " at 1 − batch_discount of the price (pricing table; 0.5 off at the official"
                 " endpoints); explainer calls run online")
    for limit in estimate.limits:
        if limit.minutes_bound is None:
            lines.append(f"{limit.role}: no rate limit configured (no time bound)")
        else:
            lines.append(f"{limit.role}: rate limits allow it in no less than"
                         f" {limit.minutes_bound:.1f} minutes")
    if estimate.unpriced:
        lines.append("no price for: " + "; ".join(estimate.unpriced)
                     + " (add the model to its pricing table to bound the cost)")
    lines += [f"assumes {a}" for a in estimate.assumptions]
    return lines


def _usd(value: float | None, missing: str) -> str:
    return missing if value is None else f"{value:.4f}"
