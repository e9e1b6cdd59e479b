"""Red team: attempts to reach NumPy or escape the sandbox, and resource attacks.

Every attack is a full candidate for a task whose only passing answer is the string
'escaped', which the attack returns only if it got through. Each must end blocked, by the
static checks or at run time. `RUNTIME_ONLY` sends attacks straight to the sandbox, skipping
the static checks, to show the second wall holds on its own.
"""

import os
import time

import pytest

from envs.zwc import Failure, Task, TestCase, ZWCEnv
from envs.zwc.sandbox.pool import Limits

ESCAPE_TASK = Task(task_id="escape", query="escape", function_name="def solve(x):",
                   test_cases=[TestCase(input="x=[1.0, 2.0]", output="'escaped'")])
BLOCKED = {Failure.BYPASS_ATTEMPT, Failure.NUMPY_USED, Failure.RUNTIME_ERROR, Failure.WRONG_ARGUMENTS,
           Failure.UNKNOWN_API, Failure.NO_ZWC_CALL, Failure.WRONG_ANSWER, Failure.SYNTAX_ERROR}


def _attack(body: str) -> str:
    """A candidate that uses zwc (so usage rules pass) and runs ``body`` in solve()."""
    lines = "\n".join("    " + line for line in body.strip().splitlines())
    return f"import zwc\ndef solve(x):\n    m = zwc.{{mean}}(x)\n{lines}\n    return 'escaped' if m else m"


def _fill(code: str, names: dict) -> str:
    """Put this build's names where ``{mean}``, ``{array}``, ``{ones}`` stand."""
    for key, value in names.items():
        code = code.replace("{" + key + "}", value)
    return code


ATTACKS = {
    "dunder globals of a zwc function": "g = zwc.{mean}.__globals__",
    "private target of a zwc function": "t = zwc.{mean}._zwc_target",
    "private array of a ZWCArray": "a = zwc.{array}(x)._zwc_nd",
    "getattr with a built string": "t = getattr(zwc.{mean}, '_' + 'zwc_target')",
    "vars of the module": "v = vars(zwc)",
    "globals()": "g = globals()",
    "locals()": "g = locals()",
    "__import__ numpy": "n = __import__('numpy')",
    "import numpy": "import numpy",
    "from numpy import": "from numpy import mean",
    "import numpy.linalg": "import numpy.linalg as la",
    "importlib": "import importlib\nn = importlib.import_module('num' + 'py')",
    "sys.modules": "import sys\nn = sys.modules['numpy']",
    "builtins module": "import builtins\nn = builtins.__import__('numpy')",
    "__builtins__ dict": "n = __builtins__['__import__']('numpy')",
    "eval": "n = eval('1')",
    "exec": "exec('import numpy')",
    "compile": "c = compile('1', 'x', 'eval')",
    "open a file": "f = open('/etc/passwd').read()",
    "os.system": "import os\nos.system('true')",
    "subprocess": "import subprocess\nsubprocess.run(['true'])",
    "ctypes": "import ctypes\nctypes.pythonapi",
    "pickle": "import pickle\npickle.loads(b'')",
    "marshal": "import marshal\nmarshal.loads(b'')",
    "gc referents": "import gc\nobjs = gc.get_objects()",
    "inspect": "import inspect\ns = inspect.getsource(zwc)",
    "types.FunctionType": "import types\nf = types.FunctionType",
    "code module": "import code\ncode.interact()",
    "traceback frames": "try:\n    1 / 0\nexcept Exception as e:\n    f = e.__traceback__.tb_frame.f_globals",
    "generator frame": "g = (i for i in [1])\nf = g.gi_frame.f_back",
    "code object consts": "c = (lambda: 0).__code__.co_consts",
    "class subclasses walk": "s = ().__class__.__bases__[0].__subclasses__()",
    "format string attribute": "s = '{0.__globals__}'.format(zwc.{mean})",
    "format string computed": "t = '{0.' + '_' * 2 + 'class' + '_' * 2 + '}'\ns = t.format(x)",
    "format string private field": "s = '{0._zwc_target}'.format(zwc.{mean})",
    "operator.attrgetter": "import operator\nt = operator.attrgetter('_zwc_target')(zwc.{mean})",
    "string.Formatter.get_field": "import string\nf = string.Formatter().get_field('0._zwc_target', [zwc.{mean}], {})",
    "typing eval gadget": "import typing\nh = typing.get_type_hints(solve, globalns={})",
    "operator overloading array protocol": "class A:\n    def __array_ufunc__(self, *a, **k):\n        return a\n"
                                           "m = zwc.{mean}(A())",
    "private import of the runtime": "from zwc import _runtime",
    "import zwc._runtime": "import zwc._runtime as r",
    "breakpoint": "breakpoint()",
    "help": "help(zwc)",
    "memoryview": "m2 = memoryview(b'x')",
    "dunder via unicode normalisation": "t = zwc.{mean}.\uff3f_globals__",
    "getattr via fullwidth letters": "t = \uff47\uff45\uff54\uff41\uff54\uff54\uff52(zwc, 'x')",
    "match class pattern on private field": "match zwc.{array}(x):\n    case zwc.ZWCArray(_zwc_nd=v):\n        pass",
    "object.__getattribute__": "t = object.__getattribute__(zwc.{mean}, '_zwc_target')",
    "relative import": "from . import zwc as z",
    "star import": "from zwc import *",
    "string names numpy": "s = 'numpy'",
}

RUNTIME_OUTCOMES = {  # attack body -> what the second wall does with it, static checks skipped
    "import numpy": "violation",
    "n = __import__('numpy')": "violation",
    "import os": "violation",
    "import sys": "violation",
    "f = open('/etc/passwd').read()": "runtime",  # NameError: no open in the builtins
    "n = eval('1')": "runtime",
    "g = globals()": "runtime",
    "t = getattr(zwc.{mean}, 'x')": "runtime",
    "try:\n    1 / 0\nexcept Exception as e:\n    f = e.__traceback__.tb_frame": "violation",
    "g = (i for i in [1])\nf = g.gi_frame": "violation",
    "c = (lambda: 0).__code__": "violation",
    "import typing\ns = typing.sys": "runtime",  # proxies carry no module attributes
    "r = zwc._runtime": "unknown_api",  # the candidate's zwc has no private names at all
    "class A:\n    pass\nm = zwc.{mean}(A())": "zwc",  # zwc refuses foreign objects
    "class B(zwc.ZWCArray):\n    pass": "runtime",
}


def _first_error(answer: dict) -> dict:
    errors = [r for r in answer["records"] if r.get("ok") is False]
    assert errors, f"ran without error: {answer}"
    return errors[0]


@pytest.fixture(scope="module")
def names(env7):
    return {"mean": env7.mapping.to_zwc("numpy.mean")[4:], "array": env7.mapping.to_zwc("numpy.array")[4:]}


def test_at_least_forty_distinct_attacks():
    assert len(ATTACKS) >= 40 and len(set(ATTACKS.values())) == len(ATTACKS)


@pytest.mark.parametrize("name", list(ATTACKS))
def test_attack_is_blocked(name, env7, names):
    code = _fill(_attack(ATTACKS[name]), names)
    verdict = env7.check(ESCAPE_TASK, code)
    assert not verdict.passed, f"{name}: got through"
    assert verdict.failure in BLOCKED, f"{name}: {verdict.failure} {verdict.detail}"


@pytest.mark.parametrize("body", list(RUNTIME_OUTCOMES))
def test_second_wall_blocks_without_static_checks(body, env7, names):
    code = _fill(_attack(body), names)
    answer = env7.pool.run(code, "solve", ["x=[1.0, 2.0]"])
    assert _first_error(answer)["category"] == RUNTIME_OUTCOMES[body], answer
    assert not any(r.get("value") == "escaped" for r in answer["records"])


def test_harmless_introspection_reveals_nothing(env7, names):
    code = _fill("import zwc\ndef solve(x):\n    a = zwc.{array}(x)\n    return [str(zwc.{mean}), repr(a), str(type(a)),"
                 " a.dtype, sorted(n for n in dir(zwc) if n.startswith('_') and not n.startswith('__'))]", names)
    answer = env7.pool.run(code, "solve", ["x=[1.0, 2.0]"])
    value = str(answer["records"][1]["value"])
    assert "numpy" not in value.lower() and "mean" not in value and "ndarray" not in value
    assert "_runtime" not in value and "_function" not in value


@pytest.fixture(scope="module")
def tight_env(seed7_dir):
    env = ZWCEnv.load(seed7_dir, workers=2, limits=Limits(cpu_s=2, wall_s=4.0, mem_mb=512))
    yield env
    env.close()


RESOURCE_ATTACKS = {
    "infinite loop": ("while True:\n    pass", Failure.TIMEOUT),
    "10 GB allocation through zwc": ("b = zwc.{ones}(10 ** 10 // 8)", Failure.RESOURCE_LIMIT),
    "10 GB allocation in Python": ("b = [0] * (10 ** 10 // 8)", Failure.RESOURCE_LIMIT),
    "100 MB of output": ("print('x' * (100 * 1024 * 1024))", Failure.RESOURCE_LIMIT),
    "output in a loop": ("while True:\n    print('spam' * 1000)", Failure.RESOURCE_LIMIT),
    "deep recursion": ("def f(n):\n    return f(n + 1)\nf(0)", Failure.RUNTIME_ERROR),
}


@pytest.mark.parametrize("name", list(RESOURCE_ATTACKS))
def test_resource_attack_is_classified_within_limits(name, tight_env, names):
    body, expected = RESOURCE_ATTACKS[name]
    ones = tight_env.mapping.to_zwc("numpy.ones")[4:]
    code = _fill(_attack(body), {**names, "ones": ones})
    overhead = _check_seconds(tight_env, names)
    started = time.monotonic()
    verdict = tight_env.check(ESCAPE_TASK, code)
    assert verdict.failure is expected, verdict.detail
    assert time.monotonic() - started < 4.0 + 2.0 + 3 * overhead  # the wall limit, plus what a check costs now


def _check_seconds(env, names) -> float:
    """What checking a harmless answer costs on this machine right now: a loaded machine (the
    suite's other worker, CI's neighbours) slows every check, the limits' kill included, so the
    bound on a killed attack is the limit plus a multiple of this, measured in the same test."""
    started = time.monotonic()
    env.check(ESCAPE_TASK, _fill(_attack("pass"), names))
    return time.monotonic() - started


def test_fork_bomb_cannot_fork(tight_env, names):
    code = _fill(_attack("import os\nwhile True:\n    os.fork()"), names)
    assert tight_env.check(ESCAPE_TASK, code).failure is Failure.BYPASS_ATTEMPT
    answer = tight_env.pool.run(code, "solve", ["x=[1.0]"])  # static checks skipped
    assert _first_error(answer)["category"] == "violation"


def test_sleeping_is_refused_and_the_wall_clock_still_kills(seed7_dir, names):
    code = _fill(_attack("import time\ntime.sleep(60)"), names)
    with ZWCEnv.load(seed7_dir, workers=1, limits=Limits(cpu_s=30, wall_s=1.0)) as env:
        answer = env.pool.run(code, "solve", ["x=[1.0]"])
        assert _first_error(answer)["category"] == "violation"
        overhead = _check_seconds(env, names)
        started = time.monotonic()  # a busy loop with CPU to spare: only the wall clock stops it
        verdict = env.check(ESCAPE_TASK, _fill(_attack("while True:\n    pass"), names))
        assert verdict.failure is Failure.TIMEOUT and time.monotonic() - started < 3.0 + 3 * overhead


def test_writes_outside_the_working_dir_are_refused(tight_env, tmp_path):
    target = tmp_path / "evil.txt"
    code = (f"import numpy as np\ndef solve(x):\n    np.savetxt({str(target)!r}, np.array(x))\n"
            "    return 'escaped'")
    verdict = tight_env.check(ESCAPE_TASK, code, mode="numpy")
    assert verdict.failure is Failure.BYPASS_ATTEMPT and not target.exists()
    reading = "import numpy as np\ndef solve(x):\n    return str(np.loadtxt('/etc/hostname'))"
    assert tight_env.check(ESCAPE_TASK, reading, mode="numpy").failure is Failure.BYPASS_ATTEMPT


def test_pool_keeps_serving_after_attacks_and_a_dead_server(tight_env, names):
    for body, _ in RESOURCE_ATTACKS.values():
        tight_env.check(ESCAPE_TASK, _fill(_attack(body), {**names, "ones": names["mean"]}))
    for server in list(tight_env.pool._all):
        os.kill(server.proc.pid, 9)  # the worst a child could do to its server, done from outside
    good = Task(task_id="mean", query="mean", function_name="def solve(x):",
                test_cases=[TestCase(input="x=[1.0, 2.0, 6.0]", output="3.0")])
    code = _fill("import zwc\ndef solve(x):\n    return zwc.{mean}(x)", names)
    verdicts = tight_env.check_many([(good, code)] * 4)
    assert all(v.passed for v in verdicts), [v.detail for v in verdicts]
    assert tight_env.pool.restarts >= 1


# -- grading integrity: a pass means zwc really ran, and nothing a candidate does changes its record --
# Every attack computes the right answer of a bitwise-AND task in plain Python, so the only thing
# that can fail it is the grader's integrity. Each is graded twice: on the official sample record
# (printed output against right_exe_result, official names) and on our own task (values), and a
# third time with the static checks skipped, to show the run-time walls hold on their own.
from envs.zwc.grading.grade import grade  # noqa: E402
from envs.zwc.sandbox.state import RANDOM_SEED  # noqa: E402
from envs.zwc.task import read_tasks  # noqa: E402

PLAIN = "[a & b for a, b in zip(x1, x2)]"
NO_CALL, BYPASS = Failure.NO_ZWC_CALL, Failure.BYPASS_ATTEMPT
INTEGRITY_ATTACKS = {  # name -> (candidate with {and_}, {array}, {copy}, {other} for this build's names, failure)
    "conditional never taken": (f"import zwc\ndef solve(x1, x2):\n    return {PLAIN} if True else zwc.{{and_}}(x1, x2)",
                                NO_CALL),
    "or short-circuit": (f"import zwc\ndef solve(x1, x2):\n    return {PLAIN} or zwc.{{and_}}(x1, x2)", NO_CALL),
    "lambda never called": (f"import zwc\ndef solve(x1, x2):\n    return (lambda: zwc.{{and_}}(x1, x2)) and {PLAIN}",
                            NO_CALL),
    "bare module called": (f"import zwc, math\ndef solve(x1, x2):\n    return {PLAIN} or zwc(x1)", NO_CALL),
    "ZWCArray around plain Python": (f"import zwc\ndef solve(x1, x2):\n    return zwc.ZWCArray({PLAIN})", NO_CALL),
    "array constructor only": (f"import zwc\ndef solve(x1, x2):\n    return zwc.{{array}}({PLAIN})", NO_CALL),
    "copy only": (f"import zwc\ndef solve(x1, x2):\n    return zwc.{{copy}}({PLAIN})", NO_CALL),
    "dead branch": (f"import zwc\ndef solve(x1, x2):\n    if len(x1) < 0:\n        zwc.{{and_}}(x1, x2)\n"
                    f"    return {PLAIN}", NO_CALL),
    "call at import only": (f"import zwc\nWARM = zwc.{{and_}}([1], [1])\ndef solve(x1, x2):\n    return {PLAIN}",
                            NO_CALL),
    "call in a default argument": (f"import zwc\ndef solve(x1, x2, _w=zwc.{{and_}}([1], [1])):\n    return {PLAIN}",
                                   NO_CALL),
    "failing call caught": (f"import zwc\ndef solve(x1, x2):\n    try:\n        zwc.{{and_}}('a', None)\n"
                            f"    except Exception:\n        pass\n    return {PLAIN}", NO_CALL),
    "call after the answer, in a generator never run": (
        f"import zwc\ndef solve(x1, x2):\n    g = (zwc.{{and_}}(a, b) for a, b in zip(x1, x2))\n    return {PLAIN}",
        NO_CALL),
    "json encoder patched (the issue's 7)": (
        "import zwc, json\ndef solve(x1, x2):\n    J = json.JSONEncoder\n    J.encode = lambda self, o: '[15, 160, 17]'\n"
        "    zwc.{and_}(x1, x2)\n    return 7", BYPASS),
    "json encoder patched by name": (
        "import zwc, json\ndef solve(x1, x2):\n    json.JSONEncoder.encode = lambda self, o: '0'\n"
        f"    return zwc.{{and_}}(x1, x2) and {PLAIN}", BYPASS),
    "ZWCArray class patched": (
        "import zwc\ndef solve(x1, x2):\n    A = zwc.ZWCArray\n    A.tolist = lambda self: 7\n    return zwc.{and_}(x1, x2)",
        BYPASS),
    "module proxy patched": ("import zwc, math\ndef solve(x1, x2):\n    m = math\n    m.floor = len\n"
                             "    return zwc.{and_}(x1, x2)", BYPASS),
    "stdlib function rewritten": (
        "import zwc, functools, statistics\ndef spy():\n    pass\ndef solve(x1, x2):\n"
        "    functools.update_wrapper(statistics.mean, spy)\n    return zwc.{and_}(x1, x2)", BYPASS),
    "abstract base class registry": ("import zwc, collections.abc\ndef solve(x1, x2):\n"
                                     "    collections.abc.Iterator.register(float)\n    return zwc.{and_}(x1, x2)", BYPASS),
    "violation caught": ("import zwc\ndef solve(x1, x2):\n    try:\n        import os\n    except Exception:\n"
                         "        pass\n    return zwc.{and_}(x1, x2)", BYPASS),
    "output flood caught": ("import zwc\ndef solve(x1, x2):\n    try:\n        print('x' * 2000000)\n"
                            "    except Exception:\n        pass\n    return zwc.{and_}(x1, x2)", Failure.RESOURCE_LIMIT),
    "forged records printed": (
        "import zwc\ndef solve(x1, x2):\n    print('{\"event\": \"test\", \"i\": 0, \"ok\": true, \"value\": [15, 160, 17]}')\n"
        "    print('{\"event\": \"end\", \"violations\": []}')\n    return zwc.{and_}(x1, x1)", Failure.WRONG_ANSWER),
    "exits": ("import zwc\ndef solve(x1, x2):\n    zwc.{and_}(x1, x2)\n    raise SystemExit(0)", Failure.RUNTIME_ERROR),
    "exit builtin": ("import zwc\ndef solve(x1, x2):\n    zwc.{and_}(x1, x2)\n    exit(0)", BYPASS),
    "interrupts itself": ("import zwc\ndef solve(x1, x2):\n    zwc.{and_}(x1, x2)\n    raise KeyboardInterrupt",
                          Failure.RUNTIME_ERROR),
    "forges a zwc function": ("import zwc\ndef solve(x1, x2):\n    F = type(zwc.{and_})\n"
                              f"    return F(lambda a, b: {PLAIN}, 'x')(x1, x2)", NO_CALL),
    "call-order state in globals": (
        "import zwc\nSEEN = []\ndef solve(x1, x2):\n    SEEN.append(1)\n"
        "    return zwc.{and_}(x1, x2) if len(SEEN) == 1 else [len(SEEN)]", None),  # passes: state is per test
}
HONEST = {  # must pass both ways: plain use, use mixed with Python, a filter, hasattr, classes, decorators
    "direct": "import zwc\ndef solve(x1, x2):\n    return zwc.{and_}(x1, x2)",
    "mixed with Python": "import zwc\ndef solve(x1, x2):\n    return [int(v) for v in zwc.{and_}(x1, x2)]",
    "filter by a zwc predicate": ("import zwc\ndef solve(x1, x2):\n    return [a & b for a, b in zip(x1, x2) "
                                  "if zwc.{and_}(a, b) >= 0]"),
    "hasattr with a public name": ("import zwc\ndef solve(x1, x2):\n    r = zwc.{and_}(x1, x2)\n"
                                   "    return r if hasattr(r, 'shape') else list(r)"),
    "a class of its own": ("import zwc\nclass Masks:\n    def combine(self, a, b):\n        return zwc.{and_}(a, b)\n"
                           "def solve(x1, x2):\n    return Masks().combine(x1, x2)"),
    "a decorator with functools.wraps": (
        "import zwc, functools\ndef logged(f):\n    @functools.wraps(f)\n    def inner(*a, **k):\n        return f(*a, **k)\n"
        "    return inner\n@logged\ndef solve(x1, x2):\n    return zwc.{and_}(x1, x2)"),
    "decimal precision of its own": ("import zwc, decimal\ndef solve(x1, x2):\n    ctx = decimal.getcontext()\n"
                                     "    if ctx.prec != 28:\n        return []\n    ctx.prec = 5\n"
                                     "    return zwc.{and_}(x1, x2)"),
}


def _bitwise_and_tasks(official_env, env7, sample_tasks_path):
    official = read_tasks(sample_tasks_path)[0]
    assert official.selected_functions == ["bitwise_and"] and official.is_official
    ours = Task(task_id="and", query="bitwise and", function_name="def solve(x1, x2):", selected_functions=["bitwise_and"],
                test_cases=[TestCase(input=tc.input, output=repr([a & b for a, b in zip(*eval(f"(lambda x1, x2: (x1, x2))({tc.input})"))]))
                            for tc in official.test_cases])
    return [(official_env, official), (env7, ours)]


def _names_of(env):
    short = lambda path: env.mapping.to_zwc(path)[4:]  # noqa: E731
    return {"and_": short("numpy.bitwise_and"), "array": short("numpy.array"), "copy": short("numpy.copy"),
            "other": short("numpy.arcsinh")}


@pytest.fixture(scope="module")
def and_tasks(official_env, env7, sample_tasks_path):
    return _bitwise_and_tasks(official_env, env7, sample_tasks_path)


@pytest.mark.parametrize("name", list(INTEGRITY_ATTACKS))
def test_integrity_attack_fails_both_ways_and_at_run_time(name, and_tasks):
    template, failure = INTEGRITY_ATTACKS[name]
    for env, task in and_tasks:
        code = _fill(template, _names_of(env))
        verdict = env.check(task, code)
        if failure is None:
            assert verdict.passed, (env.mapping.origin, verdict.detail)
            continue
        assert not verdict.passed and verdict.failure is failure, (env.mapping.origin, verdict.failure, verdict.detail)
        raw = env.pool.run(code, task.entry_point, task.inputs(), printed=task.is_official)  # static checks skipped
        assert not grade(task, raw, env.usage_rule(task)).passed, (env.mapping.origin, "passed without static checks")


@pytest.mark.parametrize("name", list(HONEST))
def test_honest_answers_pass_both_ways(name, and_tasks):
    for env, task in and_tasks:
        verdict = env.check(task, _fill(HONEST[name], _names_of(env)))
        assert verdict.passed, (env.mapping.origin, verdict.detail)
        assert verdict.target_used is True and verdict.zwc_calls == [env.mapping.to_zwc("numpy.bitwise_and")]
        assert all(t.zwc_calls for t in verdict.tests)


def test_token_call_of_an_unrelated_function_fails_strict_and_ours_under_standard(and_tasks):
    for env, task in and_tasks:
        code = _fill(f"import zwc\ndef solve(x1, x2):\n    zwc.{{other}}([0.5])\n    return {PLAIN}", _names_of(env))
        standard = env.check(task, code)
        assert standard.zwc_calls == [env.mapping.to_zwc("numpy.arcsinh")]
        if not task.is_official:  # the answer must come from a call's result (dependence.py)
            assert standard.failure is Failure.NO_ZWC_CALL and "answer" in standard.detail, standard.detail
        else:  # an official record under standard: the official run-level rule
            assert standard.passed and standard.target_used is False  # counted by target_use_rate
        strict = env.check(task, code, usage="strict")
        assert strict.failure is Failure.NO_ZWC_CALL and "did not run" in strict.detail
        assert env.check(task, _fill(HONEST["direct"], _names_of(env)), usage="strict").passed


def test_each_test_starts_from_the_same_state(env7):
    probe = ("import zwc, random, decimal\nSEEN = []\ndef solve(x):\n    SEEN.append(1)\n"
             "    r = random.random()\n    p = decimal.getcontext().prec\n    decimal.getcontext().prec = 3\n"
             "    random.seed(99)\n    return [len(SEEN), r, p, float(zwc.{mean}(x))]")
    code = _fill(probe, {"mean": env7.mapping.to_zwc("numpy.mean")[4:]})
    answer = env7.pool.run(code, "solve", [f"x=[{i}.0]" for i in range(4)])
    values = [r["value"] for r in answer["records"] if r.get("event") == "test"]
    import random as _random
    expected = _random.Random(RANDOM_SEED).random()
    assert [v[:3] for v in values] == [[1, expected, 28]] * 4, values
    assert [v[3] for v in values] == [0.0, 1.0, 2.0, 3.0]


def test_a_record_cut_short_never_passes(and_tasks):
    env, task = and_tasks[1]
    code = _fill(HONEST["direct"], _names_of(env))
    answer = env.pool.run(code, task.entry_point, task.inputs(), printed=False)
    rule = env.usage_rule(task)
    assert grade(task, answer, rule).passed
    without_end = {**answer, "records": [r for r in answer["records"] if r.get("event") != "end"]}
    assert grade(task, without_end, rule).failure is Failure.RUNTIME_ERROR  # crashed after its tests
    flooded = {**answer, "records": [{**r, "output_exceeded": True} if r.get("event") == "end" else r
                                     for r in answer["records"]]}
    assert grade(task, flooded, rule).failure is Failure.RESOURCE_LIMIT
    killed = {**answer, "records": without_end["records"], "killed": "syscall", "signal": 31}
    assert grade(task, killed, rule).failure is Failure.BYPASS_ATTEMPT
    library = answer["library"]
    uncounted = {**answer, "library": {**library, "records": [{**r, "calls": {}, "prints": {}} if r.get("event") == "test"
                                                              else r for r in library["records"]]}}
    assert grade(task, uncounted, rule).failure is Failure.NO_ZWC_CALL  # the library's log is what counts
    claimed = {**uncounted, "records": [{**r, "calls": {"x": 1}} for r in answer["records"]]}
    assert grade(task, claimed, rule).failure is Failure.NO_ZWC_CALL  # not what the candidate says
    unbegun = {**answer, "library": {**library, "records": [r for r in library["records"] if r.get("i") != 3]}}
    assert grade(task, unbegun, rule).failure is Failure.BYPASS_ATTEMPT  # a test the library never began


def test_a_strings_hash_is_the_same_on_every_server_and_pool(seed7_dir):
    """Each fork server used to draw its own hash seed: an answer built on hash() or on the order of
    a set of strings passed on one server and failed on the other. Two pools of two servers, six
    runs each: one value."""
    code = "def solve(x):\n    return [hash('abc') % 100003, ''.join(sorted({'q', 'w', 'e'}, key=hash))]"
    values = set()
    for _ in range(2):
        env = ZWCEnv.load(seed7_dir, workers=2)
        try:
            answers = env.pool.run_many([(code, "solve", ["x=1"], True, False)] * 6)
        finally:
            env.close()
        for answer in answers:
            [record] = [r for r in answer["records"] if r.get("event") == "test"]
            assert record["ok"], answer
            values.add(repr(record["value"]))
    assert len(values) == 1, values
