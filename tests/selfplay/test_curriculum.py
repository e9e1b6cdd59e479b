"""The learnability reward (Absolute-Zero's proposer reward), round records, their log and plot."""

import pytest

from selfplay.curriculum import RoundLog, RoundRecord, learnability, mean_learnability, plot_rounds, solve_rate
from selfplay.validate import ValidationReport


@pytest.mark.parametrize("outcomes", [0.0, 1.0, [0, 0, 0, 0], [1, 1, 1], [True, True], [False]])
def test_learnability_is_zero_when_the_solver_always_or_never_passes(outcomes):
    assert learnability(outcomes) == 0.0


@pytest.mark.parametrize("outcomes, expected", [(0.25, 0.75), ([1, 0, 0, 0], 0.75), ([True, False], 0.5),
                                                ([1, 1, 1, 0], 0.25), ([0.2, 0.4], 0.7), (0.999, 0.001)])
def test_learnability_is_one_minus_the_mean_pass_rate_otherwise(outcomes, expected):
    assert learnability(outcomes) == pytest.approx(expected)


def test_learnability_refuses_what_is_not_a_pass_rate():
    with pytest.raises(ValueError, match="at least one"):
        learnability([])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        learnability([1.5])


def test_a_round_is_averaged_over_its_tasks():
    per_task = [[1, 1], [1, 0, 0, 0], [0, 0]]  # always, a quarter, never
    assert mean_learnability(per_task) == pytest.approx((0 + 0.75 + 0) / 3)
    assert solve_rate(per_task) == pytest.approx((1 + 0.25 + 0) / 3)
    assert mean_learnability([]) is None and solve_rate([]) is None


def test_round_records_log_resume_and_plot(tmp_path):
    report = ValidationReport(proposals=8, accepted=2)
    report.rejections.update({"no_entry": 4, "timeout": 2})
    record = RoundRecord.from_round(0, report, [[1, 0], [0, 0]], seconds=3.5, loss=0.9)
    assert record.acceptance_rate == 0.25 and record.rejections == {"no_entry": 4, "timeout": 2}
    assert record.solve_rate == 0.25 and record.learnability == 0.25 and record.extra == {"loss": 0.9}
    log = RoundLog.in_run(tmp_path)
    assert log.next_round == 0
    log.append(record)
    log.append(RoundRecord.from_round(1, ValidationReport(proposals=8, accepted=0)))
    resumed = RoundLog.in_run(tmp_path)
    assert resumed.records == log.records and resumed.finished == {0, 1} and resumed.next_round == 2
    assert resumed.records[1].solve_rate is None
    with pytest.raises(ValueError, match="round 1 is already recorded"):
        resumed.append(RoundRecord(round=1, proposals=1, accepted=0))
    png = plot_rounds(resumed.records, tmp_path / "plots" / "rounds.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000
