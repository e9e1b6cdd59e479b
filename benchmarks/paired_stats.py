"""The paired difference of two rows: per-task pass@k matched by task, a bootstrap interval over
tasks (stratified by ZWC build) and over training seeds.

Why paired: every row of a comparison is evaluated on the same tasks with the same per-sample
seeds, so most of the variation between tasks (one is easy, another impossible) is shared by
the rows. The difference of the two rows' rates, each with its own interval, throws that away;
the per-task difference keeps it. A task counts when both rows have at least k samples of it in
every one of their training runs; tasks are matched by (build, task id), so rows evaluated on
different builds or different slices pair only on what they share.

The interval is the percentile bootstrap of the statistic the point estimate is: the mean over
builds of the mean over tasks of (A's pass@k minus B's), with A's and B's pass@k each averaged
over their training runs. Each resample draws each row's training runs with replacement (when it
has several: training-run variance belongs in the interval), then the tasks within each build.
The seed is fixed (``report_stats.SEED``), so a report is reproducible.

``benchmarks/report_stats.py`` does the same for one row's rate; this module reuses its per-task
pass@k (``task_samples``, the unbiased estimator of ``agents.evaluate``) and its constants.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from agents.evaluate import pass_at_k
from benchmarks.exact_stats import StatsError, minimum_detectable_effect, sign_test
from benchmarks.report_stats import LEVEL, RESAMPLES, SEED

TaskKey = tuple[str, str]                  # (ZWC build, task id)
Counts = dict[TaskKey, tuple[int, int]]    # task -> (samples, passes)
UNTRAINED = ("base", "none")               # rows with no training run: their evaluations are replicates
TIE = 1e-12                                # per-task differences closer to 0 than this are ties


@dataclass
class RowTasks:
    """One row as the paired statistics need it: for each training run (seed), each task's
    samples and passes. Reruns of one training run on one build are pooled (their samples add)."""

    name: str
    runs: list[Counts]

    @property
    def seeds(self) -> int:
        return len(self.runs)


@dataclass
class PairedDifference:
    """A minus B on their shared tasks, as rates in [-1, 1]."""

    a: str
    b: str
    k: int
    point: float
    low: float
    high: float
    n_tasks: int            # paired tasks
    n_builds: int
    samples: int            # the fewest samples of one task, over both rows and their runs
    seeds_a: int            # training runs of A
    seeds_b: int
    wins: int               # tasks where A's pass@k is above B's (averaged over training runs)
    losses: int             # tasks where it is below
    rate_b: float           # B's pass@k on the paired tasks (the base the detectable effect is from)
    mde: float | None       # minimum detectable effect (exact_stats), None when too few tasks
    level: float = LEVEL

    @property
    def sign_p(self) -> float:
        """The exact sign test on the tasks where the rows differ (``exact_stats.sign_test``)."""
        return sign_test(self.wins, self.losses)


def pool(pieces: Iterable[Counts]) -> Counts:
    """Replicates of one training run: samples and passes of a task add up."""
    pooled: dict[TaskKey, list[int]] = defaultdict(lambda: [0, 0])
    for counts in pieces:
        for key, (n, c) in counts.items():
            pooled[key][0] += n
            pooled[key][1] += c
    return {key: (n, c) for key, (n, c) in pooled.items()}


def counts_of(per_task: dict[str, tuple[int, int] | list[int]], build: str) -> Counts:
    """``{task_id: (samples, passes)}`` of one evaluation, keyed by its build."""
    return {(build, str(task)): (int(n), int(c)) for task, (n, c) in per_task.items()}


def _matrix(row: RowTasks, keys: list[TaskKey], k: int) -> np.ndarray:
    """(training runs, tasks) of per-task pass@k."""
    return np.array([[pass_at_k(*run[key], k) for key in keys] for run in row.runs])


def shared_tasks(a: RowTasks, b: RowTasks, k: int) -> list[TaskKey]:
    """The tasks every training run of both rows has at least k samples of, sorted by build and id."""
    runs = [*a.runs, *b.runs]
    if not runs or not a.runs or not b.runs:
        return []
    keys = set.intersection(*(set(key for key, (n, _) in run.items() if n >= k) for run in runs))
    return sorted(keys)


def _seed_means(values: np.ndarray, picks: np.ndarray | None) -> np.ndarray:
    """Per resample, the mean over the drawn training runs: (resamples, tasks); one run: (tasks,)."""
    if picks is None:
        return values.mean(axis=0)
    return values[picks].mean(axis=1)


def paired_difference(a: RowTasks, b: RowTasks, k: int = 1, resamples: int = RESAMPLES, seed: int = SEED,
                      level: float = LEVEL) -> PairedDifference | None:
    """A minus B with its bootstrap interval (see the module doc); None when they share no task."""
    if k < 1:
        raise StatsError(f"pass@k needs k >= 1, got k={k}")
    if resamples < 1 or not 0 < level < 1:
        raise StatsError(f"need resamples >= 1 and 0 < level < 1, got {resamples} and {level}")
    keys = shared_tasks(a, b, k)
    if not keys:
        return None
    values_a, values_b = _matrix(a, keys, k), _matrix(b, keys, k)
    per_task = values_a.mean(axis=0) - values_b.mean(axis=0)
    builds = sorted({build for build, _ in keys})
    strata = [np.array([i for i, (build, _) in enumerate(keys) if build == name]) for name in builds]
    point = float(np.mean([per_task[idx].mean() for idx in strata]))

    rng = np.random.default_rng(seed)
    picks_a = rng.integers(0, a.seeds, size=(resamples, a.seeds)) if a.seeds > 1 else None
    picks_b = rng.integers(0, b.seeds, size=(resamples, b.seeds)) if b.seeds > 1 else None
    diff = _seed_means(values_a, picks_a) - _seed_means(values_b, picks_b)  # (resamples, tasks) or (tasks,)
    totals = np.zeros(resamples)
    for idx in strata:
        columns = idx[rng.integers(0, len(idx), size=(resamples, len(idx)))]
        drawn = diff[columns] if diff.ndim == 1 else np.take_along_axis(diff, columns, axis=1)
        totals += drawn.mean(axis=1)
    totals /= len(strata)
    tail = 100 * (1 - level) / 2
    low, high = (float(x) for x in np.percentile(totals, [tail, 100 - tail]))
    samples = min(run[key][0] for run in [*a.runs, *b.runs] for key in keys)
    rate_b = float(values_b.mean())
    return PairedDifference(a.name, b.name, k, point, low, high, len(keys), len(builds),
                            samples, a.seeds, b.seeds, int((per_task > TIE).sum()), int((per_task < -TIE).sum()),
                            rate_b, minimum_detectable_effect(len(keys), rate_b), level)
