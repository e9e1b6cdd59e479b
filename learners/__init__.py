"""Learners behind the Learner protocol (see ARCHITECTURE.md)."""

from learners.ace import AceConfig, AceLearner
from learners.base import PARAMETRIC, REGISTRY, NoLearner, make
from learners.expel import ExpelConfig, ExpelLearner
from learners.sft import ClosedSFTLearner, OpenSFTLearner, SFTLearnerConfig
from learners.sft_train import SFTSettings

__all__ = ["PARAMETRIC", "REGISTRY", "AceConfig", "AceLearner", "ClosedSFTLearner", "ExpelConfig", "ExpelLearner",
           "NoLearner", "OpenSFTLearner", "SFTLearnerConfig", "SFTSettings", "make"]
