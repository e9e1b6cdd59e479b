"""ExpeL end to end on a 20-task slice: reference gathering, embedded-model insights."""

import pytest

from agents import Agent
from agents.prompts import first_prompt
from learners import ExpelLearner, make


@pytest.mark.xdist_group("smollm2")
def test_evolve_leaves_rules_and_examples_that_reach_the_prompt(task_env, smollm2, tmp_path):
    learner = make("expel", limit=20, gather_model="reference", state_dir=str(tmp_path / "state"))
    agent = Agent(model=smollm2, learner=learner, max_tokens=160)
    report = agent.evolve(task_env)
    assert report.details["gathered_with"] == "reference" and report.details["tasks"] == 20
    assert report.details["stored_trajectories"] == report.details["solved"] == 20
    assert len(learner.rules) >= 1, learner.log
    assert "warnings" not in report.details  # it learned something: nothing to warn about
    task = task_env.tasks("single_test")[0]
    obs = task_env.observe(task, phase="test", mode="closed")
    prompt = first_prompt(obs, learner.context(obs))[1]["content"]
    assert learner.rules[0] in prompt and "Solved tasks similar to this one" in prompt and "```python" in prompt
    assert task.task_id not in prompt
    evaluation = agent.evaluate(task_env, split="single_test", n=1, mode="closed", limit=2,
                                out=str(tmp_path / "closed.jsonl"))
    assert evaluation.n_samples == 2
    again = ExpelLearner(state_dir=str(tmp_path / "state"))
    again.load(tmp_path / "state")
    assert again.rules == learner.rules and len(again.store) == 20
    assert again.context(obs) == learner.context(obs)
