"""Open-SFT vs Closed-SFT on one build: API recall and closed-book pass@k, before and after.

One seed, one fixed train slice (the first ``train_limit`` train tasks), a fixed number of
optimiser steps. The base model and each fine-tuned model are probed for API recall (all
catalogued functions, and the ones the slice trains) and evaluated closed-book on the
single_test tasks of the trained functions. Training throughput and peak memory come from
the runs themselves. Writes ``OUT/report.md``, ``OUT/sft.png`` and ``OUT/summary.json``;
each learner's state and model under ``OUT/<learner>/``, so a rerun after a kill does not redo
a finished collection or training (training resumes from its last checkpoint).
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from agents import Agent, EvalReport
from agents.evaluate import _code_version
from agents.models.dtype import resolve_dtype
from agents.probe import ProbeReport, probe
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
    _write_report(rows, out, config)
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


def table_rows(rows: list[SFTRow]) -> list[list[str]]:
    """One line per model: what the printed table and the markdown report show."""
    lines = []
    for r in rows:
        top = max(r.evaluation.pass_at, default=0)
        t = r.train
        lines.append([r.name, f"{100 * r.probe.recall:.1f}%", f"{100 * r.trained_recall:.1f}%",
                      f"{100 * r.probe.recall_with_aliases:.1f}%", f"{100 * r.evaluation.pass_at.get(1, 0):.1f}%",
                      f"{100 * r.evaluation.pass_at.get(top, 0):.1f}% @{top}" if top else "-",
                      str(t.get("steps", "-")), str(t.get("tokens_per_second", "-")),
                      str(t.get("peak_memory_mb", "-")), str(t.get("seconds", "-")),
                      f"{t['first_loss']} → {t['last_loss']}" if t.get("losses") else "-"])
    return lines


HEADER = ["model", "recall (all)", "recall (trained fns)", "recall w/ aliases", "pass@1", "best pass@k",
          "steps", "train tok/s", "peak MB", "train s", "loss"]


def _write_report(rows: list[SFTRow], out: Path, config: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [r.name for r in rows]
    fig, ax = plt.subplots(figsize=(6, 3.2))
    width = 0.27
    series = [("recall (all)", [100 * r.probe.recall for r in rows]),
              ("recall (trained fns)", [100 * r.trained_recall for r in rows]),
              ("pass@1 closed-book", [100 * r.evaluation.pass_at.get(1, 0) for r in rows])]
    for i, (label, values) in enumerate(series):
        ax.bar([x + (i - 1) * width for x in range(len(rows))], values, width, label=label)
    ax.set_xticks(range(len(rows)), names)
    ax.set_ylabel("%")
    ax.set_ylim(0, max(10.0, *(v for _, vs in series for v in vs)) * 1.15)
    ax.set_title(f"{config['model']}: before and after SFT ({config['steps']} steps)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "sft.png", dpi=120)
    plt.close(fig)
    lines = [f"# Open-SFT vs Closed-SFT, closed-book, {config['model']}", "",
             "| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(cells) + " |" for cells in table_rows(rows)]
    lines += ["", verdict(rows), "", "![before and after](sft.png)", "", "## Config", "", "```json",
              json.dumps(config, indent=1), "```"]
    (out / "report.md").write_text("\n".join(lines) + "\n")
    (out / "summary.json").write_text(json.dumps(
        {"config": config, "verdict": verdict(rows),
         "rows": [{"name": r.name, "recall": r.probe.recall, "trained_recall": r.trained_recall,
                   "recall_with_aliases": r.probe.recall_with_aliases, "evaluation": asdict(r.evaluation),
                   "train": r.train} for r in rows]}, indent=1))
