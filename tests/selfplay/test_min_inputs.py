"""Proposals that fit the completion cap: Absolute-Zero's proposer asks for, shows and accepts
``min_inputs`` inputs (4 by default) where SE-Bench's own tasks keep 8."""

import pytest

from sebench.errors import SettingError
from selfplay.absolute_zero import AbsoluteZeroConfig
from selfplay.proposal import Proposal, parse_proposal
from selfplay.proposer import Proposer, ProposerConfig
from selfplay.reasons import Reason, Rejected
from selfplay.validate import Accepted, Validator, ValidatorConfig
from tests.agents.fixed_answer import FixedAnswerModel
from tests.selfplay.proposals import FLOATS, answer
from tests.selfplay.test_proposer import example_of


def test_the_worked_example_and_the_instructions_ask_for_min_inputs(task_env):
    default = Proposer(task_env, FixedAnswerModel(""))
    short = Proposer(task_env, FixedAnswerModel(""), ProposerConfig(min_inputs=4))
    [long_request], [short_request] = default.requests(1), short.requests(1)
    assert "at least 8 different inputs" in long_request.prompt[1]["content"]
    assert "at least 4 different inputs" in short_request.prompt[1]["content"]
    example = example_of(short_request.prompt)
    assert example.count("    dict(") == 4  # the worked example is as long as the answer asked for
    assert isinstance(parse_proposal(example, min_inputs=4), Proposal)
    assert example_of(long_request.prompt).count("    dict(") >= 8  # SE-Bench's rules keep every input


def test_four_inputs_pass_where_asked_for_and_not_under_sebench_rules(task_env):
    z = {e.numpy.removeprefix("numpy."): e.zwc for e in task_env.mapping}
    text = answer(f"    return {z['abs']}(readings)\n", values=FLOATS[:4])
    proposer = Proposer(task_env, FixedAnswerModel(""), ProposerConfig(min_inputs=4))
    [request] = proposer.requests(1)
    parsed = proposer.parse(request, text)
    assert isinstance(parsed, Proposal) and len(parsed.inputs) == 4
    refused = parse_proposal(text)  # SE-Bench's 8
    assert isinstance(refused, Rejected) and refused.reason is Reason.TOO_FEW_INPUTS
    assert isinstance(Validator(task_env, ValidatorConfig(min_tests=4)).validate(parsed), Accepted)
    kept_to_eight = Validator(task_env).validate(parsed)  # SE-Bench's 8, enforced by the validator too
    assert isinstance(kept_to_eight, Rejected) and kept_to_eight.reason is Reason.TOO_FEW_INPUTS


def test_absolute_zero_asks_for_four_inputs_and_refuses_fewer_than_two():
    assert AbsoluteZeroConfig().min_inputs == 4
    assert AbsoluteZeroConfig.from_overrides({"min_inputs": 6}).min_inputs == 6
    for bad in (1, 0, True, "4"):
        with pytest.raises(SettingError, match="min_inputs"):
            AbsoluteZeroConfig.from_overrides({"min_inputs": bad})
    with pytest.raises(SettingError, match="min_inputs"):
        ProposerConfig(min_inputs=1)
