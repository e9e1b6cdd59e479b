"""Retry feedback: in phase test it names the failure and the candidate's own error or value,
never a hidden test's expected value (the prompt's example aside); phase train may teach with them."""

import pytest

from agents import Agent
from agents.prompts import feedback
from envs.zwc import Failure, Observation, TestOutcome, Verdict
from tests.agents.fixed_answer import FixedAnswerModel, wrong_answer

INPUTS = ["x=[1, 2]", "x=[3, 5]", "x=[7, 11]"]  # the first is the example the prompt shows


def _obs(phase: str) -> Observation:
    return Observation(task_id="t", question="Double it.", signature="def solve(x):", entry_point="solve",
                       example_input="x=[1, 2]", example_output="[2.5, 4.5]", phase=phase, mode="closed")


def _wrong(example_right: bool) -> Verdict:
    outcomes = [TestOutcome(passed=example_right, expected="[2.5, 4.5]", printed="[2.5, 4.5]" if example_right
                            else "[1, 2]"),
                TestOutcome(passed=False, expected="[6.0625, 10.125]", printed="[3, 5]"),
                TestOutcome(passed=False, expected="[14.5, 22.75]", printed="[7, 11]")]
    first = 1 if example_right else 0
    return Verdict(passed=False, failure=Failure.WRONG_ANSWER, tests=outcomes,
                   detail=f"test {first}: expected {outcomes[first].expected}, got {outcomes[first].printed}")


def test_test_phase_shows_the_candidates_value_and_never_a_hidden_expected_value():
    note = feedback(_wrong(example_right=True), _obs("test"), INPUTS)
    assert "(wrong_answer)" in note and "1 of 3 tests returned the expected value" in note and "On test 1" in note and "[3, 5]" in note
    assert "6.0625" not in note and "14.5" not in note and "```python" in note
    taught = feedback(_wrong(example_right=True), _obs("train"), INPUTS)
    assert "expected [6.0625, 10.125], got [3, 5]" in taught  # learning may use expected values


def test_a_failing_example_is_shown_with_the_result_the_prompt_already_gives():
    note = feedback(_wrong(example_right=False), _obs("test"), INPUTS)
    assert "On the task's example (x=[1, 2]) your function returned [1, 2]" in note
    assert "the expected result is [2.5, 4.5]" in note and "6.0625" not in note and "14.5" not in note


def test_the_candidates_own_error_is_shown_and_tests_that_never_ran_are_not_blamed():
    outcomes = [TestOutcome(passed=True, expected="[2.5, 4.5]", printed="[2.5, 4.5]"),
                TestOutcome(passed=False, expected="[6.0625, 10.125]", error="did not run"),
                TestOutcome(passed=False, expected="[14.5, 22.75]", error="ZeroDivisionError: division by zero")]
    verdict = Verdict(passed=False, failure=Failure.RUNTIME_ERROR, tests=outcomes,
                      detail="test 2: ZeroDivisionError: division by zero")
    note = feedback(verdict, _obs("test"), INPUTS)
    assert "(runtime_error)" in note and "On test 2 your code raised ZeroDivisionError: division by zero" in note
    assert "did not run" not in note and "6.0625" not in note
    timeout = Verdict(passed=False, failure=Failure.TIMEOUT, detail="stopped after 5.0s",
                      tests=[outcomes[0], TestOutcome(passed=False, expected="[6.0625, 10.125]", error="did not run"),
                             TestOutcome(passed=False, expected="[14.5, 22.75]", error="did not run")])
    note = feedback(timeout, _obs("test"), INPUTS)
    assert "ran past the time limit" in note and "1 of 3 tests returned the expected value" in note and "On test" not in note


def test_the_grader_detail_of_a_tested_answer_is_not_quoted():
    """Under --usage strict the detail names the task's own function: the name is the answer."""
    outcomes = [TestOutcome(passed=True, expected="[2.5, 4.5]", printed="[2.5, 4.5]") for _ in INPUTS]
    verdict = Verdict(passed=False, failure=Failure.NO_ZWC_CALL, reason="no_zwc_call", tests=outcomes,
                      detail="test 0: the task's function zwc.kocito did not run (--usage strict)")
    note = feedback(verdict, _obs("test"), INPUTS)
    assert "(no_zwc_call)" in note and "zwc function(s) the task needs" in note and "kocito" not in note
    assert "kocito" in feedback(verdict, _obs("train"), INPUTS)


def test_a_verdict_decided_before_any_test_ran_keeps_its_detail():
    static = Verdict(passed=False, failure=Failure.NUMPY_USED, reason="numpy_import",
                     detail="line 1: imports numpy: NumPy is not available, use zwc")
    note = feedback(static, _obs("test"), INPUTS)
    assert "(numpy_used)" in note and "line 1: imports numpy" in note


def _hidden_expected(task, first_prompt: str) -> list[str]:
    """Expected outputs of the tests other than the example, long enough to search for, that the
    prompt does not happen to contain already."""
    example = (task.example or task.test_cases[0]).input
    return [want for case, want in zip(task.test_cases, task.expected_outputs(), strict=True)
            if case.input != example and len(want) >= 4 and want not in first_prompt]


@pytest.mark.parametrize("right_on_example", [True, False], ids=["hard-codes-the-example", "wrong-everywhere"])
def test_test_phase_retries_never_show_a_hidden_expected_value(task_env, right_on_example):
    tasks = task_env.tasks("single_test")[:2] + task_env.tasks("multiple_test")[:1]
    searched = 0
    for task in tasks:
        agent = Agent(model=FixedAnswerModel(wrong_answer(task, right_on_example)), max_turns=3, concurrency=1)
        tested = agent.run_episode(task_env, task, phase="test", mode="closed")
        assert tested.failure is Failure.WRONG_ANSWER and tested.turns == 3, tested.verdict.detail
        notes = [m["content"] for m in tested.messages[2:] if m["role"] == "user"]
        assert len(notes) == 2 and all("(wrong_answer)" in note for note in notes)
        hidden = _hidden_expected(task, tested.messages[1]["content"])
        text = "\n".join(m["content"] for m in tested.messages)
        assert [want for want in hidden if want in text] == [], "a hidden expected value reached the agent"
        searched += len(hidden)
        example = task_env.observe(task, phase="test").example_output
        assert (example in notes[0]) is not right_on_example  # a failing example is shown with its result
        taught = agent.run_episode(task_env, task, phase="train", mode="closed")
        train_notes = "\n".join(m["content"] for m in taught.messages[2:] if m["role"] == "user")
        if right_on_example:  # the first wrong test is a hidden one: train feedback teaches its value
            assert any(want in train_notes for want in hidden), train_notes
    assert searched >= 20  # the assertion above was tested against many values
