"""A grader fault is no signal: the completion the grader failed on gets no reward (None), stays out
of its group's baseline and gets advantage 0, under every advantage; the faults are counted in the
RL log and the run's result. A real fault (the fork-server pool dying mid-batch) cannot be provoked
on cue, so the env here is the real one with one verdict of each batch rewritten to the fault the
pool reports (``sandbox_error``); the trainer, the other verdicts and trl's baseline are real."""

import json

import pytest

from envs.zwc.grading.failure import Failure
from learners.rl import rollout_prompts
from learners.training.rl_reward import SandboxReward
from learners.training.rl_train import build_trainer
from tests.learners.test_rl import LR, _scripted, _settings, _task_finder


class FaultAt:
    """The real env, with the verdict at ``index`` of every batch turned into a grader fault."""

    def __init__(self, env, index: int):
        self.env, self.index = env, index

    def __getattr__(self, name):
        return getattr(self.env, name)

    def check_many(self, jobs):
        verdicts = self.env.check_many(jobs)
        verdicts[self.index] = verdicts[self.index].model_copy(update={"passed": False,
                                                                       "failure": Failure.SANDBOX_ERROR})
        return verdicts


def test_a_grader_fault_is_no_reward(task_env):
    tasks = task_env.tasks("train")[:2]
    reward = SandboxReward(FaultAt(task_env, 1), {t.task_id: t for t in tasks})
    texts = [f"```python\n{tasks[0].reference}```", f"```python\n{tasks[1].reference}```"]
    rewards = reward(None, texts, [t.task_id for t in tasks])
    assert rewards == [1.0, None]
    assert reward.passed == 1 and reward.faults == 1 and reward.history == [0.5]


@pytest.mark.parametrize("advantage", ["group", "binary"])
def test_a_faulted_completion_has_advantage_zero_and_no_part_in_the_baseline(task_env, tiny_dir, tmp_path, advantage):
    """Groups of four scripted rollouts (pass, fail, pass, fail); the second rollout of the batch (a failing one) is a
    grader fault. Its advantage is 0, and its group's baseline is the mean of the three others."""
    tasks = task_env.tasks("train")[:2]
    trainer = build_trainer(rollout_prompts(task_env, tasks, 300), tiny_dir, "closed", tmp_path,
                            _settings(advantage=advantage, num_generations=4, learning_rate=LR, scale_rewards="none"),
                            task_env)
    trainer.verdict_reward.env = FaultAt(task_env, 1)
    _scripted(trainer, _task_finder(tasks))
    trainer.train()
    rewards, advantages = trainer.last_batch["rewards"], trainer.last_batch["advantages"]
    assert rewards[:4] == [1.0, None, 1.0, 0.0] and rewards[4:] == [1.0, 0.0, 1.0, 0.0]
    assert advantages[1] == 0.0
    if advantage == "group":  # baseline 2/3 over the three graded rollouts, not 2/4 with the fault as a failure
        assert advantages[0] == pytest.approx(1 / 3, abs=1e-4) and advantages[3] == pytest.approx(-2 / 3, abs=1e-4)
        assert advantages[4] == pytest.approx(0.5, abs=1e-4)
    else:
        assert advantages[:4] == [1.0, 0.0, 1.0, 0.0]
    log = [json.loads(line) for line in (tmp_path / "rl_log.jsonl").read_text().splitlines()]
    [rollout] = [e for e in log if e["event"] == "rollout"]
    assert rollout["grader_faults"] == 1 and rollout["failures"]["sandbox_error"] == 1 and rollout["passed"] == 4
