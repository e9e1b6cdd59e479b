"""Red team of the library-process design, what reaches the candidate: a wrong call's error
names no other function and no NumPy, and nothing crosses from one test to the next but what
the candidate itself computed (``test_redteam_library``)."""

from __future__ import annotations

import re

import pytest

from envs.zwc import Failure, Task, TestCase
from tests.envs.zwc.test_redteam_library import SYS, _escape, _fill, _names, _runtime, _values

# -- 6. error messages name nothing else ----------------------------------------------------
WRONG_CALLS = {  # what is called -> a wrong call (the error reaches the verdict)
    "amax": "zwc.$amax(x, axis=3)",
    "max": "zwc.$max(x, bogus=1)",
    "and_": "zwc.$and_(x)",
    "sum": "zwc.$sum(x, axis='rows')",
    "array": "zwc.$array(x, dtype='quad')",
    "cumsum": "zwc.$cumsum(x, out=[0])",
    "vectorize": "zwc.$vectorize(5)(x)",
    "copy": "zwc.$copy(x, order='Q')",
    "arcsinh": "zwc.$arcsinh('abc')",
    "norm": "zwc.$norm(x, ord='fro')",
}


@pytest.mark.parametrize("called", list(WRONG_CALLS))
def test_error_messages_name_no_other_function_and_no_numpy(called, env7, official_env):
    for env in (env7, official_env):
        code = _fill(f"import zwc\ndef solve(x):\n    return {WRONG_CALLS[called]}", env)
        verdict = env.check(_escape(env), code)
        assert not verdict.passed
        text = " ".join([verdict.detail, *(t.error for t in verdict.tests)])
        assert verdict.failure in {Failure.WRONG_ARGUMENTS, Failure.RUNTIME_ERROR}, (verdict.failure, text)
        own = _names(env)[called].rsplit(".", 1)[-1]
        others = {e.short.rsplit(".", 1)[-1] for e in env.mapping} - {own}
        assert not set(re.findall(r"[A-Za-z_]\w*", text)) & others, (called, text)
        assert "numpy" not in text.lower() and "np." not in text and "ndarray" not in text, text


# -- 7. nothing crosses from one test to the next -------------------------------------------
def test_an_array_kept_from_the_last_test_is_dead(env7):
    code = _fill(f"import zwc\ndef solve(x):\n    d = {SYS}.modules['envs.zwc.sandbox.wire'].__dict__\n"
                 "    old = d.get('KEPT')\n    d['KEPT'] = zwc.$array(x)\n    if old is None:\n        return 'first'\n"
                 "    try:\n        return float(zwc.$sum(old))\n    except zwc.ZWCError as exc:\n        return str(exc)", env7)
    answer = env7.pool.run(code, "solve", ["x=[1.0, 2.0]", "x=[3.0]"])
    assert _values(answer) == ["first", "this object belongs to another test or no longer exists"]


def test_state_kept_across_tests_is_documented_and_carries_only_what_the_candidate_saw(env7):
    """State can persist across one candidate's tests in its own process (a real module's dict,
    reached through the stub's globals, is not watched), so a test can know its index; each
    test's globals are fresh and the library's handle table is emptied per test
    (test_an_array_kept_from_the_last_test_is_dead). What persists is what the candidate
    computed from the inputs it was given, never an expected value
    (test_nothing_in_the_candidate_process_holds_an_expected_value)."""
    task = Task(task_id="rtl-counter", query="count", function_name="def solve(x):",
                test_cases=[TestCase(input="x=[1.0]", output="1"), TestCase(input="x=[1.0]", output="2")])
    code = _fill(f"import zwc\ndef solve(x):\n    zwc.$mean(x)\n    d = {SYS}.modules['envs.zwc.sandbox.wire'].__dict__\n"
                 "    d['SEEN'] = d.get('SEEN', 0) + 1\n    return d['SEEN']", env7)
    assert not env7.check(task, code).passed  # the static checks stop the reflection
    _, answer = _runtime(env7, task, code)
    assert _values(answer) == [1, 2]  # the documented limit: the test's index is knowable at run time
