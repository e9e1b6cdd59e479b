"""State a candidate could carry from one test to the next, and how the sandbox denies it.

A candidate's tests run in one forked child (a fork per test would halve the sandbox's
throughput), so the harness makes sure nothing one test does is seen by the next:

* every test gets fresh candidate globals (the module is executed again per test);
* classes are immutable: before forking, the fork server sets CPython's
  ``Py_TPFLAGS_IMMUTABLETYPE`` on every heap type that exists (the stdlib's, zwc's,
  the harness's), so ``json.JSONEncoder.encode = f`` or ``zwc.ZWCArray.x = 1`` raise
  ``TypeError`` (in CPython 3.11 plain class attribute writes raise no audit event, so
  the audit hook alone cannot refuse them). Classes the candidate defines stay mutable:
  they are fresh per test too;
* the modules a candidate imports are proxies whose class refuses attribute writes;
* the state that allowed modules keep on purpose is reset before each test: the ``random``
  generator (seeded the same for every test, so answers are deterministic) and the
  ``decimal`` context; the ``decimal`` proxy holds private copies of the module's
  template contexts;
* what remains writable without a dunder (the ``__dict__``, name, qualname, doc and module
  of the stdlib's Python functions, e.g. through ``functools.update_wrapper``; the
  registries of abstract base classes, through ``register``; anything in a proxy's
  namespace) is fingerprinted before the candidate runs and checked after its last test:
  a change is a violation, so the candidate fails whatever its answers. The check reads
  those fields as raw words (``raw_memory.py``): reading them through Python would copy
  every page it touches in the forked child.
"""

from __future__ import annotations

import abc
import ctypes
import decimal
import gc
import random
import types

from envs.zwc.sandbox.raw_memory import FunctionLayout, WordWatch, dict_version_word

_HEAPTYPE = 1 << 9
_IMMUTABLETYPE = 1 << 8
RANDOM_SEED = 0  # the generator every test starts from
READ_ONLY = "modules are read-only in the sandbox"


class FrozenModule(types.ModuleType):
    """A module proxy that refuses attribute writes (it is made immutable with the rest)."""

    def __setattr__(self, name, value):
        raise TypeError(f"cannot set attribute {name!r} of module {self.__name__!r}: {READ_ONLY}")

    def __delattr__(self, name):
        raise TypeError(f"cannot delete attribute {name!r} of module {self.__name__!r}: {READ_ONLY}")


def frozen_module(name: str, namespace: dict) -> FrozenModule:
    module = FrozenModule(name)
    vars(module).update(namespace)
    return module


def _flags_offset() -> int:
    """Where ``tp_flags`` sits in a type object: found by matching ``__flags__`` of two types."""
    class _ProbeA:
        pass

    class _ProbeB(Exception):
        pass

    for offset in range(3 * ctypes.sizeof(ctypes.c_void_p), 64 * ctypes.sizeof(ctypes.c_void_p),
                        ctypes.sizeof(ctypes.c_ulong)):
        if all(ctypes.c_ulong.from_address(id(t) + offset).value == t.__flags__ for t in (_ProbeA, _ProbeB, type)):
            return offset
    raise RuntimeError("cannot locate tp_flags in this Python's type objects")


def freeze_heap_types() -> int:
    """Make every heap type that exists now immutable; the number frozen.

    Called once in the fork server, after everything a child may use was imported."""
    offset = _flags_offset()
    frozen = 0
    for obj in gc.get_objects():  # type(obj), not isinstance: a __class__ property must not fool it
        if issubclass(type(obj), type) and obj.__flags__ & _HEAPTYPE and not obj.__flags__ & _IMMUTABLETYPE:
            ctypes.c_ulong.from_address(id(obj) + offset).value |= _IMMUTABLETYPE
            frozen += 1
    return frozen


def _function_print(fn: types.FunctionType) -> tuple:
    """The Python-level fingerprint of a function (the fallback where ``raw_memory`` has no layout).

    Not __code__, __defaults__, __kwdefaults__: reading them is an audit event the armed child
    refuses, and writing them is one too (refused the same way)."""
    attrs = fn.__dict__
    return (fn.__name__, fn.__qualname__, id(fn.__doc__), fn.__module__, len(attrs),
            tuple(map(id, attrs.values())) if attrs else ())


class SharedState:
    """The watched state of the allowed modules, built in the fork server before forking.

    Args:
        proxies: module name -> proxy module (the candidate's view of each allowed module).
        watch: names of the proxies whose objects are fingerprinted (NumPy's, in the NumPy
            control, are not: that mode is a reasoning control, not adversarial).
    """

    def __init__(self, proxies: dict[str, types.ModuleType], watch: set[str]):
        self._proxies = {name: proxies[name] for name in watch}
        functions: dict[int, types.FunctionType] = {}
        others: dict[int, object] = {}
        for proxy in self._proxies.values():
            for value in vars(proxy).values():
                self._collect(value, functions, others)
        self._functions = list(functions.values())
        self._others = [o for o in others.values() if hasattr(o, "__dict__") and not isinstance(o, type)]
        self._contexts = {name: getattr(decimal, name).copy()
                          for name in ("DefaultContext", "BasicContext", "ExtendedContext")}
        self._default_template = decimal.Context()
        self._random_state = random.Random(RANDOM_SEED).getstate()
        self._watch: WordWatch | None = None
        self._baseline = ()

    @staticmethod
    def _collect(value, functions: dict, others: dict) -> None:
        if isinstance(value, types.FunctionType):
            functions[id(value)] = value
        elif isinstance(value, type):
            for cls in value.__mro__:
                for member in vars(cls).values():
                    if isinstance(member, property):
                        inner = [member.fget, member.fset, member.fdel]
                    else:
                        inner = [member.__func__ if isinstance(member, (staticmethod, classmethod)) else member]
                    functions.update((id(f), f) for f in inner if isinstance(f, types.FunctionType))
        elif not isinstance(value, (types.BuiltinFunctionType, types.MethodType, str, bytes, int, float, complex,
                                    tuple, frozenset, type(None))):
            others[id(value)] = value

    def install(self, proxies: dict[str, types.ModuleType]) -> None:
        """Put the private template contexts into the ``decimal`` proxy and take the baseline
        (in the server, once, after every proxy is complete)."""
        if "decimal" in proxies:
            vars(proxies["decimal"]).update(self._contexts)
        self._namespaces = {name: dict(vars(p)) for name, p in self._proxies.items()}
        layout, version = FunctionLayout.probe(), dict_version_word()
        if layout is not None and version is not None:
            self._watch, self._labels = self._word_watch(layout, version)
        self._baseline = self._fingerprint()

    def _word_watch(self, layout: FunctionLayout, version: int) -> tuple[WordWatch, list[str]]:
        """Every watched field as a machine word: each function's metadata and dict pointers,
        and the version of every dict that holds shared state (functions', objects', proxies')."""
        addresses, labels, self._kept = [], [], []
        word = ctypes.sizeof(ctypes.c_void_p)
        for fn in self._functions:
            name = f"{fn.__module__}.{fn.__qualname__}"
            addresses += [id(fn) + i * word for i in layout.words]
            labels += [f"the function {name}"] * len(layout.words)
            self._kept.append(fn.__dict__)  # made now if missing, so that reading it later changes nothing
        dicts = [(fn.__dict__, f"the attributes of the function {fn.__module__}.{fn.__qualname__}")
                 for fn in self._functions]
        dicts += [(vars(o), f"an object of an allowed module ({type(o).__name__})") for o in self._others]
        dicts += [(vars(p), f"the namespace of module {name}") for name, p in self._proxies.items()]
        for d, label in dicts:
            self._kept.append(d)
            addresses.append(id(d) + version * word)
            labels.append(label)
        return WordWatch(addresses), labels

    def reset_for_test(self) -> None:
        """What allowed modules keep on purpose, back to its start before each test."""
        random.setstate(self._random_state)
        decimal.setcontext(self._default_template.copy())

    def _fingerprint(self) -> tuple:
        if self._watch is not None:  # functions, objects and namespaces are read as words instead
            return abc.get_cache_token(), tuple(repr(c) for c in self._contexts.values())
        return (abc.get_cache_token(), tuple(repr(c) for c in self._contexts.values()),
                tuple(_function_print(fn) for fn in self._functions),
                tuple((id(o), len(vars(o)), tuple(map(id, vars(o).values()))) for o in self._others))

    def changes(self) -> list[str]:
        """What the candidate changed in state shared between its tests ([] when nothing)."""
        found = []
        if self._watch is not None:
            found += list(dict.fromkeys(self._labels[i] for i in self._watch.changed()))[:3]
        else:
            for name, proxy in self._proxies.items():  # by identity: no candidate __eq__ runs here
                namespace, baseline = vars(proxy), self._namespaces[name]
                if namespace.keys() != baseline.keys() or any(namespace[k] is not v for k, v in baseline.items()):
                    found.append(f"the namespace of module {name}")
        labels = ("the registry of an abstract base class", "a decimal template context",
                  "a function of an allowed module", "an object of an allowed module")
        now = self._fingerprint()  # two fields, or four without the word watch: zip stops at the shorter
        found += [label for label, before, after in zip(labels, self._baseline, now, strict=False) if before != after]
        return found
