"""A training phase that produced nothing says so, in the report and on stderr, instead of
handing back an agent whose closed-book context is silently empty."""

from agents import Agent
from agents.models.base import Completion
from learners import make


class WrongModel:
    """Answers every prompt with the same wrong program: solves nothing, proposes no operation."""

    name = "wrong"

    def generate(self, prompts, *, n=1, temperature=0.0, max_tokens=512, stop=None):
        text = "```python\nimport zwc\n\ndef solve(*args):\n    return 0\n```"
        return [[Completion(text=text, tokens=12)] * n for _ in prompts]


def test_expel_that_learned_nothing_says_so(task_env, capsys):
    learner = make("expel", limit=2, max_reflections=0)
    report = Agent(model=WrongModel(), learner=learner).evolve(task_env)
    assert report.details["rules"] == 0 and report.details["stored_trajectories"] == 0
    [warning] = report.details["warnings"]
    assert warning.startswith("no rules learned and no solved task to retrieve") and "solved 0 of 2" in warning
    assert f"warning: expel: {warning}" in capsys.readouterr().err


def test_ace_with_an_empty_playbook_says_so_and_counts_the_curations(task_env, capsys):
    learner = make("ace", limit=3, validation=1, max_retries=0, max_tokens=32)
    report = Agent(model=WrongModel(), learner=learner).evolve(task_env)
    assert report.details["bullets"] == 0
    assert report.details["updates"] == 2 and report.details["curations_parsed"] == 0
    [warning] = report.details["warnings"]
    assert "the playbook is empty" in warning and "0 of 2 curations parsed" in warning
    assert f"warning: ace: {warning}" in capsys.readouterr().err

