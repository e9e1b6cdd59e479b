"""Absolute-Zero on the tiny random-initialised SmolLM2 (``tiny_dir``) at the smallest size: one
round of propose, validate, solve and GRPO update changes the weights, writes its buffers, round
log and plot, and a second evolve on the same state finds the run finished and does not redo it.

The proposals are scripted (``ScriptedProposals``): in each group of a propose slot, the first
completion is a new program (a train task re-proposed with one change, which the validator keeps)
and the second is prose (a format penalty); what is under test is the round, not the proposer's
skill. The solver's answers are the tiny model's own (noise: 0 or a format penalty). The test
takes the binary estimator (advantage = reward), where the penalties push the unreadable
answers down, to show that the rounds' rewards reach the weights; TRR++ itself is tested on its
own (test_azr_tasks.py)."""

import json
import re
from pathlib import Path

import pytest

from agents import Agent
from learners.training import rl_trainer as rl_trainer_module
from selfplay.absolute_zero import AbsoluteZeroLearner
from selfplay.azr_rollout import SLOTS
from selfplay.teacher import TeacherProposer
from tests.selfplay.proposals import new_program
from tests.selfplay.test_sft_self import assert_lora_moved

# one optimiser step per round (6 slot groups per step): no second pass for old log-probs
TINY = {"limit": 2, "rounds": 1, "num_generations": 2, "prompts_per_step": 6, "steps_per_generation": 1,
        "max_completion_length": 16, "docs_chars": 200, "references": 0, "seed_tasks": 1, "lora": True,
        "lora_dropout": 0.0, "save_steps": 100, "advantage": "binary", "learning_rate": 1e-2}
ASKED = re.compile(r"Now write one new task that calls (\S+?), in exactly the format")


def scripted_proposals(monkeypatch, env, tasks) -> list[str]:
    """The trainer answers each proposer prompt from the script (module doc); every other prompt
    (the solver's) goes to the model. Returns the list the scripted answers are appended to."""
    teacher = TeacherProposer(env, tasks)
    answered = []

    class ScriptedProposals(rl_trainer_module.VerdictGRPOTrainer):
        def _generate_single_turn(self, prompt_ids, images, multimodal_fields, *args, **kwargs):
            texts = self.processing_class.batch_decode(prompt_ids)
            asked = [ASKED.search(text) for text in texts]
            if not any(asked):
                return super()._generate_single_turn(prompt_ids, images, multimodal_fields, *args, **kwargs)
            assert all(asked), "a batch is either the proposer's or the solver's"
            out = []
            for i, match in enumerate(asked):
                [(_, rendered)] = teacher.by_function[match.group(1)][:1]
                text = new_program(rendered) if i % 2 == 0 else "I would write a task about this function."
                answered.append(text)
                out.append(self.processing_class(text, add_special_tokens=False)["input_ids"]
                           + [self.processing_class.eos_token_id])
            return out, None

    monkeypatch.setattr(rl_trainer_module, "VerdictGRPOTrainer", ScriptedProposals)
    return answered


def test_one_round_changes_the_weights_and_is_not_redone(task_env, tiny, tiny_dir, tmp_path, monkeypatch):
    answered = scripted_proposals(monkeypatch, task_env, task_env.tasks("train")[:TINY["limit"]])
    state = tmp_path / "state"
    learner = AbsoluteZeroLearner(state_dir=str(state), **TINY)
    agent = Agent(model=tiny, learner=learner, max_tokens=16)
    report = agent.evolve(task_env)

    assert len(answered) == 3 * 2  # every proposal was the script's
    [record] = [json.loads(line) for line in (state / "rounds.jsonl").read_text().splitlines()]
    assert record["round"] == 0 and record["proposals"] == 3 * 2  # 3 propose slots x 2 generations
    assert record["accepted"] == 3 and record["rejections"] == {"no_code_block": 3}
    assert set(record["extra"]["solver_pass_rate"]) == {"deduction", "abduction", "induction"}
    for kind in ("deduction", "abduction", "induction"):
        entries = [json.loads(line) for line in (state / f"buffer-{kind}.jsonl").read_text().splitlines()]
        assert entries[0]["metadata"] == {"seed": True}  # seeded with a train task
        assert [e["round"] for e in entries[1:]] == [0] and "learnability" in entries[1]["metadata"]  # a kept one
        assert "SCALE = 1" in entries[1]["task"]["reference"]
    log = [json.loads(line) for line in (state / "train" / "rl_log.jsonl").read_text().splitlines()]
    rollout = next(e for e in log if e["event"] == "rollout")
    assert set(rollout["mean_reward"]) == set(SLOTS)
    assert all(rollout["mean_reward"][f"propose:{k}"] < 0 for k in ("deduction", "abduction", "induction"))
    assert any(e["event"] == "advantages" and e["kind"] == "binary" and e["min"] < 0 for e in log)
    assert (state / "rounds.png").stat().st_size > 0

    details = report.details
    assert details["rounds"] == 1 and details["steps"] == 1 and details["proposals"] == 6 and details["accepted"] == 3
    assert Path(agent.model.path) == learner.model_dir and agent.model is not tiny
    assert_lora_moved(learner.model_dir, tiny_dir)  # the rounds' rewards reached every adapted weight

    again = Agent(model=tiny, learner=AbsoluteZeroLearner(state_dir=str(state), **TINY), max_tokens=16)
    second = again.evolve(task_env)  # finished: the result is read back, nothing is trained or proposed
    assert second.details["steps"] == 1 and len((state / "rounds.jsonl").read_text().splitlines()) == 1
    assert len(answered) == 6
    with pytest.raises(RuntimeError, match="differs in"):
        Agent(model=tiny, learner=AbsoluteZeroLearner(state_dir=str(state), **{**TINY, "seed_tasks": 2}),
              max_tokens=16).evolve(task_env)


def test_the_shell_refuses_max_steps_for_absolute_zero_before_loading_a_model(task_env, tmp_path):
    from typer.testing import CliRunner

    from benchmarks.cli import app

    result = CliRunner().invoke(app, ["selfplay", "--zwc", str(task_env.root), "--learner", "absolute-zero",
                                      "--out", str(tmp_path / "run"), "--set", "max_steps=3"])
    assert result.exit_code == 2 and "set rounds, not max_steps" in " ".join(result.output.split())
