"""Learners behind the Learner protocol (see ARCHITECTURE.md)."""

from learners.base import REGISTRY, NoLearner, make

__all__ = ["REGISTRY", "NoLearner", "make"]
