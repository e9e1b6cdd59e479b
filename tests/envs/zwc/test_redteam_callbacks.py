"""Red team of the library-process design, callbacks: the candidate's callables
(``vectorize(f)``, ``piecewise``) are called back over the channel, honest ones work under
every rule, and a callback's own exception reaches the candidate (``test_redteam_library``)."""

from __future__ import annotations

import pytest

from envs.zwc import Failure, Task, TestCase
from tests.envs.zwc.test_redteam_library import _escape, _fill, _values

# -- 8. callbacks -----------------------------------------------------------------------------
VECTORIZE = ("import zwc\ndef solve(x):\n    twice = zwc.$vectorize(lambda v: v * 2)\n"
             "    nested = zwc.$vectorize(lambda v: float(zwc.$sum(zwc.ZWCArray([v, v]))))\n"
             "    pw = zwc.$piecewise(x, [zwc.ZWCArray(x) < 0, zwc.ZWCArray(x) >= 0], [lambda v: v * -2, lambda v: v * 2])\n"
             "    return [[float(v) for v in twice(x)], [float(v) for v in pw], float(zwc.$sum(nested(x)))]")
VECTORIZE_CASES = [("x=[1.0, -2.0]", [[2.0, -4.0], [2.0, 4.0], -2.0]), ("x=[0.5]", [[1.0], [1.0], 1.0])]


@pytest.mark.parametrize("kind", ["ours with a reference", "ours without a reference", "official"])
def test_honest_callbacks_work(kind, env7, official_env):
    for env in (env7, official_env):
        code = _fill(VECTORIZE, env)
        task = Task(task_id=f"rtl-vec-{kind}", query="double", function_name="def solve(x):",
                    selected_functions=["vectorize"],
                    test_cases=[TestCase(input=i, output=repr(o)) for i, o in VECTORIZE_CASES],
                    reference=code if kind == "ours with a reference" else None,
                    right_exe_result="#".join(repr(o) for _, o in VECTORIZE_CASES) if kind == "official" else None)
        for usage in ("standard", "strict"):
            verdict = env.check(task, code, usage=usage)
            assert verdict.passed, (env.mapping.origin, kind, usage, verdict.detail, [t.printed for t in verdict.tests])


def test_a_callback_that_raises_propagates_its_own_exception(env7, official_env):
    for env in (env7, official_env):
        code = _fill("import zwc\nclass Refused(Exception):\n    pass\ndef bad(v):\n    raise Refused('no ' + str(v))\n"
                     "def solve(x):\n    try:\n        zwc.$vectorize(bad)(x)\n    except Refused as exc:\n"
                     "        caught = [type(exc).__name__, str(exc)]\n    try:\n        zwc.$vectorize(bad)(x)\n"
                     "    except zwc.ZWCError:\n        return 'wrapped as ZWCError'\n    except Refused:\n"
                     "        return caught", env)
        answer = env.pool.run(code, "solve", ["x=[1.0, 2.0]"])
        assert _values(answer) == [["Refused", "no 1.0"]], answer["records"]
        uncaught = _fill("import zwc\nclass Refused(Exception):\n    pass\ndef bad(v):\n    raise Refused('no')\n"
                         "def solve(x):\n    return zwc.$vectorize(bad)(x)", env)
        verdict = env.check(_escape(env), uncaught)
        assert verdict.failure is Failure.RUNTIME_ERROR and "Refused" in verdict.detail, verdict.detail
