"""Compare learners on one build: evolve each, evaluate closed-book, write a report.

The report (``REPORT/report.md``, ``REPORT/pass_at_1.png``, ``REPORT/failures.png`` and
``REPORT/summary.json``) puts every learner's closed-book numbers next to the no-learner
baseline, with the config and code version they came from.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from rich.console import Console

from agents import EvalReport, EvolveReport
from agents.evaluate import _code_version
from agents.models.dtype import resolve_dtype
from benchmarks.runs import evolve_run, learner_overrides
from envs.zwc import ZWCEnv

NOTES = ("rules", "bullets", "curations_parsed", "updates", "stored_trajectories", "solved", "gathered_with",
         "generated_with", "warnings")  # evolve details worth a line in the report


@dataclass
class LearnerResult:
    learner: str
    evolve: EvolveReport
    evaluation: EvalReport


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
        results.append(LearnerResult(name, evolve, evaluation))
    _write_report(results, out, {"model": model, "split": split, "limit": limit, "train_limit": train_limit,
                                 "gather_model": gather_model, "n": n, "max_tokens": max_tokens,
                                 "settings": settings or {},
                                 "dtype": resolve_dtype(dtype), "usage": env.usage, "zwc": env.mapping.origin,
                                 "code_version": _code_version(),
                                 "date": time.strftime("%Y-%m-%d %H:%M:%S")})
    return results


def _write_report(results: list[LearnerResult], out: Path, config: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [r.learner for r in results]
    rates = [100 * r.evaluation.pass_at.get(1, 0.0) for r in results]
    fig, ax = plt.subplots(figsize=(5, 3))
    ax.bar(names, rates, color=["#888888"] + ["#3b7dd8"] * (len(names) - 1))
    ax.set_ylabel("closed-book pass@1 (%)")
    ax.set_ylim(0, max(10.0, max(rates) * 1.2))
    ax.set_title(f"{config['model']} on {config['split']}")
    fig.tight_layout()
    fig.savefig(out / "pass_at_1.png", dpi=120)
    plt.close(fig)
    outcomes = [k for k in results[0].evaluation.failures if any(r.evaluation.failures.get(k) for r in results)]
    fig, ax = plt.subplots(figsize=(6, 3.5))
    bottom = [0] * len(results)
    for outcome in outcomes:
        counts = [r.evaluation.failures.get(outcome, 0) for r in results]
        ax.bar(names, counts, bottom=bottom, label=outcome)
        bottom = [b + c for b, c in zip(bottom, counts, strict=True)]
    ax.set_ylabel("samples")
    ax.set_title("outcomes (failure taxonomy)")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1, 1))
    fig.tight_layout()
    fig.savefig(out / "failures.png", dpi=120)
    plt.close(fig)
    lines = [f"# Learners, closed-book, {config['model']}", "",
             "| learner | pass@1 | target use | samples | evolve episodes | evolve s | notes |",
             "|---|---|---|---|---|---|---|"]
    for r in results:
        notes = ", ".join(f"{k}={v}" for k, v in r.evolve.details.items() if k in NOTES)
        use = r.evaluation.target_use_rate
        lines.append(f"| {r.learner} | {100 * r.evaluation.pass_at.get(1, 0.0):.1f}% | "
                     f"{'-' if use is None else f'{100 * use:.1f}%'} | {r.evaluation.n_samples} | "
                     f"{r.evolve.episodes} | {r.evolve.seconds:.0f} | {notes} |")
    lines += ["", "target use: the share of passing samples that ran every function their task names "
              "(a pass needs only some zwc function; - where unknown).", "",
              "![pass@1](pass_at_1.png)", "", "![outcomes](failures.png)", "", "## Config", "",
              "```json", json.dumps(config, indent=1), "```"]
    (out / "report.md").write_text("\n".join(lines) + "\n")
    (out / "summary.json").write_text(json.dumps(
        {"config": config, "results": [{"learner": r.learner, "evolve": asdict(r.evolve),
                                        "evaluation": asdict(r.evaluation)} for r in results]}, indent=1))
