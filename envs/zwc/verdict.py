"""Verdicts: what grading a candidate returns, with a deterministic failure class."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field


class Failure(StrEnum):
    """Why a candidate failed; exactly one per graded sample. Order is precedence."""

    NO_CODE = "no_code"                  # nothing to run, or the entry function is missing
    SYNTAX_ERROR = "syntax_error"
    NUMPY_USED = "numpy_used"
    BYPASS_ATTEMPT = "bypass_attempt"    # a way around the wrapper (reflection, private names...)
    NO_ZWC_CALL = "no_zwc_call"          # does not use zwc, or its result does not depend on it
    UNKNOWN_API = "unknown_api"          # names a zwc function that does not exist (hallucinated)
    WRONG_ARGUMENTS = "wrong_arguments"  # a real zwc function rejected its arguments
    RUNTIME_ERROR = "runtime_error"
    TIMEOUT = "timeout"
    RESOURCE_LIMIT = "resource_limit"    # memory, output, processes, files
    WRONG_ANSWER = "wrong_answer"
    SANDBOX_ERROR = "sandbox_error"      # our fault, not the candidate's
    PASSED = "passed"


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
