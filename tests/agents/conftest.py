"""Agent fixtures: a small built task set."""

import pytest

from envs.zwc import ZWCEnv
from envs.zwc.env import build_directory
from envs.zwc.names import Mapping
from envs.zwc.tasks import build_tasks


@pytest.fixture(scope="session")
def task_env(tmp_path_factory):
    root = build_directory(Mapping.generate(11), tmp_path_factory.mktemp("agents-zwc"))
    build_tasks(root, seed=11, per_function=1, multi=12, workers=2)
    env = ZWCEnv.load(root, workers=2)
    yield env
    env.close()
