"""SFT self-play that keeps playing: every round's accepted proposals are fine-tuning targets of
the proposer role beside the solutions, so the model trained in round r is still taught to answer
the proposal prompt in round r + 1 (before, it was trained on solutions only and answered the next
proposal prompt with a solution: 0 of 8 kept after round 0). The teacher proposes and the reference
solves (a tiny model keeps neither format; what is under test is what the learner trains on)."""

import json

import pytest

from agents import Agent
from learners.sft_data import read_samples
from sebench.errors import SettingError
from selfplay.sft_self import ClosedSFTSelfLearner, SFTSelfConfig
from tests.selfplay.test_sft_self import TINY, changed_weights


def test_three_rounds_train_the_proposer_role_in_every_round(task_env, tiny_dir, tmp_path):
    state = tmp_path / "state"
    learner = ClosedSFTSelfLearner(state_dir=str(state), **{**TINY, "rounds": 3})
    Agent(model=str(tiny_dir), learner=learner, max_tokens=32).evolve(task_env)
    records = [json.loads(line) for line in (state / "rounds.jsonl").read_text().splitlines()]
    assert [r["round"] for r in records] == [0, 1, 2]
    models = []
    for record in records:
        n, extra = record["round"], record["extra"]
        assert record["accepted"] > 0 and extra["trained"], record
        assert extra["proposer_targets"] == record["accepted"] and extra["kept"] > 0
        data = read_samples(state / f"round-{n}" / "sft_data.jsonl")
        proposer = [s for s in data if s.sample == -1]
        assert len(proposer) == extra["proposer_targets"] and len(data) == extra["kept"] + len(proposer)
        for sample in proposer:  # the proposal prompt, answered by the accepted proposal itself
            assert sample.prompt_open == sample.prompt_closed
            assert "Documentation of" in sample.prompt_closed[-1]["content"]
            assert "def solve(" in sample.completion and "INPUTS" in sample.completion
        models.append(extra["model"])
    # each round trained (a model of its own, on the one the round before made; earlier ones are pruned)
    assert len(set(models)) == 3 and all(r["extra"]["steps"] >= 1 for r in records)
    assert changed_weights(learner.model_dir, tiny_dir)


def test_the_proposer_role_setting_is_checked():
    assert SFTSelfConfig().proposer_role == "train" and SFTSelfConfig(proposer_role="frozen").proposer_role == "frozen"
    with pytest.raises(SettingError, match="proposer_role must be one of train, frozen"):
        SFTSelfConfig(proposer_role="both")
