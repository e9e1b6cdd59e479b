"""Verdicts: what grading a candidate returns, with a deterministic failure class."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from envs.zwc.failure import Failure


class TestOutcome(BaseModel):
    """One test case's result."""

    __test__ = False  # not a pytest class

    passed: bool
    expected: str = ""
    got: Any = None
    printed: str = ""
    error: str = ""
    seconds: float = 0.0


class Verdict(BaseModel):
    """The grade of one candidate on one task."""

    passed: bool
    failure: Failure
    detail: str = ""
    reason: str = ""  # a machine-readable code (a static-check reason, an exception type)
    tests: list[TestOutcome] = Field(default_factory=list)
    stdout: str = ""
    seconds: float = 0.0

    @property
    def n_passed(self) -> int:
        return sum(t.passed for t in self.tests)
