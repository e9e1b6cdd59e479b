"""The library's side of the counterfactual run: results of the named calls changed before they
are handed out, so the grader can see whether a test's answer moves with them (``dependence.py``).

A result keeps its type, shape and dtype (code that works on it keeps working); its values move
beyond any grading tolerance: booleans flip, integers gain 1, floats and complex numbers become
``v + 1 + |v| / 2`` (infinities and NaN stay), strings grow. A function that writes into its first
argument (``copyto``, ``put``: ``inplace_names``) has that argument changed after it ran.
"""

from __future__ import annotations


def perturbed(value, runtime, depth: int = 0):
    """``value`` changed beyond any grading tolerance, keeping its type, shape and dtype."""
    kind = type(value)
    if depth > 16:
        return value
    if kind is runtime.ZWCArray:
        copy = value._zwc_nd.copy()
        perturb_in_place(copy)
        return runtime.wrap(copy)
    if kind in (list, tuple):
        return kind(perturbed(v, runtime, depth + 1) for v in value)
    if kind is bool:
        return not value
    if kind is int:
        return value + 1
    if kind in (float, complex):
        return value + 1 + abs(value) / 2  # no fixed point
    if kind is str:
        return value + "~"
    return value


def perturb_in_place(nd) -> None:
    """Change a NumPy array's every element (booleans flipped, numbers moved), in place."""
    kind = nd.dtype.kind
    if kind == "b":
        nd ^= True
    elif kind in "iu":
        nd += 1
    elif kind in "fc":
        nd += 1 + abs(nd) / 2


def inplace_names(functions: dict) -> frozenset[str]:
    """The zwc names of the catalogue's functions that write into an argument (``copyto``)."""
    import numpy

    from envs.zwc.library.catalogue import CATALOGUE

    targets = set()
    for entry in CATALOGUE:
        if entry.kind == "inplace":
            target = numpy
            for part in entry.call_target.split(".")[1:]:
                target = getattr(target, part)
            targets.add(id(target))
    return frozenset(name for (_, name), fn in functions.items() if id(getattr(fn, "_zwc_target", None)) in targets)
