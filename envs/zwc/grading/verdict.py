"""Verdicts: what grading a candidate returns, with a deterministic failure class."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from envs.zwc.grading.failure import Failure


class TestOutcome(BaseModel):
    """One test case's result."""

    __test__ = False  # not a pytest class

    passed: bool
    expected: str = ""
    got: Any = None
    printed: str = ""
    error: str = ""
    seconds: float = 0.0
    zwc_calls: list[str] = Field(default_factory=list)  # catalogued zwc functions that ran in this test


class Verdict(BaseModel):
    """The grade of one candidate on one task."""

    passed: bool
    failure: Failure
    detail: str = ""
    reason: str = ""  # a machine-readable code (a static-check reason, an exception type)
    tests: list[TestOutcome] = Field(default_factory=list)
    stdout: str = ""
    seconds: float = 0.0
    # catalogued zwc functions (paths, sorted) that ran while the tests ran, counted at run time
    zwc_calls: list[str] = Field(default_factory=list)
    # did every function the task names run in at least one test? None: not known (not run,
    # the NumPy control, or a task that names no functions)
    target_used: bool | None = None
    # each function the task names (zwc path) -> whether it or an alias ran in some test
    targets_used: dict[str, bool] = Field(default_factory=dict)

    @property
    def n_passed(self) -> int:
        return sum(t.passed for t in self.tests)
