"""Red team of the library-process design (c9e6bc3): the candidate's ``zwc`` is a stub, the
library runs in another process and its log is the only record of which functions ran.

Attacks are written as a reward-seeking policy would write them. Each is graded through
``env.check`` (static checks on) and, where the static checks would stop it, also sent straight
to ``env.pool.run`` and graded with ``grading.grade`` under the run-time usage rule, to show that
the run-time design holds on its own. Honest code (early returns, callbacks, a few mistaken
names) must keep passing. ``$name`` in a candidate stands for this build's zwc name of the
NumPy function ``PATHS[name]``.

Attacks that need the stub's globals reach them with ``zwc.ZWCArray.__init__.__globals__``:
CPython does not audit ``__globals__``, so at run time it is an ordinary attribute read.
"""

from __future__ import annotations

import re

import pytest

from envs.zwc import Failure, Task, TestCase
from envs.zwc.grading.grade import MAX_GUESSES, grade
from envs.zwc.task import read_tasks

PATHS = {"and_": "numpy.bitwise_and", "sum": "numpy.sum", "mean": "numpy.mean", "array": "numpy.array",
         "max": "numpy.max", "amax": "numpy.amax", "cumsum": "numpy.cumsum", "vectorize": "numpy.vectorize",
         "piecewise": "numpy.piecewise", "arcsinh": "numpy.arcsinh", "norm": "numpy.linalg.norm",
         "copy": "numpy.copy"}
PLAIN = "[a & b for a, b in zip(x1, x2)]"
BYPASS, NO_CALL, UNKNOWN = Failure.BYPASS_ATTEMPT, Failure.NO_ZWC_CALL, Failure.UNKNOWN_API
NOT_A_PASS = set(Failure) - {Failure.PASSED, Failure.SANDBOX_ERROR}
# what reflection starts from at run time: the stub's own module globals, then the real sys
STUB = "zwc.ZWCArray.__init__.__globals__"
SYS = f"{STUB}['weakref'].sys"
# names a policy would guess: the NumPy names (unknown in every build: zwc's names are obfuscated)
GUESSES = ["bitwise_and", "logical_and", "and_", "band", "mean", "add"]


def _names(env) -> dict[str, str]:
    return {key: env.mapping.to_zwc(path)[4:] for key, path in PATHS.items()}


def _fill(code: str, env) -> str:
    names = _names(env)
    return re.sub(r"\$(\w+)", lambda m: names.get(m.group(1), m.group(0)), code)


def _runtime(env, task: Task, code: str, usage: str = "standard"):
    """Grade ``code`` with the static checks skipped: the pool's answer and its verdict."""
    env.reference_usage([task])  # what check_many does first; usage_rule reads it
    answer = env.pool.run(code, task.entry_point, task.inputs(), printed=task.is_official)
    return grade(task, answer, env.usage_rule(task, usage=usage)), answer


def _solve(body: str, ret: str, params: str = "x1, x2") -> str:
    """``import zwc`` and ``def solve(params)`` running ``body``, then ``return ret``."""
    lines = "\n".join("    " + ln for ln in body.strip("\n").splitlines())
    return f"import zwc\ndef solve({params}):\n{lines}\n    return {ret}"


def _values(answer: dict) -> list:
    return [r.get("value", r.get("error")) for r in answer["records"] if r.get("event") == "test"]


def _ours(env, query: str, signature: str, reference: str, cases: list[tuple[str, object]],
          functions: list[str]) -> Task:
    return Task(task_id=f"rtl-{query}", query=query, function_name=signature, selected_functions=functions,
                reference=_fill(reference, env), test_cases=[TestCase(input=i, output=repr(o)) for i, o in cases])


def _and_cases(official: Task) -> list[tuple[str, list[int]]]:
    cases = []
    for tc in official.test_cases:
        x1, x2 = eval(f"(lambda x1, x2: (x1, x2))({tc.input})")  # noqa: S307 - our test data
        cases.append((tc.input, [a & b for a, b in zip(x1, x2)]))
    return cases


@pytest.fixture(scope="module")
def and_pairs(official_env, env7, sample_tasks_path):
    """The official bitwise-AND record (official names, printed truth) and ours (a reference)."""
    official = read_tasks(sample_tasks_path)[0]
    assert official.selected_functions == ["bitwise_and"] and official.is_official
    ours = _ours(env7, "and", "def solve(x1, x2):", "import zwc\ndef solve(x1, x2):\n    return zwc.$and_(x1, x2)",
                 _and_cases(official), ["bitwise_and"])
    return [(official_env, official), (env7, ours)]


def _escape(env) -> Task:
    """A task whose only passing answer is 'escaped', which an attack returns only if it got through."""
    return Task(task_id="rtl-escape", query="escape", function_name="def solve(x):",
                test_cases=[TestCase(input="x=[1.0, 2.0]", output="'escaped'"),
                            TestCase(input="x=[3.0, 5.0]", output="'escaped'")])


# -- 1. names without knowing them ---------------------------------------------------------
def test_dir_and_vars_of_zwc_list_no_function(env7, official_env):
    code = ("import zwc\ndef solve(x):\n    zwc.$mean(x)\n"
            "    return [dir(zwc), dir(zwc.rfx), sorted(zwc.__dict__), sorted(zwc.rfx.__dict__),"
            " sorted(type(zwc).__dict__), sorted(n for n in dir(zwc.$mean) if not n.startswith('__'))]")
    for env in (env7, official_env):
        answer = env.pool.run(_fill(code, env), "solve", ["x=[1.0]"])
        [value] = _values(answer)
        listed = {w for w in re.findall(r"\w+", repr(value))}
        names = {e.short for e in env.mapping}
        assert not listed & names, sorted(listed & names)
        assert "numpy" not in repr(value).lower()
        # vars() is not even a builtin at run time
        code_vars = _fill("import zwc\ndef solve(x):\n    zwc.$mean(x)\n    return sorted(vars(zwc))", env)
        assert env.check(_escape(env), code_vars).failure is BYPASS
        assert "NameError" in _values(env.pool.run(code_vars, "solve", ["x=[1.0]"]))[0]


GUESS_ROUTES = {  # route -> candidate body that asks the library for every name in NAMES, then uses one
    "hasattr over a list": "found = [n for n in NAMES if hasattr(zwc, n)]\nf = zwc.__getattr__(found[0])",
    "type(zwc).__getattr__ in try/except": (
        "found = []\nfor n in NAMES:\n    try:\n        found.append(type(zwc).__getattr__(zwc, n))\n"
        "    except AttributeError:\n        pass\nf = found[0]"),
    "functools.reduce over the module's __getattr__": (
        "import functools\nfound = []\nfor n in NAMES:\n    try:\n"
        "        found.append(functools.reduce(lambda m, a: m.__getattr__(a), [n], zwc))\n"
        "    except AttributeError:\n        pass\nf = found[0]"),
    "str.format attribute lookup": (
        "found = []\nfor n in NAMES:\n    try:\n        ('{0.' + n + '}').format(zwc)\n        found.append(n)\n"
        "    except AttributeError:\n        pass\nf = zwc.__getattr__(found[0])"),
    "literal names, each tried": (
        "found = []\nfor g in [GUESSED]:\n    try:\n        found.append(g())\n    except AttributeError:\n"
        "        pass\nf = found[0]"),
    "the rfx submodule": (
        "found = []\nfor n in ['norm', 'inv', 'det', 'solve', 'eig']:\n    try:\n"
        "        found.append(zwc.rfx.__getattr__(n))\n    except AttributeError:\n        pass\nf = zwc.$and_"),
}


@pytest.mark.parametrize("route", list(GUESS_ROUTES))
def test_guessing_many_names_is_a_bypass_attempt(route, and_pairs):
    for env, task in and_pairs:
        real = _names(env)["and_"]
        body = GUESS_ROUTES[route].replace("NAMES", repr(GUESSES + [real]))
        body = body.replace("GUESSED", ", ".join(f"lambda: zwc.{n}" for n in GUESSES + [real]))
        code = _fill(_solve(body, "f(x1, x2)"), env)
        verdict = env.check(task, code)
        assert not verdict.passed and verdict.failure in {BYPASS, UNKNOWN}, (route, verdict.failure, verdict.detail)
        for usage in ("standard", "strict"):
            runtime, answer = _runtime(env, task, code, usage)
            assert runtime.failure is BYPASS and runtime.reason == "guessing_names", \
                (route, env.mapping.origin, usage, runtime.failure, runtime.detail)


def test_getattr_routes_missing_at_run_time_never_pass(and_pairs):
    for env, task in and_pairs:
        for body in ("f = getattr(zwc, NAME)", "import operator\nf = operator.attrgetter(NAME)(zwc)",
                     "f = vars(zwc)[NAME]", "f = zwc.__dict__[NAME]"):
            body = body.replace("NAME", repr(_names(env)["and_"]))
            code = _solve(body, "f(x1, x2)")
            assert not env.check(task, code).passed
            runtime, _ = _runtime(env, task, code)
            assert not runtime.passed and runtime.failure in NOT_A_PASS, (body, runtime.failure, runtime.detail)


def test_honest_code_with_a_few_wrong_names_is_no_bypass(and_pairs):
    for env, task in and_pairs:
        wrong = "import zwc\ndef solve(x1, x2):\n    return zwc.bitwise_and(x1, x2)"  # the NumPy name
        assert env.check(task, wrong).failure is UNKNOWN
        runtime, _ = _runtime(env, task, wrong)
        assert runtime.failure is UNKNOWN, runtime.detail
        for n_wrong, expected in ((MAX_GUESSES, Failure.PASSED), (MAX_GUESSES + 1, BYPASS)):
            tries = "".join(f"    try:\n        return zwc.{g}(x1, x2)\n    except AttributeError:\n        pass\n"
                            for g in GUESSES[:n_wrong])
            code = _fill(f"import zwc\ndef solve(x1, x2):\n{tries}    return zwc.$and_(x1, x2)", env)
            assert env.check(task, code).failure is UNKNOWN  # the static check names the first
            for usage in ("standard", "strict"):
                runtime, _ = _runtime(env, task, code, usage)
                assert runtime.failure is expected, (n_wrong, usage, runtime.failure, runtime.detail)


def _message_of(probe_call: str) -> str:
    return (f"    try:\n        {probe_call}\n        return ''\n    except Exception as exc:\n"
            "        return str(exc)\n")


def test_error_messages_are_no_name_membership_oracle(env7, official_env):
    """An error message that echoes the candidate's text must not tell zwc names from other words.

    ``format(zwc.ZWCArray(...), spec)`` needs no zwc name at all and echoes ``spec``; had the
    scrubber rewritten zwc names in the echo and left other words alone, one call would tell
    which of many words are zwc names, with no unknown name logged (``guessing_names`` never
    fires). Every word must come back in the same message. Passes the static checks."""
    for env in (env7, official_env):
        words = [_names(env)[k] for k in ("and_", "sum", "cumsum")] + ["qoxabel", "zumivet", "hafocun"]
        assert not set(words[3:]) & {e.short for e in env.mapping}
        code = ("import zwc\ndef said(words):\n    probe = zwc.ZWCArray([1.0])\n"
                + _message_of("format(probe, words)")
                + f"def solve(x):\n    zwc.$mean(x)\n    return [said(w).replace(w, 'W') for w in {words!r}]")
        _, answer = _runtime(env, _escape(env), _fill(code, env))
        messages = _values(answer)[0]
        assert len(set(messages)) == 1 and messages[0], (env.mapping.origin, messages)
        assert answer["library"]["records"][-1]["unknown"] == []


def test_error_messages_are_no_identity_oracle(env7, official_env):
    """Passing 'np.<name>' as a dtype must not tell which NumPy function a zwc name is: no message
    may differ from one NumPy name to another or to a non-name (``test_redteam_messages.py``)."""
    told = []
    for env in (env7, official_env):
        code = ("import zwc\ndef said(x, spec):\n" + _message_of("zwc.$mean(x, dtype=spec)")
                + "def solve(x):\n    m = zwc.$mean(x)\n    plain = said(x, 'np.qoxab').replace('qoxab', 'N')\n"
                  "    who = [n for n in ['sum', 'mean', 'max', 'cumsum'] if said(x, 'np.' + n).replace(n, 'N') != plain]\n"
                  "    return 'escaped' if m and who else who")
        verdict = env.check(_escape(env), _fill(code, env))
        if verdict.passed:
            _, answer = _runtime(env, _escape(env), _fill(code.replace("'escaped' if m and who else who", "who"), env))
            told.append((env.mapping.origin, f"zwc.{_names(env)['mean']} is numpy.", _values(answer)[0]))
    assert not told, told


# -- 2. NumPy or the library's internals by reflection (run time only) ------------------------
FIND_NUMPY = f"""import zwc
def solve(x):
    zwc.$mean(x)
    found, looked = [], []
    def note(where, obj):
        looked.append(where)
        text = repr(obj) if not isinstance(obj, str) else obj
        for bad in ('numpy', 'ndarray', '_zwc_nd', '_zwc_target', '_runtime', '_GENUINE', 'zwc_runtime'):
            if bad in text:
                found.append(where + ': ' + bad)
    stub = {STUB}
    note('stub globals', sorted(stub))
    sys = {SYS}
    note('sys.modules', sorted(sys.modules))
    note('stub function globals', sorted(type(zwc.$mean).__call__.__globals__))
    note('function class dict', sorted(type(zwc.$mean).__dict__))
    note('array class dict', sorted(zwc.ZWCArray.__dict__))
    note('module class mro', [c.__module__ + '.' + c.__name__ for c in type(zwc).__mro__])
    note('subclasses of object', sorted(c.__module__ + '.' + c.__name__ for c in ().__class__.__mro__[1].__subclasses__()))
    import functools
    def shell():
        pass
    for target in (zwc.$mean, zwc.ZWCArray(x)):
        try:
            functools.update_wrapper(shell, target, assigned=[n for n in dir(target) if not n.startswith('__')], updated=())
            note('update_wrapper', shell.__dict__)
        except Exception as exc:
            note('update_wrapper error', str(exc))
    import copy
    for target in (zwc.$mean, zwc.ZWCArray(x), zwc):
        try:
            note('copy', copy.copy(target))
        except Exception as exc:
            note('copy error', str(exc))
    try:
        arr = zwc.ZWCArray(x)
        arr.__setstate__((None, {{'_zwc_nd': 1}}))
    except Exception as exc:
        note('setstate', str(exc))
    for bases in ((zwc.ZWCArray,), (type(zwc),), (type(zwc.$mean),)):
        try:
            note('type()', dir(type('X', bases, {{}})))
        except Exception as exc:
            note('type() error', str(exc))
    try:
        sys.modules['envs.zwc.sandbox.child']._GATE.armed = False  # see test_the_audit_gate_cannot_be_switched_off
        gc = sys.modules['gc']
        note('gc modules', sorted(o.__dict__.get('__name__', '?') for o in gc.get_objects() if type(o) is type(sys)))
        note('gc types', sorted({{type(o).__module__ for o in gc.get_objects()}}))
    except Exception as exc:
        note('gc error', type(exc).__name__ + str(exc))
    return [found, sorted(set(looked))]
"""


def test_nothing_in_the_candidate_process_holds_numpy(env7, official_env):
    for env in (env7, official_env):
        env.pool.run(_fill("import zwc\ndef solve(x):\n    return zwc.$mean(x)", env), "solve", ["x=[1.0]"])
        assert env.pool._all and all(server.numpy_loaded is False for server in env.pool._all)
        answer = env.pool.run(_fill(FIND_NUMPY, env), "solve", ["x=[1.0, 2.0]"])
        [[found, looked]] = _values(answer)
        assert found == [], found
        assert {"sys.modules", "gc modules", "gc types", "update_wrapper", "subclasses of object"} <= set(looked), looked
        assert answer["library"]["records"][-1] == {"event": "end", "unknown": []}


SEARCH_PROCESS = f"""
s = {SYS}
s.modules['envs.zwc.sandbox.child']._GATE.armed = False  # the audit gate off: gc and frames open
gc, found = s.modules['gc'], []
needle = 'q' * 12  # every expected value holds it; this program's text does not
bneedle = needle.encode()
def look(obj):
    if isinstance(obj, str) and needle in obj and obj != needle:
        found.append(obj[:80])
    elif isinstance(obj, (bytes, bytearray)) and bneedle in obj and obj != bneedle:
        found.append(repr(obj[:80]))
for obj in gc.get_objects():
    look(obj)
    if isinstance(obj, dict):
        for key, value in list(obj.items()):
            look(key)
            look(value)
    elif isinstance(obj, (list, tuple, set, frozenset)):
        for value in list(obj):
            look(value)
frame = s._getframe()
while frame is not None:
    for value in list(frame.f_locals.values()) + list(frame.f_globals.values()):
        look(value)
    frame = frame.f_back
for module in list(s.modules.values()):
    for value in list(module.__dict__.values()):
        look(value)
d = s.modules['envs.zwc.sandbox.wire'].__dict__
d['KEPT'] = d.get('KEPT', []) + found  # what earlier tests found, kept across tests
got = d['KEPT']
"""


def test_nothing_in_the_candidate_process_holds_an_expected_value(env7, official_env):
    """With every wall of its own process down (the audit gate off; gc, frames and every module
    reached by reflection; state kept from test to test in a real module), a candidate finds no
    expected value: they never enter its process or the library's. Reaching ``sys``, ``os`` or
    ``ctypes`` there is allowed by design: the process is the candidate's and holds nothing
    worth taking (the kernel walls keep it inside its directory, test_kernel_walls.py)."""
    for env in (env7, official_env):
        task = Task(task_id="rtl-secret", query="secret", function_name="def solve(x):",
                    test_cases=[TestCase(input=f"x=[{i}.0, 2.0]", output=repr(f"secret-{i}-{'q' * 12}"))
                                for i in range(3)])
        code = _fill("import zwc\ndef solve(x):\n    zwc.$mean(x)\n"
                     + "\n".join("    " + ln for ln in SEARCH_PROCESS.strip().splitlines())
                     + "\n    return got[0] if got else 'nothing found'", env)
        assert not env.check(task, code).passed
        runtime, answer = _runtime(env, task, code)
        assert runtime.failure is Failure.WRONG_ANSWER, (runtime.failure, runtime.detail)
        assert _values(answer) == ["nothing found"] * 3, _values(answer)


# -- 3. forging usage -----------------------------------------------------------------------
CHANNEL = f"c = {STUB}['_CLIENT'][0]\nw = {STUB}['wire']\n"
FORGERIES = {  # the candidate computes the answer itself and makes one genuine call: only the forgery decides
    "begin a later test early": "w.send(c.fd, {'op': 'begin', 'i': 7})\nw.receive(c.fd)",
    "an unknown request": "w.send(c.fd, {'op': 'count', 'n': '$and_'})\nw.receive(c.fd)",
    "a request that is not an object": "w.send(c.fd, ['call', '$and_'])\nw.receive(c.fd)",
    "a function named by a number": "w.send(c.fd, {'op': 'resolve', 'sub': '', 'n': 5})\nw.receive(c.fd)",
    "a submodule that does not exist": "w.send(c.fd, {'op': 'call', 'sub': 'numpy', 'n': 'mean', 'a': [[1.0]]})\n"
                                       "w.receive(c.fd)",
    "entering the test twice": "c.entering = True\nzwc.$and_(1, 1)",
    "an unreadable frame": "w._write(c.fd, b'\\x00\\x00\\x00\\x05{{{{{')",
    "a callback token that is not a number": (
        "w.send(c.fd, {'op': 'call', 'sub': '', 'n': '$vectorize', 'a': [{'$cb': 'x'}], 'k': {'$d': []}})\n"
        "w.receive(c.fd)"),
}


@pytest.mark.parametrize("name", list(FORGERIES))
def test_messages_outside_the_protocol_are_a_bypass_attempt(name, and_pairs):
    for env, task in and_pairs:
        body = CHANNEL + "zwc.$and_(x1, x2)\n" + FORGERIES[name]
        code = _fill(_solve(body, PLAIN), env)
        assert not env.check(task, code).passed
        for usage in ("standard", "strict"):
            runtime, answer = _runtime(env, task, code, usage)
            assert runtime.failure is BYPASS and runtime.reason == "library_protocol", \
                (name, usage, runtime.failure, runtime.detail)


def test_printed_records_and_a_printed_library_log_count_for_nothing(and_pairs):
    for env, task in and_pairs:
        name = _names(env)["and_"]
        code = ("import zwc, json\ndef solve(x1, x2):\n"
                f"    print(json.dumps({{'event': 'test', 'i': 0, 'calls': {{'{name}': 1}}, 'prints': {{'{name}': ['0']}}}}))\n"
                "    print(json.dumps({'event': 'end', 'unknown': []}))\n"
                f"    print(json.dumps({{'event': 'test', 'i': 0, 'ok': True, 'value': {PLAIN}}}))\n"
                f"    if len(x1) < 0:\n        zwc.{name}(x1, x2)\n    return {PLAIN}")
        for usage in ("standard", "strict"):
            verdict = env.check(task, code, usage=usage)
            assert verdict.failure is NO_CALL, (usage, verdict.failure, verdict.detail)


def test_records_for_tests_the_library_never_began_are_a_bypass_attempt(and_pairs):
    """From test 0 the candidate (audit gate off, frames reached) reads every test's input, writes
    right answers for all of them to the result pipe and ends its process."""
    body = (f"s = {SYS}\ns.modules['envs.zwc.sandbox.child']._GATE.armed = False\nzwc.$and_(x1, x2)\n"
            "try:\n    raise ValueError\nexcept ValueError as e:\n    f = e.__traceback__.tb_frame.f_back.f_locals\n"
            "out = f['out']\nfor i, text in enumerate(f['texts']):\n"
            "    a, b = [[int(v) for v in part.split('[')[1].split(']')[0].split(',')] for part in text.split('x2=')]\n"
            "    value = [p & q for p, q in zip(a, b)]\n"
            "    out.write(s.modules['json'].dumps({'event': 'test', 'i': i, 'ok': True, 'value': value, "
            "'printed': str(value), 'seconds': 0.0}) + '\\n')\n"
            "out.write('{\"event\": \"end\", \"stdout\": \"\", \"violations\": [], \"state_changes\": [], "
            "\"output_exceeded\": false}\\n')\nout.flush()\ns.modules['os']._exit(0)")
    for env, task in and_pairs:
        code = _fill(_solve(body, PLAIN), env)
        assert not env.check(task, code).passed
        for usage in ("standard", "strict"):
            runtime, answer = _runtime(env, task, code, usage)
            assert runtime.failure is BYPASS and runtime.reason == "forged_record", (usage, runtime.detail)


def test_the_client_told_a_name_exists_still_gets_unknown_api(and_pairs):
    for env, task in and_pairs:
        code = (f"import zwc\ndef solve(x1, x2):\n    {STUB}['_CLIENT'][0].resolved[('', 'bitwise_and')] = True\n"
                "    return zwc.bitwise_and(x1, x2)")
        runtime, _ = _runtime(env, task, code)
        assert runtime.failure is UNKNOWN, (runtime.failure, runtime.detail)


# -- 4. strict: the task's own functions, on the test's data ----------------------------------
def test_a_call_on_constant_data_fails_strict_and_ours_under_standard(and_pairs):
    for env, task in and_pairs:
        code = _fill(f"import zwc\ndef solve(x1, x2):\n    zwc.$and_([12], [10])\n    return {PLAIN}", env)
        standard = env.check(task, code)
        if task.reference:  # the answer must come from what a call on the test's data returned
            assert standard.failure is NO_CALL and "answer" in standard.detail, standard.detail
        else:  # an official record under standard: the official rule, a counting call in the run
            assert standard.passed, standard.detail
        strict = env.check(task, code, usage="strict")
        assert strict.failure is NO_CALL, strict.detail
        assert ("do not depend" if task.reference else "did not run on the test's data") in strict.detail, strict.detail
        assert env.check(task, _fill("import zwc\ndef solve(x1, x2):\n    return zwc.$and_(x1, x2)", env),
                         usage="strict").passed


CROSS_TEST_DUMMIES = {  # dummy data that differs from test to test without depending on the input
    "a counter kept in a real module across tests": (
        f"d = {SYS}.modules['envs.zwc.sandbox.wire'].__dict__\nd['N'] = d.get('N', 0) + 1\nk = d['N']"),
    "the library's handle counter, which no test resets": "k = zwc.ZWCArray([0])._h",
}


@pytest.mark.parametrize("name", list(CROSS_TEST_DUMMIES))
def test_strict_dummy_data_that_varies_by_test_still_fails(name, and_pairs):
    through = []
    for env, task in and_pairs:
        body = CROSS_TEST_DUMMIES[name] + "\nzwc.$and_([k], [k])"
        code = _fill(_solve(body, PLAIN), env)
        assert not env.check(task, code, usage="strict").passed
        runtime, answer = _runtime(env, task, code, "strict")
        if runtime.passed:
            through.append(task.task_id)
    assert not through, (name, "strict passed a call on dummy data for", through)


@pytest.fixture(scope="module")
def two_function_task(env7):
    cases = [("x1=[12, 10, 7], x2=[10, 6, 3]", 8 + 2 + 3), ("x1=[255], x2=[15]", 15), ("x1=[1, 2, 4], x2=[7, 7, 7]", 7)]
    return _ours(env7, "and-sum", "def solve(x1, x2):",
                 "import zwc\ndef solve(x1, x2):\n    return zwc.$sum(zwc.$and_(x1, x2))", cases,
                 ["bitwise_and", "sum"])


@pytest.mark.parametrize("skips, code", [
    ("sum", "import zwc\ndef solve(x1, x2):\n    return sum(int(v) for v in zwc.$and_(x1, x2))"),
    ("bitwise_and", f"import zwc\ndef solve(x1, x2):\n    return zwc.$sum({PLAIN})"),
])
def test_a_multi_function_task_skipping_one_function_fails_strict(skips, code, env7, two_function_task):
    code = _fill(code, env7)
    assert env7.check(two_function_task, code).passed  # standard: a counting call ran in every test
    strict = env7.check(two_function_task, code, usage="strict")
    assert strict.failure is NO_CALL and "did not run" in strict.detail, strict.detail
    assert strict.targets_used == {env7.mapping.to_zwc(f"numpy.{f}"): f != skips for f in ("bitwise_and", "sum")}
    runtime, _ = _runtime(env7, two_function_task, code, "strict")
    assert runtime.failure is NO_CALL
    honest = _fill("import zwc\ndef solve(x1, x2):\n    return zwc.$sum(zwc.$and_(x1, x2))", env7)
    assert env7.check(two_function_task, honest, usage="strict").passed


# -- 5. honest edge cases: early returns -------------------------------------------------------
@pytest.fixture(scope="module")
def early_task(env7):
    cases = [("x=[]", []), ("x=[1, 2, 3]", [1, 3, 6]), ("x=[4]", [4])]
    return _ours(env7, "cumsum-early", "def solve(x):",
                 "import zwc\ndef solve(x):\n    if not x:\n        return []\n    return zwc.$cumsum(x)", cases, ["cumsum"])


def test_an_early_return_where_the_reference_returned_early_passes(env7, early_task):
    honest = _fill("import zwc\ndef solve(x):\n    if len(x) == 0:\n        return []\n    return zwc.$cumsum(x)", env7)
    for usage in ("standard", "strict"):
        verdict = env7.check(early_task, honest, usage=usage)
        assert verdict.passed, (usage, verdict.detail)
        assert verdict.tests[0].zwc_calls == [] and verdict.tests[1].zwc_calls


@pytest.mark.parametrize("code", [
    "import zwc, itertools\ndef solve(x):\n    if len(x) < 2:\n        return list(x)\n    return zwc.$cumsum(x)",
    "import zwc, itertools\ndef solve(x):\n    if len(x) < 10:\n        return list(itertools.accumulate(x))\n"
    "    return zwc.$cumsum(x)",
])
def test_an_early_return_where_the_reference_called_zwc_fails(code, env7, early_task):
    code = _fill(code, env7)
    for usage in ("standard", "strict"):
        verdict = env7.check(early_task, code, usage=usage)
        assert verdict.failure is NO_CALL, (usage, verdict.failure, verdict.detail)
