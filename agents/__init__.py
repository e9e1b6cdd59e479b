"""The agent loop, model backends and evaluation (see docs/architecture.md)."""

from agents.agent import Agent
from agents.eval_config import MixedResultsError
from agents.evaluate import EvalReport, pass_at_k
from agents.learner import EvolveReport, Learner
from agents.trajectory import Trajectory

__all__ = ["Agent", "EvalReport", "EvolveReport", "Learner", "MixedResultsError", "Trajectory", "pass_at_k"]
