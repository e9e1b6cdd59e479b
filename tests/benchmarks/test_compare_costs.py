"""A comparison reports what each learner cost and what it broke: the NumPy control before (the
no-learner row) and after each learner, paired per task with its interval, and the cost columns."""

import json

from benchmarks.compare import compare
from benchmarks.report import build_report
from benchmarks.report_runs import read_run


def test_every_row_has_its_numpy_control_and_the_report_its_costs(task_env, tiny_dir, tmp_path):
    """The tiny random model answers (ExpeL asks the agent's own model for insights; its train tasks
    are answered by the reference teacher, compare's default): mechanics, not skill."""
    results = compare(task_env, ["none", "expel"], str(tiny_dir), tmp_path / "cmp", limit=3, train_limit=2, n=1,
                      max_tokens=16)
    none, expel = results
    assert none.numpy is not None and none.numpy_retained is None  # the before row
    assert expel.numpy.mode == "numpy" and expel.numpy.n_tasks == 3
    diff = expel.numpy_retained
    assert diff.a == "expel" and diff.b == "none" and diff.n_tasks == 3 and diff.low <= diff.point <= diff.high
    summary = json.loads((tmp_path / "cmp" / "summary.json").read_text())
    assert summary["config"]["machine"] and "cores" in summary["config"]["machine"]
    assert summary["results"][1]["numpy_retained"]["n_tasks"] == 3 and "numpy_retained" not in summary["results"][0]
    costs = next(s for s in build_report([read_run(tmp_path / "cmp")]).sections if s.key == "costs")
    rows = {row[0]: dict(zip(costs.table.header, row, strict=True)) for row in costs.table.rows}
    assert rows["none"]["NumPy retained [95%]"] == "the before row" and rows["none"]["wall time"] == "—"
    assert rows["expel"]["NumPy retained [95%]"].endswith(("lost", "gained", "no measurable change"))
    assert rows["expel"]["machine"] == summary["config"]["machine"] and rows["expel"]["wall time"].endswith(" s")
    assert rows["expel"]["optimiser steps"] == "—"  # a memory learner trains no weights
    assert (tmp_path / "cmp" / "expel" / "numpy.jsonl").is_file()


def test_the_numpy_control_can_be_left_out(task_env, tmp_path):
    [none] = compare(task_env, ["none"], "reference", tmp_path / "cmp", limit=2, numpy_control=False)
    assert none.numpy is None and not (tmp_path / "cmp" / "none" / "numpy.jsonl").exists()


def test_a_rerun_skips_the_rows_finished_with_the_same_settings(task_env, tmp_path):
    """A comparison longer than one sitting is run in several: a finished row is read back from its
    row.json, not run again; a row whose settings changed runs again."""
    [first] = compare(task_env, ["none"], "reference", tmp_path / "cmp", limit=2)
    closed = tmp_path / "cmp" / "none" / "closed.jsonl"
    written = closed.stat().st_mtime_ns
    [again] = compare(task_env, ["none"], "reference", tmp_path / "cmp", limit=2)
    assert closed.stat().st_mtime_ns == written  # not evaluated again
    assert again.evaluation == first.evaluation and again.numpy == first.numpy
    assert json.loads((tmp_path / "cmp" / "summary.json").read_text())["results"][0]["evaluation"]["n_tasks"] == 2
    [changed] = compare(task_env, ["none"], "reference", tmp_path / "cmp", limit=3)
    assert changed.evaluation.n_tasks == 3 and closed.stat().st_mtime_ns != written


def test_a_copied_build_resumes_the_rows_of_the_original(task_env, tmp_path):
    """The row key names the build by content, so the next sitting may rebuild or copy it elsewhere."""
    import shutil

    from envs.zwc import ZWCEnv

    [first] = compare(task_env, ["none"], "reference", tmp_path / "cmp", limit=2)
    copy = shutil.copytree(task_env.root, tmp_path / "elsewhere", ignore=shutil.ignore_patterns("validate", "runs"))
    written = (tmp_path / "cmp" / "none" / "closed.jsonl").stat().st_mtime_ns
    with ZWCEnv.load(copy, workers=1) as env:
        [again] = compare(env, ["none"], "reference", tmp_path / "cmp", limit=2)
    assert again.evaluation == first.evaluation
    assert (tmp_path / "cmp" / "none" / "closed.jsonl").stat().st_mtime_ns == written
