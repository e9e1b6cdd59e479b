"""SFT self-play that keeps playing: every round's accepted proposals are fine-tuning targets of
the proposer role beside the solutions, so the model trained in round r is still taught to answer
the proposal prompt in round r + 1 (before, it was trained on solutions only and answered the next
proposal prompt with a solution: 0 of 8 kept after round 0). The teacher proposes and the reference
solves (a tiny model keeps neither format; what is under test is what the learner trains on)."""

import json

import pytest

from agents import Agent
from learners.training.sft_data import read_samples
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


def test_at_the_default_budgets_both_roles_train_and_the_round_says_it_dropped_nothing(task_env, tiny_dir, tmp_path):
    """A proposer example carries the docs and a worked example (~2,000 tokens at the default
    docs_chars), a solution a few hundred: under one budget, max_length 1024, every proposer example
    was dropped at the defaults. With docs_chars, max_length and proposer_max_length left at their
    defaults, the proposer role trains beside the solver's, and the round records that nothing was
    too long. (Teacher proposals and reference solutions: what is under test is the budgets.)"""
    from learners.training.sft_train import SFTSettings
    from selfplay.sft_self import SFTSelfConfig

    state = tmp_path / "state"
    sizes = {"limit": 2, "rounds": 1, "proposals": 2, "samples": 1, "proposer_model": "reference",
             "gather_model": "reference", "max_steps": 1, "batch_size": 1, "save_steps": 100, "logging_steps": 1,
             "lora": True, "warmup_ratio": 0.0, "learning_rate": 1e-2}  # sizes only: no budget among them
    learner = ClosedSFTSelfLearner(state_dir=str(state), **sizes)
    defaults = SFTSelfConfig()
    assert (learner.config.docs_chars, learner.config.train.max_length, learner.config.proposer_max_length) == \
        (defaults.docs_chars, SFTSettings().max_length, defaults.proposer_max_length)
    Agent(model=str(tiny_dir), learner=learner, max_tokens=32).evolve(task_env)

    [record] = [json.loads(line) for line in (state / "rounds.jsonl").read_text().splitlines()]
    extra = record["extra"]
    assert extra["trained"] and extra["proposer_targets"] == record["accepted"] == 2 and extra["kept"] == 2
    assert (extra["too_long_dropped"], extra["dropped_solutions"], extra["dropped_proposer_targets"]) == (0, 0, 0)
    assert extra["train_samples"] == extra["kept"] + extra["proposer_targets"]  # both roles trained
    data = read_samples(state / "round-0" / "sft_data.jsonl")
    proposer = [s for s in data if s.role == "proposer"]
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_dir)
    lengths = [len(tok(tok.apply_chat_template([*s.prompt_open, {"role": "assistant", "content": s.completion}],
                                                tokenize=False), add_special_tokens=False)["input_ids"])
               for s in proposer]
    assert len(proposer) == 2 and min(lengths) > SFTSettings().max_length  # what one budget for both dropped
    assert changed_weights(learner.model_dir, tiny_dir)
