"""sebench selfplay-compare at the smallest size: rows, rounds, a learner that ends without a model,
and a rerun that reads finished rows back instead of re-evaluating them."""

import json

import pytest

from benchmarks.report import build_report
from benchmarks.report_runs import read_run
from benchmarks.report_training import ROUND_HEADER
from benchmarks.selfplay_compare import learner_settings, selfplay_compare, verdict

SFT_TINY = {"closed-sft-self.proposer_model": "reference", "closed-sft-self.gather_model": "reference",
            "docs_chars": 300, "samples": 1, "batch_size": 2, "max_length": 512, "save_steps": 100,
            "lora": True, "warmup_ratio": 0.0,
            # the tiny random-initialised model proposes for open-sft-self (noise: it keeps nothing),
            # and that row ends without a model
            "open-sft-self.proposal_max_tokens": 64}


def test_selfplay_compare_measures_rows_keeps_rounds_and_reads_finished_rows_back(task_env, tiny_dir, tmp_path):
    kwargs = dict(model=str(tiny_dir), learners=("closed-sft-self", "open-sft-self"), train_limit=2, rounds=1,
                  proposals=2, sft_steps=1, n=1, limit=2, probe_limit=3, max_tokens=24, settings=SFT_TINY)
    rows = selfplay_compare(task_env, tmp_path, **kwargs)
    assert [r.name for r in rows] == ["base", "closed-sft-self"]
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert "none of 1 rounds kept a passing solution" in summary["config"]["failed"]["open-sft-self"]
    assert set(summary["rounds"]) == {"closed-sft-self", "open-sft-self"}  # the failed run's rounds are kept too
    assert summary["rounds"]["closed-sft-self"][0]["accepted"] == 2
    sections = {s.key: s for s in build_report([read_run(tmp_path)]).sections}
    # proposed and solved by the teacher (the tiny model keeps neither format): named after it
    assert [r[0] for r in sections["selfplay"].table.rows] == ["base", "closed-sft-self (teacher: reference)"]
    per_round = sections["rounds"].table.rows
    assert [line[0] for line in per_round] == ["closed-sft-self", "open-sft-self"]
    assert all(len(line) == len(ROUND_HEADER) for line in per_round)
    assert [f[:32] for f in sections["rounds"].findings] == ["open-sft-self: no model to measur"[:32]]
    report = (tmp_path / "report.md").read_text()
    assert "## Self-play rounds" in report and "open-sft-self: no model to measure" in report
    assert (tmp_path / "curves_rounds.png").stat().st_size > 1000

    results = tmp_path / "closed-sft-self" / "closed.jsonl"
    before = results.stat().st_mtime_ns
    again = selfplay_compare(task_env, tmp_path, **{**kwargs, "learners": ("closed-sft-self",)})
    assert results.stat().st_mtime_ns == before  # read back from row.json: not trained, not evaluated again
    assert [r.evaluation.pass_at for r in again] == [r.evaluation.pass_at for r in rows]


def test_settings_go_to_the_self_play_learners_by_name_and_unknown_learners_are_refused():
    extra = {"samples": 3, "absolute-zero.num_generations": 2, "closed-sft-self.proposer_model": "reference"}
    assert learner_settings("absolute-zero", 8, 8, 2, 8, "reference", extra) == {
        "limit": 8, "rounds": 2, "samples": 3, "num_generations": 2}
    assert learner_settings("closed-sft-self", 8, 4, 2, 6, "reference", extra) == {
        "limit": 8, "rounds": 2, "proposals": 6, "max_steps": 4, "samples": 3, "proposer_model": "reference"}
    assert learner_settings("closed-sft", 8, 4, 2, 6, "reference", extra) == {
        "limit": 8, "gather_model": "reference", "max_steps": 4}
    with pytest.raises(ValueError, match="selfplay-compare runs"):
        learner_settings("closed-rl", 8, 4, 2, 6, None, {})
    assert verdict([]) == ""
