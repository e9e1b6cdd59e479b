"""Which code wrote a result: ``code_version()`` is recorded in every run's config and summary.

A result without the commit that produced it cannot be compared with a later one, so every
command that writes results (evaluations, comparisons, the report, the perf scripts) records it.
It lives on the ground floor because all of them need it and none should import another's
internals for it.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def code_version() -> str:
    """``git describe --always --dirty`` of this checkout, or ``unknown`` outside a git checkout
    (an installed wheel) or where git is missing or hangs."""
    try:
        return subprocess.run(["git", "-C", str(ROOT), "describe", "--always", "--dirty"], capture_output=True,
                              text=True, timeout=5).stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"
