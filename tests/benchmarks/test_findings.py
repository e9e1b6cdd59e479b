"""Verdicts from intervals: the words each rule gives, the sentence the commands print, self-play
without a best-of-two choice, rows saved before per-task records were kept, and the report's
findings section built from evaluations (several training runs of a row included)."""

import json
from pathlib import Path

import pytest

from agents import EvalReport
from agents.probe import ProbeReport
from benchmarks import rl_compare, selfplay_compare, sft_compare
from benchmarks.findings import BOUND, CONTRADICTED, INCONCLUSIVE, OPEN_BOOK, REPRODUCED, RL_GAP, Finding, decide, judge
from benchmarks.paired_stats import RowTasks, paired_difference
from benchmarks.report import load_anchors
from benchmarks.report_findings import findings_table, judged
from benchmarks.report_runs import Evaluation
from benchmarks.sft_compare import SFTRow

CONFIG = {"mapping_sha256": "build-0", "zwc": "seed:0"}


def tasks(name: str, passes: list[int], samples: int = 2) -> RowTasks:
    return RowTasks(name, [{("build-0", f"t{i}"): (samples, c) for i, c in enumerate(passes)}])


def sft_row(name: str, passes: list[int] | None, samples: int = 2) -> SFTRow:
    """A comparison row as ``measure`` makes it: its evaluation's pass@1 agrees with ``passes``."""
    counted = passes or [0]
    evaluation = EvalReport(split="single_test", mode="closed", model="m", n_tasks=len(counted),
                            n_samples=samples * len(counted), pass_at={1: sum(counted) / samples / len(counted)},
                            failures={}, config=dict(CONFIG))
    probe = ProbeReport(model="m", zwc="seed:0", n=4, recall=0.0, recall_with_aliases=0.0, valid_name_rate=0.0,
                        numpy_rate=0.0, seconds=0.0)
    per_task = None if passes is None else {f"t{i}": [samples, c] for i, c in enumerate(passes)}
    return SFTRow(name, probe, 0.0, evaluation, {}, per_task)


def test_greater_finding_is_reproduced_contradicted_or_inconclusive_by_the_interval():
    finding = Finding("a", "b")
    high, none = [2] * 30 + [0] * 10, [0] * 40
    assert decide(finding, paired_difference(tasks("a", high), tasks("b", none))).word == REPRODUCED
    assert decide(finding, paired_difference(tasks("a", none), tasks("b", high))).word == CONTRADICTED
    same = decide(finding, paired_difference(tasks("a", high), tasks("b", high)))
    assert same.word == INCONCLUSIVE and same.reason == "the interval holds 0"
    # three tasks, all A's: the bootstrap says [1, 1], the exact sign test p = 0.25 keeps it inconclusive
    few = decide(finding, paired_difference(tasks("a", [2, 2, 2]), tasks("b", [0, 0, 0])))
    assert few.diff.low == few.diff.high == 1.0 and few.word == INCONCLUSIVE and "sign test" in few.reason
    assert decide(finding, None).word == INCONCLUSIVE and decide(finding, None).reason == "no per-task records"


def test_bounded_finding_needs_the_interval_within_the_margin_and_enough_tasks_to_see_it():
    bound = Finding("closed-rl", "base", "bounded", BOUND)
    at_zero = decide(bound, paired_difference(tasks("closed-rl", [0] * 80), tasks("base", [0] * 80)))
    assert at_zero.word == REPRODUCED and at_zero.diff.mde <= BOUND  # 80 tasks detect 10 points from 0
    small = decide(bound, paired_difference(tasks("closed-rl", [0] * 8), tasks("base", [0] * 8)))
    assert small.word == INCONCLUSIVE and "cannot detect a difference of 10.0 points" in small.reason
    gained = decide(bound, paired_difference(tasks("closed-rl", [2] * 30 + [0] * 10), tasks("base", [0] * 40)))
    assert gained.word == CONTRADICTED  # GRPO gained far more than 10 points: the bound does not hold
    wide = decide(bound, paired_difference(tasks("closed-rl", [2, 0, 0, 0] * 20), tasks("base", [0, 0, 0, 2] * 20)))
    assert wide.word == INCONCLUSIVE and "beyond" in wide.reason


def test_a_finding_of_two_parts_is_reproduced_only_when_both_are():
    like, grpo = [2] * 30 + [0] * 50, [0] * 80
    rows = {"base": tasks("base", [0] * 80), "closed-rl": tasks("closed-rl", grpo),
            "closed-rl@sft-like": tasks("closed-rl@sft-like", like)}
    assert judge(RL_GAP, rows).word == REPRODUCED
    rows["closed-rl"] = tasks("closed-rl", like)  # GRPO learned as much: the gap and the bound both fail
    verdict = judge(RL_GAP, rows)
    assert [v.word for v in verdict.parts] == [INCONCLUSIVE, CONTRADICTED] and verdict.word == CONTRADICTED
    assert judge(RL_GAP, {"base": rows["base"], "closed-rl": rows["closed-rl"]}) is None  # a row never ran


def test_sft_verdict_states_the_finding_word_interval_sizes_and_detectable_effect():
    rows = [sft_row("base", [0] * 40), sft_row("closed-sft", [2] * 30 + [0] * 10), sft_row("open-sft", [0] * 40)]
    text = sft_compare.verdict(rows)
    first = text.splitlines()[0]
    assert first.startswith("Open-Book Paradox (pre-specified: closed-sft minus open-sft > 0, closed-book pass@1): "
                            "reproduced. Paired difference +75.0 points, 95% interval [+")
    assert "40 paired tasks (1 ZWC build), 2 samples per task, training seeds 1 (closed-sft) and 1 (open-sft)" in first
    assert "the smallest difference these tasks detect: 19.1 points" in first
    lines = text.splitlines()[1:]  # each learner minus the base model
    assert [line.split(" (")[0] for line in lines] == ["closed-sft above base", "open-sft above base"]
    assert "open-sft above base" in lines[1] and ": inconclusive." in lines[1]
    assert sft_compare.verdict([sft_row("base", [0] * 4)]) == ""  # nothing to compare


def test_rl_verdict_is_the_two_part_gap():
    rows = [sft_row("base", [0] * 80), sft_row("closed-rl", [0] * 80),
            sft_row("closed-rl@sft-like", [2] * 30 + [0] * 50)]
    text = rl_compare.verdict(rows)
    assert text.startswith("RL Gap: reproduced (reproduced when every part is")
    assert "Part 2: pre-specified closed-rl minus base within ±10 points (closed-book pass@1): reproduced" in text


def test_selfplay_verdict_tests_closed_sft_self_and_never_the_better_of_two():
    """Open-SFT-self passes 30 of 40 tasks, Closed-SFT-self none: choosing the better SFT self-play row
    would call the finding reproduced; the pre-specified row makes it contradicted-or-inconclusive."""
    rows = [sft_row("base", [0] * 40), sft_row("closed-sft-self", [0] * 40),
            sft_row("open-sft-self", [2] * 30 + [0] * 10), sft_row("absolute-zero", [0] * 40)]
    first = selfplay_compare.verdict(rows).splitlines()[0]
    assert first.startswith("SFT self-play above RL self-play (pre-specified: closed-sft-self minus absolute-zero "
                            "> 0, closed-book pass@1): inconclusive")
    assert "open-sft-self" not in first and "Paired difference +0.0 points" in first
    # the same rows with the two SFT self-play rows swapped: now the pre-specified row is the good one
    swapped = [rows[0], sft_row("closed-sft-self", [2] * 30 + [0] * 10), sft_row("open-sft-self", [0] * 40), rows[3]]
    assert ": reproduced. Paired difference +75.0" in selfplay_compare.verdict(swapped).splitlines()[0]
    # without Closed-SFT-self the finding is not decided at all (no stand-in)
    text = selfplay_compare.verdict([rows[0], rows[2], rows[3]])
    assert "SFT self-play above RL self-play" not in text and "open-sft-self above base" in text


def test_rows_saved_before_per_task_records_load_and_say_so(tmp_path):
    rows = [sft_row("base", [0] * 8), sft_row("closed-sft-self", [2] * 8), sft_row("absolute-zero", [0] * 8)]
    saved = selfplay_compare.row_to_dict(rows[1])
    assert saved["per_task"] == {f"t{i}": [2, 2] for i in range(8)}
    assert selfplay_compare.row_from_dict(json.loads(json.dumps(saved))).per_task == rows[1].per_task
    old = {k: v for k, v in saved.items() if k != "per_task"}  # a row.json of an earlier sebench
    folder = tmp_path / "closed-sft-self"
    folder.mkdir()
    (folder / selfplay_compare.ROW_FILE).write_text(json.dumps({"config": {"n": 2}, "row": old}))

    def retrain():
        raise AssertionError("a saved row must be read back, not measured again")

    loaded = selfplay_compare._row("closed-sft-self", folder, {"n": 2}, retrain)
    assert loaded.per_task is None and loaded.evaluation.pass_at == {1: 1.0}
    text = selfplay_compare.verdict([rows[0], loaded, rows[2]])
    assert text.splitlines()[0].endswith("> 0, closed-book pass@1): inconclusive: no per-task records.")
    assert sft_compare.verdict([sft_row("closed-sft", None), sft_row("open-sft", [0] * 8)]).startswith(
        "Open-Book Paradox (pre-specified: closed-sft minus open-sft > 0, closed-book pass@1): inconclusive: "
        "no per-task records.")


def evaluation(name: str, passes: list[int], run: str, role: str = "sft", per_task_only: bool = False,
               samples: int = 2) -> Evaluation:
    records = [{"task_id": f"t{i}", "sample": s, "passed": s < c} for i, c in enumerate(passes)
               for s in range(samples)]
    summary = {"split": "single_test", "mode": "closed", "model": "m", "pass_at": {}, "failures": {},
               "config": {**CONFIG, "code_version": "abc123"}}
    extra = {"per_task": {f"t{i}": [samples, c] for i, c in enumerate(passes)}} if per_task_only else {}
    return Evaluation(name, role, summary, [] if per_task_only else records,
                      None if per_task_only else Path(run) / name / "closed.jsonl", Path(run), extra=extra)


def test_report_findings_pair_rows_across_runs_as_training_seeds():
    evaluations = [evaluation("base", [0] * 40, "r1"), evaluation("base", [0] * 40, "r2"),
                   evaluation("open-sft", [0] * 40, "r1"), evaluation("open-sft", [0] * 40, "r2"),
                   evaluation("closed-sft", [2] * 30 + [0] * 10, "r1"),
                   evaluation("closed-sft", [2] * 30 + [0] * 10, "r2", per_task_only=True)]  # summary counts only
    found = judged(evaluations)
    assert found[0][1].group == OPEN_BOOK and found[0][1].word == REPRODUCED
    diff = found[0][1].parts[0].diff
    assert (diff.seeds_a, diff.seeds_b, diff.n_tasks) == (2, 2, 40)
    rows, texts = findings_table(evaluations, load_anchors())
    assert rows[0][:6] == ["Open-Book Paradox", "closed-sft minus open-sft > 0", "reproduced",
                           rows[0][3], "+39.6 (39.6 − 0.0)", "40"]
    assert rows[0][7] == "2, 2" and rows[0][-1] == "abc123" and texts[0].startswith("Open-Book Paradox")
    base_rows = [r for r in rows if r[0].endswith("above base")]
    assert [r[0] for r in base_rows] == ["open-sft above base", "closed-sft above base"]
    assert base_rows[0][7] == "2, 1"  # the untrained base: its evaluations are replicates, not training seeds


def test_report_findings_without_records_are_inconclusive_and_a_missing_row_is_no_finding():
    bare = evaluation("open-sft", [0] * 8, "r1", per_task_only=True)
    bare.extra = {}  # an old summary row, results file gone
    evaluations = [evaluation("closed-sft", [2] * 8, "r1"), bare]
    [(label, verdict)] = judged(evaluations)
    assert label == "" and verdict.word == INCONCLUSIVE and verdict.parts[0].reason == "no per-task records"
    assert judged([evaluation("closed-sft", [2] * 8, "r1")]) == []


@pytest.mark.parametrize("role,untrained", [("learner", "none"), ("selfplay", "base")])
def test_each_learner_is_compared_with_the_untrained_row_of_its_own_kind(role, untrained):
    evaluations = [evaluation(untrained, [0] * 40, "r1", role), evaluation("expel", [2] * 30 + [0] * 10, "r1", role),
                   evaluation("base" if untrained == "none" else "none", [2] * 40, "r1", "rl")]  # another kind
    [(_, verdict)] = judged(evaluations)
    assert verdict.group.title == f"expel above {untrained}" and verdict.word == REPRODUCED
