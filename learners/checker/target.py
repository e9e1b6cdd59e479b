"""What the learner checker checks: a target (a registered name, ``package.module:Attr`` or
``path/to/file.py:Attr``) resolved to a factory, and named again so that a fresh process
(``learners.checker.child``) finds the same factory. Apart from the checks so that the fresh
process resolves its target without importing them.
"""

from __future__ import annotations

import difflib
import functools
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sebench.targets import FILE_MODULE_PREFIX, TargetError, load_object


class LearnerTargetError(TargetError):
    """A target that names no learner: says what is wrong with it and how to write it."""


@dataclass(frozen=True)
class LearnerTarget:
    """A resolved target: ``factory(**config)`` builds the learner; ``target`` names it again in a
    fresh process (None when the factory cannot be found by name there)."""

    target: str | None
    factory: Callable[..., Any]
    kind: str  # "registered" | "module" | "file" | "object"


def resolve_target(target: str) -> LearnerTarget:
    """A registered learner name, ``package.module:Attr`` or ``path/to/file.py:Attr`` (``Attr`` a
    learner class or a factory taking keyword config; dotted for a nested attribute)."""
    from learners.registry import make, registry

    if ":" not in target:
        names = sorted(registry())
        if target in names:
            return LearnerTarget(target, functools.partial(make, target), "registered")
        close = difflib.get_close_matches(target, names, n=3)
        hint = f"did you mean {', '.join(close)}? " if close else ""  # first: the list after it grows
        raise LearnerTargetError(target, f"{hint}no learner registered by that name (registered: {', '.join(names)})",
                                 "give a registered name, package.module:Attr or path/to/file.py:Attr")
    value, kind = load_object(target, error=LearnerTargetError, hint_for=_learners_in)
    if not callable(value):
        attr = target.rpartition(":")[2]
        raise LearnerTargetError(target, f"{attr} is a {type(value).__name__}, not a learner class or factory",
                                 "name a class (or a function) that takes keyword config and returns a learner")
    return LearnerTarget(target, value, kind)


def _learners_in(module: Any) -> str:
    found = [n for n, v in vars(module).items() if not n.startswith("_") and callable(v)
             and callable(getattr(v, "evolve", None))]
    return f"learners found there: {', '.join(found)}" if found else "no learner class is defined there"


def as_target(factory: str | LearnerTarget | Callable[..., Any]) -> LearnerTarget:
    """A target string, a resolved target, or a factory (found again by name in a fresh process
    when it is a top-level attribute of an importable module or of a file)."""
    if isinstance(factory, LearnerTarget):
        return factory
    if isinstance(factory, str):
        return resolve_target(factory)
    if not callable(factory):
        raise LearnerTargetError(repr(factory), "not callable",
                                 "pass a learner class or a factory taking keyword config")
    module, qualname = getattr(factory, "__module__", None), getattr(factory, "__qualname__", "")
    source = sys.modules.get(module) if module else None
    if source is None or "<" in qualname:
        return LearnerTarget(None, factory, "object")
    if module.startswith(FILE_MODULE_PREFIX) or module == "__main__":
        file = getattr(source, "__file__", None)
        return LearnerTarget(f"{file}:{qualname}" if file else None, factory, "object")
    return LearnerTarget(f"{module}:{qualname}", factory, "object")
