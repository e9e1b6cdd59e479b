"""ZWCEnv: official tasks graded the official way, the protocol, tasks I/O, parallel checks."""

import json

import pytest

from envs.zwc import Failure, ProtocolError, Task, TaskFormatError, TestCase, ZWCEnvError, read_tasks, write_tasks
from envs.zwc.grading.verdict import Verdict

OFFICIAL_SOLUTIONS = [  # the three official samples' example_output, written in official ZWC
    "import zwc\n\ndef solve(x1, x2):\n    return zwc.lenelo(x1, x2)\n",
    "import zwc\n\ndef solve(velocity_data):\n    result = []\n    for station_data in velocity_data:\n"
    "        if len(station_data) == 0:\n            result.append([])\n        else:\n"
    "            result.append(zwc.junez(zwc.yitaf(station_data)))\n    return result\n",
    "import zwc\n\ndef compress_data_chunks(data_chunks, encoding_shifts):\n"
    "    return zwc.julepak(data_chunks, encoding_shifts)\n",
]


def test_official_samples_pass_under_official_grading(official_env, sample_tasks_path):
    tasks = read_tasks(sample_tasks_path)
    verdicts = official_env.check_many(list(zip(tasks, OFFICIAL_SOLUTIONS, strict=True)))
    for task, verdict in zip(tasks, verdicts, strict=True):
        assert task.is_official
        assert verdict.passed, (task.task_id, verdict.detail)
        assert len(verdict.tests) == len(task.test_cases) >= 8


def test_official_grading_uses_right_exe_result_not_outputs(official_env, sample_tasks_path):
    arcsinh = read_tasks(sample_tasks_path)[1]
    assert arcsinh.expected_outputs()[0] != arcsinh.test_cases[0].output  # they disagree in the data
    constant = "import zwc\ndef solve(velocity_data):\n    return zwc.junez(zwc.yitaf([[0.0]]))"
    verdict = official_env.check(arcsinh, constant)
    assert verdict.failure is Failure.WRONG_ANSWER and 0 < verdict.n_passed < len(verdict.tests)


def test_numpy_control_mode(official_env, sample_tasks_path):
    task = read_tasks(sample_tasks_path)[0]
    numpy_code = "import numpy as np\ndef solve(x1, x2):\n    return np.bitwise_and(x1, x2).tolist()"
    assert official_env.check(task, numpy_code, mode="numpy").passed
    assert official_env.check(task, numpy_code).failure is Failure.NUMPY_USED


def test_failure_classes_at_run_time(official_env, sample_tasks_path):
    task = read_tasks(sample_tasks_path)[0]
    cases = {
        "import zwc\ndef solve(x1, x2):\n    return zwc.lenelo(x1, x2, x1, x2, x1, x2)": Failure.WRONG_ARGUMENTS,
        "import zwc\ndef solve(x1, x2):\n    return zwc.lenelo(x1, x2)[100]": Failure.WRONG_ARGUMENTS,
        "import zwc\ndef solve(x1, x2):\n    return zwc.lenelo(x1, x2) + {}['k']": Failure.RUNTIME_ERROR,
        "import zwc\ndef solve(x1, x2):\n    return zwc.lenelo(x1, x1)": Failure.WRONG_ANSWER,
        "import zwc\ndef solve(x1, x2):\n    return zwc.lenelo(x1, x2).tolist()": Failure.RUNTIME_ERROR,
        "import zwc\nraise ValueError('at import')\ndef solve(x1, x2):\n    return zwc.lenelo(x1, x2)":
            Failure.RUNTIME_ERROR,
    }
    for code, failure in cases.items():
        verdict = official_env.check(task, code)
        assert verdict.failure is failure, (code, verdict.failure, verdict.detail)
        assert "numpy" not in verdict.detail.lower()


def test_reset_and_step_follow_the_protocol(official_env, sample_tasks_path):
    task = read_tasks(sample_tasks_path)[0]
    obs = official_env.reset(task, phase="train", mode="open")
    assert "zwc.lenelo" in obs.docs and obs.entry_point == "solve" and obs.example_input
    assert official_env.docs.lookup("lenelo").name == "zwc.lenelo"
    assert official_env.step(OFFICIAL_SOLUTIONS[0]).passed
    obs = official_env.reset(task, phase="test", mode="closed")
    assert obs.docs == "" and "lenelo" not in obs.model_dump_json()
    with pytest.raises(ProtocolError):
        official_env.docs  # noqa: B018
    with pytest.raises(ProtocolError):
        official_env.docs_for(task)
    with pytest.raises(ProtocolError):
        official_env.reset(task, phase="test", mode="open")
    with pytest.raises(ValueError, match="unknown mode"):
        official_env.reset(task, phase="train", mode="book")
    assert isinstance(official_env.step(OFFICIAL_SOLUTIONS[0]), Verdict)
    official_env.reset(task, phase="train")


def test_check_many_keeps_order_and_mixes_static_and_sandbox(official_env, sample_tasks_path):
    task = read_tasks(sample_tasks_path)[0]
    wrong = OFFICIAL_SOLUTIONS[0].replace("lenelo(x1, x2)", "lenelo(x1, x1)")
    codes = [OFFICIAL_SOLUTIONS[0], "import numpy", "", wrong] * 5
    verdicts = official_env.check_many([(task, c) for c in codes])
    assert [v.failure for v in verdicts[:4]] == [Failure.PASSED, Failure.NUMPY_USED, Failure.NO_CODE,
                                                 Failure.WRONG_ANSWER]
    assert [v.failure for v in verdicts] == [v.failure for v in verdicts[:4]] * 5


def test_task_records_round_trip_and_bad_records_name_line_and_field(tmp_path, sample_tasks_path):
    tasks = read_tasks(sample_tasks_path)
    write_tasks(tasks, tmp_path / "t.jsonl")
    assert read_tasks(tmp_path / "t.jsonl") == tasks
    ours = Task(task_id="t1", split="train", kind="unary", query="q", function_name="def f(x):",
                test_cases=[TestCase(input="x=[1]", output="[1]")], reference="import zwc")
    write_tasks([ours], tmp_path / "ours.jsonl")
    assert read_tasks(tmp_path / "ours.jsonl") == [ours]
    good = json.loads((tmp_path / "ours.jsonl").read_text())
    bad_cases = {
        "function_name": dict(good, function_name="solve(x)"),
        "test_cases": dict(good, test_cases=[]),
        "query": {k: v for k, v in good.items() if k != "query"},
    }
    for field, record in bad_cases.items():
        path = tmp_path / f"bad-{field}.jsonl"
        path.write_text(json.dumps(good) + "\n" + json.dumps(record) + "\n")
        with pytest.raises(TaskFormatError, match=rf"bad-{field}.jsonl:2.*{field}"):
            read_tasks(path)
    (tmp_path / "notjson.jsonl").write_text("{oops\n")
    with pytest.raises(TaskFormatError, match="notjson.jsonl:1"):
        read_tasks(tmp_path / "notjson.jsonl")
    mismatch = dict(good, right_exe_result="1#2")
    (tmp_path / "mismatch.jsonl").write_text(json.dumps(mismatch) + "\n")
    with pytest.raises(TaskFormatError, match="right_exe_result"):
        read_tasks(tmp_path / "mismatch.jsonl")


def test_missing_things_give_clear_errors(env7, tmp_path):
    with pytest.raises(ZWCEnvError, match="tasks build"):
        env7.tasks("train")
    with pytest.raises(ValueError, match="unknown split"):
        env7.tasks("validation")
    with pytest.raises(ZWCEnvError, match="not a ZWC build"):
        from envs.zwc import ZWCEnv

        ZWCEnv.load(tmp_path)
