"""The learner checker's report: the checks it runs (``CHECKS``, in order) and ``CheckReport``,
the memory and model checkers' report (``sebench.check_report``) with the learner's figures.
Apart from the checks so that the checks and the entry point both read it, neither the other.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sebench.check_report import ConformanceReport

CHECKS = ("protocol", "limit", "no-test-data", "closed-book", "docs-in-context", "save-load", "kill-resume", "effect")


@dataclass(kw_only=True)
class CheckReport(ConformanceReport):
    """The memory and model checkers' report (``sebench.check_report``), plus the learner's name,
    the model the checks ran with and the effect figures (``EffectFigure``, one per metric)."""

    learner: str
    model: str
    effect: list = field(default_factory=list)
