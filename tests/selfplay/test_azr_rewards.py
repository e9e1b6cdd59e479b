"""Absolute-Zero's reward for each case of its reference implementation's table
(``selfplay.azr_rewards``), grader faults that cost the policy nothing, and a proposal cut off at
the token cap named ``truncated``."""

import pytest

from learners.training.rl_reward import task_relative_advantages
from selfplay.azr_rewards import Penalties, proposer_reward, solver_reward
from selfplay.reasons import PARSE_REASONS, Reason, Rejected
from selfplay.validate import Accepted

P = Penalties()
UNPARSED = Rejected(Reason.SYNTAX_ERROR, "line 3")
PARSED = object()  # whatever the parser made of a readable answer: only Rejected matters
KEPT = Accepted.__new__(Accepted)  # the validator's verdict: kept (its fields are not read)


@pytest.mark.parametrize(("parsed", "result", "outcomes", "reward"), [
    (PARSED, KEPT, [True, False, False, False], 0.75),      # learnable: 1 - p
    (PARSED, KEPT, [True, True, True, True], -0.5),         # always solved: AZR's -0.5, not 0
    (PARSED, KEPT, [False, False, False, False], -0.5),     # never solved: the same
    (PARSED, Rejected(Reason.FAILS_OWN_TESTS, "raises"), None, -1.0),  # an invalid program: format score 0
    (PARSED, Rejected(Reason.COPIED, "a shown program"), None, -1.0),
    (UNPARSED, UNPARSED, None, -1.0),                        # unreadable
    (Rejected(Reason.TRUNCATED, "cut"), Rejected(Reason.TRUNCATED, "cut"), None, -1.0),
    (PARSED, Rejected(Reason.SANDBOX_ERROR, "the pool died"), None, None),  # our fault: no reward
    (PARSED, KEPT, [], None),  # kept, but every estimate of it hit a grader fault
])
def test_the_proposer_is_paid_as_absolute_zero_pays_it(parsed, result, outcomes, reward):
    assert proposer_reward(parsed, result, outcomes, P) == (pytest.approx(reward) if reward is not None else None)


@pytest.mark.parametrize(("passed", "formatted", "fault", "reward"), [
    (True, True, False, 1.0), (False, True, False, -0.5), (False, False, False, -1.0), (False, True, True, None)])
def test_the_solver_is_paid_as_absolute_zero_pays_it(passed, formatted, fault, reward):
    assert solver_reward(passed, formatted, fault, P) == reward


def test_a_grader_fault_has_advantage_zero_and_stays_out_of_the_baseline():
    keys = ["solve:deduction"] * 4
    with_fault = task_relative_advantages([1.0, -0.5, None, -0.5], keys)
    without = task_relative_advantages([1.0, -0.5, -0.5], keys[:3])
    assert with_fault[2] == 0.0
    assert [with_fault[0], with_fault[1], with_fault[3]] == pytest.approx(without)


def test_a_proposal_cut_off_at_the_cap_is_truncated_not_a_syntax_error():
    from selfplay.azr_rollout import cut_off
    from selfplay.proposal import parse_proposal

    cut = "```python\ndef solve(x):\n    \"\"\"Double it.\"\"\"\n    return x\n\nINPUTS = [dict(x=1), dict(x="
    parsed = parse_proposal(cut)
    assert isinstance(parsed, Rejected) and parsed.reason is not Reason.TRUNCATED
    named = cut_off(parsed, finished=False, cap=512)
    assert named.reason is Reason.TRUNCATED and "512 tokens" in named.detail and Reason.TRUNCATED in PARSE_REASONS
    assert cut_off(parsed, finished=True, cap=512) is parsed  # it ended by itself: the parser's reason stands
    assert proposer_reward(named, named, None, P) == P.format_penalty
