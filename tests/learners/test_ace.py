"""ACE end to end on a small train slice: reference generator, scripted reflector and curator.

The reflector and curator are a ScriptedModel answering ACE's own tag and delta formats (and
one curation with no delta), so the counters and bullets below are what ACE's code must make of
them, whatever a real model would write.
"""

from agents import Agent
from agents.prompts import first_prompt
from learners import AceLearner, make
from learners.playbook import Bullet
from tests.agents.fixed_answer import ScriptedModel

REFLECTOR, CURATOR = "You are the Reflector.", "You are the Curator"  # learners.ace.REFLECT / CURATE
LOOP = "Call the zwc function once on the whole list instead of looping."
PLAIN = "Return plain Python numbers rather than zwc arrays."
WHOLE = "Call the zwc function once on the whole input list, never in a loop."
REFLECTIONS = ["It passed; no bullet was shown.",
               "It passed by calling zwc once.\nstr-00001: helpful",
               "It passed.\nstr-00001: helpful\nfor-00002: harmful",
               "It passed.\n[str-00001]: helpful\nfor-00002: harmful\nabc-00077: helpful"]  # no such bullet
CURATIONS = [f"ADD [strategies]: {LOOP}",
             f"ADD [formatting]: {PLAIN}\nADD [strategies]: short",  # too short to be a bullet: dropped
             f"UPDATE str-00001: {WHOLE}\nREMOVE zzz-00009",  # no such bullet: dropped
             "The playbook looks complete."]  # no delta: a malformed curation


# The generator's answer: it cites str-00001 only, so the reflector's tags of for-00002 and abc-00077
# move nothing (ACE tags the bullets the generation used), and the failed run tags str-00001 by itself.
CITING = "```python\n# following [str-00001]\nimport zwc\ndef solve():\n    return None\n```"


def test_evolve_builds_a_playbook_with_counters_that_reaches_the_prompt(task_env, tmp_path):
    learner = make("ace", limit=5, validation=1, max_retries=0, max_tokens=96, state_dir=str(tmp_path / "state"))
    model = ScriptedModel({REFLECTOR: REFLECTIONS, CURATOR: CURATIONS}, default=CITING)
    agent = Agent(model=model, learner=learner, max_tokens=96)
    report = agent.evolve(task_env)
    details = report.details
    assert details["updates"] == 4 and details["generated_with"] == "scripted" and details["tasks"] == 4
    assert model.calls(REFLECTOR) == model.calls(CURATOR) == 4  # one reflection and one curation per episode
    assert (details["curations_parsed"], details["malformed_curations"], details["dropped_operations"]) == (3, 1, 2)
    assert details["validation_tasks"] == 1 and details["validation_scores"] == [0.0]  # the scripted code fails
    assert details["bullets"] == 2 and "warnings" not in details
    # the cost column: 4 train answers and 1 validation answer, 4 reflections, 4 curations
    words = len(CITING.split()) * 5 + sum(len(t.split()) for t in REFLECTIONS + CURATIONS)
    assert details["generated_tokens"] == words
    # str-00001: tagged helpful three times; for-00002 was tagged harmful twice but never cited
    assert learner.playbook.bullets == [Bullet("str-00001", "strategies", WHOLE, helpful=3, harmful=0),
                                        Bullet("for-00002", "formatting", PLAIN, helpful=0, harmful=0)]
    rendered = learner.playbook.render()
    assert f"[str-00001] (helpful 3, harmful 0) {WHOLE}" in rendered and "## formatting" in rendered
    reflected = model.seen[REFLECTOR]
    assert "(none)" in reflected[0] and f"[str-00001] (helpful 0, harmful 0) {LOOP}" in reflected[1]  # cited bullets
    assert PLAIN not in reflected[2]  # shown to the generator, not cited: not the reflector's to judge
    assert "Execution feedback: no_zwc_call" in reflected[0] and REFLECTIONS[1] in model.seen[CURATOR][1]  # the reflection, curated
    task = task_env.tasks("single_test")[0]
    obs = task_env.observe(task, phase="test", mode="closed")
    assert WHOLE in first_prompt(obs, learner.context(obs))[1]["content"]
    assert agent.evaluate(task_env, split="single_test", n=1, limit=1, out=str(tmp_path / "c.jsonl")).n_samples == 1
    again = AceLearner()
    again.load(tmp_path / "state")
    assert again.playbook == learner.playbook and (again.updates, again.malformed) == (4, 1)


def test_online_mode_learns_from_test_episodes(task_env):
    learner = AceLearner(online=True, max_tokens=64)
    model = ScriptedModel({REFLECTOR: REFLECTIONS[:1], CURATOR: CURATIONS[:1]})
    learner.bind(model)
    task = task_env.tasks("single_test")[1]
    trajectory = Agent(model="reference", learner=learner).run_episode(task_env, task, phase="test", mode="closed")
    assert trajectory.passed and learner.online_updates == 1 and learner.updates == 1
    assert model.calls(REFLECTOR) == model.calls(CURATOR) == 1
    assert learner.playbook.bullets == [Bullet("str-00001", "strategies", LOOP)]


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
