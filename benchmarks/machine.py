"""The machine a figure was measured on, in one line: every measured table names it."""

from __future__ import annotations

import os
import platform
from pathlib import Path


def machine() -> str:
    """The CPU's model name, its cores and whether it has bf16 units (what decides a CPU run's speed)."""
    from agents.models.dtype import cpu_has_bf16

    name = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                name = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{name}, {os.cpu_count()} cores, {'with' if cpu_has_bf16() else 'without'} bf16 units"
