"""Exact small-sample statistics: Clopper-Pearson bounds, the exact sign test, and the minimum
effect a paired comparison of n tasks can detect.

Why exact: the rows SE-Bench runs are small (a handful of test tasks, a few samples each) and
often at 0%. The bootstrap over tasks (``benchmarks/report_stats.py``) gives such a row the
interval [0, 0], as if 0 of 8 answers proved the rate is 0; the exact 95% upper bound of 0 of 8
is 36.9%. The beta quantiles come from ``scipy.stats`` (a dependency of sentence-transformers,
which sebench installs), not from a normal approximation, which fails exactly at 0 and 1.

The minimum detectable effect (``minimum_detectable_effect``) is exact for the test it names:
the power of the exact (conditional) McNemar test, two-sided at ``alpha``, for ``n`` paired
tasks with one binary outcome each, the two rows' outcomes independent within a task, summed
over every possible number of discordant tasks. It reproduces the planning figures of issue 39
(0% vs 20% needs about 40 paired tasks, 0% vs 10% about 80). It is an approximation of the
verdicts' own rule (a bootstrap interval over per-task pass@k, guarded by the sign test): several
samples per task make a task's value less noisy than one binary outcome, and a positive
correlation between the rows on the same task makes fewer tasks discordant, which helps too;
both make the real comparison somewhat more sensitive than the figure says.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from sebench.errors import SebenchError

LEVEL = 0.95   # two-sided confidence of every interval
ALPHA = 0.05   # the tests' two-sided level, 1 - LEVEL
POWER = 0.8    # the power a minimum detectable effect is stated at
STEP = 0.001   # the resolution of a minimum detectable effect (a tenth of a point)


class StatsError(SebenchError, ValueError):
    """Counts or levels a statistic cannot be computed from; the message names the value."""


def clopper_pearson(successes: float, trials: float, level: float = LEVEL) -> tuple[float, float]:
    """The exact (Clopper-Pearson) interval of a binomial rate: beta quantiles, never [0, 0].

    ``successes`` may be fractional (the sum of per-task pass@k over tasks, as the report uses
    for k > 1): the beta quantiles are defined for it, and at whole numbers they are the
    textbook interval. 0 of 8 gives [0, 0.3694]; 8 of 8 [0.6306, 1]; 4 of 8 [0.1570, 0.8430].
    """
    if not trials > 0:
        raise StatsError(f"an exact interval needs at least one trial, got trials={trials}")
    if not 0 <= successes <= trials:
        raise StatsError(f"successes must lie in [0, trials], got {successes} of {trials}")
    if not 0 < level < 1:
        raise StatsError(f"level must lie in (0, 1), got {level}")
    tail = (1 - level) / 2
    low = 0.0 if successes <= 0 else float(stats.beta.ppf(tail, successes, trials - successes + 1))
    high = 1.0 if successes >= trials else float(stats.beta.ppf(1 - tail, successes + 1, trials - successes))
    return low, high


def sign_test(wins: int, losses: int) -> float:
    """Two-sided exact sign test (McNemar's exact test on the discordant tasks): the probability,
    with no difference between the rows, of a split at least as uneven as ``wins`` : ``losses``.
    Ties (tasks where the rows do equally well) carry no information and are left out."""
    if wins < 0 or losses < 0:
        raise StatsError(f"wins and losses are counts, got {wins} and {losses}")
    discordant = wins + losses
    if discordant == 0:
        return 1.0
    return min(1.0, 2 * float(stats.binom.cdf(min(wins, losses), discordant, 0.5)))


def _critical(discordant: np.ndarray, alpha: float) -> np.ndarray:
    """For each number of discordant tasks d, the largest c with P(Binomial(d, 1/2) <= c) <= alpha/2
    (-1 where even 0 is not extreme enough): the exact test rejects when the losers' count <= c."""
    c = stats.binom.ppf(alpha / 2, discordant, 0.5)
    c = np.where(stats.binom.cdf(c, discordant, 0.5) > alpha / 2, c - 1, c)
    return np.where(discordant > 0, c, -1)


def mcnemar_power(n: int, rate_a: float | np.ndarray, rate_b: float, alpha: float = ALPHA) -> np.ndarray:
    """The probability that the exact two-sided McNemar test at ``alpha`` finds row A above row B
    on ``n`` paired tasks, when A passes a task with probability ``rate_a`` and B with ``rate_b``,
    independently. ``rate_a`` may be an array (one power per value)."""
    if n < 1:
        raise StatsError(f"a power needs at least one paired task, got n={n}")
    a = np.atleast_1d(np.asarray(rate_a, dtype=float))[:, None]
    if not (0 <= rate_b <= 1 and np.all((a >= 0) & (a <= 1))):
        raise StatsError(f"rates must lie in [0, 1], got {rate_b} and {rate_a}")
    wins, losses = a * (1 - rate_b), rate_b * (1 - a)          # P(A passes, B fails), P(B passes, A fails)
    discordant = wins + losses
    share = np.divide(wins, discordant, out=np.zeros_like(discordant), where=discordant > 0)
    d = np.arange(n + 1)[None, :]
    c = _critical(d, alpha)
    # given d discordant tasks, A wins Binomial(d, share) of them; the test finds for A when B's count <= c
    reject = np.where(c >= 0, stats.binom.cdf(c, d, 1 - share), 0.0)
    return (stats.binom.pmf(d, n, discordant) * reject).sum(axis=1)


def minimum_detectable_effect(n: int, base_rate: float = 0.0, alpha: float = ALPHA,
                              power: float = POWER) -> float | None:
    """The smallest difference A - B (a rate, to ``STEP``) that ``n`` paired tasks detect with
    ``power``, B at ``base_rate``; None when no difference up to A = 100% reaches it (too few
    tasks). Exact for the McNemar test described in the module doc; 40 tasks at base 0 detect
    about 20 points, 80 tasks about 10."""
    if n < 1:
        return None
    if not 0 <= base_rate <= 1:
        raise StatsError(f"base_rate must lie in [0, 1], got {base_rate}")
    steps = np.arange(1, math.floor(round((1 - base_rate) / STEP, 6)) + 1) * STEP
    if steps.size == 0:
        return None
    reached = np.nonzero(mcnemar_power(n, base_rate + steps, base_rate, alpha) >= power)[0]
    return float(round(steps[reached[0]], 6)) if reached.size else None


def tasks_needed(rate_a: float, rate_b: float, alpha: float = ALPHA, power: float = POWER,
                 most: int = 5000) -> int | None:
    """The fewest paired tasks whose exact McNemar test finds A above B with ``power`` (None above
    ``most``). The exact test's power saws with n; this is the first n that reaches it."""
    if rate_a <= rate_b:
        raise StatsError(f"tasks_needed plans for A above B, got A {rate_a} <= B {rate_b}")
    for n in range(1, most + 1):
        if mcnemar_power(n, rate_a, rate_b, alpha)[0] >= power:
            return n
    return None
