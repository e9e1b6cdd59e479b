"""sebench rl-compare end to end at the smallest size (the tiny random-initialised SmolLM2): rows, the RL Gap
verdict, a plot."""

import json

import pytest

from benchmarks.report import build_report
from benchmarks.report_runs import read_run
from benchmarks.rl_compare import parse_learner, rl_compare, verdict

TINY = {"prompts_per_step": 1, "num_generations": 2, "steps_per_generation": 1, "max_completion_length": 8,
        "docs_chars": 200}


def test_rl_compare_writes_the_table_the_verdict_and_the_plot(task_env, tiny_dir, tmp_path):
    rows = rl_compare(task_env, tmp_path, model=str(tiny_dir), learners=("closed-rl", "closed-rl@sft-like"),
                      train_limit=2, steps=1, n=1, limit=2, probe_limit=3, max_tokens=24, settings=TINY)
    assert [r.name for r in rows] == ["base", "closed-rl", "closed-rl@sft-like"]
    assert rows[0].train == {} and all(r.train["steps"] == 1 for r in rows[1:])
    assert rows[1].train["preset"] == "grpo" and rows[2].train["preset"] == "sft-like"
    assert rows[2].train["changed_settings"]["advantage"] == "binary"
    assert all(len(r.train["reward_per_rollout"]) == 1 for r in rows[1:])
    section = next(s for s in build_report([read_run(tmp_path)]).sections if s.key == "rl")
    assert [r[0] for r in section.table.rows] == ["base", "closed-rl", "closed-rl@sft-like"]
    assert section.findings == [verdict(rows)] and "RL Gap" in verdict(rows)
    report = (tmp_path / "report.md").read_text()
    assert "## RL ablations (the RL Gap)" in report and all(line in report for line in verdict(rows).splitlines())
    assert (tmp_path / "curves_rl.png").stat().st_size > 1000 and (tmp_path / "pass_at_k_rl.png").is_file()
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["config"]["steps"] == 1 and len(summary["rows"]) == 3
    assert (tmp_path / "closed-rl_sft-like" / "model" / "config.json").is_file()


def test_learner_names_and_presets_are_checked_before_anything_runs():
    assert parse_learner("closed-rl@sft-like+clip") == ("closed-rl", "sft-like+clip")
    assert parse_learner("closed-sft") == ("closed-sft", None)
    with pytest.raises(ValueError, match="presets are Closed-RL's"):
        parse_learner("open-rl@sft-like")
    with pytest.raises(ValueError, match="presets are Closed-RL's"):
        parse_learner("closed-rl@fast")
    with pytest.raises(ValueError, match="rl-compare runs"):
        parse_learner("expel")
