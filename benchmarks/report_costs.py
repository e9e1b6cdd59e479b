"""What each learner cost and what it broke, beside what it gained: the report's cost table.

Per learner of a comparison: the training phase's wall time, optimiser steps, tokens generated
(rollouts, gathering, drafted exercises) and tokens trained on, as the learner's evolve report
gives them ("—" where a learner has none: a memory learner trains no weights); per answer, the
mean context the learner added (``agents.context_audit``); and "NumPy retained": the row's NumPy
control minus the no-learner row's, paired per task, with its 95% bootstrap interval
(``benchmarks.compare.retained``). A learner that storing zwc names made worse at NumPy shows an
interval below zero. The machine is the comparison's own line.
"""

from __future__ import annotations

from benchmarks.report_runs import Evaluation, Run
from benchmarks.report_shapes import Section, Table

HEADER = ["learner", "model", "wall time", "optimiser steps", "tokens generated", "tokens trained on",
          "context / answer", "NumPy pass@1 after", "NumPy retained [95%]", "machine"]


def _count(value) -> str:
    return "—" if value is None else f"{value:,}" if isinstance(value, int) else str(value)


def _retained(learner: str, numpy: dict | None) -> str:
    if not numpy:
        return "not measured"
    diff = numpy.get("retained")
    if not diff:
        return "the before row" if learner == "none" else "— (no no-learner row to pair with)"
    verdict = "lost" if diff["high"] < 0 else "gained" if diff["low"] > 0 else "no measurable change"
    return (f"{100 * diff['point']:+.1f} [{100 * diff['low']:+.1f}, {100 * diff['high']:+.1f}] on "
            f"{diff['n_tasks']} tasks: {verdict}")


def context_cell(group: list[Evaluation]) -> str:
    """Mean context per answer over the row's evaluations: tokens where every one counted them."""
    contexts = [e.summary.get("context") or {} for e in group]
    if not contexts or any("context_chars_mean" not in c for c in contexts):
        return "—"  # evaluated before contexts were recorded
    tokens = [c.get("context_tokens_mean") for c in contexts]
    if all(t is not None for t in tokens):
        return f"{sum(tokens) / len(tokens):.0f} tokens"
    return f"{sum(c['context_chars_mean'] for c in contexts) / len(contexts):.0f} chars"


def docs_cell(group: list[Evaluation]) -> str:
    """The largest docs share among the row's closed-book evaluations, flagged above its threshold."""
    audits = [a for e in group if (a := (e.summary.get("context") or {}).get("docs_in_context"))]
    if not audits:
        return "—"
    worst = max(audits, key=lambda a: a["share"])
    share = f"{worst['share']:.0%} of entries"
    return f"DOCS IN MEMORY: not internalisation ({share})" if worst["is_docs"] else share


def learner_costs_section(runs: list[Run]) -> Section | None:
    """One line per learner of every comparison run that recorded its training phases."""
    rows = []
    for run in runs:
        if run.kind != "compare":
            continue
        by_name = {e.name: e for e in run.evaluations}
        for learner, report in (run.details.get("evolve") or {}).items():
            details = (report or {}).get("details") or {}
            evaluation = by_name.get(learner)
            numpy = (run.details.get("numpy") or {}).get(learner)
            after = numpy.get("after") if numpy else None
            rows.append([learner, evaluation.model if evaluation else "—",
                         "—" if learner == "none" else f"{(report or {}).get('seconds', 0):.0f} s",
                         _count(details.get("steps")), _count(details.get("generated_tokens")),
                         _count(details.get("trained_tokens")),
                         context_cell([evaluation]) if evaluation else "—",
                         "—" if after is None else f"{100 * after:.1f}", _retained(learner, numpy),
                         run.config.get("machine", "not recorded")])
    if not rows:
        return None
    notes = ["wall time: the training phase (evolve). tokens generated: rollouts, gathering and drafted exercises "
             "in this run; tokens trained on: prompt + completion tokens through the optimiser. NumPy retained: "
             "the row's NumPy control minus the no-learner row's, per task over the same tasks and samples, "
             "bootstrap over tasks; below zero is forgetting."]
    return Section("costs", "Costs and forgetting", Table(HEADER, rows), notes)
