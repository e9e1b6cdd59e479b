"""The report a conformance checker returns: one line per check, ``passed`` and a ``why``.

Returned by ``memory.conformance.check_store`` and ``agents.models.conformance.check_model``;
``learners.checker.CheckReport`` extends it with the learner, the model and the effect figures.
It lives in ``sebench``, the ground floor every package may import (docs/architecture.md), so
``memory``, ``agents`` and ``learners`` can all import it without bending the layering. Plain
data, no dependencies.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class CheckResult:
    """One check: its name, whether it passed, and a sentence that tells the author what to fix
    (or, when it passed, what was shown; ``skipped: …`` when the check did not apply)."""

    name: str
    passed: bool
    why: str


@dataclass
class ConformanceReport:
    """One line per check, in the order they ran, for the implementation named ``target``."""

    target: str
    checks: list[CheckResult] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)  # figures a caller may want (ids, token counts)
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)

    def check(self, name: str) -> CheckResult:
        return next(c for c in self.checks if c.name == name)

    def failed(self) -> list[str]:
        return [c.name for c in self.checks if not c.passed]

    def lines(self) -> list[str]:
        return [f"{'PASS' if c.passed else 'FAIL'} {c.name}: {c.why}" for c in self.checks]

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "passed": self.passed}

    def add(self, name: str, problems: list[str], passed_why: str) -> CheckResult:
        """Record check ``name``: passed when ``problems`` is empty (``why`` = ``passed_why``),
        else failed with the problems joined (each already says what to fix)."""
        result = CheckResult(name, not problems, passed_why if not problems else "; ".join(problems))
        self.checks.append(result)
        return result
