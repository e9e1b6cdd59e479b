"""Learners behind the Learner protocol (see ARCHITECTURE.md)."""

from learners.base import REGISTRY, NoLearner, make
from learners.expel import ExpelConfig, ExpelLearner

__all__ = ["REGISTRY", "ExpelConfig", "ExpelLearner", "NoLearner", "make"]
