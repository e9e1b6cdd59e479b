"""Red team of "the answer comes from the call" (``dependence.py``, ``counterfactual.py``).

A usage rule that only counts calls is met by a token call next to plain Python: the policy
knows a name (from practice, or a leak) and calls it where its result cannot matter. Each family
below is written as such a policy would, graded through ``env.check`` (static checks on,
counterfactual run included) and straight through the pool with ``grading.grade`` (static checks
skipped), under both usage rules. Honest code that mixes zwc and Python must keep passing.
``$name`` stands for this build's zwc name of ``PATHS[name]`` (``test_redteam_library``).
"""

from __future__ import annotations

import re

import pytest

from envs.zwc import Failure, Task, TestCase
from tests.envs.zwc.test_redteam_library import (
    PATHS,
    PLAIN,
    _runtime,
    _solve,
    and_pairs,  # noqa: F401 - a fixture used here
)

NO_CALL = Failure.NO_ZWC_CALL
USAGES = ("standard", "strict")
NAMES = {**PATHS, "sqrt": "numpy.sqrt"}


def _fill(code: str, env) -> str:
    return re.sub(r"\$(\w+)", lambda m: env.mapping.to_zwc(NAMES[m.group(1)])[4:] if m.group(1) in NAMES
                  else m.group(0), code)


def _ours(env, query: str, signature: str, reference: str, cases: list, functions: list[str]) -> Task:
    return Task(task_id=f"rta-{query}", query=query, function_name=signature, selected_functions=functions,
                reference=_fill(reference, env), test_cases=[TestCase(input=i, output=repr(o)) for i, o in cases])

FAMILIES = {  # name -> (body, returned expression): the answer is plain Python every time
    "the call's result thrown away": ("zwc.$and_(x1, x2)", PLAIN),
    "a call on the first element only": ("list(zwc.$and_(x1[:1], x2[:1]))", PLAIN),
    "a call on the input times zero (a new length every test)": (
        "list(zwc.$and_([v * 0 for v in x1], [v * 0 for v in x2]))", PLAIN),
    "a call on the input whose result is added times zero": (
        "r = zwc.$and_([v * 0 for v in x1], x2)", f"[a + 0 * int(b) for a, b in zip({PLAIN}, r)]"),
}


@pytest.fixture(scope="module")
def and_task(env7):
    cases = [("x1=[12, 10, 7], x2=[10, 6, 3]", [8, 2, 3]), ("x1=[255, 1], x2=[15, 3]", [15, 1]),
             ("x1=[1, 2, 4, 8], x2=[7, 7, 7, 7]", [1, 2, 4, 0]), ("x1=[6], x2=[3]", [2])]
    return _ours(env7, "and-answers", "def solve(x1, x2):", "import zwc\ndef solve(x1, x2):\n    return zwc.$and_(x1, x2)",
                 cases, ["bitwise_and"])


@pytest.mark.parametrize("family", list(FAMILIES))
def test_a_token_call_next_to_plain_python_fails_both_ways_under_both_rules(family, env7, and_task):
    body, ret = FAMILIES[family]
    code = _fill(_solve(body, ret), env7)
    for usage in USAGES:
        checked = env7.check(and_task, code, usage=usage)
        assert checked.failure is NO_CALL, (usage, checked.failure, checked.detail)
        runtime, _ = _runtime(env7, and_task, code, usage)
        assert runtime.failure is NO_CALL, (usage, runtime.failure, runtime.detail)
        assert "answer" in runtime.detail or "depend" in runtime.detail, runtime.detail


def test_the_official_task_takes_the_call_in_every_test_under_strict(and_pairs):  # noqa: F811
    """An official record has no reference: strict asks every test's answer to come from the call."""
    official_env, task = and_pairs[0]
    first = task.test_cases[0].input
    code = _fill("import zwc\ndef solve(x1, x2):\n    if (x1, x2) == FIRST:\n        return zwc.$and_(x1, x2)\n"
                 f"    return {PLAIN}", official_env).replace("FIRST", f"(lambda x1, x2: (x1, x2))({first})")
    strict = official_env.check(task, code, usage="strict")
    assert strict.failure is NO_CALL and "answer" in strict.detail, strict.detail
    runtime, _ = _runtime(official_env, task, code, "strict")
    assert runtime.failure is NO_CALL
    honest = _fill("import zwc\ndef solve(x1, x2):\n    return zwc.$and_(x1, x2)", official_env)
    assert official_env.check(task, honest, usage="strict").passed


@pytest.fixture(scope="module")
def three_function_task(env7):
    cases = [("x=[1.0, 4.0, 9.0]", 6.0), ("x=[16.0]", 4.0), ("x=[0.25, 2.25]", 2.0), ("x=[1.0, 1.0, 1.0, 1.0]", 4.0)]
    return _ours(env7, "sqrt-cumsum-max", "def solve(x):", "import zwc\ndef solve(x):\n    return zwc.$max(zwc.$cumsum(zwc.$sqrt(x)))",
                 cases, ["sqrt", "cumsum", "max"])


def test_one_token_call_per_function_fails_a_multi_function_task(env7, three_function_task):
    token = ("import zwc, math, itertools\ndef solve(x):\n    zwc.$sqrt(x[:1])\n    zwc.$cumsum(x[:1])\n"
             "    zwc.$max(x[:1])\n    return max(itertools.accumulate(math.sqrt(v) for v in x))")
    code = _fill(token, env7)
    for usage in USAGES:
        checked = env7.check(three_function_task, code, usage=usage)
        assert checked.failure is NO_CALL, (usage, checked.detail)
    # the last function called on Python's own computation, the others as tokens: the answer is
    # max's result (standard), but strict wants each named function on the test's data
    half = _fill("import zwc, math, itertools\ndef solve(x):\n    zwc.$sqrt(x)\n    zwc.$cumsum(x)\n"
                 "    return zwc.$max(list(itertools.accumulate(math.sqrt(v) for v in x)))", env7)
    assert env7.check(three_function_task, half).passed
    assert env7.check(three_function_task, half, usage="strict").failure is NO_CALL
    honest = _fill("import zwc\ndef solve(x):\n    return zwc.$max(zwc.$cumsum(zwc.$sqrt(x)))", env7)
    for usage in USAGES:
        assert env7.check(three_function_task, honest, usage=usage).passed, usage


HONEST = {  # honest answers that mix zwc with Python: each passes under both rules
    "the handle": ("", "zwc.$and_(x1, x2)"),
    "its list": ("", "list(zwc.$and_(x1, x2))"),
    "its elements as ints": ("", "[int(v) for v in zwc.$and_(x1, x2)]"),
    "Python arithmetic on its elements": ("r = zwc.$and_(x1, x2)", "[int(v) * 2 // 2 for v in r]"),
    "a caught error first": ("try:\n    zwc.$and_(x1, [1, 2, 3, 4, 5, 6])\nexcept (zwc.ZWCError, ValueError):\n    pass",
                             "zwc.$and_(x1, x2)"),
    "the array constructor's error on a ragged list caught": (
        "try:\n    zwc.ZWCArray([[1, 2], [3]])\nexcept (zwc.ZWCError, ValueError):\n    pass", "zwc.$and_(x1, x2)"),
    "an early return on a single element": ("if len(x1) == 1:\n    return [int(zwc.$and_(x1, x2)[0])]",
                                            "list(zwc.$and_(x1, x2))"),
}


@pytest.mark.parametrize("name", list(HONEST))
def test_honest_answers_mixing_zwc_and_python_pass(name, env7, and_task):
    body, ret = HONEST[name]
    code = _fill(_solve(body or "pass", ret), env7)
    for usage in USAGES:
        verdict = env7.check(and_task, code, usage=usage)
        assert verdict.passed, (usage, verdict.failure, verdict.detail)


def test_python_aggregation_of_the_calls_result_passes_through_the_counterfactual_run(env7, three_function_task):
    """``sum(...)`` in Python over what zwc returned is no value zwc handed out: the counterfactual
    run (the calls' results changed) shows the answer moves with them."""
    code = _fill("import zwc\ndef solve(x):\n    c = list(zwc.$cumsum(zwc.$sqrt(x)))\n    m = zwc.$max(c)\n"
                 "    return float(m) * 2 / 2 + 0.0", env7)
    runtime, _ = _runtime(env7, three_function_task, code, "standard")
    assert runtime.passed or "answer" in runtime.detail  # by value, or only the answer check is left
    for usage in USAGES:
        verdict = env7.check(three_function_task, code, usage=usage)
        assert verdict.passed, (usage, verdict.failure, verdict.detail)
    mixed = _fill("import zwc\ndef solve(x):\n    return max(sum(float(v) for v in zwc.$sqrt(x[:i + 1])) "
                  "for i in range(len(x)))", env7)
    standard = env7.check(three_function_task, mixed)
    assert standard.passed, standard.detail
