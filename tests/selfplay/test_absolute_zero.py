"""Absolute-Zero on the embedded model at the smallest size: one round of propose, validate, solve
and GRPO update changes the weights, writes its buffers, round log and plot, and a second evolve
on the same state finds the run finished and does not redo it.

smollm2 keeps no proposal and solves nothing, so every reward here is a format penalty or 0:
under the task-relative advantage a group of equal rewards has advantage 0 and nothing would
move. The test takes the binary estimator (advantage = reward), where the penalties push the
unreadable answers down, to show that the rounds' rewards reach the weights; TRR++ itself is
tested on its own (test_azr_tasks.py)."""

import json
from pathlib import Path

import pytest

from agents import Agent
from selfplay.absolute_zero import AbsoluteZeroLearner
from selfplay.azr_rollout import SLOTS
from tests.selfplay.test_sft_self import changed_weights

# one optimiser step per round (6 slot groups per step): no second pass for old log-probs
TINY = {"limit": 2, "rounds": 1, "num_generations": 2, "prompts_per_step": 6, "steps_per_generation": 1,
        "max_completion_length": 16, "docs_chars": 200, "references": 0, "seed_tasks": 1, "lora": True,
        "lora_dropout": 0.0, "save_steps": 100, "advantage": "binary"}


@pytest.mark.xdist_group("smollm2")
def test_one_round_changes_the_weights_and_is_not_redone(task_env, smollm2, tmp_path):
    state = tmp_path / "state"
    learner = AbsoluteZeroLearner(state_dir=str(state), **TINY)
    agent = Agent(model=smollm2, learner=learner, max_tokens=16)
    report = agent.evolve(task_env)

    [record] = [json.loads(line) for line in (state / "rounds.jsonl").read_text().splitlines()]
    assert record["round"] == 0 and record["proposals"] == 3 * 2  # 3 propose slots x 2 generations
    assert record["accepted"] + sum(record["rejections"].values()) == record["proposals"]
    assert set(record["extra"]["solver_pass_rate"]) == {"deduction", "abduction", "induction"}
    for kind in ("deduction", "abduction", "induction"):
        entries = [json.loads(line) for line in (state / f"buffer-{kind}.jsonl").read_text().splitlines()]
        assert entries and entries[0]["metadata"] == {"seed": True}  # seeded with a train task
    log = [json.loads(line) for line in (state / "train" / "rl_log.jsonl").read_text().splitlines()]
    rollout = next(e for e in log if e["event"] == "rollout")
    assert set(rollout["mean_reward"]) == set(SLOTS)
    assert any(e["event"] == "advantages" and e["kind"] == "binary" and e["min"] < 0 for e in log)
    assert (state / "rounds.png").stat().st_size > 0

    details = report.details
    assert details["rounds"] == 1 and details["steps"] == 1 and details["proposals"] == 6
    assert Path(agent.model.path) == learner.model_dir and agent.model is not smollm2
    assert any("q_proj" in k for k in changed_weights(learner.model_dir)), "the penalties must move the weights"

    again = Agent(model=smollm2, learner=AbsoluteZeroLearner(state_dir=str(state), **TINY), max_tokens=16)
    second = again.evolve(task_env)  # finished: the result is read back, nothing is trained or proposed
    assert second.details["steps"] == 1 and len((state / "rounds.jsonl").read_text().splitlines()) == 1
    with pytest.raises(RuntimeError, match="differs in"):
        Agent(model=smollm2, learner=AbsoluteZeroLearner(state_dir=str(state), **{**TINY, "seed_tasks": 2}),
              max_tokens=16).evolve(task_env)


def test_the_shell_refuses_max_steps_for_absolute_zero_before_loading_a_model(task_env, tmp_path):
    from typer.testing import CliRunner

    from benchmarks.cli import app

    result = CliRunner().invoke(app, ["selfplay", "--zwc", str(task_env.root), "--learner", "absolute-zero",
                                      "--out", str(tmp_path / "run"), "--set", "max_steps=3"])
    assert result.exit_code == 2 and "set rounds, not max_steps" in " ".join(result.output.split())
