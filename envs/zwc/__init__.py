"""The ZWC environment: NumPy behind random names, its docs, tasks and a sandboxed grader.

Three rooms, by whom they trust (docs/architecture.md, "Grading: who holds what"):
``sandbox/`` runs untrusted code, ``library/`` is ZWC itself, ``grading/`` turns the sandbox's
records into verdicts; ``tasks/`` generates tasks; ``env.py`` (``ZWCEnv``) ties them together.

The names below are the public API: code outside the environment (agents, learners, self-play)
imports them from ``envs.zwc``, never from a room, so the rooms can change behind them:

* the env and its errors: ``ZWCEnv`` (``check``/``check_many`` grade; ``run``/``run_many`` run
  untrusted code ungraded and give ``RunResult``/``TestRun``), ``Observation``, ``Limits``,
  ``ZWCEnvError`` and its subclasses;
* tasks and verdicts: ``Task``, ``TestCase``, ``read_tasks``, ``write_tasks``, ``Verdict``,
  ``TestOutcome``, ``Failure``, ``MIN_TESTS``/``MAX_TESTS`` (tests per generated task),
  ``selected_name`` and ``summary`` (how a task names and describes its catalogue function);
* the library: ``CATALOGUE`` and its ``Entry``, ``CONSTRUCTORS`` (array constructors: calling
  one alone is not using the library), ``Mapping``/``MappedName``, ``public_names`` (every
  path a user may write), ``translate_numpy``/``translate_zwc``, ``trim_doc``;
* grading's pieces a caller may reuse: ``check_code`` (the static checks) with its
  ``CheckReason``, ``values_equal`` and ``parse_printed`` (the graders' comparison).

Names are imported on first use (PEP 562), so that the sandbox's fork server, which
imports this package, stays small and forks fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

# public name -> "module" (the same name there) or "module:name"
_EXPORTS = {
    "Observation": "envs.zwc.env", "ZWCEnv": "envs.zwc.env", "CONSTRUCTORS": "envs.zwc.env",
    "trim_doc": "envs.zwc.env",
    "RunResult": "envs.zwc.run_result", "TestRun": "envs.zwc.run_result", "Limits": "envs.zwc.sandbox.pool",
    "MappingError": "envs.zwc.errors", "ProtocolError": "envs.zwc.errors", "SandboxError": "envs.zwc.errors",
    "TaskFormatError": "envs.zwc.errors", "UnknownNameError": "envs.zwc.errors", "ZWCEnvError": "envs.zwc.errors",
    "MappedName": "envs.zwc.library.names", "Mapping": "envs.zwc.library.names",
    "CATALOGUE": "envs.zwc.library.catalogue", "Entry": "envs.zwc.library.catalogue",
    "public_names": "envs.zwc.library.package",
    "translate_numpy": "envs.zwc.library.translate", "translate_zwc": "envs.zwc.library.translate",
    "Task": "envs.zwc.task", "TestCase": "envs.zwc.task", "read_tasks": "envs.zwc.task",
    "write_tasks": "envs.zwc.task",
    "MIN_TESTS": "envs.zwc.tasks.single", "MAX_TESTS": "envs.zwc.tasks.single",
    "selected_name": "envs.zwc.tasks.single", "summary": "envs.zwc.tasks.phrasing",
    "Failure": "envs.zwc.grading.failure",
    "TestOutcome": "envs.zwc.grading.verdict", "Verdict": "envs.zwc.grading.verdict",
    "check_code": "envs.zwc.grading.checks", "CheckReason": "envs.zwc.grading.checks:Reason",
    "values_equal": "envs.zwc.grading.equality", "parse_printed": "envs.zwc.grading.equality",
}
__all__ = [
    "CATALOGUE", "CONSTRUCTORS", "MAX_TESTS", "MIN_TESTS", "CheckReason", "Entry", "Failure", "Limits",
    "MappedName", "Mapping", "MappingError", "Observation", "ProtocolError", "RunResult", "SandboxError", "Task",
    "TaskFormatError", "TestCase", "TestOutcome", "TestRun", "UnknownNameError", "Verdict", "ZWCEnv",
    "ZWCEnvError", "check_code", "parse_printed", "public_names", "read_tasks", "selected_name", "summary",
    "translate_numpy", "translate_zwc", "trim_doc", "values_equal", "write_tasks",
]
assert set(__all__) == set(_EXPORTS)

if TYPE_CHECKING:
    from envs.zwc.env import CONSTRUCTORS, Observation, ZWCEnv, trim_doc
    from envs.zwc.errors import (
        MappingError,
        ProtocolError,
        SandboxError,
        TaskFormatError,
        UnknownNameError,
        ZWCEnvError,
    )
    from envs.zwc.grading.checks import Reason as CheckReason
    from envs.zwc.grading.checks import check_code
    from envs.zwc.grading.equality import parse_printed, values_equal
    from envs.zwc.grading.failure import Failure
    from envs.zwc.grading.verdict import TestOutcome, Verdict
    from envs.zwc.library.catalogue import CATALOGUE, Entry
    from envs.zwc.library.names import MappedName, Mapping
    from envs.zwc.library.package import public_names
    from envs.zwc.library.translate import translate_numpy, translate_zwc
    from envs.zwc.run_result import RunResult, TestRun
    from envs.zwc.sandbox.pool import Limits
    from envs.zwc.task import Task, TestCase, read_tasks, write_tasks
    from envs.zwc.tasks.phrasing import summary
    from envs.zwc.tasks.single import MAX_TESTS, MIN_TESTS, selected_name


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'envs.zwc' has no attribute {name!r}")
    module, _, attribute = _EXPORTS[name].partition(":")
    return getattr(importlib.import_module(module), attribute or name)
