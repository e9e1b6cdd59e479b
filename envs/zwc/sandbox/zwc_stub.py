"""The ``zwc`` a candidate imports: a stub that holds nothing worth stealing.

The candidate's process is forked from a server that never imported NumPy or the zwc
implementation. What ``import zwc`` gives it is this module's stub: functions are names,
resolved by the library process on request (``dir(zwc)`` lists none of them, and there is no
table here to walk to); arrays are handles to arrays the library holds, with their shape and
dtype; every call and every array operation is a request over one channel
(``library_child.py``). The library counts the calls and writes the log the grader reads, so
nothing the candidate does in its own process (reflection included) can forge its usage or
reach NumPy: it can forge only its own return values.

Honest code sees the library it was documented: the same names, values, operators, printing
and error classes (``zwc.ZWCError`` and its ``TypeError``/``ValueError``/... subclasses).
"""

from __future__ import annotations

import weakref

from envs.zwc.library.shared import (  # what the library's runtime defines alike; imports nothing
    CONSTANTS,
    DTYPES,
    SUBMODULE,
    ZWCArithmeticError,
    ZWCError,
    ZWCIndexError,
    ZWCTypeError,
    ZWCValueError,
)
from envs.zwc.sandbox import wire
from envs.zwc.sandbox.state import FrozenModule

_type, _len, _callable, _send, _receive = type, len, callable, wire.send, wire.receive


class LibraryUnavailable(RuntimeError):
    """The library process stopped answering (it hit a limit, or the candidate broke the channel)."""


_ERRORS = {"ZWCError": ZWCError, "ZWCTypeError": ZWCTypeError, "ZWCValueError": ZWCValueError,
           "ZWCIndexError": ZWCIndexError, "ZWCArithmeticError": ZWCArithmeticError,
           "AttributeError": AttributeError, "MemoryError": MemoryError, "RecursionError": RecursionError,
           "input": ValueError}


class _Client:
    """This process's end of the channel, and what it knows for the current test."""

    __slots__ = ("fd", "frees", "arrays", "resolved", "callbacks", "failures", "broken", "entering")

    def __init__(self, fd: int):
        self.fd, self.frees, self.broken, self.entering = fd, [], False, False
        self.arrays: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
        self.resolved: dict = {}
        self.callbacks: dict = {}
        self.failures: dict = {}

    def request(self, message: dict):
        if self.broken:
            raise LibraryUnavailable("the zwc library is not available")
        if self.frees:
            message["f"], self.frees = self.frees, []
        if self.entering:  # the entry function was called since the last request
            message["enter"], self.entering = True, False
        try:
            _send(self.fd, message)
            while True:
                reply = _receive(self.fd)
                op = reply.get("op") if _type(reply) is dict else None
                if op == "ok":
                    return self.decode(reply.get("v"))
                if op == "err":
                    raise self._error(reply)
                if op != "cb":
                    raise LibraryUnavailable("the zwc library sent an unreadable reply")
                self._run_callback(reply)
        except (wire.ChannelClosed, wire.FrameError, OSError) as exc:
            self.broken = True
            raise LibraryUnavailable(f"the zwc library stopped answering ({exc})") from None

    def _error(self, reply: dict) -> BaseException:
        if "cb" in reply:
            failure = self.failures.pop(reply["cb"], None)
            return failure if failure is not None else ZWCError("a callback failed")
        kind = _ERRORS.get(reply.get("k"), ZWCError)
        return kind(str(reply.get("m", "")))

    def _run_callback(self, reply: dict) -> None:
        fn = self.callbacks.get(reply.get("id"))
        try:
            if fn is None:
                raise ZWCValueError("a callback of another test")
            value = fn(*self.decode(reply.get("a", [])), **self.decode(reply.get("k", {"$d": []})))
            _send(self.fd, {"op": "cbr", "v": self.encode(value)})
        except (wire.ChannelClosed, wire.FrameError):
            raise
        except BaseException as exc:  # noqa: BLE001 - the candidate's exception goes back to its caller
            token = _len(self.failures) + 1
            while token in self.failures:
                token += 1
            self.failures[token] = exc
            _send(self.fd, {"op": "cbe", "t": token})

    def begin(self, index: int):
        """Start test ``index``: forget the last test's arrays and callbacks; its arguments.
        (Which names exist is kept: it is the library's to say, and the same in every test.)"""
        self.arrays.clear()
        self.callbacks.clear()
        self.failures.clear()
        self.frees, self.entering = [], False
        args, kwargs = self.request({"op": "begin", "i": index})
        return args, kwargs

    def enter(self) -> None:
        """The entry function is called now: only calls from here on count (said with the next
        request, which costs no round trip of its own)."""
        self.entering = True

    def end(self) -> None:
        if not self.broken:
            try:
                _send(self.fd, {"op": "end"})
            except (OSError, wire.FrameError):
                pass

    # -- values -----------------------------------------------------------------------------
    def encode(self, value, depth: int = 0):
        if depth > 64:
            raise ZWCValueError("value nested too deeply")
        kind = _type(value)
        if kind is ZWCArray:
            return {"$h": value._h}
        if kind is ZWCFunction:
            if value._h:
                return {"$fn": value._h}
            raise ZWCTypeError("a zwc function cannot be passed as a value; wrap it in a lambda")
        tag = wire.plain_tag(value, depth, self.encode)
        if tag is not None or value is None:
            return tag
        if _callable(value):
            token = _len(self.callbacks) + 1
            self.callbacks[token] = value
            return {"$cb": token}
        raise ZWCTypeError(f"zwc functions do not accept objects of type {kind.__name__!r}")

    def decode(self, tag):
        kind = _type(tag)
        if kind is list:
            return [self.decode(v) for v in tag]
        if kind is not dict:
            return tag
        if "$h" in tag:
            handle = tag["$h"]
            known = self.arrays.get(handle)
            if known is not None:
                return known
            array = object.__new__(ZWCArray)
            array._h, array._shape, array._dtype = handle, tuple(tag["s"]), tag["d"]
            self.arrays[handle] = array
            return array
        if "$fn" in tag:
            return _function("", "vectorized", tag["$fn"])
        return wire.plain_value(tag, self.decode)


_CLIENT: list = []  # the one client of this process, set by connect()


def _slot_handle(array) -> int:
    """An array's handle, 0 where its constructor failed before setting one."""
    try:
        return array._h
    except AttributeError:
        return 0


def connect(fd: int) -> _Client:
    """Talk to the library over ``fd`` from now on (in the forked candidate child)."""
    _CLIENT[:] = [_Client(fd)]
    return _CLIENT[0]


def _request(message: dict):
    if not _CLIENT:
        raise LibraryUnavailable("no zwc library is connected")
    return _CLIENT[0].request(message)


class ZWCFunction:
    """A zwc function: a name the library resolves. Carries no docstring, on purpose."""

    __slots__ = ("_name", "_sub", "_h")

    def __new__(cls, *args, **kwargs):
        raise TypeError("zwc functions cannot be created, only called")

    def __call__(self, *args, **kwargs):
        client = _CLIENT[0]
        message = {"a": client.encode(list(args)), "k": client.encode(kwargs)}
        if self._h:
            message.update(op="callh", h=self._h)
        else:
            message.update(op="call", n=self._name, sub=self._sub)
        return client.request(message)

    def __repr__(self):
        return f"<zwc function {self._name}>"

    def __reduce__(self):
        raise TypeError("zwc functions cannot be pickled")

    def __init_subclass__(cls, **kwargs):
        raise TypeError("zwc functions cannot be subclassed")


def _function(sub: str, name: str, handle: int = 0) -> ZWCFunction:
    fn = object.__new__(ZWCFunction)
    fn._name, fn._sub, fn._h = name, sub, handle
    return fn


def _remote(name: str):
    def method(self, *args):
        client = _CLIENT[0]
        return client.request({"op": "m", "h": self._h, "m": name, "a": client.encode(list(args))})

    method.__name__ = name
    return method


def _remote_inplace(name: str):
    def method(self, other):
        client = _CLIENT[0]
        result = client.request({"op": "m", "h": self._h, "m": name, "a": [client.encode(other)]})
        return self if _type(result) is ZWCArray and result._h == self._h else result

    method.__name__ = name
    return method


class ZWCArray:
    """An n-dimensional array. Supports indexing, slicing, assignment, iteration, ``len``,
    arithmetic and comparison operators, ``shape``, ``ndim``, ``size`` and ``dtype``.
    Everything else is done with zwc functions."""

    __slots__ = ("_h", "_shape", "_dtype", "__weakref__")

    def __init__(self, data=()):
        client = _CLIENT[0]
        made = client.request({"op": "new", "a": [client.encode(data)]})
        self._h, self._shape, self._dtype = made._h, made._shape, made._dtype
        made._h = 0  # the handle is this object's now
        client.arrays[self._h] = self

    def __init_subclass__(cls, **kwargs):
        raise TypeError("ZWCArray cannot be subclassed")

    def __del__(self):
        handle = _slot_handle(self)  # a failed constructor never set it
        if _CLIENT and handle:
            _CLIENT[0].frees.append(handle)

    @property
    def shape(self):
        return self._shape

    @property
    def ndim(self):
        return _len(self._shape)

    @property
    def size(self):
        total = 1
        for extent in self._shape:
            total *= extent
        return total

    @property
    def dtype(self):
        return self._dtype

    def __len__(self):
        if not self._shape:
            raise ZWCTypeError("len() of unsized object")
        return self._shape[0]

    def __iter__(self):
        if not self._shape:
            raise ZWCTypeError("iteration over a 0-d ZWCArray")
        return iter(_request({"op": "iter", "h": self._h}))

    def __round__(self, ndigits=None):
        return _request({"op": "m", "h": self._h, "m": "__round__", "a": [ndigits]})

    def __deepcopy__(self, memo):
        return _request({"op": "m", "h": self._h, "m": "__deepcopy__", "a": []})

    def __reduce__(self):
        raise TypeError("ZWCArray cannot be pickled")

    def __reduce_ex__(self, protocol):
        raise TypeError("ZWCArray cannot be pickled")

    __hash__ = None  # type: ignore[assignment]  # mutable, like the arrays it wraps


for _name in ("__getitem__", "__setitem__", "__contains__", "__bool__", "__int__", "__float__", "__complex__",
              "__index__", "__str__", "__repr__", "__format__", "__copy__",
              "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__",
              "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__pow__", "__rpow__", "__matmul__",
              "__rmatmul__", "__and__", "__rand__", "__or__", "__ror__", "__xor__", "__rxor__", "__lshift__",
              "__rlshift__", "__rshift__", "__rrshift__", "__divmod__", "__rdivmod__", "__eq__", "__ne__",
              "__lt__", "__le__", "__gt__", "__ge__", "__neg__", "__pos__", "__abs__", "__invert__"):
    setattr(ZWCArray, _name, _remote(_name))
for _name in ("__iadd__", "__isub__", "__imul__", "__itruediv__", "__ifloordiv__", "__imod__", "__ipow__",
              "__iand__", "__ior__", "__ixor__"):
    setattr(ZWCArray, _name, _remote_inplace(_name))
del _name


class StubModule(FrozenModule):
    """``zwc`` and ``zwc.rfx``: constants and dtype names here, functions on request only."""

    def __getattr__(self, name):
        sub = "" if self.__name__ == "zwc" else SUBMODULE
        client = _CLIENT[0] if _CLIENT else None
        key = (sub, name)
        if client is not None and _type(name) is str and not name.startswith("__"):
            known = client.resolved.get(key)
            if known is None:
                known = client.resolved[key] = bool(client.request({"op": "resolve", "sub": sub, "n": name}))
            if known:
                return _function(sub, name)
        raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")

    def __dir__(self):
        return []


for _cls in (ZWCArray, ZWCFunction, LibraryUnavailable):
    _cls.__module__ = "zwc"  # the error classes of shared.py say "zwc" already


def modules() -> dict[str, StubModule]:
    """The candidate's ``zwc`` and ``zwc.rfx`` (built once, in the server, before forking)."""
    names = {"ZWCArray": ZWCArray, "ZWCError": ZWCError, **CONSTANTS}
    names.update({f"{d}_" if d == "bool" else d: d for d in DTYPES})
    sub = StubModule(f"zwc.{SUBMODULE}")
    top = StubModule("zwc")
    vars(top).update(names)
    vars(top)[SUBMODULE] = sub
    return {"zwc": top, f"zwc.{SUBMODULE}": sub}


def to_plain(value, depth: int = 0):
    """A returned stub array as nested lists (asked of the library); other values unchanged."""
    if _type(value) is ZWCArray:
        return _request({"op": "value", "h": value._h})
    return value
