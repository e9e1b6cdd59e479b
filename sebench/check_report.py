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
    (or, when it passed, what was shown; ``skipped: …`` when the check did not apply). A passed
    check with a ``warning`` kept the contract but showed something its author should look at (a
    learner with no measurable effect, a state with nothing in it): printed WARN, never PASS."""

    name: str
    passed: bool
    why: str
    warning: str = ""

    @property
    def mark(self) -> str:
        """PASS, WARN or FAIL."""
        return "FAIL" if not self.passed else "WARN" if self.warning else "PASS"

    def line(self) -> str:
        return f"{self.mark} {self.name}: {self.why}" + (f" (warning: {self.warning})" if self.warning else "")


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
        return [c.line() for c in self.checks]

    def warnings(self) -> list[str]:
        return [c.name for c in self.checks if c.passed and c.warning]

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "passed": self.passed}

    def add(self, name: str, problems: list[str], passed_why: str) -> CheckResult:
        """Record check ``name``: passed when ``problems`` is empty (``why`` = ``passed_why``),
        else failed with the problems joined (each already says what to fix)."""
        result = CheckResult(name, not problems, passed_why if not problems else "; ".join(problems))
        self.checks.append(result)
        return result
