"""Why a proposed task was not kept: one reason code per rejection, and a detail for people.

The parser (``proposal.py``) and the validator (``validate.py``) return a ``Rejected`` instead
of raising: a self-play round counts its rejections by reason (``ValidationReport``), so the
acceptance rate of a proposer is reported with what went wrong, not as one number.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Reason(StrEnum):
    """Why a proposal was rejected. Parse-stage reasons first, then the validator's, in the
    order its stages run (the first failed stage names the rejection)."""

    # -- parsing (proposal.py): the answer's shape ----------------------------------------
    NO_CODE_BLOCK = "no_code_block"        # no ```python block in the answer
    SYNTAX_ERROR = "syntax_error"          # the block does not parse
    NO_ENTRY = "no_entry"                  # no top-level `def solve(...)`, several, or one without named parameters
    NO_PROBLEM = "no_problem"              # solve has no docstring (and no leading comment) stating the task
    NO_INPUTS = "no_inputs"                # no top-level INPUTS list literal
    TOO_FEW_INPUTS = "too_few_inputs"      # fewer than MIN_TESTS distinct literal inputs that fit solve
    TRUNCATED = "truncated"                # cut off at the token cap before it ended, and unreadable there
    # -- validation (validate.py): what the code does ----------------------------------------
    NAMES_FUNCTION = "names_function"      # the problem text names a zwc or NumPy function
    BANNED_CODE = "banned_code"            # a static or run-time wall: forbidden module, NumPy, reflection
    UNKNOWN_API = "unknown_api"            # calls a zwc function that does not exist
    NO_ZWC_CALL = "no_zwc_call"            # no catalogued zwc function ran (grading-integrity rule)
    TIMEOUT = "timeout"                    # over the validator's time limit (an endless loop)
    RESOURCE_LIMIT = "resource_limit"      # over the memory or output limit, or an output too long to keep
    FAILS_OWN_TESTS = "fails_own_tests"    # raises on its own inputs, or fails when graded as a task
    NON_DETERMINISTIC = "non_deterministic"  # two runs disagree
    OPAQUE_OUTPUT = "opaque_output"        # returns an object with no comparable value (a set, a generator)
    CONSTANT_ANSWER = "constant_answer"    # every input gives the same output: a constant would pass
    OFF_TARGET = "off_target"              # none of the sampled functions ran (only with require_target)
    NUMPY_DISAGREES = "numpy_disagrees"    # the NumPy twin gives other answers
    COPIED = "copied"                      # Absolute-Zero: the program of a task the proposer was shown
    SANDBOX_ERROR = "sandbox_error"        # our fault, not the proposal's


PARSE_REASONS = frozenset({Reason.NO_CODE_BLOCK, Reason.SYNTAX_ERROR, Reason.NO_ENTRY, Reason.NO_PROBLEM,
                           Reason.NO_INPUTS, Reason.TOO_FEW_INPUTS, Reason.TRUNCATED})


@dataclass(frozen=True)
class Rejected:
    """A proposal that was not kept.

    Attributes:
        reason: the code counted per round.
        detail: what exactly was wrong, in words a proposer can act on.
        text: the model's answer, when the rejection came from parsing it (for logs).
        functions: the zwc paths the proposer was asked to use.
    """

    reason: Reason
    detail: str
    text: str = ""
    functions: tuple[str, ...] = ()

    def __str__(self) -> str:
        return f"{self.reason.value}: {self.detail}"
