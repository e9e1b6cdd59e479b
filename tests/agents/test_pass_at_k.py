import math

import pytest

from agents.evaluate import pass_at_k, summarise


def _reference(n, c, k):
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


@pytest.mark.parametrize("n", [1, 2, 5, 10, 20])
def test_matches_the_combinatorial_definition(n):
    for c in range(n + 1):
        for k in range(1, n + 1):
            assert math.isclose(pass_at_k(n, c, k), _reference(n, c, k), abs_tol=1e-12)


def test_edges_and_errors():
    assert pass_at_k(5, 0, 1) == 0.0 and pass_at_k(5, 5, 5) == 1.0 and pass_at_k(5, 1, 5) == 1.0
    with pytest.raises(ValueError):
        pass_at_k(3, 4, 1)
    with pytest.raises(ValueError):
        pass_at_k(3, 1, 4)


def test_k_reported_only_when_every_task_has_k_samples():
    records = [{"task_id": "a", "passed": True, "failure": "passed"},
               {"task_id": "a", "passed": False, "failure": "wrong_answer"},
               {"task_id": "b", "passed": False, "failure": "numpy_used"}]
    pass_at, failures = summarise(records, ["a", "b"], n=2)
    assert set(pass_at) == {1} and math.isclose(pass_at[1], (0.5 + 0.0) / 2)
    assert failures["passed"] == 1 and failures["wrong_answer"] == 1 and failures["numpy_used"] == 1
