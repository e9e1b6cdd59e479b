"""Learners behind the Learner protocol (see ARCHITECTURE.md)."""

from learners.ace import AceConfig, AceLearner
from learners.base import REGISTRY, NoLearner, make
from learners.expel import ExpelConfig, ExpelLearner

__all__ = ["REGISTRY", "AceConfig", "AceLearner", "ExpelConfig", "ExpelLearner", "NoLearner", "make"]
