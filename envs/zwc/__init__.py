"""The ZWC environment: NumPy behind random names, its docs, tasks and a sandboxed grader."""

from envs.zwc.env import Observation, ZWCEnv
from envs.zwc.errors import (
    MappingError,
    ProtocolError,
    SandboxError,
    TaskFormatError,
    UnknownNameError,
    ZWCEnvError,
)
from envs.zwc.names import MappedName, Mapping
from envs.zwc.task import Task, TestCase, read_tasks, write_tasks
from envs.zwc.verdict import Failure, TestOutcome, Verdict

__all__ = [
    "Failure", "MappedName", "Mapping", "MappingError", "Observation", "ProtocolError",
    "SandboxError", "Task", "TaskFormatError", "TestCase", "TestOutcome", "UnknownNameError",
    "Verdict", "ZWCEnv", "ZWCEnvError", "read_tasks", "write_tasks",
]
