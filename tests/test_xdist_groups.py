"""The suite's xdist groups reach the scheduler: ``make test`` runs ``-n 2 --dist loadgroup`` so that
the tests sharing an expensive fixture (the embedded model, the smoke budget's run, a checker
build) run on one worker and make it once. pytest 9 with xdist 3.8 drops the groups silently
(xdist writes the group into ``item._nodeid``, which pytest 9 no longer reads): each worker then
makes every shared fixture again, and the suite took twice as long. pyproject.toml pins pytest
below 9 for it; this test fails if the groups stop working."""

import os

import pytest


@pytest.mark.xdist_group("xdist-groups")
def test_a_grouped_test_carries_its_group_to_the_scheduler(request):
    if not os.environ.get("PYTEST_XDIST_WORKER") or not request.config.getvalue("loadgroup"):
        pytest.skip("checks the scheduler's groups: run under `pytest -n 2 --dist loadgroup` (make test)")
    assert request.node.nodeid.endswith("@xdist-groups"), (
        f"{request.node.nodeid}: the xdist_group mark did not reach the scheduler (pytest {pytest.__version__}); "
        "pin pytest below 9 (pyproject.toml) or upgrade pytest-xdist to a release that supports it")
