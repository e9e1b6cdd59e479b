"""A training phase that produced nothing says so, in the report and on stderr, instead of
handing back an agent whose closed-book context is silently empty."""

from agents import Agent
from learners import make
from tests.agents.fixed_answer import FixedAnswerModel


def WrongModel():  # noqa: N802 - reads as the backend it builds
    """Answers every prompt with the same wrong program: solves nothing, proposes no operation."""
    return FixedAnswerModel("import zwc\n\ndef solve(*args):\n    return 0\n", name="wrong")


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

