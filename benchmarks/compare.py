"""Compare learners on one build: evolve each, evaluate closed-book, write a report.

``REPORT/summary.json`` holds every learner's evolve report and closed-book evaluation next to
the no-learner baseline, with the config and code version they came from; the report
(``report.md``, ``report.html``, PNG plots) is ``sebench report``'s on that directory
(``benchmarks.report.report_comparison``): main table with intervals, training phases, taxonomy.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from pathlib import Path

from rich.console import Console

from agents import EvalReport, EvolveReport
from agents.models.dtype import resolve_dtype
from benchmarks.report import report_comparison
from benchmarks.runs import evolve_run, learner_overrides
from envs.zwc import ZWCEnv
from learners.base import learner_teacher
from sebench.version import code_version

NOTES = ("rules", "bullets", "curations_parsed", "updates", "stored_trajectories", "solved", "gathered_with",
         "generated_with", "warnings")  # evolve details worth a line in the report


@dataclass
class LearnerResult:
    learner: str
    evolve: EvolveReport
    evaluation: EvalReport
    teacher: str | None = None  # who answered its train tasks when not the agent's model: named in the tables


def compare(env: ZWCEnv, learners: list[str], model: str, out: str | Path, *, split: str = "single_test",
            limit: int | None = 20, train_limit: int = 20, gather_model: str | None = "reference",
            max_tokens: int = 192, n: int = 1, dtype: str = "auto",
            settings: dict | None = None) -> list[LearnerResult]:
    """``settings``: ``--set`` values, ``KEY`` for every learner but ``none``, ``LEARNER.KEY`` for one
    (``expel.store=chroma``)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    results = []
    console = Console(stderr=True)
    for i, name in enumerate(learners, 1):
        own = {} if name == "none" else {"limit": train_limit, "gather_model": gather_model,
                                         **learner_overrides(settings or {}, name)}
        console.print(f"[bold]compare {i}/{len(learners)}: {name}[/bold]" + ("" if name == "none" else
                      f" — training phase on {train_limit} train tasks, then closed-book on {limit} test tasks"))
        agent, evolve = evolve_run(env, name, out / name, model=model, settings=own, max_tokens=max_tokens,
                                   dtype=dtype)
        if name != "none":
            console.print(f"{name} evolved in {evolve.seconds:.0f} s: " + ", ".join(
                f"{k}={v}" for k, v in evolve.details.items() if k in NOTES and k != "warnings"))
        results_path = out / name / "closed.jsonl"
        results_path.unlink(missing_ok=True)
        evaluation = agent.evaluate(env, split=split, n=n, mode="closed", out=str(results_path), limit=limit)
        agent.close()  # the row's model goes back to the registry before the next row loads its own
        close = getattr(agent.learner, "close", None)
        if close is not None:
            close()  # and its store lets go of its files (the run directory keeps them)
        results.append(LearnerResult(name, evolve, evaluation, learner_teacher(agent.learner, model)))
    config = {"model": model, "split": split, "limit": limit, "train_limit": train_limit,
              "gather_model": gather_model, "n": n, "max_tokens": max_tokens, "settings": settings or {},
              "dtype": resolve_dtype(dtype), "usage": env.usage, "zwc": env.mapping.origin,
              "code_version": code_version(), "date": time.strftime("%Y-%m-%d %H:%M:%S")}
    report_comparison(out, {"config": config, "results": [{"learner": r.learner, "evolve": asdict(r.evolve),
                                                           "evaluation": asdict(r.evaluation), "teacher": r.teacher}
                                                          for r in results]})
    return results
