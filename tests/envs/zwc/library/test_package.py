"""The generated package: every function equals NumPy; nothing leads back to NumPy."""

import math
import subprocess
import sys

import numpy as np
import pytest

from envs.zwc.grading.equality import values_equal
from envs.zwc.library.catalogue import CATALOGUE
from envs.zwc.library.names import Mapping

NONDETERMINISTIC = {"numpy.empty", "numpy.empty_like"}  # compare shapes only


def _plain(value, zwc):
    if zwc is not None and isinstance(value, zwc.ZWCArray):
        return ("array", value.shape, _plain(list(value) if value.ndim else value[()], zwc))
    if isinstance(value, np.ndarray):
        return ("array", value.shape, _plain(list(value) if value.ndim else value[()], None))
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return [_plain(v, zwc) for v in value]
    if callable(value):
        return "callable"
    return value


def _no_numpy_inside(value, zwc):
    if isinstance(value, (np.ndarray, np.generic, np.dtype)):
        return False
    if isinstance(value, (list, tuple)):
        return all(_no_numpy_inside(v, zwc) for v in value)
    return type(value).__module__ in ("builtins", "zwc")


@pytest.mark.parametrize("entry", CATALOGUE, ids=lambda e: e.numpy)
def test_every_function_equals_numpy(entry, zwc7, seed7_dir):
    mapping = Mapping.load(seed7_dir / "mapping.json")
    zwc_fn = zwc7
    for part in mapping.to_zwc(entry.numpy).split(".")[1:]:
        zwc_fn = getattr(zwc_fn, part)
    np_fn = np
    for part in entry.call_target.split(".")[1:]:
        np_fn = getattr(np_fn, part)
    np_args = eval(entry.call_sample, {"arr": np.array, "abs": abs})
    zwc_args = eval(entry.call_sample, {"arr": zwc7.ZWCArray, "abs": abs})
    with np.errstate(all="ignore"):
        expected = np_fn(*np_args)
    got = zwc_fn(*zwc_args)
    assert _no_numpy_inside(got, zwc7), f"{entry.numpy} returned a NumPy object: {type(got)}"
    if entry.numpy in NONDETERMINISTIC:
        assert got.shape == expected.shape
        return
    if entry.numpy == "numpy.vectorize":  # a callable: compare what it computes
        got, expected = got([-1.5, 2.0]), expected([-1.5, 2.0])
    assert values_equal(_plain(got, zwc7), _plain(expected, None), rel_tol=1e-12, abs_tol=1e-12)
    if entry.kind == "inplace":  # the mutated first argument must match too
        assert values_equal(_plain(zwc_args[0], zwc7), _plain(np_args[0], None))


def test_array_behaves_like_an_array(zwc7):
    a = zwc7.ZWCArray([[1.0, 2.0], [3.0, 4.0]])
    assert a.shape == (2, 2) and a.ndim == 2 and a.size == 4 and a.dtype == "float64"
    assert len(a) == 2
    assert isinstance(a[0], zwc7.ZWCArray) and a[0, 1] == 2.0 and isinstance(a[0, 1], float)
    assert [list(row) for row in a] == [[1.0, 2.0], [3.0, 4.0]]
    a[0, 0] = 10
    assert a[0, 0] == 10.0
    view = a[1]
    view[0] = -1
    assert a[1, 0] == -1.0  # slices are views, as in NumPy
    b = (a + 1) * 2 - a / 2
    assert isinstance(b, zwc7.ZWCArray) and math.isclose(b[0, 1], 5.0)
    assert list(a[0] > 5) == [True, False]
    assert list(-a[0]) == [-10.0, -2.0] and list(abs(-a[0])) == [10.0, 2.0]
    c = zwc7.ZWCArray([1, 2, 3])
    c += 1
    assert list(c) == [2, 3, 4] and 3 in c and float(c[0]) == 2.0
    assert str(zwc7.ZWCArray([1.0, 2.0])) == "[1. 2.]"
    assert repr(zwc7.ZWCArray([1, 2])) == "ZWCArray([1, 2])"
    assert (zwc7.ZWCArray([[1.0, 2.0], [3.0, 4.0]]) @ zwc7.ZWCArray([1.0, 1.0]))[1] == 7.0


@pytest.mark.parametrize("attr", ["mean", "sum", "reshape", "tolist", "T", "base", "data", "ctypes",
                                  "flat", "view", "__array__", "__array_interface__", "__dict__"])
def test_array_offers_no_numpy_attribute(zwc7, attr):
    with pytest.raises(AttributeError):
        getattr(zwc7.ZWCArray([1, 2]), attr)


def test_errors_never_mention_numpy(zwc7, seed7_dir):
    mapping = Mapping.load(seed7_dir / "mapping.json")
    mean = zwc7
    for part in mapping.to_zwc("numpy.mean").split(".")[1:]:
        mean = getattr(mean, part)
    inv = zwc7.rfx
    for part in mapping.to_zwc("numpy.linalg.inv").split(".")[2:]:
        inv = getattr(inv, part)
    attempts = [lambda: mean([1, 2], axis=3), lambda: mean([1, 2], bogus=1), lambda: inv([[1, 2], [2, 4]]),
                lambda: zwc7.ZWCArray([1, 2]) + zwc7.ZWCArray([1, 2, 3]), lambda: zwc7.ZWCArray([1])[5],
                lambda: mean(object())]
    for attempt in attempts:
        with pytest.raises(zwc7.ZWCError) as info:
            attempt()
        text = str(info.value).lower()
        assert "numpy" not in text and "np." not in text and "ndarray" not in text
        assert info.value.__cause__ is None
        assert info.value.__context__ is None or info.value.__suppress_context__
    assert "mean" not in repr(mean) and repr(mean).startswith("<zwc function")


def test_user_callbacks_see_only_zwc_values(zwc7, seed7_dir):
    mapping = Mapping.load(seed7_dir / "mapping.json")
    vectorize = zwc7
    for part in mapping.to_zwc("numpy.vectorize").split(".")[1:]:
        vectorize = getattr(vectorize, part)
    seen = []
    vectorize(lambda v: seen.append(type(v)) or v * 2)([1.0, 2.0])
    assert seen and all(t is float for t in seen)
    piecewise = zwc7
    for part in mapping.to_zwc("numpy.piecewise").split(".")[1:]:
        piecewise = getattr(piecewise, part)
    piecewise([1.0, -1.0], [[True, False], [False, True]], [lambda x: seen.append(type(x)) or x, 0.0])
    assert seen[-1] is zwc7.ZWCArray


def test_official_package_is_importable_in_a_fresh_process(official_env):
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import zwc; "
            "print(zwc.kocito([1.0, 2.0, 6.0]), zwc.rfx.zigecit([[1.0, 2.0], [3.0, 4.0]]))")
    out = subprocess.run([sys.executable, "-c", code, str(official_env.root)], capture_output=True, text=True,
                         check=True)
    assert out.stdout.split()[0] == "3.0" and math.isclose(float(out.stdout.split()[1]), -2.0)


def test_the_stub_holds_the_runtime_constants_and_dtypes(zwc7):
    """The candidate's zwc (the stub) answers constants and dtype names itself: they must be the
    library's, value for value, and NumPy's; so must its error classes."""
    from envs.zwc.sandbox import zwc_stub

    zwc_runtime = sys.modules["zwc._runtime"]  # the build's runtime, as its package imports it
    assert zwc_stub.DTYPES == zwc_runtime.DTYPES
    assert set(zwc_stub.CONSTANTS) == set(zwc_runtime.CONSTANTS)
    for name, value in zwc_runtime.CONSTANTS.items():
        stub = zwc_stub.CONSTANTS[name]
        assert stub == value or (isinstance(value, float) and math.isnan(value) and math.isnan(stub)), name
    for name in ("pi", "e", "euler_gamma"):
        assert zwc_runtime.CONSTANTS[name] == float(getattr(np, name)), name
    for name in ("ZWCError", "ZWCTypeError", "ZWCValueError", "ZWCIndexError", "ZWCArithmeticError"):
        stub_class, runtime_class = getattr(zwc_stub, name), getattr(zwc_runtime, name)
        assert [c.__name__ for c in stub_class.__mro__] == [c.__name__ for c in runtime_class.__mro__], name
        assert stub_class.__module__ == runtime_class.__module__ == "zwc", name
