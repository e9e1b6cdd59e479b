"""Absolute-Zero's rewards, case by case, as its reference implementation pays them.

Read from the Absolute-Zero Reasoner's ``rewards/reward_managers.py`` (training split):

=========================================================  ==============================
proposer: a program kept, solver pass rate p with 0 < p < 1  1 - p (learnability)
proposer: a program kept, p = 0 or p = 1                      ``wrong_penalty`` (-0.5)
proposer: parsed, refused by the validator (or a copy)        ``format_penalty`` (-1): AZR sets
                                                              an invalid program's format score 0
proposer: the answer does not parse, or was cut off           ``format_penalty`` (-1)
solver: right                                                 1
solver: readable but wrong                                    ``wrong_penalty`` (-0.5)
solver: unreadable                                            ``format_penalty`` (-1)
either: the grader itself failed (``sandbox_error``)          no reward (``None``): advantage 0,
                                                              left out of its group's baseline
=========================================================  ==============================

Where SE-Bench's setting differs we follow SE-Bench: an induction answer is right when it passes
the hidden tests as an SE-Bench task (all of them, by the task's grader), not by AZR's per-pair
accuracy; AZR has no grader faults of its own to excuse (its executor's failures read as the
program's), here a fault of ours is never the policy's.
"""

from __future__ import annotations

from dataclasses import dataclass

from selfplay.curriculum import learnability
from selfplay.reasons import Reason, Rejected


@dataclass(frozen=True)
class Penalties:
    format_penalty: float = -1.0  # unreadable, cut off, or an invalid program
    wrong_penalty: float = -0.5   # a readable wrong answer; a valid program always or never solved


def proposer_reward(parsed, result, outcomes: list[bool] | None, penalties: Penalties) -> float | None:
    """The reward of one proposal: ``parsed`` what the parser made of the answer (a ``Rejected``
    when it did not parse), ``result`` the validator's verdict (an ``Accepted`` or a ``Rejected``),
    ``outcomes`` the solver's estimate on the kept program."""
    if isinstance(result, Rejected) and result.reason is Reason.SANDBOX_ERROR:
        return None
    if isinstance(parsed, Rejected) or isinstance(result, Rejected):
        return penalties.format_penalty
    if outcomes is None:
        raise ValueError("a kept program needs its solver estimate")
    if not outcomes:  # every estimate of it hit a grader fault: nothing to pay
        return None
    value = learnability(outcomes)
    return value if value > 0 else penalties.wrong_penalty


def solver_reward(passed: bool, formatted: bool, fault: bool, penalties: Penalties) -> float | None:
    """The reward of one solver answer."""
    if fault:
        return None
    if passed:
        return 1.0
    return penalties.wrong_penalty if formatted else penalties.format_penalty
