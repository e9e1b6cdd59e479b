"""Inputs for generated tasks: valid argument lists per catalogue entry.

Each entry's catalogue ``sample`` fixes the call's structure (how many arguments, which are
arrays, which are configuration). A test case keeps the structure and redraws the *data*:
float values within the kind's domain, integers within the kind's range, booleans at random,
and, for elementwise kinds, the length too. Configuration (axes, shapes, ``kth``, degrees,
index lists) stays as sampled, because changing it could make the call invalid; the data
alone is what makes tests discriminate. Edge cases (nan, inf, empty) come from the kinds
where they are valid.

Test splits draw with ``wide=True``: constructor sizes and shapes, and the lengths of
variable-length data, come from wider ranges than train's, so that a test task can still find
>= 8 inputs that no train task of its function used (``eye(n)`` has only a handful of sizes;
``all`` needs an all-true list, and train uses the short ones; see hygiene.py).
"""

from __future__ import annotations

import inspect
import random
from dataclasses import dataclass
from typing import Any

import numpy as np

from envs.zwc.library.catalogue import Entry

FLOAT_RANGE = {"unary_unit": (-0.95, 0.95), "unary_positive": (0.05, 9.0), "unary_ge1": (1.0, 9.0)}
ELEMENTWISE = {"unary", "unary_unit", "unary_positive", "unary_ge1", "unary_tuple", "binary", "binary_tuple",
               "compare", "logical", "integer_unary", "integer_binary", "float_int", "predicate"}
SORTED_ARGUMENT = {"numpy.searchsorted": 0, "numpy.digitize": 1, "numpy.interp": 1}
SHIFTS = {"numpy.left_shift", "numpy.right_shift", "numpy.bitwise_left_shift", "numpy.bitwise_right_shift"}
POSITIVE_SECOND = {"numpy.divide", "numpy.true_divide", "numpy.floor_divide", "numpy.mod", "numpy.remainder",
                   "numpy.fmod", "numpy.divmod", "numpy.power", "numpy.pow"}
CONSTRUCT_KINDS = {"construct"}
SAME_OR_DIFFERENT = {"numpy.allclose", "numpy.array_equal", "numpy.array_equiv"}  # equal, near, different
# integers that are data, and the range that keeps the call valid (indices stay in bounds)
INT_RANGES = {"numpy.bincount": (0, 6), "numpy.unravel_index": (0, 5), "numpy.lexsort": (0, 3),
              "numpy.ix_": (0, 4), "numpy.nonzero": (0, 3), "numpy.argwhere": (0, 3),
              "numpy.count_nonzero": (0, 3), "numpy.unique": (0, 9), "numpy.intersect1d": (0, 9),
              "numpy.union1d": (0, 9), "numpy.where": (0, 99), "numpy.select": (0, 99),
              "numpy.base_repr": (1, 4000), "numpy.binary_repr": (1, 4000)}
FIRST_ARG_ONLY = {"numpy.choose": (0, 2), "numpy.base_repr": (1, 4000)}  # later ints configure
VARIABLE_LENGTH = ELEMENTWISE | {"set", "reduction_bool"} | {"numpy.where", "numpy.bincount", "numpy.unique"}
SCALAR_DATA = {"numpy.atleast_1d", "numpy.binary_repr", "numpy.base_repr"}
SPD = {"numpy.linalg.cholesky", "numpy.linalg.eigh", "numpy.linalg.eigvalsh"}
SHAPE_FROM_DATA = {"info", "construct_like"}  # the answer depends on the input's shape: vary it
TRUE_SHARE = {"numpy.all": 0.85, "numpy.any": 0.15}  # else a constant answer passes most tests
# constructor sizes and shape dimensions: (train, test) ranges; the test range holds >= 8
# sizes train cannot draw, so eye/identity/tri keep 8 test inputs no train task shares
CONSTRUCT_INTS = {False: (1, 10), True: (1, 18)}
CONSTRUCT_DIMS = {False: (1, 4), True: (1, 6)}
LENGTHS = {False: (1, 7), True: (1, 9)}  # of elementwise and other variable-length data


class ArrayArg:
    """Marks a sample argument that the reference must turn into an array (``arr(...)``)."""

    def __init__(self, value: Any):
        self.value = value


@dataclass(frozen=True)
class CallSpec:
    """How a task calls its function: parameter names and which ones are arrays."""

    params: tuple[str, ...]
    array_params: frozenset[int]
    sample: tuple


def numpy_callable(entry: Entry):
    target = np
    for part in entry.call_target.split(".")[1:]:
        target = getattr(target, part)
    return target


def call_spec(entry: Entry) -> CallSpec:
    sample = eval(entry.call_sample, {"arr": ArrayArg, "abs": abs})  # noqa: S307 - catalogue literal
    try:
        names = [p.name for p in inspect.signature(numpy_callable(entry)).parameters.values()
                 if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    except (TypeError, ValueError):
        names = []
    params = []
    for i in range(len(sample)):
        name = names[i] if i < len(names) else f"arg{i + 1}"
        params.append(name if name not in params else f"{name}{i + 1}")
    arrays = frozenset(i for i, a in enumerate(sample) if isinstance(a, ArrayArg))
    plain = tuple(a.value if isinstance(a, ArrayArg) else a for a in sample)
    return CallSpec(tuple(params), arrays, plain)


def _redraw(value: Any, entry: Entry, position: int, rng: random.Random, wide: bool = False) -> Any:
    """A fresh value of the same structure as ``value``."""
    if isinstance(value, bool):
        return value
    if isinstance(value, list):
        if entry.kind in SHAPE_FROM_DATA and position == 0:
            rows, cols = rng.randint(1, 4), rng.randint(1, 4)
            return [[round(rng.uniform(-9, 9), 3) for _ in range(cols)] for _ in range(rows)]
        if entry.numpy in SPD and position == 0:
            m = [[rng.uniform(-2, 2) for _ in range(2)] for _ in range(2)]
            return [[round(sum(m[i][k] * m[j][k] for k in range(2)) + (2.0 if i == j else 0.0), 3)
                     for j in range(2)] for i in range(2)]
        if entry.numpy == "numpy.linalg.matrix_rank" and rng.random() < 0.5:
            row = [round(rng.uniform(-9, 9), 3) for _ in value[0]]
            return [row, [2 * v for v in row]]
        return [_redraw_element(v, entry, position, rng) for v in value]
    if entry.numpy in SCALAR_DATA and position == 0:
        low, high = INT_RANGES.get(entry.numpy, (1, 4000))
        return rng.randint(low, high) if isinstance(value, int) else round(rng.uniform(-9, 9), 3)
    if entry.kind in CONSTRUCT_KINDS:  # shapes, counts and bounds of constructors
        if isinstance(value, int):
            return rng.randint(*CONSTRUCT_INTS[wide])
        if isinstance(value, float):
            return round(rng.uniform(0.5, 5.0), 2)
        if isinstance(value, tuple):
            return tuple(rng.randint(*CONSTRUCT_DIMS[wide]) for _ in value)
    return value


def _redraw_element(value: Any, entry: Entry, position: int, rng: random.Random) -> Any:
    if isinstance(value, ArrayArg):  # an array inside a list argument (np.block's blocks)
        return ArrayArg(_redraw_element(value.value, entry, position, rng))
    if isinstance(value, list):
        return [_redraw_element(v, entry, position, rng) for v in value]
    if isinstance(value, bool):
        return rng.random() < TRUE_SHARE.get(entry.numpy, 0.5)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return value
        if abs(value) >= 1e6:  # magnitudes matter (spacing): keep the scale
            return round(value * rng.uniform(0.5, 2.0), 0)
        low, high = FLOAT_RANGE.get(entry.kind, (-9.0, 9.0))
        if position == 1 and entry.numpy in POSITIVE_SECOND:
            low, high = 0.5, 4.0
        return round(rng.uniform(low, high), 3)
    if isinstance(value, complex):
        imag = round(rng.uniform(-5, 5), 2) if rng.random() < 0.6 else 0.0
        return complex(round(rng.uniform(-5, 5), 2), imag)
    if isinstance(value, int) and entry.kind in ("integer_unary", "integer_binary"):
        if position == 1 and entry.numpy in SHIFTS:
            return rng.randint(0, 6)
        return rng.randint(1, 255)
    if isinstance(value, int) and entry.numpy in FIRST_ARG_ONLY and position == 0:
        return rng.randint(*FIRST_ARG_ONLY[entry.numpy])
    if isinstance(value, int) and entry.numpy in INT_RANGES and entry.numpy not in FIRST_ARG_ONLY:
        return rng.randint(*INT_RANGES[entry.numpy])
    return value  # other integers index, count or configure: kept


def _resize(values: list, length: int, rng: random.Random) -> list:
    """``values`` stretched or cut to ``length`` by sampling its own elements' kinds."""
    return [values[rng.randrange(len(values))] for _ in range(length)]


def generate_inputs(entry: Entry, rng: random.Random, count: int, wide: bool = False) -> list[tuple]:
    """``count`` argument tuples for ``entry``; the first is the catalogue sample redrawn.
    ``wide``: constructor sizes from the test splits' wider range."""
    spec = call_spec(entry)
    cases = []
    for i in range(count):
        args = list(spec.sample)
        flat_lists = [j for j, a in enumerate(args) if isinstance(a, list) and a and not isinstance(a[0], list)]
        if (entry.kind in VARIABLE_LENGTH or entry.numpy in VARIABLE_LENGTH) and i > 0 and flat_lists:
            length = rng.randint(*LENGTHS[wide])
            for j in flat_lists:  # elementwise arguments keep equal lengths
                args[j] = _resize(args[j], length, rng)
        args = [_redraw(a, entry, j, rng, wide) for j, a in enumerate(args)]
        if entry.numpy in SAME_OR_DIFFERENT and rng.random() < 0.6:  # half exact copies, half near ones
            exact = rng.random() < 0.5
            near = [v + (1e-9 if not exact and rng.random() < 0.5 else 0.0) for v in args[0]]
            args[1] = [near, near] if entry.numpy == "numpy.array_equiv" else near
        if entry.numpy in SORTED_ARGUMENT:
            j = SORTED_ARGUMENT[entry.numpy]
            args[j] = sorted(set(args[j])) if len(set(args[j])) > 1 else args[j]
        cases.append(tuple(args))
    return cases


def as_numpy(value: Any) -> Any:
    """``value`` with every nested ArrayArg made a NumPy array, as the reference receives it."""
    if isinstance(value, ArrayArg):
        return np.array(value.value)
    if isinstance(value, list):
        return [as_numpy(v) for v in value]
    if isinstance(value, tuple):
        return tuple(as_numpy(v) for v in value)
    return value


def literal(value: Any) -> str:
    """Python source for a test input value (``float('nan')`` for non-finite floats,
    ``np.array(...)`` for arrays, which the official input format allows)."""
    if isinstance(value, ArrayArg):
        return f"np.array({literal(value.value)})"
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return f"float({str(value)!r})"
    if isinstance(value, list):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    if isinstance(value, tuple):
        inner = ", ".join(literal(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    return repr(value)
