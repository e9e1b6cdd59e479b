"""The learner checker's effect figures: closed-book pass@1 (and API recall for learners that
train weights) against the no-learner baseline on the same tasks, with a paired bootstrap 95%
interval over tasks of the difference.

The verdict is "improves" when the whole interval lies above zero, "hurts" when it lies below,
and "no measurable effect" otherwise. It is a report, not a pass or a fail: on a handful of
tasks and with the 135M model most learners have no measurable effect, and the report names
the model for that reason.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

IMPROVES, NO_EFFECT, HURTS = "improves", "no measurable effect", "hurts"


@dataclass
class EffectFigure:
    """One metric, learner against baseline, over ``n`` tasks (or functions, for recall)."""

    metric: str
    baseline: float
    learner: float
    difference: float
    low: float
    high: float
    n: int
    verdict: str

    def sentence(self) -> str:
        return (f"{self.metric}: {self.learner:.3f} vs {self.baseline:.3f} without the learner, difference "
                f"{self.difference:+.3f} (95% CI {self.low:+.3f} to {self.high:+.3f}, {self.n} items): {self.verdict}")


def bootstrap_difference(baseline: list[float], learner: list[float], *, resamples: int = 2000, seed: int = 0,
                         level: float = 0.95) -> tuple[float, float, float]:
    """Mean of ``learner - baseline`` (paired per item) and its percentile bootstrap interval."""
    if len(baseline) != len(learner) or not baseline:
        raise ValueError(f"need paired, non-empty scores; got {len(baseline)} baseline and {len(learner)} learner")
    deltas = [b - a for a, b in zip(baseline, learner, strict=True)]
    n = len(deltas)
    rng = random.Random(seed)
    means = sorted(sum(deltas[rng.randrange(n)] for _ in range(n)) / n for _ in range(resamples))
    tail = (1 - level) / 2
    low = means[int(tail * (resamples - 1))]
    high = means[int((1 - tail) * (resamples - 1) + 0.5)]
    return sum(deltas) / n, low, high


def verdict(low: float, high: float) -> str:
    if low > 0:
        return IMPROVES
    if high < 0:
        return HURTS
    return NO_EFFECT


def figure(metric: str, baseline: dict[str, float], learner: dict[str, float]) -> EffectFigure:
    """Compare per-item scores on the items both hold."""
    items = sorted(set(baseline) & set(learner))
    if not items:
        raise ValueError(f"{metric}: the baseline and the learner were scored on no common item")
    a, b = [baseline[i] for i in items], [learner[i] for i in items]
    difference, low, high = bootstrap_difference(a, b)
    return EffectFigure(metric=metric, baseline=sum(a) / len(a), learner=sum(b) / len(b), difference=difference,
                        low=low, high=high, n=len(items), verdict=verdict(low, high))


def pass_per_task(agent: Any, env: Any, splits: tuple[str, ...], n: int, out: Path) -> dict[str, float]:
    """Closed-book pass rate per task (over ``n`` samples) on ``splits``, results kept in ``out``."""
    from agents.evaluate import evaluate, read_results

    scores: dict[str, list[bool]] = {}
    out.mkdir(parents=True, exist_ok=True)
    for split in splits:
        report = evaluate(agent, env, split=split, n=n, mode="closed", out=out / f"{split}.jsonl", progress=False)
        for (task_id, _), record in read_results(Path(report.results_path)).items():
            scores.setdefault(task_id, []).append(bool(record["passed"]))
    return {task: sum(v) / len(v) for task, v in scores.items()}


def recall_per_function(model: Any, mapping: Any, functions: list[str]) -> dict[str, float]:
    """API recall (``agents.probe``) per function: 1.0 when the model names its zwc path."""
    from agents.probe import probe
    from envs.zwc.library.names import Mapping

    wanted = set(functions)
    subset = Mapping([e for e in mapping if e.numpy in wanted], origin=mapping.origin)
    return {a.numpy: float(a.correct) for a in probe(model, subset).answers}
