"""ZWCEnv.run: untrusted code run in the sandbox, ungraded, each input's value or error."""

from envs.zwc import Limits, RunResult


def test_a_passing_program_returns_each_inputs_value(env7):
    mean = env7.mapping.to_zwc("numpy.mean")
    code = f"import zwc\ndef solve(x):\n    return ({mean}(x), len(x))\n"
    run = env7.run(code, "solve", ["x=[1, 2, 3]", "x=[4.0, 6.0]"])
    assert isinstance(run, RunResult)
    assert run.finished and run.load is not None and run.load.ok and not run.server_error
    assert run.ran == 2 and all(t.ok for t in run.tests)
    assert run.values == [(2.0, 3), (5.0, 2)]  # decoded: tuples are tuples again
    assert not any(t.opaque for t in run.tests)


def test_a_program_that_raises_reports_the_error(env7):
    code = "import zwc\ndef solve(x):\n    if x > 1:\n        raise ValueError('too big')\n    return x\n"
    run = env7.run(code, "solve", ["x=1", "x=2"])
    first, second = run.tests
    assert first.ok and first.value == 1
    assert not second.ok and "too big" in second.error and second.category == "runtime"
    assert run.values == [1, None]


def test_the_code_runs_in_the_sandbox_not_in_this_process(env7):
    walled = env7.run("import os\ndef solve(x):\n    return os.getpid()\n", "solve", ["x=0"])
    assert walled.load is not None and not walled.load.ok  # refused by the sandbox's walls, not run here
    assert walled.tests == [None] and walled.values == [None]
    endless = env7.run("def solve(x):\n    while True:\n        x += 1\n", "solve", ["x=0"], numpy_mode=True,
                       limits=Limits(cpu_s=1, wall_s=2.0))
    assert endless.killed == "timeout" and endless.ran == 0  # killed there; this process goes on


def test_run_many_keeps_the_order_of_its_jobs(env7):
    jobs = [(f"def solve(x):\n    return x + {k}\n", "solve", ["x=1"]) for k in range(4)]
    assert [r.values for r in env7.run_many(jobs, numpy_mode=True)] == [[1], [2], [3], [4]]
