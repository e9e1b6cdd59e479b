"""Absolute-Zero's task types on a real program: each is graded by execution or by value, and a
wrong, unreadable or hostile answer never passes; TRR++'s advantages; the round's slots."""

import pytest

from learners.training.rl_reward import task_relative_advantages
from selfplay.absolute_zero import AbsoluteZeroConfig, AZRSettings
from selfplay.azr_rollout import SLOTS, program_key, slot_of, slot_rows, slots_for
from selfplay.azr_tasks import abduction_input, grade_many, make_task
from selfplay.proposal import parse_proposal
from selfplay.validate import Accepted, Validator
from tests.selfplay.proposals import answers


@pytest.fixture(scope="module")
def program(task_env):
    """The good hand-written proposal (absolute value of signed readings), validated."""
    names = {e.numpy.removeprefix("numpy."): e.zwc for e in task_env.mapping}
    result = Validator(task_env).validate(parse_proposal(answers(names)["good"]))
    assert isinstance(result, Accepted), result
    return result.task


def block(text: str) -> str:
    return f"Here it is.\n```python\n{text}\n```"


def test_deduction_is_graded_by_value_and_runs_nothing(task_env, program):
    item = make_task(task_env, "deduction", program, case=0)
    assert "readings=[1.0, -2.0]" in item.prompt[1]["content"] and program.reference.strip() in item.prompt[1]["content"]
    right, close, wrong = block("[1.0, 2.0]"), block("[1.0000000001, 2]"), block("[1.0, -2.0]")
    hostile = block("__import__('os').system('touch /tmp/pwned-by-deduction')")
    bad_escape = block("['\\x']")  # once raised SyntaxError out of the parser and so out of the trainer
    texts = [right, close, wrong, hostile, "I think it is a list", bad_escape]
    verdicts = grade_many(task_env, [item] * len(texts), texts)
    assert [v.passed for v in verdicts] == [True, True, False, False, False, False]
    assert verdicts[2].formatted and not verdicts[4].formatted and not verdicts[5].formatted


def test_abduction_runs_the_program_on_a_literal_input_in_the_sandbox(task_env, program):
    item = make_task(task_env, "abduction", program, case=0)  # output [1.0, 2.0]
    assert "[1.0, 2.0]" in item.prompt[1]["content"]
    answers_ = [block("INPUT = dict(readings=[-1.0, 2.0])"),   # another input giving the same output: it counts
                block("INPUT = dict(readings=[1.0, -2.0])"),    # the recorded one
                block("INPUT = dict(readings=[3.0])"),          # runs, other output
                block("INPUT = dict(readings=__import__('os').getcwd())"),  # not a literal
                block("INPUT = dict(values=[1.0, 2.0])"),       # not a parameter of solve
                "no idea"]
    verdicts = grade_many(task_env, [item] * len(answers_), answers_)
    assert [v.passed for v in verdicts] == [True, True, False, False, False, False]
    assert [v.formatted for v in verdicts] == [True, True, True, False, False, False]
    assert abduction_input(item, block("dict(readings=[5.0])")) == "readings=[5.0]"  # a bare dict as the answer


def test_induction_shows_half_of_the_pairs_and_grades_only_the_hidden_half(task_env, program):
    item = make_task(task_env, "induction", program)
    cases = program.test_cases
    half = len(cases) // 2
    shown, hidden = cases[:half], cases[half:]
    text = item.prompt[1]["content"]
    assert "Documentation:" in text and "def solve(readings):" in text
    assert all(c.input in text and c.output in text for c in shown)
    assert not [c for c in hidden if c.input in text]  # no hidden input is shown
    assert item.task.test_cases == hidden and item.task.task_id != program.task_id
    zwc_abs = program.reference.split("return ")[1].split("(")[0]
    right = block(f"import zwc\n\ndef solve(readings):\n    return {zwc_abs}(readings)")
    no_zwc = block("def solve(readings):\n    return [abs(r) for r in readings]")  # right values, no zwc call
    partial = block(f"import zwc\n\ndef solve(readings):\n    return {zwc_abs}(readings[:1])")
    # the shown pairs answered from a table, the rest by zwc on the wrong data: right on the shown half only
    table = {c.input: c.output for c in shown}
    memorised = block(f"import zwc\n\ndef solve(readings):\n    known = {{{', '.join(f'{k!r}: {v!r}' for k, v in table.items())}}}\n"
                      f"    return known.get('readings=' + repr(readings), {zwc_abs}(readings[:1]))")
    verdicts = grade_many(task_env, [item] * 5, [right, no_zwc, partial, "prose only", memorised])
    assert [v.passed for v in verdicts] == [True, False, False, False, False]
    assert [v.formatted for v in verdicts] == [True, True, True, False, True]
    assert not any(v.fault for v in verdicts)


def test_a_copied_program_is_recognised_whatever_its_formatting_docstring_and_variable_names():
    shown = 'import zwc\n\ndef solve(x):\n    """Sum it."""\n    return zwc.a(x)\n'
    copy = 'import zwc\ndef solve(x):\n    """Add the readings up, a new task!"""\n    # same code\n    return zwc.a( x )\n'
    assert program_key(shown) == program_key(copy)
    assert program_key(shown) != program_key(shown.replace("zwc.a(x)", "zwc.a(x) + 1"))
    assert program_key(shown) != program_key(shown.replace("zwc.a(x)", "zwc.b(x)"))  # the library call is kept
    two = 'import zwc\ndef solve(x, k=2):\n    t = zwc.a(x)\n    return [t * k for _ in range(k)]\n'
    renamed = 'import zwc as z\ndef solve(rows, n=2):\n    out = z.a(rows)\n    return [out * n for i in range(n)]\n'
    assert program_key(two) == program_key(renamed)  # parameters, locals and the import alias renamed
    assert program_key(two) != program_key(renamed.replace("out * n", "n * out"))


def test_task_relative_advantages_normalise_per_task_type_and_role():
    rewards = [1.0, 0.0, 1.0, 0.0, -1.0, -1.0, 0.5, 0.5]
    keys = ["solve:deduction"] * 4 + ["propose:deduction"] * 2 + ["propose:induction"] * 2
    advantages = task_relative_advantages(rewards, keys)
    assert advantages[:4] == pytest.approx([1.0, -1.0, 1.0, -1.0], abs=1e-3)  # mean 0.5, std 0.5
    assert advantages[4:] == [0.0] * 4  # all equal within their key: nothing to learn from them
    mixed = task_relative_advantages([1.0, 0.0, 0.0, 0.0], ["a", "a", "b", "b"])
    assert mixed[0] > 0 > mixed[1] and mixed[2:] == [0.0, 0.0]  # b's zeros are not compared with a's one
    with pytest.raises(ValueError, match="4 rewards and 3 keys"):
        task_relative_advantages([0.0] * 4, ["a"] * 3)


def test_a_round_has_every_slot_and_settings_that_cannot_fill_one_are_refused():
    rows = slot_rows(2)
    assert len(rows) == 12 and len({r["prompt"][0]["content"] for r in rows}) == 12
    assert sorted({slot_of(r["prompt"]) for r in rows}) == sorted(SLOTS) and len(SLOTS) == 6
    config = AbsoluteZeroConfig.from_overrides({"rounds": 3, "steps_per_generation": 2})
    assert config.train.max_steps == 6 and config.train.advantage == "task-relative"
    with pytest.raises(ValueError, match="must be a multiple of 6"):
        AbsoluteZeroConfig.from_overrides({"prompts_per_step": 2, "steps_per_generation": 2})
    with pytest.raises(ValueError, match="num_iterations must be 1"):
        AZRSettings(num_iterations=2)
    with pytest.raises(ValueError, match="checkpoints fall between rounds"):
        AZRSettings(save_steps=3)
    with pytest.raises(ValueError, match="set rounds, not max_steps"):
        AbsoluteZeroConfig.from_overrides({"max_steps": 4})
    with pytest.raises(ValueError, match="rounds must be an integer >= 1"):
        AbsoluteZeroConfig(rounds=0)


def test_an_ablation_keeps_some_task_types_and_their_slots_only():
    assert slots_for(["induction", "deduction"]) == ("propose:deduction", "propose:induction", "solve:deduction",
                                                     "solve:induction")
    rows = slot_rows(1, slots_for(["induction"]))
    assert [slot_of(r["prompt"]) for r in rows] == ["propose:induction", "solve:induction"]
    config = AbsoluteZeroConfig.from_overrides({"task_types": "induction, abduction", "prompts_per_step": 2,
                                                "steps_per_generation": 2})
    assert config.task_types == ["abduction", "induction"]  # the command line's comma-separated form, in order
    one = AbsoluteZeroConfig.from_overrides({"task_types": ["induction"], "prompts_per_step": 2,
                                             "steps_per_generation": 1})
    assert one.train.max_steps == one.rounds
    with pytest.raises(ValueError, match="multiple of 4, the slots of a round over abduction, induction"):
        AbsoluteZeroConfig.from_overrides({"task_types": "abduction,induction", "prompts_per_step": 3,
                                           "steps_per_generation": 2})
    for bad in ("induction,typo", "", "induction,induction"):
        with pytest.raises(ValueError, match="task_types: task types must be distinct names among deduction, "
                                             "abduction, induction .*e.g. --set task_types=deduction,induction"):
            AbsoluteZeroConfig.from_overrides({"task_types": bad})
    with pytest.raises(ValueError, match="task_types must be a list of names or comma-separated text"):
        AbsoluteZeroConfig.from_overrides({"task_types": 1})
    with pytest.raises(ValueError, match="e.g. prompts_per_step=4 with steps_per_generation=1"):
        AbsoluteZeroConfig.from_overrides({"task_types": "abduction,induction", "prompts_per_step": 3,
                                           "steps_per_generation": 1})
