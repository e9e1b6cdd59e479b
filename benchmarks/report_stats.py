"""Uncertainty for the report: bootstrap intervals over tasks, and mean and spread over builds.

Why tasks and not samples: the samples of one task are not independent draws of the
benchmark (a task the model cannot do fails all of its samples), so resampling samples would
give intervals that are too narrow. Each task contributes its unbiased pass@k (the estimator of
``agents.evaluate``); the interval is the percentile bootstrap of their mean, with a fixed seed
so a report is reproducible.

Several builds (fresh ZWC seeds) are strata: tasks are resampled within each build and the
statistic is the mean over builds, the same statistic as the point estimate, so a build with
more tasks does not outweigh the others. The spread over builds (sample standard deviation) is
reported beside it; no anchor in the paper has one. Two evaluations of the same build (a rerun)
are replicates: their per-task values are averaged before resampling.

Beside the bootstrap interval every rate carries its exact (Clopper-Pearson) bounds
(``benchmarks/exact_stats.py``), because the bootstrap of a row with no pass is [0, 0] however
few answers it saw. For pass@1 the trials are the samples (passes of samples, pooled over builds
and reruns); for pass@k with k > 1 they are the tasks, the successes the sum of the per-task
pass@k (a whole number when k is every sample of a task, when each task passes or not). The
difference of two rows is ``benchmarks/paired_stats.py``'s.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

import numpy as np

from agents.evaluate import pass_at_k, target_use
from benchmarks.exact_stats import clopper_pearson
from benchmarks.report_runs import Evaluation

RESAMPLES = 1000
SEED = 0
LEVEL = 0.95


@dataclass
class Estimate:
    """pass@k of a group of evaluations; rates in [0, 1], ``low``/``high`` None without records."""

    k: int
    point: float | None
    low: float | None = None
    high: float | None = None
    n_tasks: int = 0
    per_build: dict[str, float] = field(default_factory=dict)  # build (mapping hash) -> its mean
    successes: float = 0.0  # the exact bounds' counts (module doc): passes of samples for k = 1
    trials: int = 0

    @property
    def exact(self) -> tuple[float, float] | None:
        """Clopper-Pearson 95% bounds of ``successes`` of ``trials``; None without trials."""
        return clopper_pearson(min(self.successes, self.trials), self.trials) if self.trials else None

    @property
    def spread(self) -> float | None:
        """Standard deviation over builds (ddof=1); None with fewer than two."""
        values = list(self.per_build.values())
        return float(np.std(values, ddof=1)) if len(values) >= 2 else None


def task_samples(records: list[dict]) -> dict[str, tuple[int, int]]:
    """task_id -> (samples, passes)."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for record in records:
        entry = counts[str(record["task_id"])]
        entry[0] += 1
        entry[1] += bool(record["passed"])
    return {task: (n, c) for task, (n, c) in counts.items()}


def max_k(evaluation: Evaluation) -> int:
    """The largest k every task of the evaluation has samples for (0 when nothing is known)."""
    if evaluation.records:
        return min(n for n, _ in task_samples(evaluation.records).values())
    return max((int(k) for k in evaluation.summary.get("pass_at", {})), default=0)


def common_k(evaluations: list[Evaluation]) -> int:
    return min((max_k(e) for e in evaluations), default=0)


def task_values(evaluation: Evaluation, k: int) -> dict[str, float]:
    """task_id -> unbiased pass@k of that task (tasks with fewer than k samples are left out)."""
    return {task: pass_at_k(n, c, k) for task, (n, c) in task_samples(evaluation.records).items() if n >= k}


def bootstrap_mean(strata: list[np.ndarray], resamples: int = RESAMPLES, seed: int = SEED,
                   level: float = LEVEL) -> tuple[float, float]:
    """Percentile interval of the mean over strata of each stratum's mean, tasks resampled within
    each stratum with replacement."""
    rng = np.random.default_rng(seed)
    means = np.zeros(resamples)
    for values in strata:
        picks = rng.integers(0, len(values), size=(resamples, len(values)))
        means += values[picks].mean(axis=1)
    means /= len(strata)
    tail = 100 * (1 - level) / 2
    low, high = np.percentile(means, [tail, 100 - tail])
    return float(low), float(high)


def estimate(evaluations: list[Evaluation], k: int) -> Estimate:
    """pass@k over the tasks of ``evaluations`` with a bootstrap interval and exact bounds (see the module doc)."""
    if not evaluations or k < 1:
        return Estimate(k, None)
    if any(not e.records for e in evaluations):  # a results file is gone: the summaries' means only
        return _from_summaries(evaluations, k)
    builds: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    samples = passes = 0
    for e in evaluations:
        for task, value in task_values(e, k).items():
            builds[e.build][task].append(value)
        counted = task_samples(e.records)
        samples += sum(n for n, _ in counted.values() if n >= k)
        passes += sum(c for n, c in counted.values() if n >= k)
    # tasks in id order, builds in name order: a results file lists answers as they finished, and the
    # bootstrap's resamples pick positions, so file order would move the interval between reruns
    strata = {b: np.array([np.mean(builds[b][t]) for t in sorted(builds[b])]) for b in sorted(builds) if builds[b]}
    if not strata:
        return Estimate(k, None)
    per_build = {b: float(v.mean()) for b, v in strata.items()}
    low, high = bootstrap_mean(list(strata.values()))
    n_tasks = sum(len(v) for v in strata.values())
    successes, trials = (passes, samples) if k == 1 else (float(sum(v.sum() for v in strata.values())), n_tasks)
    return Estimate(k, float(np.mean(list(per_build.values()))), low, high, n_tasks=n_tasks, per_build=per_build,
                    successes=successes, trials=trials)


def _from_summaries(evaluations: list[Evaluation], k: int) -> Estimate:
    """The summaries' means (no interval over tasks), and exact bounds from their counts: pass@1 of
    ``n_samples`` samples, pass@k of ``n_tasks`` tasks."""
    by_build: dict[str, list[float]] = defaultdict(list)
    successes, trials = 0.0, 0
    for e in evaluations:
        value = e.summary.get("pass_at", {}).get(str(k))
        if value is None:
            return Estimate(k, None)
        by_build[e.build].append(float(value))
        size = int(e.summary.get("n_samples" if k == 1 else "n_tasks", 0))
        successes, trials = successes + float(value) * size, trials + size
    per_build = {b: float(np.mean(v)) for b, v in by_build.items()}
    return Estimate(k, float(np.mean(list(per_build.values()))), per_build=per_build,
                    n_tasks=sum(int(e.summary.get("n_tasks", 0)) for e in evaluations),
                    successes=round(successes, 9), trials=trials)


def outcomes(evaluation: Evaluation) -> dict[str, int]:
    """The failure taxonomy (outcome -> samples), from the records when they are there."""
    if evaluation.records:
        counts = Counter(str(r.get("failure", "unknown")) for r in evaluation.records)
        order = list(evaluation.summary.get("failures", {}))  # the Failure enum's order
        return {o: counts[o] for o in [*order, *sorted(set(counts) - set(order))] if counts[o]}
    return {o: int(c) for o, c in evaluation.summary.get("failures", {}).items() if c}


def target_use_rate(evaluation: Evaluation) -> float | None:
    """The share of passing samples that ran every function their task names (None if unknown)."""
    if evaluation.records:
        return target_use(evaluation.records)[0]
    return evaluation.summary.get("target_use_rate")
