"""Writes the importable ``zwc`` package for a mapping: plain files, no sebench import.

Layout of ``DIR/zwc/``: ``_runtime.py`` (a copy of ``runtime.py``), ``__init__.py``
(one line per function, constants, dtype names) and ``rfx.py`` (the ``numpy.linalg``
functions). Generated sources carry no docstrings of the functions: the docs are a
separate artefact that the closed-book phase withholds.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from envs.zwc.library.catalogue import BY_PATH
from envs.zwc.library.names import SUBMODULE, Mapping
from envs.zwc.library.runtime import CONSTANTS, DTYPES

RUNTIME_SOURCE = Path(__file__).with_name("runtime.py")
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


def refresh_runtime(out_dir: str | Path) -> bool:
    """Give a build written by an older version the current runtime (it is ours, copied
    verbatim; the sandbox needs its call counting). True when the file was replaced."""
    target = Path(out_dir) / "zwc" / "_runtime.py"
    if not target.parent.is_dir():
        return False
    source = RUNTIME_SOURCE.read_bytes()
    if target.is_file() and target.read_bytes() == source:
        return False
    partial = target.with_name(f"_runtime.py.{os.getpid()}.partial")
    partial.write_bytes(source)
    os.replace(partial, target)  # atomic: a concurrent reader sees the old file or the new one
    return True


def write_package(mapping: Mapping, out_dir: str | Path) -> Path:
    """Write ``out_dir/zwc`` for ``mapping``; returns the package directory."""
    pkg = Path(out_dir) / "zwc"
    if pkg.exists():
        shutil.rmtree(pkg)
    pkg.mkdir(parents=True)
    shutil.copyfile(RUNTIME_SOURCE, pkg / "_runtime.py")
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
