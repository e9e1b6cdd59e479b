"""ExpeL end to end on a 20-task slice: reference gathering, scripted insight answers.

The insight extractor is a ScriptedModel answering ExpeL's own operation format (and one answer
with no operation), so the counts below are what ExpeL's code must make of them, whatever a
real model would write.
"""

import json
import re

import pytest

from agents import Agent
from agents.prompts import first_prompt
from learners import ExpelLearner, make
from tests.agents.fixed_answer import FixedAnswerModel, ScriptedModel

CRITIQUE = "Successful solutions:"  # in ExpeL's critique prompt only (learners.expel.CRITIQUE)
FIRST = "Pass Python lists straight to zwc functions; they accept them."
SECOND = "Return the value of the zwc call itself, not a copy."
EDITED = "Pass Python lists or tuples straight to zwc functions."
ANSWERS = [f"ADD: {FIRST}\nADD: {SECOND}",  # chunk 1 of 8 successes: two rules
           f"AGREE 2: every solution does so\nEDIT 1: {EDITED}\nREMOVE 7: there is no rule 7",  # chunk 2
           "These solutions look correct to me."]  # chunk 3 (4 successes): no operation at all


@pytest.fixture(scope="module")
def evolved(task_env, tmp_path_factory):
    state = tmp_path_factory.mktemp("expel") / "state"
    learner = make("expel", limit=20, gather_model="reference", state_dir=str(state))
    model = ScriptedModel({CRITIQUE: ANSWERS})
    agent = Agent(model=model, learner=learner, max_tokens=160)
    report = agent.evolve(task_env)
    asked = {key: list(texts) for key, texts in model.seen.items()}  # what evolve asked (later tests ask more)
    return learner, asked, agent, report, state


def test_evolve_applies_the_insight_operations_by_code(evolved):
    learner, asked, _, report, _ = evolved
    details = report.details
    assert details["gathered_with"] == "reference" and details["tasks"] == 20
    assert details["stored_trajectories"] == details["solved"] == 20
    assert asked.keys() == {CRITIQUE} and len(asked[CRITIQUE]) == 3  # 20 successes in chunks of 8; no failure
    # ADD, ADD, AGREE 2, EDIT 1 applied; REMOVE 7 names no rule: dropped; the third answer held nothing
    assert (details["operations_applied"], details["operations_dropped"], details["malformed_answers"]) == (4, 1, 1)
    assert learner.rules == [EDITED, SECOND] and [r.importance for r in learner.book.rules] == [3, 3]
    assert details["rules"] == 2 and "warnings" not in details, learner.log
    # the cost column: what this run generated, the teacher's 20 answers and the 3 insight answers
    # (a reference or scripted token is a word; the teacher's answers also carry their code fences)
    gathered = sum(len(learner.records[t].success.split()) for t in learner.records)
    assert details["generated_tokens"] >= gathered + sum(len(answer.split()) for answer in ANSWERS) > gathered
    assert learner.log == [f"no operation in: {ANSWERS[2]!r}"]
    first, second, third = asked[CRITIQUE]
    assert "(no rules yet)" in first and f"1. {FIRST}\n2. {SECOND}" in second  # always the current list
    assert f"1. {EDITED}\n2. {SECOND}" in third


def test_the_rules_and_similar_solved_tasks_reach_the_closed_book_prompt(evolved, task_env, tmp_path):
    learner, _, agent, _, _ = evolved
    task = task_env.tasks("single_test")[0]
    obs = task_env.observe(task, phase="test", mode="closed")
    prompt = first_prompt(obs, learner.context(obs))[1]["content"]
    assert f"1. {EDITED}" in prompt and "Solved tasks similar to this one" in prompt and "```python" in prompt
    assert prompt.count("\nSolution:\n") == 2  # retrieve_k
    evaluation = agent.evaluate(task_env, split="single_test", n=1, mode="closed", limit=2,
                                out=str(tmp_path / "closed.jsonl"))
    assert evaluation.n_samples == 2


def _retrieved(learner, context: str) -> list[str]:
    """The task ids of the solved tasks shown in a context (by their stored question)."""
    by_question = {r.question: r.task_id for r in learner.records.values()}
    return [by_question[q] for q in re.findall(r"Task: (.*?)\nSolution:\n", context, flags=re.S)]


def test_a_stored_task_is_never_shown_its_own_solution(evolved, task_env):
    learner, _, _, _, _ = evolved
    for task in task_env.tasks("train")[:20:4]:
        obs = task_env.observe(task, phase="test", mode="closed")
        [nearest] = learner.store.search(obs.question, k=1)
        assert nearest.id == task.task_id  # the store ranks the task's own experience first...
        shown = _retrieved(learner, learner.context(obs))
        assert task.task_id not in shown, f"{task.task_id} was shown its own stored solution"  # ...ExpeL skips it
        assert len(shown) == 2 == len(set(shown)), shown  # and still shows retrieve_k others


def test_the_saved_state_gives_the_same_rules_store_and_context(evolved, task_env):
    learner, _, _, _, state = evolved
    again = ExpelLearner(state_dir=str(state))
    again.load(state)
    assert again.rules == learner.rules and len(again.store) == 20
    obs = task_env.observe(task_env.tasks("single_test")[0], phase="test", mode="closed")
    assert again.context(obs) == learner.context(obs)


WRONG = "import zwc\n\ndef solve(*args):\n    return 0\n"  # solves nothing


def test_a_resumed_expel_makes_the_attempts_a_killed_run_had_left(task_env, tmp_path):
    """Killed after its first attempts and reflections were saved, ExpeL resumes with the second
    attempt of each failed task (it once found no task at round 0 and stopped gathering)."""
    state = tmp_path / "state"
    first = make("expel", limit=2, max_reflections=0, state_dir=str(state))
    Agent(model=FixedAnswerModel(WRONG, name="wrong"), learner=first).evolve(task_env)
    saved = json.loads((state / "expel.json").read_text())
    for record in saved["records"]:  # what the killed run had saved: attempt 1 failed, its reflection written
        assert len(record["failures"]) == 1 and not record["reflections"]
        record["reflections"] = ["call the function on the whole list"]
    (state / "expel.json").write_text(json.dumps(saved))
    resumed = make("expel", limit=2, max_reflections=1, state_dir=str(state))
    report = Agent(model=FixedAnswerModel(WRONG, name="wrong"), learner=resumed).evolve(task_env)
    assert report.episodes == 2  # the second attempt of both tasks
    assert [len(record.failures) for record in resumed.records.values()] == [2, 2]
