"""Compare learners on one build: evolve each, evaluate closed-book, write a report.

Each row is also evaluated on the NumPy control (the same test tasks, in plain NumPy) after its
training phase; the no-learner row's control is "before". A learner that breaks what the model
knew (storing zwc names into the weights may) shows as a paired difference below zero: "NumPy
retained", per task over the same tasks and samples, with its bootstrap interval
(``benchmarks.paired_stats``).

Each finished row leaves ``REPORT/LEARNER/row.json`` (its reports and the settings it ran with), so
a rerun of the same command skips the rows already done and a comparison longer than one sitting
is run in several; a row whose settings, build (by content) or machine kind changed runs again.

``REPORT/summary.json`` holds every learner's evolve report and evaluations next to the
no-learner baseline, with the config, machine and code version they came from; the report
(``report.md``, ``report.html``, PNG plots) is ``sebench report``'s on that directory
(``benchmarks.report.report_comparison``): main table with intervals, training phases, taxonomy.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from rich.console import Console

from agents import EvalReport, EvolveReport
from agents.eval_config import file_sha256
from agents.evaluate import read_results
from agents.models.dtype import resolve_dtype
from benchmarks.machine import machine
from benchmarks.paired_stats import PairedDifference, RowTasks, counts_of, paired_difference
from benchmarks.report import report_comparison
from benchmarks.report_stats import task_samples
from benchmarks.runs import evolve_run, learner_overrides
from envs.zwc import ZWCEnv
from learners.base import learner_teacher
from sebench.jsonl import write_json
from sebench.version import code_version

ROW_FILE = "row.json"
NOTES = ("rules", "bullets", "curations_parsed", "updates", "stored_trajectories", "solved", "gathered_with",
         "generated_with", "warnings")  # evolve details worth a line in the report


@dataclass
class LearnerResult:
    learner: str
    evolve: EvolveReport
    evaluation: EvalReport
    teacher: str | None = None  # who answered its train tasks when not the agent's model: named in the tables
    numpy: EvalReport | None = None  # the NumPy control after its training phase
    numpy_retained: PairedDifference | None = None  # numpy minus the no-learner row's, per task


def compare(env: ZWCEnv, learners: list[str], model: str, out: str | Path, *, split: str = "single_test",
            limit: int | None = 20, train_limit: int = 20, gather_model: str | None = "reference",
            max_tokens: int = 192, n: int = 1, dtype: str = "auto",
            settings: dict | None = None, numpy_control: bool = True,
            temperature: float | None = None) -> list[LearnerResult]:
    """``settings``: ``--set`` values, ``KEY`` for every learner but ``none``, ``LEARNER.KEY`` for one
    (``expel.store=chroma``). ``numpy_control``: also evaluate each row on the NumPy control (the
    forgetting figure; needs the ``none`` row, the before). ``temperature``: every answer's, the
    learners' own gathering included (None: the evaluation preset's; 0: greedy)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    results = []
    console = Console(stderr=True)
    for i, name in enumerate(learners, 1):
        own = {} if name == "none" else {"limit": train_limit, "gather_model": gather_model,
                                         **learner_overrides(settings or {}, name)}
        key = {"learner": name, "settings": own, "model": model, "dtype": resolve_dtype(dtype), "split": split,
               "limit": limit, "n": n, "max_tokens": max_tokens, "temperature": temperature,
               "numpy_control": numpy_control,
               "build": build_identity(env, split), "machine": machine()}  # the same build, machine kind
        done = finished_row(out / name, key)
        if done is not None:
            console.print(f"[bold]compare {i}/{len(learners)}: {name}[/bold] — finished earlier with the same "
                          f"settings ({out / name / ROW_FILE}); skipped")
            results.append(done)
            continue
        console.print(f"[bold]compare {i}/{len(learners)}: {name}[/bold]" + ("" if name == "none" else
                      f" — training phase on {train_limit} train tasks, then closed-book on {limit} test tasks"))
        (out / name / ROW_FILE).unlink(missing_ok=True)
        agent, evolve = evolve_run(env, name, out / name, model=model, settings=own, max_tokens=max_tokens,
                                   dtype=dtype, temperature=temperature)
        if name != "none":
            console.print(f"{name} evolved in {evolve.seconds:.0f} s: " + ", ".join(
                f"{k}={v}" for k, v in evolve.details.items() if k in NOTES and k != "warnings"))
        results_path = out / name / "closed.jsonl"
        results_path.unlink(missing_ok=True)
        evaluation = agent.evaluate(env, split=split, n=n, mode="closed", out=str(results_path), limit=limit)
        numpy = None
        if numpy_control:
            (out / name / "numpy.jsonl").unlink(missing_ok=True)
            numpy = agent.evaluate(env, split=split, n=n, mode="numpy", out=str(out / name / "numpy.jsonl"),
                                   limit=limit)
        agent.close()  # the row's model goes back to the registry before the next row loads its own
        close = getattr(agent.learner, "close", None)
        if close is not None:
            close()  # and its store lets go of its files (the run directory keeps them)
        result = LearnerResult(name, evolve, evaluation, learner_teacher(agent.learner, model), numpy)
        write_json(out / name / ROW_FILE, {"key": key, "teacher": result.teacher, "evolve": asdict(evolve),
                                           "evaluation": asdict(evaluation), "numpy": asdict(numpy) if numpy else None})
        results.append(result)
    before = next((r for r in results if r.learner == "none" and r.numpy is not None), None)
    for result in results:
        if before is not None and result is not before and result.numpy is not None:
            result.numpy_retained = retained(result, before, env.mapping.origin)
    config = {"model": model, "split": split, "limit": limit, "train_limit": train_limit,
              "gather_model": gather_model, "n": n, "max_tokens": max_tokens, "settings": settings or {},
              "temperature": temperature,
              "dtype": resolve_dtype(dtype), "usage": env.usage, "zwc": env.mapping.origin,
              "code_version": code_version(), "date": time.strftime("%Y-%m-%d %H:%M:%S"), "machine": machine()}
    rows = [{"learner": r.learner, "evolve": asdict(r.evolve), "evaluation": asdict(r.evaluation), "teacher": r.teacher,
             **({"numpy": asdict(r.numpy)} if r.numpy else {}),
             **({"numpy_retained": asdict(r.numpy_retained)} if r.numpy_retained else {})} for r in results]
    report_comparison(out, {"config": config, "results": rows})
    return results


def finished_row(run: Path, key: dict) -> LearnerResult | None:
    """The row ``run/row.json`` records when it ran with exactly ``key``'s settings, else None."""
    path = run / ROW_FILE
    if not path.is_file():
        return None
    try:
        row = json.loads(path.read_text())
    except json.JSONDecodeError:
        return None  # not ours to trust: the row runs again
    if row.get("key") != json.loads(json.dumps(key, default=str)):
        return None
    return LearnerResult(key["learner"], EvolveReport(**row["evolve"]), _eval_report(row["evaluation"]),
                         row.get("teacher"), _eval_report(row["numpy"]) if row.get("numpy") else None)


def build_identity(env: ZWCEnv, split: str) -> dict[str, str]:
    """The build a row ran on, by content (its names and the tasks it trains and tests on), so a
    build copied or rebuilt elsewhere still resumes its rows."""
    return {name: file_sha256(env.root / name) for name in ("mapping.json", "train.jsonl", f"{split}.jsonl")}


def _eval_report(data: dict) -> EvalReport:
    return EvalReport(**{**data, "pass_at": {int(k): v for k, v in data["pass_at"].items()}})


def retained(after: LearnerResult, before: LearnerResult, build: str) -> PairedDifference | None:
    """``after``'s NumPy control minus ``before``'s, paired per task (None when they share no task)."""
    rows = [RowTasks(r.learner, [counts_of(task_samples(list(read_results(Path(r.numpy.results_path)).values())),
                                           build)]) for r in (after, before)]
    return paired_difference(*rows)
