"""The one training harness (``learners.training.training_run``) that SFT, RL and Absolute-Zero share: the
finished-run check, resume, and the result file. The trainers' own runs through it are tested in
test_sft.py, test_rl.py and tests/selfplay/test_absolute_zero.py; here, its rules one by one."""

from __future__ import annotations

import json

import pytest

from learners.training.training_run import RESULT_FILE, FinishedRunMismatch, TrainingRun
from sebench.errors import DataError

RUN = {"variant": "closed", "base": "/models/base", "data": "0123abcd", "settings": {"max_steps": 4}}


def finished(tmp_path, run: dict = RUN, model_dir=None) -> TrainingRun:
    """A run that finished: its result on disk and a model directory."""
    model = model_dir or tmp_path / "model"
    model.mkdir(parents=True, exist_ok=True)
    (model / "config.json").write_text("{}")
    training = TrainingRun(tmp_path / "train", model, run)
    training.out_dir.mkdir(parents=True, exist_ok=True)
    training.finish({"steps": 4})
    return training


def test_a_run_that_finished_with_the_same_record_is_returned_not_redone(tmp_path):
    finished(tmp_path)
    again = TrainingRun(tmp_path / "train", tmp_path / "model", dict(RUN))
    assert again.finished() == {"steps": 4, "model_dir": str(tmp_path / "model"), "run": RUN}


def test_a_finished_run_of_another_record_is_refused_naming_what_differs(tmp_path):
    finished(tmp_path)
    other = TrainingRun(tmp_path / "train", tmp_path / "model", {**RUN, "settings": {"max_steps": 8}}, "closed SFT")
    with pytest.raises(FinishedRunMismatch, match="holds a finished closed SFT that differs in settings"):
        other.finished()


def test_a_finished_run_whose_model_went_missing_is_redone_and_one_written_elsewhere_refused(tmp_path):
    training = finished(tmp_path)
    with pytest.raises(FinishedRunMismatch, match="whose model is at .*model, not at .*elsewhere"):
        TrainingRun(tmp_path / "train", tmp_path / "elsewhere", RUN).finished()
    (training.model_dir / "config.json").unlink()
    assert TrainingRun(tmp_path / "train", tmp_path / "model", RUN).finished() is None


def test_checkpoints_of_another_record_are_not_resumed_and_the_newest_complete_one_is(tmp_path):
    first = TrainingRun(tmp_path, tmp_path / "model", RUN)
    assert first.start() is None and json.loads((tmp_path / "run.json").read_text()) == RUN
    for step, complete in ((2, True), (4, True), (6, False)):  # checkpoint-6 was cut short by a kill
        (tmp_path / f"checkpoint-{step}").mkdir()
        if complete:
            (tmp_path / f"checkpoint-{step}" / "trainer_state.json").write_text("{}")
    again = TrainingRun(tmp_path, tmp_path / "model", RUN)
    assert again.start() == tmp_path / "checkpoint-4" and again.resume_step == 4
    with pytest.raises(DataError, match="holds checkpoints of a run with other settings or data"):
        TrainingRun(tmp_path, tmp_path / "model", {**RUN, "data": "ffff0000"}).start()


def test_the_result_is_written_before_the_checkpoints_go_and_kept_ones_stay(tmp_path):
    training = TrainingRun(tmp_path, tmp_path / "model", RUN)
    (tmp_path / "checkpoint-2").mkdir()
    training.finish({"steps": 2}, keep_checkpoints=True)
    assert (tmp_path / "checkpoint-2").is_dir() and (tmp_path / RESULT_FILE).is_file()
    training.finish({"steps": 2}, keep_checkpoints=False)
    assert not (tmp_path / "checkpoint-2").exists()
    assert json.loads((tmp_path / RESULT_FILE).read_text())["run"] == RUN


def test_a_moved_run_is_still_finished_and_a_run_that_must_not_be_redone_is_refused(tmp_path):
    finished(tmp_path / "before")
    (tmp_path / "before").rename(tmp_path / "after")  # the recorded model_dir no longer exists
    moved = TrainingRun(tmp_path / "after" / "train", tmp_path / "after" / "model", RUN)
    assert moved.finished()["steps"] == 4
    (tmp_path / "after" / "model" / "config.json").unlink()
    with pytest.raises(FinishedRunMismatch, match="whose model is gone"):
        TrainingRun(tmp_path / "after" / "train", tmp_path / "after" / "model", RUN, redo_missing_model=False).finished()


def test_a_result_and_checkpoints_written_before_the_record_had_its_keys_are_judged_by_legacy(tmp_path):
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "config.json").write_text("{}")
    (tmp_path / RESULT_FILE).write_text(json.dumps({"variant": "closed", "settings": {"max_steps": 4}, "steps": 4}))
    (tmp_path / "run.json").write_text(json.dumps({"variant": "closed", "data": "/old/path.jsonl",
                                                   "settings": {"max_steps": 4}}))
    (tmp_path / "checkpoint-2").mkdir()
    (tmp_path / "checkpoint-2" / "trainer_state.json").write_text("{}")

    def same(old):
        return old.get("variant") == "closed" and old.get("settings") == {"max_steps": 4}

    assert TrainingRun(tmp_path, tmp_path / "model", RUN, legacy=same).finished()["steps"] == 4
    assert TrainingRun(tmp_path, tmp_path / "model", RUN, legacy=same).start() == tmp_path / "checkpoint-2"
    with pytest.raises(FinishedRunMismatch):
        TrainingRun(tmp_path, tmp_path / "model", RUN).finished()  # no legacy rule: an older record is another run
