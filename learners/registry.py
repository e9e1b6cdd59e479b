"""Learners by name: the ``sebench.learners`` entry-point group.

Ours and third-party packages' learners register the same way, one line in their
``pyproject.toml``::

    [project.entry-points."sebench.learners"]
    my-learner = "my_package.my_learner:MyLearner"

so a learner package never edits this one, and ``learners`` need not import ``selfplay`` to
list the self-play learners. An entry point names a learner class or a factory taking keyword
config; ``make(name, **config)`` builds one.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import fields
from typing import Any

from agents.learner import Learner
from sebench import plugins
from sebench.errors import SettingError
from sebench.registry import EntryPointRegistry, UnknownEntryError

GROUP = plugins.LEARNERS


class LearnerRegistryError(UnknownEntryError):
    """No learner by that name, or none registered at all (a KeyError, as a Mapping's lookups
    must raise, printed without KeyError's quotes)."""


def registry(extra: dict[str, Callable[..., Learner]] | None = None) -> EntryPointRegistry:
    """The learners installed now (names are read from the packages' metadata at each lookup; a
    learner's module is imported only when that learner is asked for: the trainers pull in torch
    and trl), plus ``extra`` ones of the caller's."""
    return EntryPointRegistry(GROUP, kind="learner", error=LearnerRegistryError, extra=extra,
                              when_empty=f"no learners registered in the {GROUP!r} entry-point group: the sebench "
                                         "package is not installed in this environment; run `pip install -e .` "
                                         "(or `make setup`)")


def make(name: str, **config: Any) -> Learner:
    """A learner by registered name; unknown names list the known ones, an unknown setting names
    the learner's own (``SettingError``)."""
    factory = registry()[name]
    try:
        return factory(**config)
    except TypeError as exc:  # a config dataclass refusing a keyword: the user's setting, not a bug
        unknown = re.search(r"unexpected keyword argument '(\w+)'", str(exc))
        if unknown is None or unknown.group(1) not in config:
            raise
        declared = config_class(factory)
        known = sorted(f.name for f in fields(declared)) if declared is not None else []
        close = difflib.get_close_matches(unknown.group(1), known, n=1)
        hint = f"; did you mean {close[0]}?" if close else ""
        raise SettingError(f"{name} has no setting {unknown.group(1)!r}{hint}; its settings: {', '.join(known)} "
                           f"(`sebench learners {name}` says what each does)") from None


def config_class(factory: Callable[..., Learner]) -> type | None:
    """The config dataclass a learner class declares (``config_class`` attribute, else the
    annotation of its ``config`` parameter), or None for a plain factory."""
    declared = getattr(factory, "config_class", None)
    if declared is not None:
        return declared
    import inspect
    import typing

    try:
        hints = typing.get_type_hints(factory.__init__ if inspect.isclass(factory) else factory)
    except (NameError, TypeError):
        return None
    hint = hints.get("config")
    for candidate in typing.get_args(hint) or (hint,):
        if inspect.isclass(candidate) and hasattr(candidate, "__dataclass_fields__"):
            return candidate
    return None
