"""The validator on hand-written proposals, each with one defect, through the real sandbox."""

import pytest

from envs.zwc.sandbox.pool import Limits
from selfplay.proposal import parse_proposal
from selfplay.reasons import PARSE_REASONS, Reason, Rejected
from selfplay.validate import Accepted, ValidationReport, Validator, ValidatorConfig
from tests.selfplay.proposals import answers

# every reason a proposal can earn (SANDBOX_ERROR is the sandbox's fault, not a proposal's)
EXPECTED = {name: Reason(name.removesuffix("_at_run_time")) for name in answers({"abs": "", "sum": "",
                                                                                   "negative": ""}) if name != "good"}


@pytest.fixture(scope="module")
def zwc_names(task_env):
    return {e.numpy.removeprefix("numpy."): e.zwc for e in task_env.mapping}


@pytest.fixture(scope="module")
def validated(task_env, zwc_names):
    """Every hand-written answer parsed and validated in one batch (as a round would)."""
    texts = answers(zwc_names)
    # only the off-target answer says which function it was asked for; require_target checks just that
    items = [parse_proposal(text, functions=(zwc_names["abs"],) if name in ("off_target", "good") else ())
             for name, text in texts.items()]
    config = ValidatorConfig(limits=Limits(cpu_s=1, wall_s=2.0), require_target=True)
    results = Validator(task_env, config).validate_many(items)
    return dict(zip(texts, results, strict=True))


def test_every_reason_but_the_sandbox_error_has_a_defect_that_produces_it():
    # COPIED and TRUNCATED: Absolute-Zero's rollout names them (tests/selfplay/test_azr_rewards.py)
    assert set(EXPECTED.values()) == set(Reason) - {Reason.SANDBOX_ERROR, Reason.COPIED, Reason.TRUNCATED}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_defect_is_rejected_with_its_reason(validated, name):
    result = validated[name]
    assert isinstance(result, Rejected), f"{name} was accepted"
    assert result.reason is EXPECTED[name], f"{name}: {result}"
    assert result.detail and result.text  # a reason people can act on, and the answer for the log
    assert (result.reason in PARSE_REASONS) == (name in {r.value for r in PARSE_REASONS})


def test_details_say_exactly_what_was_wrong(validated):
    assert validated["no_code_block"].detail == "no ```python block"
    assert validated["no_entry"].detail.startswith("no function named solve")
    assert validated["no_inputs"].detail.startswith("INPUTS is not a list literal (it is a comprehension)")
    assert validated["too_few_inputs"].detail == "only 3 usable inputs, need >= 8"
    assert "'os'" in validated["banned_code"].detail
    assert "zwc.qqqqqq does not exist" in validated["unknown_api"].detail
    assert "did not finish" in validated["timeout"].detail
    assert "ZeroDivisionError" in validated["fails_own_tests"].detail
    assert "no zwc function ran" in validated["no_zwc_call_at_run_time"].detail
    assert "two runs disagree on input 0" in validated["non_deterministic"].detail


def test_a_good_proposal_becomes_a_verified_task(validated, zwc_names, task_env):
    result = validated["good"]
    assert isinstance(result, Accepted), result
    task = result.task
    assert task.task_id.startswith("sp-") and task.split == "selfplay" and task.kind == "unary"
    assert task.selected_functions == ["abs"] and task.function_name == "def solve(readings):"
    assert task.query.startswith("A sensor logs signed readings")
    assert [tc.output for tc in task.test_cases][:2] == ["[1.0, 2.0]", "[3.5]"]  # executed, not proposed
    assert "INPUTS" not in task.reference and '"""' not in task.reference and zwc_names["abs"] in task.reference
    assert "numpy.abs" in task.example_output[0]  # the NumPy twin that agreed
    verdict = task_env.check(task, task.reference)  # and it grades as any task does
    assert verdict.passed and verdict.target_used and verdict.zwc_calls == [zwc_names["abs"]]


def test_the_report_counts_a_round_by_reason(validated):
    report = ValidationReport.of(list(validated.values()))
    assert report.proposals == len(validated) and report.accepted == 1
    assert report.rejections["no_zwc_call"] == 2 and sum(report.rejections.values()) == len(validated) - 1
    assert report.acceptance_rate == pytest.approx(1 / len(validated))
    assert sum(report.rates().values()) == pytest.approx(1 - report.acceptance_rate)
    assert report.to_dict()["accepted"] == 1 and str(report).startswith(f"1/{len(validated)} accepted")


def test_named_functions_and_targets_can_be_allowed(task_env, zwc_names):
    texts = answers(zwc_names)
    items = [parse_proposal(texts["names_function"]), parse_proposal(texts["off_target"], functions=(zwc_names["abs"],))]
    results = Validator(task_env, ValidatorConfig(allow_named_functions=True)).validate_many(items)
    assert all(isinstance(r, Accepted) for r in results), results
    assert results[1].task.selected_functions == ["negative"]


def test_an_output_too_long_to_keep_is_refused(task_env, zwc_names):
    good = parse_proposal(answers(zwc_names)["good"])
    result = Validator(task_env, ValidatorConfig(max_output_chars=12)).validate(good)
    assert isinstance(result, Rejected) and result.reason is Reason.RESOURCE_LIMIT
    assert result.detail == "input 2 gives an output of 15 characters, more than a task keeps (12)"  # [0.0, 4.0, 4.5]
