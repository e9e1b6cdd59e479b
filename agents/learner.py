"""The Learner protocol: how the agent loop talks to whatever changes the agent.

The loop knows learners only through this protocol (``agents`` never imports
``learners``): ``context`` adds text to a prompt, ``observe`` sees each finished episode,
``evolve`` is the training phase, ``save``/``load`` persist state.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from agents.agent import Agent
    from agents.trajectory import Trajectory
    from envs.zwc import Observation, ZWCEnv


@dataclass
class EvolveReport:
    """What a training phase did."""

    learner: str
    episodes: int = 0
    seconds: float = 0.0
    details: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Learner(Protocol):
    name: str

    def context(self, obs: Observation) -> str: ...

    def observe(self, trajectory: Trajectory) -> None: ...

    def evolve(self, agent: Agent, env: ZWCEnv) -> EvolveReport: ...

    def save(self, path) -> None: ...

    def load(self, path) -> None: ...
