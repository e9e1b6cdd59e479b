"""Every ``sebench`` argument checked before any work is done or any file written, the same rule
in every command: a wrong value is the user's mistake, a ``SettingError`` whose message names
the option, the value and the fix (one line, exit 2), never a traceback after a run directory
was half written.

What is checked: counts (``--limit`` means "the first N", so N >= 1; ``--n``, ``--steps`` ...),
choices (``--split``, ``--mode``), model names (resolved through the models registry's lookup,
no weights loaded), learner names (the learners registry) and ``--set`` settings (keys the
named learner knows, values of the type its setting takes, then the learner built from them,
which runs its own checks: nothing is trained or written by building one). Commands import
the module as ``check`` and call ``check.limit(limit)``, ``check.model(model)``,
``check.settings(learner, config)`` before their first piece of work.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from sebench.errors import SettingError

SELF_OR_TEACHER = ("self", "reference")  # what --gather-model and --proposer-model take besides a backend
_EXAMPLES = {"int": "4", "float": "0.5", "bool": "true"}  # the setting types a text value breaks


def count(value: int | None, option: str, what: str = "") -> None:
    """``value`` is None (the default: all of them) or >= 1."""
    if value is not None and value < 1:
        meaning = f" ({what})" if what else ""
        raise SettingError(f"{option} {value}: it must be at least 1{meaning}; leave {option} out for its default")


def counts(**values: int | None) -> None:
    """``count`` for each keyword: ``max_tokens=…`` checks ``--max-tokens``."""
    for key, value in values.items():
        count(value, "--" + key.replace("_", "-"))


def limit(value: int | None, what: str = "the first N tasks") -> None:
    count(value, "--limit", what)


def choice(value: str, option: str, choices: Iterable[str]) -> None:
    choices = tuple(choices)
    if value not in choices:
        raise SettingError(f"{option} {value!r}: not one of {', '.join(choices)}; e.g. {option} {choices[0]}")


def model(spec: str | None, option: str = "--model") -> None:
    """A name the models registry resolves (a registered name or prefix), or a model directory;
    nothing is loaded."""
    if spec is None:
        return
    from agents.models.registry import default_registry
    models = default_registry()

    if Path(spec).is_dir() or models.find(spec) is not None:
        return
    known = ", ".join(e.name + ("<…>" if e.prefix else "") for e in models.entries())
    raise SettingError(f"{option} {spec!r}: unknown model; use one of {known}, or a model directory "
                       "(`sebench backends` lists them)")


def models(specs: str, option: str) -> None:
    """A comma-separated list of models (``--solvers``)."""
    for spec in (s.strip() for s in specs.split(",")):
        model(spec, option)


def helper_model(spec: str | None, option: str) -> None:
    """``--gather-model`` / ``--proposer-model``: unset or empty (the learner's default), self,
    reference, or any model ``--model`` takes."""
    if spec and spec not in SELF_OR_TEACHER:
        model(spec, option)


def learners(names: Iterable[str], option: str = "--learners") -> None:
    """Every name is a registered learner (the registry's error lists the known ones)."""
    from learners.registry import LearnerRegistryError
    from learners.registry import registry as learner_registry
    known = learner_registry()

    names = list(names)
    if not names:
        raise SettingError(f"{option}: no learner named; e.g. {option} {','.join(list(known)[:2])}")
    for name in names:
        try:
            known[name]  # noqa: B018 - the lookup is the check
        except LearnerRegistryError as exc:
            raise SettingError(f"{option}: {exc}") from None


def settings(learner: str, values: dict[str, Any]) -> None:
    """``values`` are ``learner``'s settings: keys it knows, values of the types its settings take,
    and whatever its own config checks (the learner is built, not run: nothing is written)."""
    from learners.registry import config_class, make
    from learners.registry import registry as learner_registry
    known = learner_registry()

    declared = config_class(known[learner])
    if declared is not None:
        _check_types(learner, declared, values)
    make(learner, **values)


def _check_types(learner: str, declared: type, settings: dict[str, Any]) -> None:
    """A number or a flag given as text (``--set retrieve_k=abc``) names the setting, its type and
    an example, instead of failing as a comparison of text with a number inside the learner."""
    from agents.learner import config_help

    kinds = {row.name: row.type for row in config_help(declared)}
    for key, value in settings.items():
        kind = kinds.get(key, "")
        base = next((p.strip() for p in kind.split("|") if p.strip() != "None"), "")
        if base not in _EXAMPLES or not isinstance(value, str):  # what is not text reached the learner as before
            continue
        raise SettingError(f"--set {key}={value}: {learner}'s setting {key} takes {kind}, e.g. --set "
                           f"{key}={_EXAMPLES[base]} (`sebench learners {learner}` lists its settings)")

