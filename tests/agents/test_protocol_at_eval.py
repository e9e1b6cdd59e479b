"""The closed-book protocol holds for the whole of an evaluation, whatever a learner kept.

A learner may read the docs in ``evolve``; one that keeps the env and reaches for the docs from
``context()`` at test time must get ``ProtocolError`` (not the docs), although nothing called
``env.reset(phase="test")``: ``evaluate`` shuts the docs for its whole run."""

import pytest

from agents import Agent
from envs.zwc.errors import ProtocolError


class KeepsTheEnv:
    """Holds ``env`` from ``evolve`` and tries every door to the docs in ``context``."""

    name = "keeps-the-env"

    def __init__(self):
        self.env, self.seen = None, []

    def evolve(self, agent, env):
        self.env = env
        env.docs_for(env.tasks("train")[0])  # allowed: the training phase reads the docs

    def context(self, obs):
        task = next(t for t in self.env.tasks(obs.split) if t.task_id == obs.task_id) if hasattr(obs, "split") \
            else self.env.tasks("single_test")[0]
        for door in (lambda: self.env.docs_for(task), lambda: self.env.docs.lookup(self.env.mapping.entries[0].zwc),
                     lambda: self.env.search("mean", k=1, phase="train")):
            try:
                door()
                self.seen.append("docs")
            except ProtocolError as exc:
                self.seen.append(type(exc).__name__)
        return ""

    def observe(self, trajectory):
        return None

    def save(self, path):
        return None

    def load(self, path):
        return None


def test_a_learner_holding_env_cannot_read_the_docs_during_a_closed_book_evaluate(task_env, tmp_path):
    learner = KeepsTheEnv()
    agent = Agent(model="reference", learner=learner)
    learner.evolve(agent, task_env)
    assert task_env.phase == "train"  # nobody reset the env into phase test
    agent.evaluate(task_env, split="single_test", n=1, mode="closed", out=str(tmp_path / "r.jsonl"), limit=2)
    assert learner.seen and set(learner.seen) == {"ProtocolError"}, learner.seen
    # after the evaluation the training phase's doors are open again
    assert task_env.docs_for(task_env.tasks("train")[0])
    # an open-book diagnostic (phase train) is not closed book: the doors stay open there
    learner.seen.clear()
    agent.evaluate(task_env, split="single_test", n=1, mode="open", out=str(tmp_path / "o.jsonl"), limit=1)
    assert set(learner.seen) == {"docs"}


def test_closed_book_nests_and_reopens_even_after_an_error(task_env):
    with pytest.raises(RuntimeError), task_env.closed_book():
        with task_env.closed_book():
            with pytest.raises(ProtocolError, match="closed-book evaluation"):
                task_env.docs  # noqa: B018
        with pytest.raises(ProtocolError):
            task_env.search("mean", k=1, phase="train")
        raise RuntimeError("a crash inside the evaluation")
    assert task_env.search("mean", k=1, phase="train")
