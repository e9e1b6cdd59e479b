"""What the two ``zwc`` a program can meet define alike: error classes, constants, dtype names.

The library's runtime (``runtime.py``, NumPy behind wrappers) and the candidate's stub in the
sandbox (``sandbox/zwc_stub.py``, which holds no NumPy) must present the same surface: honest
code catches the same ``ZWCError`` subclasses and reads the same ``zwc.pi`` and dtype names in
both. So both take them from here, once. This module imports nothing: the stub's fork server
must not import NumPy, and the generated package ships it verbatim as ``zwc/_shared.py`` next
to its runtime (``package.py``), plain files with no sebench import.
"""

SUBMODULE = "rfx"  # numpy.linalg lives under zwc.rfx, as in SE-Bench v1
# NumPy's values (float(np.pi), ..., np.euler_gamma), written out: the stub has no NumPy to ask
CONSTANTS = {"pi": 3.141592653589793, "e": 2.718281828459045, "inf": float("inf"), "nan": float("nan"),
             "euler_gamma": 0.5772156649015329, "newaxis": None}
# dtypes are exposed as their names: passing a string keeps NumPy's type objects out of reach
DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128")


class ZWCError(Exception):
    """Raised by a zwc function that cannot handle its arguments."""


class ZWCTypeError(ZWCError, TypeError):
    """A zwc function got arguments of the wrong type or number."""


class ZWCValueError(ZWCError, ValueError):
    """A zwc function got arguments with invalid values or shapes."""


class ZWCIndexError(ZWCError, IndexError):
    """An index or axis was out of range."""


class ZWCArithmeticError(ZWCError, ArithmeticError):
    """A numerical operation failed."""


for _cls in (ZWCError, ZWCTypeError, ZWCValueError, ZWCIndexError, ZWCArithmeticError):
    _cls.__module__ = "zwc"  # type(x) shows <class 'zwc.ZWCError'>, not the private module
del _cls
