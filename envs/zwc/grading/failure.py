"""The failure classes of a graded sample (no heavy imports: the sandbox server uses it)."""

from __future__ import annotations

from enum import StrEnum


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
