"""Writes the importable ``zwc`` package for a mapping: plain files, no sebench import.

Layout of ``DIR/zwc/``: ``_runtime.py`` and ``_shared.py`` (copies of ``runtime.py`` and
``shared.py``), ``__init__.py`` (one line per function, constants, dtype names) and ``rfx.py``
(the ``numpy.linalg`` functions). Generated sources carry no docstrings of the functions: the docs are a
separate artefact that the closed-book phase withholds.
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path
from types import ModuleType

from envs.zwc.library.catalogue import BY_PATH
from envs.zwc.library.names import SUBMODULE, Mapping
from envs.zwc.library.shared import CONSTANTS, DTYPES

RUNTIME_SOURCE = Path(__file__).with_name("runtime.py")  # never imported as a module of sebench
SHARED_SOURCE = Path(__file__).with_name("shared.py")
ARRAY_CONSTRUCTOR = "numpy.array"  # the function that official inputs' np.array(...) becomes


def _scrub_table(mapping: Mapping) -> dict[str, str]:
    """NumPy names (bare and ``linalg.``-qualified) -> ZWC names, for error messages."""
    table: dict[str, str] = {}
    for e in mapping:
        short = e.numpy.rsplit(".", 1)[1]
        rel = e.zwc[len("zwc."):]
        if e.numpy.startswith("numpy.linalg."):
            table[f"linalg.{short}"] = rel
            table.setdefault(short, rel)
        else:
            table[short] = rel  # top level wins over linalg for shared names
    table["ndarray"] = "ZWCArray"
    return table


def _function_lines(mapping: Mapping, linalg: bool) -> list[str]:
    lines = []
    for e in mapping:
        if e.numpy.startswith("numpy.linalg.") != linalg:
            continue
        target = BY_PATH[e.numpy].call_target if e.numpy in BY_PATH else e.numpy
        lines.append(f"{e.short} = _function({target!r}, {e.short!r})")
    return lines


def import_zwc(package_dir: str | Path) -> tuple[ModuleType, ModuleType]:
    """Import the build's ``zwc`` package (``package_dir/zwc``) with this version's runtime; the
    package and its runtime module.

    The runtime is ours (the sandbox needs its call counting), so it is loaded from sebench's
    own source as ``zwc._runtime`` (and ``zwc._shared``) rather than from the build's copy: a
    build written by an older version runs the current runtime, and loading writes no file.
    For a process that imports one ``zwc``: the library server, the doc-example check."""
    for name, source in (("zwc._shared", SHARED_SOURCE), ("zwc._runtime", RUNTIME_SOURCE)):
        spec = importlib.util.spec_from_file_location(name, source)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    sys.path.insert(0, str(package_dir))
    import zwc

    zwc._shared, zwc._runtime = sys.modules["zwc._shared"], sys.modules["zwc._runtime"]  # as their import would
    return zwc, sys.modules["zwc._runtime"]


def write_package(mapping: Mapping, out_dir: str | Path) -> Path:
    """Write ``out_dir/zwc`` for ``mapping``; returns the package directory."""
    pkg = Path(out_dir) / "zwc"
    if pkg.exists():
        shutil.rmtree(pkg)
    pkg.mkdir(parents=True)
    shutil.copyfile(RUNTIME_SOURCE, pkg / "_runtime.py")
    shutil.copyfile(SHARED_SOURCE, pkg / "_shared.py")
    top = [e.short for e in mapping if not e.numpy.startswith("numpy.linalg.")]
    sub = [e.short for e in mapping if e.numpy.startswith("numpy.linalg.")]
    init = [
        '"""zwc: a numerical array library. Its reference is distributed separately."""',
        "from zwc._runtime import ZWCArray, ZWCError",
        "from zwc._runtime import configure as _configure",
        "from zwc._runtime import function as _function",
        "",
        f"_configure({_scrub_table(mapping)!r})",
        *_function_lines(mapping, linalg=False),
        *(f"{k} = {_literal(v)}" for k, v in CONSTANTS.items()),
        *(f"{d}{'_' if d == 'bool' else ''} = {d!r}" for d in DTYPES),
        f"from zwc import {SUBMODULE}  # noqa: E402",
        "",
        f"__all__ = {sorted(['ZWCArray', 'ZWCError', SUBMODULE, *top, *CONSTANTS, *_dtype_names()])!r}",
    ]
    (pkg / "__init__.py").write_text("\n".join(init) + "\n")
    rfx = [
        f'"""zwc.{SUBMODULE}: linear algebra."""',
        "from zwc._runtime import function as _function",
        "",
        *_function_lines(mapping, linalg=True),
        "",
        f"__all__ = {sorted(sub)!r}",
    ]
    (pkg / f"{SUBMODULE}.py").write_text("\n".join(rfx) + "\n")
    return pkg


def _literal(value: object) -> str:
    """Source for a constant; inf and nan have no literal."""
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return f"float({str(value)!r})"
    return repr(value)


def _dtype_names() -> list[str]:
    return [f"{d}_" if d == "bool" else d for d in DTYPES]


def public_names(mapping: Mapping) -> set[str]:
    """Every attribute path a user may write: ``zwc.kocito``, ``zwc.rfx.quvohe``, ``zwc.pi``."""
    names = {e.zwc for e in mapping}
    names |= {f"zwc.{n}" for n in ("ZWCArray", "ZWCError", SUBMODULE, *CONSTANTS, *_dtype_names())}
    return names
