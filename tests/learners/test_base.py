import pytest

from agents import Agent, Learner
from learners import NoLearner, make


def test_no_learner_is_a_learner_and_round_trips(tmp_path, official_env):
    learner = make("none")
    assert isinstance(learner, Learner) and isinstance(learner, NoLearner)
    learner.save(tmp_path / "state")
    learner.load(tmp_path / "state")
    report = Agent(model="reference", learner=learner).evolve(official_env)
    assert report.learner == "none" and report.episodes == 0
    with pytest.raises(KeyError, match="unknown learner .expel-typo.; known: .*none"):
        make("expel-typo")
