"""Session fixtures: ZWC builds written once per test session (per xdist worker)."""

from __future__ import annotations

import fcntl
import json
import os
import pickle
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

# `pytest -n N` runs N workers; torch's default (a thread per core in every process) then asks N
# times more threads than the machine has, and a decode step on 2 busy cores got ~15x slower.
# Each worker gets its share of the cores (set before any test module imports torch).
_WORKERS = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
os.environ.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // _WORKERS)))

# Three SE-Bench v1 single_test records exactly as the authors published them (MIT licence): the
# official format, quirks included (a right_exe_result that disagrees with test_cases' outputs),
# which no builder of ours can stand in for. Everything else official is written at test time.
SAMPLE_TASKS = Path(__file__).resolve().parent / "data" / "official_sample_single_test.jsonl"


def shared_build(tmp_path_factory, name: str, make: Callable[[Path], Any]) -> tuple[Path, Any]:
    """``make(root)`` run once for the whole test run, whatever the number of xdist workers: they
    share ``pytest-N/`` (the parent of each worker's base directory), and a worker that needs a build
    another is making waits on its lock instead of making it again. Returns the directory and what
    ``make`` returned (pickled beside it). For builds the tests only read."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    root, done = shared / name, shared / f"{name}.result.pickle"
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.is_file():
            shutil.rmtree(root, ignore_errors=True)
            done.write_bytes(pickle.dumps(make(root)))
    return root, pickle.loads(done.read_bytes())


@pytest.fixture(scope="session")
def api_doc(tmp_path_factory) -> Path:
    """An ``api_doc.jsonl`` in the official shape with the official names (shipped as package
    data), its docs written by the project's own doc builder from the installed NumPy."""
    from envs.zwc.library.docs import build_api_doc
    from envs.zwc.library.names import Mapping

    path = tmp_path_factory.mktemp("sebench-v1") / "api_doc.jsonl"
    with path.open("w") as handle:
        for record in build_api_doc(Mapping.sebench_v1()):
            handle.write(json.dumps(record) + "\n")
    return path


@pytest.fixture(scope="session")
def sample_tasks_path() -> Path:
    return SAMPLE_TASKS


@pytest.fixture(scope="session")
def seed7_dir(tmp_path_factory) -> Path:
    from envs.zwc.env import build_directory
    from envs.zwc.library.names import Mapping

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
    from envs.zwc.library.names import Mapping
    from envs.zwc.tasks import build_tasks

    def make(root: Path) -> None:
        build_directory(Mapping.generate(11), root)
        build_tasks(root, seed=11, per_function=1, multi=12, workers=2)

    root, _ = shared_build(tmp_path_factory, "agents-zwc", make)  # read only: one build for every worker
    env = ZWCEnv.load(root, workers=2)
    yield env
    env.close()


@pytest.fixture(scope="session")
def tiny_dir(tmp_path_factory) -> Path:
    """A random-initialised SmolLM2 (Llama) directory: the real architecture and tokenizer, two
    layers, hidden size 64 (``agents.models.tiny``). For every test of mechanics; it answers with
    noise, so a test that needs a passing answer scripts it."""
    from agents.models.tiny import tiny_model_directory

    return tiny_model_directory(tmp_path_factory.mktemp("tiny") / "smollm2-tiny")


@pytest.fixture(scope="session")
def tiny_qwen_dir(tmp_path_factory) -> Path:
    """The same for Qwen2.5's architecture (Qwen2) and tokenizer."""
    from agents.models.tiny import tiny_model_directory

    return tiny_model_directory(tmp_path_factory.mktemp("tiny") / "qwen-tiny", base="qwen2.5-coder-0.5b")


@pytest.fixture(scope="session")
def tiny(tiny_dir):
    """The tiny model loaded once per test process (read-only: a test that trains copies it)."""
    from agents.models import load_model

    return load_model(str(tiny_dir))
