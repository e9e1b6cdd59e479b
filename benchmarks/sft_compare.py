"""Open-SFT vs Closed-SFT on one build: API recall and closed-book pass@k, before and after.

One seed, one fixed train slice (the first ``train_limit`` train tasks), a fixed number of
optimiser steps. The base model and each fine-tuned model are probed for API recall (all
catalogued functions, and the ones the slice trains) and evaluated closed-book on the
single_test tasks of the trained functions. Training throughput and peak memory come from
the runs themselves. Writes ``OUT/summary.json`` and the report ``sebench report`` makes of it
(``report.md``, ``report.html``, plots: the SFT table with intervals, recall against steps);
each learner's state and model under ``OUT/<learner>/``, so a rerun after a kill does not redo
a finished collection or training (training resumes from its last checkpoint).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from pathlib import Path

from agents import Agent, EvalReport
from agents.evaluate import _code_version
from agents.models.dtype import resolve_dtype
from agents.probe import ProbeReport, probe
from benchmarks.report import report_comparison
from benchmarks.runs import evolve_run
from envs.zwc import ZWCEnv


@dataclass
class SFTRow:
    name: str               # base | closed-sft | open-sft
    probe: ProbeReport
    trained_recall: float   # recall over the functions the slice trains
    evaluation: EvalReport
    train: dict             # the learner's train_result (empty for the base model)


def sft_compare(env: ZWCEnv, out: str | Path, *, model: str = "smollm2-135m", learners=("closed-sft", "open-sft"),
                train_limit: int = 48, steps: int = 60, n: int = 4, limit: int | None = None,
                gather_model: str | None = "reference", max_tokens: int = 160, settings: dict | None = None,
                probe_limit: int | None = None, dtype: str = "auto") -> list[SFTRow]:
    """``dtype`` is the models' for probing and evaluation, and the trainers' unless ``settings`` sets one."""
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
                            probe_limit))
        agent.close()
    config = {"model": model, "train_limit": train_limit, "steps": steps, "n": n, "limit": limit,
              "probe_limit": probe_limit, "gather_model": gather_model, "max_tokens": max_tokens,
              "dtype": resolve_dtype(dtype),
              "settings": settings or {},
              "trained_functions": functions, "zwc": env.mapping.origin, "code_version": _code_version(),
              "date": time.strftime("%Y-%m-%d %H:%M:%S")}
    report_comparison(out, {"config": config, "verdict": verdict(rows), "rows": [row_summary(r) for r in rows]})
    return rows


def measure(name: str, agent: Agent, env: ZWCEnv, out: Path, functions: list[str], numpy_paths: set[str], n: int,
            limit: int | None, train: dict, probe_limit: int | None, folder: Path | None = None) -> SFTRow:
    """Probe ``agent``'s model for API recall and evaluate it closed-book on the trained functions;
    both land in ``folder`` (default OUT/NAME), the run directory of the row."""
    folder = folder or out / name
    report = probe(agent.model, env.mapping, limit=probe_limit)
    report.write(folder / "probe.json")
    results = folder / "closed.jsonl"
    results.unlink(missing_ok=True)
    evaluation = agent.evaluate(env, split="single_test", n=n, mode="closed", out=str(results), limit=limit,
                                functions=functions)
    return SFTRow(name, report, report.recall_on(numpy_paths), evaluation, train)


def verdict(rows: list[SFTRow]) -> str:
    """The paper's claim, checked against what was measured (whichever way it comes out)."""
    by = {r.name: r for r in rows}
    if "open-sft" not in by or "closed-sft" not in by:
        return ""
    o, c = by["open-sft"], by["closed-sft"]

    def compare(a: float, b: float) -> str:
        return "lower than" if a < b else "equal to" if a == b else "higher than"

    o1, c1 = o.evaluation.pass_at.get(1, 0.0), c.evaluation.pass_at.get(1, 0.0)
    outcome = ("holds" if o.probe.recall < c.probe.recall else
               "is not visible (equal recall)" if o.probe.recall == c.probe.recall else "does not hold")
    return (f"Open-SFT's closed-book API recall ({100 * o.probe.recall:.1f}%) is "
            f"{compare(o.probe.recall, c.probe.recall)} Closed-SFT's ({100 * c.probe.recall:.1f}%), and its "
            f"closed-book pass@1 ({100 * o1:.1f}%) is {compare(o1, c1)} Closed-SFT's ({100 * c1:.1f}%): "
            f"on recall, the paper's Open-Book Paradox (Open-SFT < Closed-SFT) {outcome} here.")


def row_summary(row: SFTRow) -> dict:
    """One row as ``summary.json`` holds it (sft-, rl- and selfplay-compare alike), which the
    report reads (``benchmarks/report_runs.py``)."""
    return {"name": row.name, "recall": row.probe.recall, "trained_recall": row.trained_recall,
            "recall_with_aliases": row.probe.recall_with_aliases, "evaluation": asdict(row.evaluation),
            "train": row.train}
