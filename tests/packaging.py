"""A package installed the way pip installs one (its modules and a ``.dist-info`` with
``METADATA`` and ``entry_points.txt``) into a directory put on PYTHONPATH, and ``sebench`` run
beside it in a fresh process: how the tests plug in a third party's learner or backend without
touching this environment."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[1]


def install(site: Path, distribution: str, modules: dict[str, str], entry_points: str) -> Path:
    """Write ``modules`` (dotted name -> source) and the distribution's metadata under ``site``."""
    for dotted, source in modules.items():
        path = site.joinpath(*dotted.split(".")).with_suffix(".py")
        path.parent.mkdir(parents=True, exist_ok=True)
        for parent in path.relative_to(site).parents:
            if parent != Path("."):
                (site / parent / "__init__.py").touch()
        path.write_text(source)
    info = site / f"{distribution.replace('-', '_')}-0.1.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {distribution}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(entry_points)
    return site


def sebench(site: Path, *args: str, code: str | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    """``sebench ARGS`` (or ``python -c CODE ARGS``) with ``site`` on the path."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), str(ROOT)]), NO_COLOR="1", COLUMNS="200")
    command = [sys.executable, "-c", code, *args] if code else [sys.executable, "-m", "benchmarks.cli", *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=timeout, cwd=ROOT)
