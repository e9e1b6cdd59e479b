"""ACE end to end on a small train slice: reference generator, embedded-model reflector/curator."""

import pytest

from agents import Agent
from agents.prompts import first_prompt
from learners import AceLearner, make


def test_evolve_builds_a_playbook_with_counters_that_reaches_the_prompt(task_env, tmp_path):
    learner = make("ace", limit=5, validation=1, max_retries=0, max_tokens=96, gather_model="reference",
                   state_dir=str(tmp_path / "state"))
    # float32: the 135M curator's greedy answers decide whether any curation parses (1 of 4 here in
    # float32, 0 of 4 in bfloat16), and float32 answers do not depend on whether the CPU has bf16 units
    agent = Agent(model="smollm2-135m", learner=learner, max_tokens=96, dtype="float32")
    report = agent.evolve(task_env)
    assert report.details["updates"] == 4 and report.details["generated_with"] == "reference"
    assert len(learner.playbook.bullets) >= 1 and "warnings" not in report.details
    assert 0 < report.details["curations_parsed"] <= report.details["updates"]
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


def test_online_updates_in_phase_test_never_show_the_reflector_a_hidden_expected_value(task_env):
    from tests.agents.fixed_answer import FixedAnswerModel, wrong_answer

    task = task_env.tasks("single_test")[2]
    reflector = FixedAnswerModel("pass\n", name="reflector")  # records every prompt ACE sends it
    learner = AceLearner(online=True, max_tokens=32)
    learner.bind(reflector)
    agent = Agent(model=FixedAnswerModel(wrong_answer(task, right_on_example=True)), learner=learner)
    trajectory = agent.run_episode(task_env, task, phase="test", mode="closed")
    assert trajectory.failure.value == "wrong_answer" and learner.online_updates == 1
    shown = "\n".join(m["content"] for prompt in reflector.seen for m in prompt)
    hidden = {t.output for t in task.test_cases[1:] if t.output != task.test_cases[0].output and len(t.output) > 3}
    assert hidden and not [value for value in hidden if value in shown], "a hidden expected value reached ACE"
    assert "tests returned the expected value" in shown
