"""Open-SFT vs Closed-SFT on one build: API recall and closed-book pass@k, before and after.

One seed, one fixed train slice (the first ``train_limit`` train tasks), a fixed number of
optimiser steps. The base model and each fine-tuned model are probed for API recall (all
catalogued functions, and the ones the slice trains) and evaluated closed-book on the
single_test tasks of the trained functions. Training throughput and peak memory come from
the runs themselves. Writes ``OUT/summary.json`` and the report ``sebench report`` makes of it
(``report.md``, ``report.html``, plots: the SFT table with intervals, recall against steps);
each learner's state and model under ``OUT/<learner>/``, so a rerun after a kill does not redo
a finished collection or training (training resumes from its last checkpoint). Each model
gathers its own open-book rollouts, as the paper's; a row trained on a teacher's answers
(``--gather-model reference``) carries the teacher in its name in every table.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from pathlib import Path

from agents import Agent, EvalReport
from agents.models.dtype import resolve_dtype
from agents.probe import ProbeReport, probe
from benchmarks.findings import OPEN_BOOK, comparison_verdict
from benchmarks.paired_stats import RowTasks, counts_of
from benchmarks.report import report_comparison
from benchmarks.report_runs import build_key, read_records
from benchmarks.report_stats import task_samples
from benchmarks.runs import evolve_run
from envs.zwc import ZWCEnv
from learners.base import learner_teacher, teacher_label
from sebench.version import code_version


@dataclass
class SFTRow:
    name: str               # base | closed-sft | open-sft
    probe: ProbeReport
    trained_recall: float   # recall over the functions the slice trains
    evaluation: EvalReport
    train: dict             # the learner's train_result (empty for the base model)
    per_task: dict[str, list[int]] | None = None  # task_id -> [samples, passes]; None: not kept (old rows)
    teacher: str | None = None  # who gathered its train data when not the model itself (learners.base.learner_teacher)

    @property
    def label(self) -> str:
        """The row's name in tables: ``closed-sft (teacher: reference)`` for a teacher-trained row."""
        return teacher_label(self.name, self.teacher)


def sft_compare(env: ZWCEnv, out: str | Path, *, model: str = "smollm2-135m", learners=("closed-sft", "open-sft"),
                train_limit: int = 48, steps: int = 60, n: int = 4, limit: int | None = None,
                gather_model: str | None = None, max_tokens: int = 160, settings: dict | None = None,
                probe_limit: int | None = None, dtype: str = "auto") -> list[SFTRow]:
    """``dtype`` is the models' for probing and evaluation, and the trainers' unless ``settings`` sets one.
    ``gather_model``: None, the paper's (each model gathers its own open-book rollouts); a teacher
    (``reference``) names the rows it trained (``closed-sft (teacher: reference)``)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    functions = sorted({f for t in env.tasks("train")[:train_limit] for f in t.selected_functions})
    numpy_paths = {f"numpy.{f}" for f in functions}  # selected_functions are relative to numpy
    base = Agent(model=model, max_tokens=max_tokens, dtype=dtype)
    rows = [measure("base", base, env, out, functions, numpy_paths, n, limit, {}, probe_limit)]
    base.close()  # each row's model goes before the next trains
    for name in learners:
        agent, _ = evolve_run(env, name, out / name, model=model, max_tokens=max_tokens, dtype=dtype,
                              settings={"limit": train_limit, "gather_model": gather_model, "max_steps": steps,
                                        "dtype": dtype, **(settings or {})})
        rows.append(measure(name, agent, env, out, functions, numpy_paths, n, limit, agent.learner.train_result,
                            probe_limit, teacher=learner_teacher(agent.learner, model)))
        agent.close()
    config = {"model": model, "train_limit": train_limit, "steps": steps, "n": n, "limit": limit,
              "probe_limit": probe_limit, "gather_model": gather_model, "max_tokens": max_tokens,
              "dtype": resolve_dtype(dtype),
              "settings": settings or {},
              "trained_functions": functions, "zwc": env.mapping.origin, "code_version": code_version(),
              "date": time.strftime("%Y-%m-%d %H:%M:%S")}
    report_comparison(out, {"config": config, "verdict": verdict(rows), "rows": [row_summary(r) for r in rows]})
    return rows


def measure(name: str, agent: Agent, env: ZWCEnv, out: Path, functions: list[str], numpy_paths: set[str], n: int,
            limit: int | None, train: dict, probe_limit: int | None, folder: Path | None = None,
            teacher: str | None = None) -> SFTRow:
    """Probe ``agent``'s model for API recall and evaluate it closed-book on the trained functions;
    both land in ``folder`` (default OUT/NAME), the run directory of the row."""
    folder = folder or out / name
    report = probe(agent.model, env.mapping, limit=probe_limit)
    report.write(folder / "probe.json")
    results = folder / "closed.jsonl"
    results.unlink(missing_ok=True)
    evaluation = agent.evaluate(env, split="single_test", n=n, mode="closed", out=str(results), limit=limit,
                                functions=functions)
    records = read_records(results, n)
    per_task = {task: [samples, passes] for task, (samples, passes) in task_samples(records).items()}
    return SFTRow(name, report, report.recall_on(numpy_paths), evaluation, train, per_task, teacher)


def row_tasks(row: SFTRow) -> RowTasks | None:
    """The row's per-task records for the paired statistics (one training run); None without them."""
    if row.per_task is None:
        return None
    return RowTasks(row.name, [counts_of(row.per_task, build_key(row.evaluation.config))])


def verdict(rows: list[SFTRow]) -> str:
    """The pre-specified Open-Book Paradox (Closed-SFT minus Open-SFT > 0 on closed-book pass@1),
    then each learner minus the base model, each decided by its paired interval
    (``benchmarks/findings.py``), whichever way it comes out."""
    return comparison_verdict({r.name: row_tasks(r) for r in rows}, OPEN_BOOK)


def row_summary(row: SFTRow) -> dict:
    """One row as ``summary.json`` holds it (sft-, rl- and selfplay-compare alike), which the
    report reads (``benchmarks/report_runs.py``)."""
    return {"name": row.name, "recall": row.probe.recall, "trained_recall": row.trained_recall,
            "recall_with_aliases": row.probe.recall_with_aliases, "evaluation": asdict(row.evaluation),
            "train": row.train, "per_task": row.per_task, "teacher": row.teacher}
