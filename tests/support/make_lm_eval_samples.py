"""Write real lm-evaluation-harness samples files by running lm-eval itself.

``python -m support.make_lm_eval_samples OUT`` (a fresh interpreter, started by
:func:`support.eval_logs.lm_eval_samples`, with the Hugging Face libraries
offline) writes a local multiple-choice task ``tiny_choice`` (8 documents, two
choices each, read from a JSON-lines file by the ``datasets`` library) and runs
``lm_eval run --model dummy --log_samples`` on it three times, as the models
``alice``, ``bob`` and ``carol`` (``--model_args pretrained=NAME``; lm-eval's
dummy model ignores it but names its output folder after it) with the seeds
1, 2 and 3 (the dummy model's log-likelihoods are seeded random numbers, so its
per-document accuracy is 0 or 1 at random). The task logs two metrics, ``acc``
and ``acc_norm``. Output: ``OUT/runs/<model>/samples_tiny_choice_<date>.jsonl``
and ``results_<date>.json`` (the accuracies lm-eval itself reports).

lm-eval's task manager indexes its ~26,000 built-in task files on every run
(about 12 s here); only the local task is run, so the index is built without
them (``TaskManager(include_defaults=False)``, lm-eval's own switch, made the
default below). Nothing else of lm-eval is changed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from lm_eval._cli import HarnessCLI
from lm_eval.tasks.manager import TaskManager

MODELS = (("alice", 1), ("bob", 2), ("carol", 3))
DOCUMENTS = 8

TASK = """task: tiny_choice
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: multiple_choice
doc_to_text: "{{{{question}}}}"
doc_to_choice: "{{{{choices}}}}"
doc_to_target: "{{{{answer}}}}"
metric_list:
  - metric: acc
  - metric: acc_norm
"""


def write_task(folder: Path) -> Path:
    """The task's YAML and its data file; the folder to give ``--include_path``."""
    folder.mkdir(parents=True)
    data = folder / "tiny.jsonl"
    data.write_text("".join(json.dumps({"question": f"Question {i}: which?",
                                        "choices": ["yes", "no"], "answer": i % 2}) + "\n"
                            for i in range(DOCUMENTS)), encoding="utf-8")
    (folder / "tiny_choice.yaml").write_text(TASK.format(data=data), encoding="utf-8")
    return folder


def _skip_builtin_task_index() -> None:
    defaults = TaskManager.__init__.__defaults__
    assert defaults is not None and defaults[2] is True  # (verbosity, include_path, defaults, …)
    TaskManager.__init__.__defaults__ = (*defaults[:2], False, *defaults[3:])


def main(out: Path) -> None:
    _skip_builtin_task_index()
    tasks = write_task(out / "task")
    for name, seed in MODELS:
        harness = HarnessCLI()
        arguments = harness._parser.parse_args([
            "run", "--model", "dummy", "--model_args", f"pretrained={name}",
            "--tasks", "tiny_choice", "--include_path", str(tasks),
            "--output_path", str(out / "runs"), "--log_samples", "--seed", str(seed)])
        harness.execute(arguments)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
