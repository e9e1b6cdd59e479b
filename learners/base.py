"""The learner side of the protocol: re-exports, the registry, and the no-learning baseline.

A new learner is one file and one line in ``REGISTRY``; ``make(name, **config)`` builds one.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agents.learner import EvolveReport, Learner
from envs.zwc import Observation

__all__ = ["PARAMETRIC", "REGISTRY", "EvolveReport", "Learner", "NoLearner", "make"]


class NoLearner:
    """The baseline: adds nothing to prompts, learns nothing, saves an empty state."""

    name = "none"

    def context(self, obs: Observation) -> str:
        return ""

    def observe(self, trajectory) -> None:
        return None

    def evolve(self, agent, env) -> EvolveReport:
        return EvolveReport(learner=self.name)

    def save(self, path) -> None:
        target = Path(path)
        target.mkdir(parents=True, exist_ok=True)
        (target / "learner.json").write_text(json.dumps({"learner": self.name}) + "\n")

    def load(self, path) -> None:
        state = json.loads((Path(path) / "learner.json").read_text())
        if state.get("learner") != self.name:
            raise ValueError(f"{path}: holds a {state.get('learner')!r} learner, not {self.name!r}")


def _expel(**config: Any) -> Learner:
    from learners.expel import ExpelLearner

    return ExpelLearner(**config)


def _ace(**config: Any) -> Learner:
    from learners.ace import AceLearner

    return AceLearner(**config)


def _open_sft(**config: Any) -> Learner:
    from learners.sft import OpenSFTLearner

    return OpenSFTLearner(**config)


def _closed_sft(**config: Any) -> Learner:
    from learners.sft import ClosedSFTLearner

    return ClosedSFTLearner(**config)


REGISTRY: dict[str, Callable[..., Learner]] = {"none": NoLearner, "expel": _expel, "ace": _ace,
                                               "open-sft": _open_sft, "closed-sft": _closed_sft}
PARAMETRIC = frozenset({"open-sft", "closed-sft"})  # learners that write a model directory (RUN/model)


def make(name: str, **config: Any) -> Learner:
    """A learner by registry name; unknown names list the known ones."""
    try:
        return REGISTRY[name](**config)
    except KeyError:
        raise KeyError(f"unknown learner {name!r}; known: {', '.join(sorted(REGISTRY))}") from None
