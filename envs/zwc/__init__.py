"""The ZWC environment: NumPy behind random names, its docs, tasks and a sandboxed grader.

Names are imported on first use (PEP 562), so that the sandbox's fork server, which
imports this package, stays small and forks fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

_EXPORTS = {
    "Observation": "envs.zwc.env", "ZWCEnv": "envs.zwc.env",
    "MappingError": "envs.zwc.errors", "ProtocolError": "envs.zwc.errors", "SandboxError": "envs.zwc.errors",
    "TaskFormatError": "envs.zwc.errors", "UnknownNameError": "envs.zwc.errors", "ZWCEnvError": "envs.zwc.errors",
    "MappedName": "envs.zwc.library.names", "Mapping": "envs.zwc.library.names",
    "Task": "envs.zwc.task", "TestCase": "envs.zwc.task", "read_tasks": "envs.zwc.task",
    "write_tasks": "envs.zwc.task",
    "Failure": "envs.zwc.grading.failure",
    "TestOutcome": "envs.zwc.grading.verdict", "Verdict": "envs.zwc.grading.verdict",
}
__all__ = [
    "Failure", "MappedName", "Mapping", "MappingError", "Observation", "ProtocolError", "SandboxError", "Task",
    "TaskFormatError", "TestCase", "TestOutcome", "UnknownNameError", "Verdict", "ZWCEnv", "ZWCEnvError",
    "read_tasks", "write_tasks",
]
assert set(__all__) == set(_EXPORTS)

if TYPE_CHECKING:
    from envs.zwc.env import Observation, ZWCEnv
    from envs.zwc.errors import (
        MappingError,
        ProtocolError,
        SandboxError,
        TaskFormatError,
        UnknownNameError,
        ZWCEnvError,
    )
    from envs.zwc.grading.failure import Failure
    from envs.zwc.grading.verdict import TestOutcome, Verdict
    from envs.zwc.library.names import MappedName, Mapping
    from envs.zwc.task import Task, TestCase, read_tasks, write_tasks


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'envs.zwc' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)
