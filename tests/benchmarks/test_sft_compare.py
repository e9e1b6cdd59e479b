"""sebench sft-compare end to end at the smallest size, on the tiny random-initialised model (the
table's mechanics, not its numbers): three rows, a verdict, plots, written by sebench report's code."""

import json

from benchmarks.report import build_report
from benchmarks.report_runs import read_run
from benchmarks.sft_compare import sft_compare, verdict


def test_sft_compare_writes_the_table_the_verdict_and_the_plot(task_env, tiny_dir, tmp_path):
    rows = sft_compare(task_env, tmp_path, model=str(tiny_dir), train_limit=3, steps=1, n=1, limit=2, probe_limit=4,
                       max_tokens=48, settings={"batch_size": 1, "docs_chars": 400, "max_length": 512})
    assert [r.name for r in rows] == ["base", "closed-sft", "open-sft"]
    assert rows[0].train == {} and all(r.train["steps"] == 1 for r in rows[1:])
    assert rows[1].train["variant"] == "closed" and rows[2].train["variant"] == "open"
    assert all(r.probe.n == 4 and r.evaluation.n_tasks <= 2 for r in rows)
    section = next(s for s in build_report([read_run(tmp_path)]).sections if s.key == "sft")
    assert [r[0] for r in section.table.rows] == ["base", "closed-sft", "open-sft"]
    assert section.findings == [verdict(rows)] and "Open-Book Paradox" in verdict(rows)
    report = (tmp_path / "report.md").read_text()
    assert "## SFT: Open-SFT vs Closed-SFT" in report and all(line in report for line in verdict(rows).splitlines())
    assert (tmp_path / "pass_at_k_sft.png").stat().st_size > 1000 and (tmp_path / "recall_vs_budget.png").is_file()
    assert "<table" in (tmp_path / "report.html").read_text()
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["config"]["trained_functions"] and len(summary["rows"]) == 3
