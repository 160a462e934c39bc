"""Write real inspect-ai logs by running inspect-ai itself (``python make_inspect_logs.py OUT``).

Run in a fresh interpreter by :func:`support.eval_logs.inspect_logs` (inspect-ai
sets up its own logging and event loop). Every eval uses inspect-ai's built-in
mock model provider ``mockllm/<name>`` with scripted answers (no network: each
output carries its token usage, so inspect-ai does not fetch a tokenizer) and the
three-sample dataset ``letters`` (sample ``qX`` asks for the letter X; the
``match`` scorer marks the answer C or I). Folders written under OUT:

* ``two-models/`` — ``.eval`` logs of ``mockllm/alice`` (answers A and B right) and
  ``mockllm/bob`` (answers C right);
* ``json/`` — the same two runs as ``.json`` logs;
* ``epochs/`` — one ``.eval`` log of ``mockllm/carol`` with 2 epochs, who answers
  each question right the first time it is asked and wrong the second;
* ``partial/`` — ``mockllm/alice`` scored by a scorer ``closeness`` with the
  scores qA 0.5, qB 0.49, qC 1.0 (not binary);
* ``failed/`` — a run of ``mockllm/dave`` whose model raises on qB (status error).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from inspect_ai import Task
from inspect_ai import eval as run_eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import Score, Target, mean, scorer
from inspect_ai.scorer import match as match_scorer
from inspect_ai.solver import TaskState, generate

LETTERS = "ABC"
CLOSENESS = {"qA": 0.5, "qB": 0.49, "qC": 1.0}


@scorer(metrics=[mean()])
def closeness() -> Callable[..., Any]:
    """A scorer with fractional scores (CLOSENESS by sample id)."""
    async def score(state: TaskState, target: Target) -> Score:
        return Score(value=CLOSENESS[str(state.sample_id)])
    return score


def letters(scorer_: Any = None) -> Task:
    dataset = [Sample(input=f"Say the letter {c}", target=c, id=f"q{c}") for c in LETTERS]
    return Task(name="letters", dataset=dataset, solver=generate(),
                scorer=scorer_ if scorer_ is not None else match_scorer())


def answerer(right: str, *, once: bool = False, fail_on: str = "") -> Callable[..., ModelOutput]:
    """Scripted outputs: the asked letter when it is in ``right`` (with ``once``: only the
    first time that letter is asked), else ``zzz``; raises on the letter ``fail_on``."""
    asked: dict[str, int] = {}

    def output(messages: list[Any], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        letter = messages[-1].text.strip()[-1]
        if letter == fail_on:
            raise RuntimeError(f"scripted failure on {letter}")
        asked[letter] = asked.get(letter, 0) + 1
        correct = letter in right and (not once or asked[letter] == 1)
        result = ModelOutput.from_content(model="mock", content=letter if correct else "zzz")
        result.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return result

    return output


def model(name: str, outputs: Callable[..., ModelOutput]) -> Any:
    return get_model(f"mockllm/{name}", custom_outputs=outputs)


def main(out: Path) -> None:
    quiet: dict[str, Any] = {"display": "none", "max_connections": 1, "max_tasks": 1}
    for folder, log_format in (("two-models", "eval"), ("json", "json")):
        run_eval(letters(), model=[model("alice", answerer("AB")), model("bob", answerer("C"))],
                 log_dir=str(out / folder), log_format=log_format, **quiet)
    run_eval(letters(), model=model("carol", answerer(LETTERS, once=True)), epochs=2,
             log_dir=str(out / "epochs"), log_format="eval", max_samples=1, **quiet)
    run_eval(letters(closeness()), model=model("alice", answerer("AB")),
             log_dir=str(out / "partial"), log_format="eval", **quiet)
    run_eval(letters(), model=model("dave", answerer(LETTERS, fail_on="B")),
             log_dir=str(out / "failed"), log_format="eval", **quiet)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
