"""Exact bounds, the sign test, the minimum detectable effect, and the paired bootstrap over tasks
and training seeds, on constructed rows whose answers are known."""

import itertools
import math

import numpy as np
import pytest

from benchmarks.exact_stats import (
    StatsError,
    clopper_pearson,
    mcnemar_power,
    minimum_detectable_effect,
    sign_test,
    tasks_needed,
)
from benchmarks.paired_stats import RowTasks, paired_difference, pool, shared_tasks
from sebench.errors import SebenchError


def row(name: str, passes: list[int], samples: int = 2, build: str = "b0", runs: int = 1) -> RowTasks:
    """A row with one task per entry of ``passes`` (its passes of ``samples``), ``runs`` equal training runs."""
    counts = {(build, f"t{i}"): (samples, c) for i, c in enumerate(passes)}
    return RowTasks(name, [dict(counts) for _ in range(runs)])


def test_clopper_pearson_gives_the_textbook_exact_bounds():
    assert clopper_pearson(0, 8) == (0.0, pytest.approx(0.3694, abs=1e-4))  # never [0, 0]
    assert clopper_pearson(8, 8) == (pytest.approx(0.6306, abs=1e-4), 1.0)
    assert clopper_pearson(4, 8) == (pytest.approx(0.1570, abs=1e-4), pytest.approx(0.8430, abs=1e-4))
    assert clopper_pearson(0, 8)[1] == pytest.approx(1 - 0.025 ** (1 / 8))  # the closed form at 0
    low, high = clopper_pearson(2.5, 8)  # a fractional count (sum of per-task pass@k) lies between its neighbours
    assert clopper_pearson(2, 8)[0] < low < clopper_pearson(3, 8)[0] and clopper_pearson(2, 8)[1] < high
    for bad in [(1, 0), (9, 8), (-1, 8)]:
        with pytest.raises(StatsError):
            clopper_pearson(*bad)
    assert issubclass(StatsError, SebenchError) and issubclass(StatsError, ValueError)


def test_sign_test_is_the_exact_binomial_test_on_the_tasks_that_differ():
    assert sign_test(6, 0) == pytest.approx(2 / 64) and sign_test(5, 0) == pytest.approx(2 / 32)
    assert sign_test(0, 0) == 1.0 and sign_test(3, 3) == 1.0
    assert sign_test(8, 2) == pytest.approx(2 * sum(math.comb(10, i) for i in range(3)) / 2 ** 10)


def test_mcnemar_power_equals_brute_force_enumeration_of_every_outcome():
    """Every outcome of n paired tasks (each: both pass, A only, B only, neither), weighted by its
    probability, with the exact sign test deciding: an independent route to the same power."""
    for n, rate_a, rate_b in [(6, 0.6, 0.1), (9, 0.5, 0.2), (7, 0.3, 0.3)]:
        cells = {"both": rate_a * rate_b, "a": rate_a * (1 - rate_b), "b": rate_b * (1 - rate_a),
                 "none": (1 - rate_a) * (1 - rate_b)}
        power = 0.0
        for outcome in itertools.product(cells, repeat=n):
            wins, losses = outcome.count("a"), outcome.count("b")
            if wins > losses and sign_test(wins, losses) <= 0.05:
                power += math.prod(cells[c] for c in outcome)
        assert mcnemar_power(n, rate_a, rate_b)[0] == pytest.approx(power, abs=1e-12), (n, rate_a, rate_b)


def test_minimum_detectable_effect_gives_the_planning_figures():
    # 0% vs 20% needs about 40 paired tasks, 0% vs 10% about 80 (exact McNemar, alpha 0.05, power 0.8)
    assert tasks_needed(0.2, 0.0) == 39 and tasks_needed(0.1, 0.0) == 78
    assert minimum_detectable_effect(40) <= 0.2 < minimum_detectable_effect(30)
    assert minimum_detectable_effect(80) <= 0.1 < minimum_detectable_effect(70)
    assert minimum_detectable_effect(4) is None  # 4 tasks cannot detect even 0% vs 100%
    assert minimum_detectable_effect(40, 0.3) > minimum_detectable_effect(40, 0.0)  # noisier from a non-zero base
    with pytest.raises(StatsError):
        tasks_needed(0.1, 0.2)


def test_paired_interval_excludes_zero_when_one_row_passes_30_of_40_tasks_and_the_other_none():
    a, b = row("closed-sft", [2] * 30 + [0] * 10), row("open-sft", [0] * 40)
    diff = paired_difference(a, b)
    assert diff.point == pytest.approx(0.75) and 0 < diff.low < 0.75 < diff.high <= 1
    assert (diff.n_tasks, diff.samples, diff.seeds_a, diff.seeds_b, diff.wins, diff.losses) == (40, 2, 1, 1, 30, 0)
    assert diff.rate_b == 0.0 and diff.mde == minimum_detectable_effect(40)
    assert paired_difference(a, b) == diff  # a fixed seed: the same interval every time
    reverse = paired_difference(b, a)
    assert reverse.point == pytest.approx(-0.75) and reverse.high < 0


def test_paired_interval_includes_zero_for_identical_rows():
    passes = [2, 1, 0, 2, 0, 1, 0, 0] * 5
    diff = paired_difference(row("a", passes), row("b", passes))
    assert diff.point == 0.0 and diff.low <= 0.0 <= diff.high and diff.wins == diff.losses == 0


def test_tasks_pair_by_build_and_id_and_builds_are_strata():
    a = RowTasks("a", [{("b0", "t0"): (1, 1), ("b0", "t1"): (1, 1), ("b0", "t2"): (1, 1), ("b1", "t0"): (1, 0),
                        ("b1", "only-a"): (1, 1)}])
    b = RowTasks("b", [{("b0", "t0"): (1, 0), ("b0", "t1"): (1, 0), ("b0", "t2"): (1, 0), ("b1", "t0"): (1, 0),
                        ("b2", "t0"): (1, 0)}])
    assert shared_tasks(a, b, 1) == [("b0", "t0"), ("b0", "t1"), ("b0", "t2"), ("b1", "t0")]
    diff = paired_difference(a, b)
    # the mean over builds (1.0 and 0.0), not over the 4 pooled tasks (0.75): a big build does not outweigh
    assert diff.point == pytest.approx(0.5) and diff.n_builds == 2 and diff.n_tasks == 4
    assert paired_difference(a, b, k=2) is None  # no task has 2 samples


def test_pass_at_k_per_task_and_replicates_pool():
    a, b = row("a", [1, 0, 2, 0], samples=2), row("b", [0, 0, 0, 0], samples=2)
    assert paired_difference(a, b, k=2).point == pytest.approx(0.5)  # pass@2 of 1/2 and 2/2 is 1
    assert paired_difference(a, b, k=1).point == pytest.approx(0.375)
    pooled = pool([{("b0", "t0"): (2, 1)}, {("b0", "t0"): (3, 3), ("b0", "t1"): (1, 0)}])
    assert pooled == {("b0", "t0"): (5, 4), ("b0", "t1"): (1, 0)}


def test_training_seeds_that_disagree_widen_the_interval():
    one = row("a", [2] * 30 + [0] * 10)
    seeds = RowTasks("a", [one.runs[0], row("a", [0] * 40).runs[0]])  # a second training run learned nothing
    b = row("b", [0] * 40)
    alone, both = paired_difference(one, b), paired_difference(seeds, b)
    assert both.seeds_a == 2 and both.point == pytest.approx(0.375)
    assert alone.low > 0 and both.low <= 0.0  # a quarter of the resamples draw the failed run twice
    assert both.high - both.low > alone.high - alone.low
    same = RowTasks("a", [one.runs[0], one.runs[0]])  # two runs that agree: the interval of one
    assert paired_difference(same, b).point == alone.point and paired_difference(same, b).low > 0


def test_a_bad_k_or_level_is_a_named_error():
    with pytest.raises(StatsError, match="k >= 1"):
        paired_difference(row("a", [1]), row("b", [1]), k=0)
    with pytest.raises(StatsError, match="level"):
        paired_difference(row("a", [1]), row("b", [1]), level=1.5)
    assert np.isfinite(paired_difference(row("a", [1]), row("b", [0])).point)
