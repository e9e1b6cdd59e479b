"""sebench sft-compare end to end at the smallest size, on the tiny random-initialised model (the
table's mechanics, not its numbers): three rows, a verdict, plots, written by sebench report's code.
The tiny model passes no train task open-book, so these rows learn from a teacher (the reference
solutions) and are named after it; left to gather its own rollouts, as by default, it stops."""

import json

import pytest

from benchmarks.report import build_report
from benchmarks.report_runs import read_run
from benchmarks.sft_compare import sft_compare, verdict
from learners.parametric import SFTLearnerError

TEACHER_ROWS = ["base", "closed-sft (teacher: reference)", "open-sft (teacher: reference)"]


def test_sft_compare_writes_the_table_the_verdict_and_the_plot(task_env, tiny_dir, tmp_path):
    rows = sft_compare(task_env, tmp_path, model=str(tiny_dir), train_limit=3, steps=1, n=1, limit=2, probe_limit=4,
                       max_tokens=48, settings={"batch_size": 1, "docs_chars": 400, "max_length": 512},
                       gather_model="reference")
    assert [r.name for r in rows] == ["base", "closed-sft", "open-sft"]  # the keys the findings use
    assert [r.label for r in rows] == TEACHER_ROWS and rows[1].teacher == "reference"
    assert rows[0].train == {} and all(r.train["steps"] == 1 for r in rows[1:])
    assert rows[1].train["variant"] == "closed" and rows[2].train["variant"] == "open"
    assert all(r.probe.n == 4 and r.evaluation.n_tasks <= 2 for r in rows)
    section = next(s for s in build_report([read_run(tmp_path)]).sections if s.key == "sft")
    assert [r[0] for r in section.table.rows] == TEACHER_ROWS  # a teacher-trained row says so in every table
    assert section.findings == [verdict(rows)] and "Open-Book Paradox" in verdict(rows)
    report = (tmp_path / "report.md").read_text()
    assert "## SFT: Open-SFT vs Closed-SFT" in report and all(line in report for line in verdict(rows).splitlines())
    assert (tmp_path / "pass_at_k_sft.png").stat().st_size > 1000 and (tmp_path / "recall_vs_budget.png").is_file()
    assert "<table" in (tmp_path / "report.html").read_text()
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["config"]["trained_functions"] and len(summary["rows"]) == 3
    assert [row["teacher"] for row in summary["rows"]] == [None, "reference", "reference"]
    sections = {s.key: s for s in build_report([read_run(tmp_path)]).sections}
    claims = [row[1] for row in sections["findings"].table.rows]
    assert "closed-sft (teacher: reference) minus open-sft (teacher: reference) > 0" in claims
    assert {row[1] for row in sections["taxonomy"].table.rows} == set(TEACHER_ROWS)


def test_by_default_each_row_gathers_its_own_rollouts_and_a_model_that_passes_none_stops(task_env, tiny_dir,
                                                                                           tmp_path):
    with pytest.raises(SFTLearnerError, match=r"passed none of 2 open-book attempts.*gather_model='reference'"):
        sft_compare(task_env, tmp_path, model=str(tiny_dir), learners=("closed-sft",), train_limit=2, steps=1, n=1,
                    limit=1, probe_limit=2, max_tokens=16, settings={"batch_size": 1, "docs_chars": 300})
    gathered = [json.loads(line) for line in (tmp_path / "closed-sft" / "learner" / "trajectories.jsonl")
                .read_text().splitlines()]
    assert gathered == []  # rejection sampling kept nothing from the model's own noise
    assert json.loads((tmp_path / "closed-sft" / "run.json").read_text())["settings"]["gather_model"] is None
