"""The runtime of a generated ``zwc`` package: NumPy behind a wall of wrappers.

This file is copied verbatim into every generated package as ``zwc/_runtime.py``, next to
``shared.py`` as ``zwc/_shared.py`` (what it defines alike with the sandbox's stub); it imports
nothing of sebench, and so is never imported as a module of sebench: it runs as ``zwc._runtime``
(``package.import_zwc`` loads it from here for the sandbox's library server). Its job is that
no NumPy object ever reaches user code:

* every argument is *unwrapped* with exact type checks (a ``ZWCArray`` becomes its
  array; lists, tuples and Python scalars pass; user callables are wrapped so that they
  in turn only ever see ZWC values; anything else is refused, which also shuts the
  ``__array__``/``__array_ufunc__`` protocols that would hand raw arrays to user objects);
* every result is *wrapped*: arrays become ``ZWCArray``, NumPy scalars Python scalars,
  named tuples plain tuples, dtypes strings;
* NumPy exceptions are re-raised as ``ZWCError`` subclasses (still ``TypeError``,
  ``ValueError`` ...), with messages that name ZWC functions instead of NumPy ones and
  no chained traceback; NumPy warnings are silenced.

It also counts, per function, the calls that completed (``_CALLS``, keyed by the name of
the genuine function object, found by identity): the sandbox reads the count around each
test to verify at run time that a catalogued zwc function really ran. Function objects
cannot be created from outside this file, so a forged one neither runs NumPy on raw arrays
nor counts.

What it cannot do alone: Python has no private attributes, so a determined caller with
``getattr``/dunder access could still walk from a function to its module globals. The
sandbox's static checks and restricted builtins close those paths; this file makes sure
the *public* surface leads nowhere.
"""

import builtins as _builtins
import operator as _operator
import re as _re
import warnings as _warnings

import numpy as _np
from zwc._shared import (  # the error classes, constants and dtype names the sandbox's stub shares
    CONSTANTS,  # noqa: F401 - part of the runtime's surface (the library child reads runtime.DTYPES)
    DTYPES,  # noqa: F401
    ZWCArithmeticError,
    ZWCError,
    ZWCIndexError,
    ZWCTypeError,
    ZWCValueError,
)

# NumPy's floating-point warnings would name NumPy; zwc stays quiet, as errstate(all="ignore")
_np.seterr(all="ignore")
_warnings.filterwarnings("ignore", module=r"(numpy|zwc)(\.|$)")

_SCALARS = (int, float, complex, bool, str, type(None), type(Ellipsis))
_BUILTIN_TYPES = (int, float, complex, bool, str, object)
_SCRUBS: list = []  # (compiled regex, replacement), set by configure()
_GENUINE: dict = {}  # id(function object made by function()) -> its name; they live as long as the package
_CALLS: dict = {}  # name -> completed calls; cleared and read by the sandbox around each test


def configure(names: dict) -> None:
    """Install the message scrubbers: ``names`` maps NumPy short/qualified names to ZWC ones."""
    scrubs = []
    for src in sorted(names, key=len, reverse=True):
        dst = names[src]
        for prefix in ("numpy.", "np."):
            pattern = r"(?<![\w.])" + _re.escape(prefix + src) + r"\b"
            scrubs.append((_re.compile(pattern), "zwc." + dst))
        if "." not in src:  # a bare name only where it is called: "mean() got ..."
            scrubs.append((_re.compile(r"(?<![\w.])" + _re.escape(src) + r"(?=\(\))"), dst))
    scrubs.append((_re.compile(r"\bndarray\b"), "ZWCArray"))
    scrubs.append((_re.compile(r"\bnumpy\b|\bNumPy\b|\bnp\b", _re.IGNORECASE), "zwc"))
    scrubs.append((_re.compile(r"[\w./\\-]*site-packages[\w./\\-]*"), "<zwc>"))
    _SCRUBS[:] = scrubs


def _scrub(message: str) -> str:
    for pattern, replacement in _SCRUBS:
        message = pattern.sub(replacement, message)
    return message


def _translate(exc: BaseException) -> BaseException:
    """A ZWC exception carrying ``exc``'s meaning but no NumPy name or object."""
    message = _scrub(str(exc))
    if isinstance(exc, IndexError):
        return ZWCIndexError(message)
    if isinstance(exc, TypeError):
        return ZWCTypeError(message)
    if isinstance(exc, ArithmeticError):
        return ZWCArithmeticError(message)
    if isinstance(exc, ValueError):
        return ZWCValueError(message)
    return ZWCError(message)


def _guarded(fn, *args, **kwargs):
    """Call NumPy; translate what it raises. (Warnings are silenced once, at import.)"""
    try:
        return fn(*args, **kwargs)
    except (MemoryError, RecursionError, KeyboardInterrupt, SystemExit):
        raise
    except Exception as exc:  # noqa: BLE001 - every NumPy error must be translated
        error = _translate(exc)
    raise error from None


# -- crossing the wall ---------------------------------------------------------------------
def unwrap(value):
    """User value -> NumPy-ready value. Exact type checks: subclasses are not trusted."""
    kind = type(value)
    if kind is ZWCArray:
        return value._zwc_nd
    if kind in _SCALARS or kind is range:
        return value
    if kind is list:
        return [unwrap(v) for v in value]
    if kind is tuple:
        return tuple(unwrap(v) for v in value)
    if kind is slice:
        return slice(unwrap(value.start), unwrap(value.stop), unwrap(value.step))
    if kind is dict:
        return {unwrap(k): unwrap(v) for k, v in value.items()}
    if any(value is t for t in _BUILTIN_TYPES):  # dtype=float, dtype=int
        return value
    if callable(value):
        return _callback(value)
    raise ZWCTypeError(f"zwc functions do not accept objects of type {kind.__name__!r}")


def wrap(value):
    """NumPy value -> user value: nothing that comes back is a NumPy object."""
    if isinstance(value, _np.ndarray):
        return _new_array(value)
    if isinstance(value, _np.generic):
        return value.item()
    kind = type(value)
    if kind in _SCALARS:
        return value
    if isinstance(value, tuple):  # includes NumPy's named results (EigResult, ...)
        return tuple(wrap(v) for v in value)
    if kind is list:
        return [wrap(v) for v in value]
    if isinstance(value, _np.dtype):
        return str(value)
    if isinstance(value, _np.vectorize):
        return _new_function(value, "vectorized")  # not catalogued: its calls do not count
    if kind is dict:
        return {wrap(k): wrap(v) for k, v in value.items()}
    if kind is bytes or kind is range:
        return value
    raise ZWCTypeError(f"zwc cannot return a value of type {kind.__name__!r}")


def _callback(fn):
    """Wrap a user callable so that NumPy may call it and it sees only ZWC values."""

    def call(*args, **kwargs):
        return unwrap(fn(*[wrap(a) for a in args], **{k: wrap(v) for k, v in kwargs.items()}))

    return call


# -- functions -----------------------------------------------------------------------------
class ZWCFunction:
    """A zwc function. Carries no docstring: the docs live elsewhere, on purpose."""

    __slots__ = ("_zwc_target", "_zwc_name")

    def __new__(cls, *args, **kwargs):
        raise TypeError("zwc functions cannot be created, only called")

    def __call__(self, *args, **kwargs):
        args = [unwrap(a) for a in args]
        kwargs = {k: unwrap(v) for k, v in kwargs.items()}
        result = wrap(_guarded(self._zwc_target, *args, **kwargs))
        name = _GENUINE.get(id(self))
        if name is not None:
            _CALLS[name] = _CALLS.get(name, 0) + 1
        return result

    def __repr__(self):
        return f"<zwc function {self._zwc_name}>"

    def __reduce__(self):
        raise TypeError("zwc functions cannot be pickled")

    def __init_subclass__(cls, **kwargs):
        raise TypeError("zwc functions cannot be subclassed")


def _new_function(target, name):
    fn = object.__new__(ZWCFunction)
    fn._zwc_target = target
    fn._zwc_name = name
    return fn


def function(numpy_path: str, name: str) -> ZWCFunction:
    """The zwc function called ``name`` that runs ``numpy_path`` (e.g. ``numpy.linalg.inv``);
    a catalogued function, so its completed calls are counted."""
    target = _np
    for part in numpy_path.split(".")[1:]:
        target = getattr(target, part)
    fn = _new_function(target, name)
    _GENUINE[id(fn)] = name
    return fn


# -- arrays --------------------------------------------------------------------------------
def _new_array(nd):
    arr = object.__new__(ZWCArray)
    arr._zwc_nd = nd
    return arr


def _binary(op):
    def method(self, other):
        return wrap(_guarded(op, self._zwc_nd, unwrap(other)))

    return method


def _reflected(op):
    def method(self, other):
        return wrap(_guarded(op, unwrap(other), self._zwc_nd))

    return method


def _inplace(op):
    def method(self, other):
        self._zwc_nd = _guarded(op, self._zwc_nd, unwrap(other))
        return self

    return method


def _unary(op):
    def method(self):
        return wrap(_guarded(op, self._zwc_nd))

    return method


class ZWCArray:
    """An n-dimensional array. Supports indexing, slicing, assignment, iteration, ``len``,
    arithmetic and comparison operators, ``shape``, ``ndim``, ``size`` and ``dtype``.
    Everything else is done with zwc functions."""

    __slots__ = ("_zwc_nd",)

    def __init__(self, data=()):
        self._zwc_nd = _guarded(_np.array, unwrap(data))

    def __init_subclass__(cls, **kwargs):
        raise TypeError("ZWCArray cannot be subclassed")

    @property
    def shape(self):
        return tuple(self._zwc_nd.shape)

    @property
    def ndim(self):
        return int(self._zwc_nd.ndim)

    @property
    def size(self):
        return int(self._zwc_nd.size)

    @property
    def dtype(self):
        return str(self._zwc_nd.dtype)

    def __len__(self):
        return _guarded(len, self._zwc_nd)

    def __iter__(self):
        if self._zwc_nd.ndim == 0:
            raise ZWCTypeError("iteration over a 0-d ZWCArray")
        for item in self._zwc_nd:
            yield wrap(item)

    def __getitem__(self, key):
        return wrap(_guarded(_operator.getitem, self._zwc_nd, unwrap(key)))

    def __setitem__(self, key, value):
        _guarded(_operator.setitem, self._zwc_nd, unwrap(key), unwrap(value))

    def __contains__(self, value):
        return bool(_guarded(_operator.contains, self._zwc_nd, unwrap(value)))

    def __bool__(self):
        return bool(_guarded(bool, self._zwc_nd))

    def __int__(self):
        return int(_guarded(int, self._zwc_nd))

    def __float__(self):
        return float(_guarded(float, self._zwc_nd))

    def __complex__(self):
        return complex(_guarded(complex, self._zwc_nd))

    def __index__(self):
        return int(_guarded(_operator.index, self._zwc_nd))

    def __round__(self, ndigits=None):
        if ndigits is None and self._zwc_nd.ndim == 0:
            return round(self._zwc_nd.item())
        return wrap(_guarded(_np.round, self._zwc_nd, ndigits or 0))

    def __str__(self):
        return str(self._zwc_nd)

    def __repr__(self):
        text = repr(self._zwc_nd)
        if not text.startswith("array("):
            return text
        return "ZWCArray" + text[len("array"):].replace("\n      ", "\n         ")

    def __format__(self, spec):
        if spec and self._zwc_nd.ndim == 0:
            return _builtins.format(self._zwc_nd.item(), spec)
        return _builtins.format(str(self), spec)

    def __copy__(self):
        return _new_array(self._zwc_nd.copy())

    def __deepcopy__(self, memo):
        return _new_array(self._zwc_nd.copy())

    def __reduce__(self):
        raise TypeError("ZWCArray cannot be pickled")

    def __reduce_ex__(self, protocol):
        raise TypeError("ZWCArray cannot be pickled")

    __hash__ = None  # type: ignore[assignment]  # mutable, like the arrays it wraps

    __add__, __radd__, __iadd__ = _binary(_operator.add), _reflected(_operator.add), _inplace(_operator.iadd)
    __sub__, __rsub__, __isub__ = _binary(_operator.sub), _reflected(_operator.sub), _inplace(_operator.isub)
    __mul__, __rmul__, __imul__ = _binary(_operator.mul), _reflected(_operator.mul), _inplace(_operator.imul)
    __truediv__, __rtruediv__, __itruediv__ = (_binary(_operator.truediv), _reflected(_operator.truediv),
                                               _inplace(_operator.itruediv))
    __floordiv__, __rfloordiv__, __ifloordiv__ = (_binary(_operator.floordiv), _reflected(_operator.floordiv),
                                                  _inplace(_operator.ifloordiv))
    __mod__, __rmod__, __imod__ = _binary(_operator.mod), _reflected(_operator.mod), _inplace(_operator.imod)
    __pow__, __rpow__, __ipow__ = _binary(_operator.pow), _reflected(_operator.pow), _inplace(_operator.ipow)
    __matmul__, __rmatmul__ = _binary(_operator.matmul), _reflected(_operator.matmul)
    __and__, __rand__, __iand__ = _binary(_operator.and_), _reflected(_operator.and_), _inplace(_operator.iand)
    __or__, __ror__, __ior__ = _binary(_operator.or_), _reflected(_operator.or_), _inplace(_operator.ior)
    __xor__, __rxor__, __ixor__ = _binary(_operator.xor), _reflected(_operator.xor), _inplace(_operator.ixor)
    __lshift__, __rlshift__ = _binary(_operator.lshift), _reflected(_operator.lshift)
    __rshift__, __rrshift__ = _binary(_operator.rshift), _reflected(_operator.rshift)
    __divmod__, __rdivmod__ = _binary(divmod), _reflected(divmod)
    __eq__, __ne__ = _binary(_operator.eq), _binary(_operator.ne)
    __lt__, __le__ = _binary(_operator.lt), _binary(_operator.le)
    __gt__, __ge__ = _binary(_operator.gt), _binary(_operator.ge)
    __neg__, __pos__ = _unary(_operator.neg), _unary(_operator.pos)
    __abs__, __invert__ = _unary(_operator.abs), _unary(_operator.invert)


for _cls in (ZWCArray, ZWCFunction):
    _cls.__module__ = "zwc"  # type(x) shows <class 'zwc.ZWCArray'>, not the private module
