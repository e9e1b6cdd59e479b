"""Learners behind the Learner protocol (see docs/architecture.md); by name through ``make``."""

from learners.ace import AceConfig, AceLearner
from learners.base import NoLearner
from learners.expel import ExpelConfig, ExpelLearner
from learners.registry import make
from learners.sft import ClosedSFTLearner, OpenSFTLearner, SFTLearnerConfig
from learners.training.sft_train import SFTSettings

__all__ = ["AceConfig", "AceLearner", "ClosedSFTLearner", "ExpelConfig", "ExpelLearner", "NoLearner",
           "OpenSFTLearner", "SFTLearnerConfig", "SFTSettings", "make"]
