"""Session fixtures: ZWC builds written once per test session (per xdist worker)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

# `pytest -n N` runs N workers; torch's default (a thread per core in every process) then asks N
# times more threads than the machine has, and a decode step on 2 busy cores got ~15x slower.
# Each worker gets its share of the cores (set before any test module imports torch).
_WORKERS = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
os.environ.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // _WORKERS)))

SHARED = Path(__file__).resolve().parents[2] / "shared" / "sebench-v1"
API_DOC = SHARED / "api_doc.jsonl"
SAMPLE_TASKS = SHARED / "sample_single_test.jsonl"


def _require_shared() -> None:
    if not API_DOC.is_file():  # CI lays shared/ beside the clone; a bare checkout may not have it
        pytest.fail(f"SE-Bench v1 data not found at {SHARED}; tests need ../shared/sebench-v1")


@pytest.fixture(scope="session")
def api_doc() -> Path:
    _require_shared()
    return API_DOC


@pytest.fixture(scope="session")
def sample_tasks_path() -> Path:
    _require_shared()
    return SAMPLE_TASKS


@pytest.fixture(scope="session")
def seed7_dir(tmp_path_factory) -> Path:
    from envs.zwc.env import build_directory
    from envs.zwc.names import Mapping

    return build_directory(Mapping.generate(7), tmp_path_factory.mktemp("zwc-seed7"))


@pytest.fixture(scope="session")
def zwc7(seed7_dir):
    """The seed-7 package imported into this process (one zwc package per process)."""
    sys.path.insert(0, str(seed7_dir))
    import zwc

    assert Path(zwc.__file__).resolve().is_relative_to(seed7_dir.resolve())
    return zwc


@pytest.fixture(scope="session")
def official_env(api_doc, tmp_path_factory):
    from envs.zwc import ZWCEnv

    env = ZWCEnv.official(api_doc, root=tmp_path_factory.mktemp("zwc-official"), workers=2)
    yield env
    env.close()


@pytest.fixture(scope="session")
def env7(seed7_dir):
    from envs.zwc import ZWCEnv

    env = ZWCEnv.load(seed7_dir, workers=2)
    yield env
    env.close()


@pytest.fixture(scope="session")
def smollm2():
    """The embedded model, loaded once per test process (tests using it share the xdist group
    ``smollm2``; a test that loads its own model stays out of it: one worker runs the whole group,
    and its minutes were the suite's longest path)."""
    from agents.models import load_model

    return load_model("smollm2-135m")


@pytest.fixture(scope="session")
def task_env(tmp_path_factory):
    """A small ZWC build with tasks (one train task per function, 12 compositions)."""
    from envs.zwc import ZWCEnv
    from envs.zwc.env import build_directory
    from envs.zwc.names import Mapping
    from envs.zwc.tasks import build_tasks

    root = build_directory(Mapping.generate(11), tmp_path_factory.mktemp("agents-zwc"))
    build_tasks(root, seed=11, per_function=1, multi=12, workers=2)
    env = ZWCEnv.load(root, workers=2)
    yield env
    env.close()
