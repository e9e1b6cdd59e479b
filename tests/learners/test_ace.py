"""ACE end to end on a small train slice: reference generator, embedded-model reflector/curator."""

import pytest

from agents import Agent
from agents.prompts import first_prompt
from learners import AceLearner, make


@pytest.mark.xdist_group("smollm2")
def test_evolve_builds_a_playbook_with_counters_that_reaches_the_prompt(task_env, smollm2, tmp_path):
    learner = make("ace", limit=5, validation=1, max_retries=0, max_tokens=96, gather_model="reference",
                   state_dir=str(tmp_path / "state"))
    agent = Agent(model=smollm2, learner=learner, max_tokens=96)
    report = agent.evolve(task_env)
    assert report.details["updates"] == 4 and report.details["generated_with"] == "reference"
    assert len(learner.playbook.bullets) >= 1
    bullet = learner.playbook.bullets[0]
    assert bullet.helpful >= 0 and bullet.harmful >= 0 and f"[{bullet.id}] (helpful" in learner.playbook.render()
    task = task_env.tasks("single_test")[0]
    obs = task_env.observe(task, phase="test", mode="closed")
    assert bullet.content in first_prompt(obs, learner.context(obs))[1]["content"]
    assert agent.evaluate(task_env, split="single_test", n=1, limit=1, out=str(tmp_path / "c.jsonl")).n_samples == 1
    again = AceLearner()
    again.load(tmp_path / "state")
    assert again.playbook == learner.playbook


@pytest.mark.xdist_group("smollm2")
def test_online_mode_learns_from_test_episodes(task_env, smollm2):
    learner = AceLearner(online=True, max_tokens=64)
    learner.bind(smollm2)
    task = task_env.tasks("single_test")[1]
    trajectory = Agent(model="reference", learner=learner).run_episode(task_env, task, phase="test", mode="closed")
    assert trajectory.passed and learner.online_updates == 1 and learner.updates == 1
