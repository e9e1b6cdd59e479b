"""Runs: what ``evolve_run`` writes, ``load_run`` reads back, for memory learners and the baseline
(parametric runs: tests/learners/test_sft.py evaluates one with ``eval --run``)."""

import json
import subprocess
import sys

import pytest

from benchmarks.runs import RunError, evolve_run, load_run, read_run


def test_a_baseline_run_records_itself_and_evaluates_from_the_shell(task_env, tmp_path):
    run = tmp_path / "run"
    agent, report = evolve_run(task_env, "none", run, model="reference", settings={"limit": 2})
    record = read_run(run)
    assert record["learner"] == "none" and record["model"] == "reference" and record["settings"] == {"limit": 2}
    assert record["zwc"] == task_env.mapping.origin and not record["parametric"]
    assert json.loads((run / "report.json").read_text())["learner"] == "none"
    assert json.loads((run / "learner" / "learner.json").read_text())["learner"] == "none"
    again = load_run(run)
    assert again.learner.name == "none" and again.name == "reference"

    done = subprocess.run([sys.executable, "-m", "benchmarks.cli", "eval", "--zwc", str(task_env.root), "--run",
                           str(run), "--limit", "3", "--n", "1"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads((run / "results-single_test-closed.summary.json").read_text())
    assert summary["pass_at"]["1"] == 1.0 and summary["config"]["learner"] == "none"


def test_a_memory_learner_run_loads_with_the_same_context(task_env, tiny_dir, tmp_path):
    run = tmp_path / "run"  # the reference gathers; the tiny model's noisy insights hold no rule: the context is examples
    agent, report = evolve_run(task_env, "expel", run, model=str(tiny_dir), max_tokens=96,
                               settings={"limit": 3, "gather_model": "reference", "max_reflections": 0,
                                         "insight_max_tokens": 48})  # 256 s on smollm2 with the default length
    assert report.details["tasks"] == 3
    loaded = load_run(run)
    assert loaded.learner.name == "expel" and loaded.name == str(tiny_dir) and loaded.max_tokens == 96
    for task in task_env.tasks("single_test")[:3]:
        obs = task_env.observe(task, phase="test", mode="closed")
        assert loaded.learner.context(obs) == agent.learner.context(obs) != ""


def test_a_directory_that_is_not_a_run_is_named(task_env, tmp_path):
    with pytest.raises(RunError, match="not a run directory, no run.json"):
        load_run(tmp_path)
    (tmp_path / "run.json").write_text('{"learner": "none"}')
    with pytest.raises(RunError, match="field 'model' is missing"):
        read_run(tmp_path)
    (tmp_path / "run.json").write_text('{"learner": "closed-sft", "model": "smollm2-135m"}')
    (tmp_path / "learner").mkdir()
    from learners.base import save_state

    save_state(tmp_path / "learner", "closed-sft", {"variant": "closed", "base_model": "", "model_dir": "",
                                                     "config": {"train": {}}, "collect": {}, "train": {}})
    with pytest.raises(RunError, match="without a trained model"):
        load_run(tmp_path)
    done = subprocess.run([sys.executable, "-m", "benchmarks.cli", "eval", "--zwc", str(task_env.root), "--run",
                           str(tmp_path / "nothing")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "not a run directory" in " ".join(done.stderr.split())
