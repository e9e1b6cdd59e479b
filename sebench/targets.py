"""Objects named on the command line as ``package.module:Attr`` or ``path/to/file.py:Attr``.

The learner checker (``sebench check-learner``) and the backend checkers (``sebench
check-backend``) take a user's class or factory this way. One loader, so both give the same
errors: each says what is wrong with the target and how to write it (``TargetError``).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from pathlib import Path
from typing import Any

from sebench.errors import SebenchError

FILE_MODULE_PREFIX = "sebench_target_"  # the module name a file target is loaded under


class TargetError(SebenchError, ValueError):
    """A target that names nothing usable: what is wrong with it, and how to write it."""

    def __init__(self, target: str, problem: str, fix: str):
        self.target, self.problem, self.fix = target, problem, fix
        super().__init__(f"{target!r}: {problem}; {fix}")


def load_object(target: str, *, error: type[TargetError] = TargetError, hint_for=None) -> tuple[Any, str]:
    """The object ``package.module:Attr`` or ``path/to/file.py:Attr`` names (``Attr`` dotted for a
    nested attribute) and where it came from (``"module"`` or ``"file"``). ``hint_for(module)``
    says what the module does hold when ``Attr`` is missing; errors are raised as ``error``."""
    place, _, attr = target.rpartition(":")
    if not place or not attr:
        raise error(target, "an empty module or attribute around ':'",
                    "write package.module:Attr or path/to/file.py:Attr")
    from_file = place.endswith(".py")
    module = _load_file(target, place, error) if from_file else _import(target, place, error)
    value: Any = module
    for part in attr.split("."):
        if not hasattr(value, part):
            hint = hint_for(module) if hint_for else "name an attribute it defines"
            raise error(target, f"{place} has no attribute {attr!r}", f"{hint}; name one after ':'")
        value = getattr(value, part)
    return value, "file" if from_file else "module"


def _import(target: str, module: str, error: type[TargetError]):
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name and module.startswith(exc.name):
            raise error(target, f"no module named {exc.name!r} on sys.path",
                        "install the package that holds it, run from the directory that holds it, or "
                        "give path/to/file.py:Attr") from None
        raise error(target, f"importing {module} failed: {exc}", "install what it imports") from None
    except Exception as exc:  # noqa: BLE001 - any error while importing a user's module is reported as such
        raise error(target, f"importing {module} raised {type(exc).__name__}: {exc}",
                    "fix the module so that it imports") from None


def _load_file(target: str, place: str, error: type[TargetError]):
    """The file run once as a module (kept in ``sys.modules``: dataclasses and pickling look their
    module up there, and a second target in the same file gets the same classes)."""
    path = Path(place).expanduser().resolve()
    if not path.is_file():
        raise error(target, f"no such file {path}", "give the path of the .py file that defines it")
    name = f"{FILE_MODULE_PREFIX}{path.stem}_{hashlib.sha1(str(path).encode()).hexdigest()[:8]}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # noqa: BLE001 - any error while running a user's file is reported as such
        del sys.modules[name]
        raise error(target, f"running {path} raised {type(exc).__name__}: {exc}",
                    "fix the file so that it imports") from None
    return module
